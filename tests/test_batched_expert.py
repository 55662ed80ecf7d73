"""The batched Expert decides exactly as the scalar Expert on states from real matches of
every two-player profile (and every format's layout), with default and other parameters,
and refuses bad input."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from helpers import batched_states

from agents.batched import BatchedExpert, BatchedRandom, BatchedSimple, RowByRow, make_batched_agent
from agents.expert import ExpertAgent, knock_timing
from agents.view import parse
from hgin_env import actions as A
from hgin_env.batch import BatchGame
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.observation import ObservationLayout, observation_dict
from hgin_env.rules import PROFILES, get_rules

DUEL_PROFILES = sorted(n for n, r in PROFILES.items() if r.format == "duel")
FORMAT_PROFILES = sorted(n for n, r in PROFILES.items() if r.format != "duel")
#: Parameters far from the defaults: a rounding decline factor (its weights are summed as
#: the scalar sums them), other knock timing, no match awareness, a negative swap margin.
OTHER_PARAMS = [
    dict(lookahead=0.3, danger_early=1.7, danger_late=12.3, decline_factor=0.3, swap_margin=2.5,
         knock_any_stock=28, knock_late=3, knock_end_stock=6, small_win=25.0, threat_win=35.0),
    dict(lookahead=1.4, decline_factor=0.8, swap_margin=-1.0, knock_any_stock=20, match_aware=False),
]


@cache
def duel_states(profile: str, n: int = 32, steps: int = 200, keep: int = 420, seed: int = 0):
    """(observations, masks) of both seats from batched matches of ``profile``: the Expert,
    Simple and Random on either seat, long enough for matches to reach column closes;
    ``keep`` rows sampled over the whole run."""
    rules = get_rules(profile)
    batch = BatchGame(n, rules=rules, seed=seed)
    columns = rules.columns
    players = [BatchedExpert(seed=1, columns=columns), BatchedSimple(seed=2, columns=columns),
               BatchedRandom(seed=4, columns=columns)]
    # Game i: seat 0 plays players[i % 3], seat 1 players[(i // 3) % 3] (Expert vs Expert too).
    seat_agent = np.stack([np.arange(n) % 3, (np.arange(n) // 3) % 3])
    obs, masks = batched_states(batch, players, lambda step: seat_agent[batch.current_player, np.arange(n)], steps)
    pick = np.sort(np.random.default_rng(seed).choice(len(obs), size=keep, replace=False))
    return obs[pick], masks[pick]


def all_duel_states() -> list[tuple[np.ndarray, np.ndarray]]:
    """Every duel profile's states (collected once per test session)."""
    return [duel_states(p) for p in DUEL_PROFILES]


def _scalar(agent: ExpertAgent, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    return RowByRow(agent).act(obs, masks)


def test_same_decisions_as_the_scalar_expert_on_every_duel_profile():
    compared, kinds = 0, {"take": 0, "pass": 0, "knock": 0, "match_knock": 0, "discard": 0, "draw": 0}
    layouts = {}
    for profile, (obs, masks) in zip(DUEL_PROFILES, all_duel_states(), strict=True):
        columns = PROFILES[profile].columns
        batched = BatchedExpert(seed=0, columns=columns).act(obs, masks)
        scalar = _scalar(ExpertAgent(seed=0, columns=columns), obs, masks)
        bad = np.flatnonzero(batched != scalar)
        assert not bad.size, f"{profile}: rows {bad[:10].tolist()} differ: {batched[bad[:10]]} vs {scalar[bad[:10]]}"
        assert masks[np.arange(len(obs)), batched].all()
        compared += len(obs)
        layout = layouts.setdefault(columns, ObservationLayout(columns))
        for o, m, a in zip(obs, masks, batched, strict=True):
            if m.sum() < 2:
                continue
            if a == A.TAKE_DISCARD:
                kinds["take"] += 1
            elif a == A.PASS:
                kinds["pass"] += 1
            elif a == A.DRAW_STOCK:
                kinds["draw"] += 1
            elif A.KNOCK <= a < A.DRAW_STOCK:
                kinds["knock"] += 1
                view = parse(observation_dict(o, m), layout)
                dw = round(float(layout.get(o, "discard_deadwood")[a - A.KNOCK]) * 100)
                if not knock_timing(ExpertAgent().params, dw, view.stock_size):
                    kinds["match_knock"] += 1  # knocked only because a column close is at stake
            elif a < A.KNOCK:
                kinds["discard"] += 1
    assert compared >= 3000
    # The states exercise every branch: takes, passes, draws, knocks (some for the match), discards.
    assert min(kinds.values()) > 0, kinds
    assert kinds["discard"] > 1000, kinds


@pytest.mark.parametrize("params", OTHER_PARAMS)
def test_same_decisions_with_other_parameters(params):
    checked = 0
    for profile, (obs, masks) in zip(DUEL_PROFILES, all_duel_states(), strict=True):
        if checked >= 1500:
            break
        columns = PROFILES[profile].columns
        batched = BatchedExpert(seed=0, columns=columns, **params).act(obs, masks)
        scalar = _scalar(ExpertAgent(seed=0, columns=columns, **params), obs, masks)
        np.testing.assert_array_equal(batched, scalar, err_msg=f"{profile} {params}")
        checked += len(obs)
    assert checked >= 1500


@pytest.mark.parametrize("profile", FORMAT_PROFILES)
def test_same_decisions_in_every_format_layout(profile):
    rules = get_rules(profile).replace(target=40, name=profile)
    layout = ObservationLayout.for_rules(rules)
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    policies = [ExpertAgent(seed=s, layout=layout) for s in range(rules.num_players)]
    for seed in (5, 6):
        run_match(Match(rules, seed=seed), policies, on_move=lambda seat, obs, a, fin: seen.append(
            (obs["observation"], obs["action_mask"])))
    obs = np.stack([o for o, _ in seen])
    masks = np.stack([m for _, m in seen])
    assert len(obs) > 100
    batched = BatchedExpert(seed=0, layout=layout).act(obs, masks)
    scalar = _scalar(ExpertAgent(seed=0, layout=layout), obs, masks)
    np.testing.assert_array_equal(batched, scalar)


def test_make_batched_agent_gives_the_batched_expert():
    agent = make_batched_agent("expert", seed=3, columns=1)
    assert isinstance(agent, BatchedExpert) and agent.columns == 1
    assert isinstance(make_batched_agent("search", seed=0), RowByRow)
    obs, masks = duel_states("hollywood")
    agent = make_batched_agent("expert", seed=0)
    first = agent.act(obs, masks)
    agent.reset(seed=9)  # deterministic: re-seeding changes nothing
    np.testing.assert_array_equal(agent.act(obs, masks), first)
    # One row at a time or all at once: the same decisions.
    np.testing.assert_array_equal([agent.act(obs[i:i + 1], masks[i:i + 1])[0] for i in range(40)], first[:40])


def test_bad_input_is_refused():
    obs, masks = duel_states("hollywood")
    agent = BatchedExpert(seed=0)
    with pytest.raises(ValueError, match=r"observations must have shape \(N, 394\)"):
        agent.act(obs[:, :-1], masks)
    with pytest.raises(ValueError, match="observations must have shape"):
        agent.act(obs[0], masks[0])
    with pytest.raises(ValueError, match=r"masks must have shape \(5, 108\)"):
        agent.act(obs[:5], masks[:4])
    empty = masks[:5].copy()
    empty[2] = 0
    with pytest.raises(ValueError, match="row 2 has no legal action"):
        agent.act(obs[:5], empty)
    discard = int(np.flatnonzero(masks[:, A.DISCARD:A.KNOCK].any(axis=1) & (masks.sum(axis=1) > 1))[0])
    broken = obs[discard:discard + 1].copy()
    layout = ObservationLayout()
    broken[0, layout.slice("hand")] = 0.0
    with pytest.raises(ValueError, match="needs a hand of 11 cards; a row has 0"):
        agent.act(broken, masks[discard:discard + 1])
    with pytest.raises(ValueError, match=r"unknown ExpertAgent parameter\(s\) \['look_ahead'\]"):
        BatchedExpert(look_ahead=1.0)
    with pytest.raises(ValueError, match="disagrees with the layout"):
        BatchedExpert(columns=1, layout=ObservationLayout(3))
    with pytest.raises(ValueError, match="observations must have shape"):
        BatchedExpert(columns=1).act(obs, masks)  # a three-column observation for a one-column agent


def test_lookahead_bounds_hold_and_exact_equals_the_scalar():
    """The pruning bounds contain every discard's exact improvement, and the exact one is
    the scalar agent's ``_expected_improvement``."""
    from agents.batched_expert import _Lookahead
    from hgin_env.batch import cards_of_masks
    from hgin_env.melds import CARD_BITS_U64

    obs, masks = duel_states("hollywood")
    layout = ObservationLayout()
    rows = np.flatnonzero(layout.get(obs, "phase")[:, 2] > 0.5)[:120]
    agent, scalar = BatchedExpert(), ExpertAgent()
    hand = (np.where(layout.get(obs[rows], "hand") > 0.5, CARD_BITS_U64, np.uint64(0))
            .sum(axis=1, dtype=np.uint64))
    cards = cards_of_masks(hand, 11)
    after = np.rint(layout.get(obs[rows], "discard_deadwood") * 100).astype(np.int64)[
        np.arange(len(rows))[:, None], cards]
    unseen, _ = agent._unseen(obs[rows], hand)
    look = _Lookahead(hand, cards, after, unseen)
    low, high = look.bounds()
    exact = look.exact(np.ones(cards.shape, dtype=bool))
    assert (low <= exact + 1e-12).all() and (exact <= high + 1e-12).all()
    assert (high > low).any() and (exact < high).any()
    for i, r in enumerate(rows[:40]):
        view = parse(observation_dict(obs[r], masks[r]), layout)
        want = scalar._expected_improvement(view.hand, cards[i].tolist(), after[i].astype(np.float64), view.unseen)
        np.testing.assert_array_equal(exact[i], want)
