"""Rows of a three-hand or partnership BatchGame set to given Matches
(hgin_env/batch/load.py ``load_matches``) go on exactly as the scalar Match they came from:
every seat's observation (the acting seat's, a waiting one's, a seat sitting out), the
masks, the privileged features, and step by step the same hand results, rewards and sheets
to the end of the hand (three-hand) or of the round (partnership)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import random_matches

from hgin_env.batch import BatchGame, MatchState, batch_of_matches, load_matches
from hgin_env.cards import NUM_CARDS
from hgin_env.match import Match
from hgin_env.melds import deadwood_of_mask
from hgin_env.observation import observe
from hgin_env.rules import get_rules

RULES = {"three_hand": "hollywood_three_hand", "partnership": "hollywood_partnership"}


def scalar_privileged(match: Match, seat: int) -> np.ndarray:
    """The privileged features of the acting ``seat``, from the scalar match (the reference
    the batch's are checked against)."""
    width = 2 * NUM_CARDS + 1 + (2 * NUM_CARDS + 2 if match.format == "partnership" else 0)
    out = np.zeros(width, dtype=np.float32)
    game, player = match.seat_view(seat)

    def put(start: int, mask: int) -> None:
        out[start:start + NUM_CARDS] = [mask >> c & 1 for c in range(NUM_CARDS)]

    put(0, game.hands[1 - player])
    if game.stock:
        out[NUM_CARDS + game.stock[-1]] = 1.0
    out[2 * NUM_CARDS] = min(deadwood_of_mask(game.hands[1 - player]), 100) / 100
    if match.format == "partnership":
        table = match.tables[match.table_of(match.partner_of(seat))]
        if table.running:
            p = table.player_of(match.partner_of(seat))
            base = 2 * NUM_CARDS + 1
            put(base, table.game.hands[p])
            put(base + NUM_CARDS, table.game.hands[1 - p])
            out[base + 2 * NUM_CARDS] = min(deadwood_of_mask(table.game.hands[p]), 100) / 100
            out[base + 2 * NUM_CARDS + 1] = min(deadwood_of_mask(table.game.hands[1 - p]), 100) / 100
    return out


def check_row(batch: BatchGame, i: int, match: Match, where: str) -> None:
    seats = np.arange(match.num_players)
    views = batch.seat_observations(np.full(seats.size, i), seats)
    for seat in seats:
        want = observe(match, int(seat))["observation"]
        np.testing.assert_array_equal(views[seat], want, err_msg=f"{where}: seat {seat}")
    acting = match.current_seat
    assert int(batch.current_seat[i]) == acting, where
    obs, masks = batch.observations_of(np.array([i]))
    np.testing.assert_array_equal(obs[0], observe(match, acting)["observation"], err_msg=where)
    np.testing.assert_array_equal(masks[0], match.legal_action_mask().astype(bool), err_msg=where)
    privileged = batch.privileged_observations()[i]
    np.testing.assert_array_equal(privileged, scalar_privileged(match, acting), err_msg=where)
    np.testing.assert_array_equal(batch.seat_privileged(np.array([i]), np.array([acting]))[0], privileged)


@pytest.mark.parametrize("engine", ["numpy", "numba"])
@pytest.mark.parametrize("fmt", ["three_hand", "partnership"])
def test_loaded_rows_go_on_as_their_matches(fmt, engine):
    n = 12
    matches = random_matches(n, seed=7 if fmt == "three_hand" else 8, rules=RULES[fmt])
    if fmt == "partnership":  # a table whose hand is over is among the states
        assert any(not t.running for m in matches for t in m.tables)
    batch = batch_of_matches([m.clone() for m in matches], seeds=range(n), reward="points", engine=engine)
    rng = np.random.default_rng(0)
    live = np.ones(n, dtype=bool)
    steps = 0
    while live.any():
        actions = np.full(n, -1, dtype=np.int64)
        for i in np.flatnonzero(live):
            check_row(batch, i, matches[i], f"{fmt} row {i} step {steps}")
            actions[i] = int(rng.choice(matches[i].legal_actions()))
        result = batch.step(actions)
        for i in np.flatnonzero(live):
            match = matches[i]
            done = match.apply(int(actions[i]))
            ended = bool(done) if fmt == "three_hand" else any(not hasattr(d, "table") for d in done)
            assert bool(result.round_over[i] if fmt == "partnership" else result.hand_over[i]) == ended
            np.testing.assert_array_equal(result.rewards[i], match.last_rewards.astype(np.float32) / 100)
            if done:
                hand = done[0]
                assert int(result.hand_winner[i]) == (-1 if hand.winner is None else hand.winner)
                assert int(result.hand_points[i]) == hand.points
            if ended:
                live[i] = False
                assert batch.boards[i].to_dict() == match.sheet.to_dict()
                if not match.is_over:  # the next deal is the row's own: the seating still agrees
                    assert int(batch.hands_played[i]) == len(match.hand_history)
                    assert batch.table_seats[batch.acting_table[i]].tolist() == \
                        list(match.tables[match.current_table].seats)
        steps += 1
    assert steps > 5


def test_a_state_given_for_several_rows_is_copied_into_each():
    """A search loads each world once per candidate: rows of one state hold it (their own
    sheets), and they step apart."""
    matches = random_matches(2, seed=3, rules="hollywood_partnership")
    batch = batch_of_matches([matches[0]] * 3 + [MatchState.of(matches[1])] * 2, seeds=[1, 1, 1, 2, 2])
    for row, match in ((0, matches[0]), (2, matches[0]), (4, matches[1])):
        check_row(batch, row, match, f"row {row}")
    assert len({id(b) for b in batch.boards}) == 5
    obs = batch.observations().copy()
    actions = np.full(5, -1)
    actions[0] = int(matches[0].legal_actions()[0])
    batch.step(actions)
    np.testing.assert_array_equal(batch.observations()[1], obs[1])


def test_loading_refuses_what_it_cannot_hold():
    three = random_matches(2, seed=1, rules="hollywood_three_hand")
    batch = BatchGame(2, rules="hollywood_three_hand", seed=0)
    with pytest.raises(ValueError, match="differ in length"):
        load_matches(batch, [0, 1], three, [1])
    with pytest.raises(ValueError, match="distinct matches"):
        load_matches(batch, [0, 0], three, [1, 2])
    with pytest.raises(ValueError, match="plays 'hollywood_partnership'"):
        load_matches(batch, [0], random_matches(1, seed=2, rules="hollywood_partnership"), [1])
    with pytest.raises(ValueError, match="a Hand is a duel's table"):
        load_matches(batch, [0], [three[0].tables[0].game], [1])
    state = MatchState.of(three[0])
    state.seats = ((state.seats[0][1], state.seats[0][0]),)
    with pytest.raises(ValueError, match="do not follow the dealer"):
        load_matches(batch, [0], [state], [1])
    one_hand = dataclasses.replace(get_rules("hollywood_three_hand"), max_hands=1)
    over = Match(one_hand, seed=5)
    while not over.is_over:
        over.apply(over.legal_actions()[0])
    with pytest.raises(ValueError, match="is over"):
        load_matches(BatchGame(1, rules=one_hand, seed=0), [0], [over], [1])


def test_a_duel_match_loads_through_the_same_function():
    """load_matches is the one loader for every format: a duel Match loads its hand, and
    that ``Hand`` (a duel world, with the match's sheet) or the match's MatchState load the
    same row."""
    match = Match("hollywood", seed=4)
    rng = np.random.default_rng(2)
    for _ in range(15):
        match.apply(int(rng.choice(match.legal_actions())))
    batch = batch_of_matches([match], seeds=[3])
    check_row(batch, 0, match, "duel")
    assert MatchState.of(match.current_game).hands_played == len(match.hand_history)
    for state in (match.current_game, MatchState.of(match)):
        check_row(batch_of_matches([state], seeds=[3]), 0, match, f"duel from {type(state).__name__}")
    with pytest.raises(ValueError, match="plays 'hollywood_three_hand'"):
        load_matches(batch, [0], [MatchState.of(random_matches(1, 1, "hollywood_three_hand")[0])], [1])
