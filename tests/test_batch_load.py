"""Rows of a BatchGame set to given duel states (hgin_env/batch/load.py: a duel ``Match``
or a duel world, its ``Hand`` with the match's sheet) go on exactly as the scalar match they
came from: the same observation, mask and privileged features, and step by step the same
observations, hand results and sheets to the end of the hand."""

from __future__ import annotations

import numpy as np
import pytest

from hgin_env.batch import batch_of_matches, load_matches
from hgin_env.batch.core import BatchGame
from hgin_env.cards import NUM_CARDS
from hgin_env.match import Match
from hgin_env.observation import observe


def _random_states(n: int, seed: int, rules: str = "hollywood") -> list[Match]:
    """Duel matches of ``rules`` played at random to a random point: every phase, later
    hands of a match (sheets with points on them) included."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        match = Match(rules=rules, seed=int(rng.integers(1 << 30)))
        for _ in range(int(rng.integers(0, 400))):
            legal = match.legal_actions()
            match.apply(int(rng.choice(legal)))
            if match.is_over:
                break
        if not match.is_over:
            out.append(match)
    return out


@pytest.mark.parametrize("engine", ["numba", "numpy"])
@pytest.mark.parametrize("rules", ["hollywood", "oklahoma"])
def test_loaded_rows_go_on_as_their_games(engine, rules):
    games = _random_states(40, seed=len(rules), rules=rules)
    # Even rows load the Match, odd rows its hand alone (a duel world: the Hand and its sheet).
    loaded = [g.clone() if i % 2 == 0 else g.current_game.clone() for i, g in enumerate(games)]
    assert any(g.hand_number > 1 for g in games)  # later hands: the sheet and the hands played
    batch = batch_of_matches(loaded, seeds=range(40), reward="points", engine=engine)
    assert batch.hands_played.tolist() == [len(g.hand_history) for g in games]
    rng = np.random.default_rng(0)
    live = np.ones(40, dtype=bool)
    steps = 0
    while live.any():
        obs, masks = batch.observations(), batch.legal_action_masks()
        privileged = batch.privileged_observations()
        actions = np.full(40, -1, dtype=np.int64)
        for i in np.flatnonzero(live):
            game = games[i].current_game
            assert games[i].current_seat == game.current_player
            want = observe(game, game.current_player)
            np.testing.assert_array_equal(want["observation"],
                                          observe(games[i], game.current_player)["observation"])
            np.testing.assert_array_equal(obs[i], want["observation"], err_msg=f"row {i} step {steps}")
            np.testing.assert_array_equal(masks[i], want["action_mask"].astype(bool))
            other = game.hands[1 - game.current_player]
            assert privileged[i, :NUM_CARDS].tolist() == [float(other >> c & 1) for c in range(NUM_CARDS)]
            if game.stock:
                assert privileged[i, NUM_CARDS + game.stock[-1]] == 1.0  # the next stock card
            actions[i] = int(rng.choice(np.flatnonzero(want["action_mask"])))
        result = batch.step(actions)
        for i in np.flatnonzero(live):
            finished = games[i].apply(int(actions[i]))
            record = finished[0].record if finished else None
            assert bool(result.hand_over[i]) == (record is not None)
            if record is not None:
                live[i] = False
                assert int(result.hand_winner[i]) == (-1 if record.winner is None else record.winner)
                assert int(result.hand_points[i]) == record.points
                assert batch.boards[i].to_dict() == games[i].sheet.to_dict()
                assert result.rewards[i].sum() == 0.0
        steps += 1
    assert steps > 5


def test_loading_refuses_what_it_cannot_hold():
    games = _random_states(2, seed=1)
    batch = BatchGame(3, seed=0)
    with pytest.raises(ValueError, match="differ in length"):
        load_matches(batch, [0, 1], games, [1])
    with pytest.raises(ValueError, match="distinct matches"):
        load_matches(batch, [0, 0], games, [1, 2])
    with pytest.raises(ValueError, match="plays 'oklahoma'"):
        load_matches(batch, [0], _random_states(1, seed=2, rules="oklahoma"), [1])
    with pytest.raises(ValueError, match="plays 'oklahoma'"):
        load_matches(batch, [0], [_random_states(1, seed=2, rules="oklahoma")[0].current_game], [1])
    three = BatchGame(1, rules="hollywood_three_hand", seed=0)
    with pytest.raises(ValueError, match="a Hand is a duel's table"):
        load_matches(three, [0], [games[0].current_game], [1])
    with pytest.raises(ValueError, match="plays 'hollywood', the batch 'hollywood_three_hand'"):
        load_matches(three, [0], games[:1], [1])
    over = games[0].current_game.clone()
    while not over.is_over:
        over.apply(over.legal_actions()[0])
    with pytest.raises(ValueError, match="is over"):
        load_matches(batch, [0], [over], [1])


def test_a_game_given_for_several_rows_is_copied_into_each():
    """A search loads each world once per candidate: rows of one game hold its state (and
    their own sheets), and the rows step apart from each other."""
    games = _random_states(2, seed=9)
    batch = batch_of_matches([games[0]] * 3 + [games[1]] * 2, seeds=[1, 1, 1, 2, 2], reward="points")
    obs = batch.observations()
    for row, game in ((0, games[0]), (2, games[0]), (4, games[1])):
        np.testing.assert_array_equal(obs[row], observe(game, game.current_seat)["observation"])
    assert len({id(b) for b in batch.boards}) == 5
    masks = batch.legal_action_masks()
    actions = np.full(5, -1)
    actions[0] = int(np.flatnonzero(masks[0])[0])
    batch.step(actions)
    np.testing.assert_array_equal(batch.observations()[1], obs[1])  # its twin did not move
