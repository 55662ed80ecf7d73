"""OpenSpiel's ``SimpleGinRummyBot`` on a batch without pyspiel (agents/openspiel_bot.py and
its kernels), and the batched engine's single-hand episodes it trains against.

The bot's moves are the real bot's, stored from real play (tests/openspiel_bot_states.py):
these tests need no pyspiel; tests/test_openspiel.py asks the live bot again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.batched import make_batched_agent
from agents.openspiel_bot import BatchedOpenSpielBot, all_melds, best_meld_group, min_deadwood
from hgin_env import actions as A
from hgin_env.batch import BatchGame
from hgin_env.codes import DEAD_KIND
from hgin_env.observation import ObservationLayout
from hgin_env.rules import PROFILES

STATES = Path(__file__).parent / "data" / "openspiel_bot_states.npz"


@pytest.fixture(scope="module")
def states() -> dict[str, np.ndarray]:
    with np.load(STATES) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_both_forms_decide_as_the_real_bot_on_stored_states(states, engine) -> None:
    chosen = states["masks"].sum(axis=1) > 1
    assert chosen.sum() >= 2000  # states with a choice to make
    bot = BatchedOpenSpielBot(engine=engine)
    moves = bot.act(states["observations"], states["masks"])
    wrong = np.flatnonzero(moves != states["moves"])
    assert wrong.size == 0, [(int(i), A.describe_action(int(moves[i])), A.describe_action(int(states["moves"][i])))
                             for i in wrong[:5]]
    assert bot.fallbacks == int(states["fallbacks"])  # the moves our rules forbid, as the scalar agent counted


def test_the_spec_builds_the_batched_bot_and_refuses_what_it_cannot_play(states) -> None:
    bot = make_batched_agent("openspiel:simple")
    assert isinstance(bot, BatchedOpenSpielBot)
    with pytest.raises(ValueError, match="known: openspiel:simple"):
        make_batched_agent("openspiel:mcts")
    with pytest.raises(ValueError, match="plays the duel"):
        BatchedOpenSpielBot(layout=ObservationLayout.for_rules(PROFILES["hollywood_three_hand"]))
    obs, masks = states["observations"][:4].copy(), states["masks"][:4]
    with pytest.raises(ValueError, match="shape"):
        bot.act(obs[:, :10], masks)
    with pytest.raises(ValueError, match="no legal action"):
        bot.act(obs, np.zeros_like(masks))
    layout = ObservationLayout(3)
    obs[:, layout.slice("knock_limit")] = 2.5  # 25 points: above OpenSpiel's knock cards
    with pytest.raises(ValueError, match="knock limits up to 10"):
        bot.act(obs, masks)


def _os(text: str) -> list[int]:
    """OpenSpiel card ids of a text such as "4c 5c 6c" (ranks A23456789TJQK, suits s c d h)."""
    return sorted("scdh".index(c[1]) * 13 + "A23456789TJQK".index(c[0]) for c in text.split())


def test_the_reference_follows_openspiels_meld_order_and_tie_break() -> None:
    cards = _os("4s 5s 6s 6c 6d Th")
    assert all_melds(cards) == [_os("6s 6c 6d"), _os("4s 5s 6s")]  # rank melds first, then suit melds
    assert best_meld_group(cards) == [_os("6s 6c 6d")]  # 18 points beat 15
    # docs/openspiel.md's fault 1: 4c5c6c + 4s5s6s and 6c6d6s + 4c4h4s meld 30 points each;
    # the first found wins, and MinDeadwood drops its highest deadwood card (a 5): 11, not 10.
    hand = _os("4c 5c 6c 3d 6d Ah 4h 2s 4s 5s 6s")
    assert best_meld_group(hand) == [_os("4c 4h 4s"), _os("6c 6d 6s")]
    assert min_deadwood(hand) == 11
    assert min_deadwood(_os("4c 5c 6c 3d Ah 4h 2s 4s 5s 6s")) == 10  # without 6d: 10 cards, no shortcut


def test_single_hand_episodes_end_after_one_hand_won_by_its_winner() -> None:
    game = BatchGame(16, rules="hollywood", seed=3, single_hand=True)
    rng = np.random.default_rng(0)
    finished = 0
    while finished < 40:
        masks = game.legal_action_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        out = game.step(acts)
        for i in np.flatnonzero(out.match_over):
            finished += 1
            summary = out.finished[i]
            assert summary["hands"] == 1 and not summary["truncated"]
            if out.hand_kind[i] == DEAD_KIND:  # a dead hand: a draw, nobody paid
                assert summary["match_winner"] is None
                assert np.all(out.rewards[i] == 0)
            else:
                w = int(out.hand_winner[i])
                assert summary["match_winner"] == w
                assert out.rewards[i][w] == 1.0 and out.rewards[i][1 - w] == -1.0
    assert not np.any(game.hands_played > 1)
    with pytest.raises(ValueError, match="duel only"):
        BatchGame(2, rules="hollywood_three_hand", single_hand=True)


def test_the_learner_is_paid_its_hand_against_the_bot() -> None:
    """LearnerBatch(single_hand=True) against the batched bot: every episode is one hand,
    its return +1 won, -1 lost, 0 dead, as its summary says."""
    from hgin_env.batch.vector import LearnerBatch

    core = LearnerBatch(16, [BatchedOpenSpielBot()], rules="hollywood", reward="match", seed=1, single_hand=True)
    rng = np.random.default_rng(1)
    episodes = 0
    while episodes < 60:
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in core.action_masks()])
        rewards, terminated, truncated, finished = core.step(acts)
        assert not truncated.any()
        for i, info in finished.items():
            episodes += 1
            s = info["episode_summary"]
            assert s["hands"] == 1 and info["opponent_spec"] == "openspiel:simple"
            assert info["episode"]["r"] == rewards[i] == (1.0 if s["won"] else -1.0 if s["lost"] else 0.0)


def test_train_ppo_accepts_hand_episodes_on_the_batched_engine_for_the_duel_only() -> None:
    from train.ppo import Args

    Args(episode="hand", opponents="openspiel:simple").validate()
    with pytest.raises(ValueError, match="one hand of the duel"):
        Args(episode="hand", rules="hollywood_three_hand").validate()
    with pytest.raises(ValueError, match="match or hand"):
        Args(episode="set").validate()
