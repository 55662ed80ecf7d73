"""Format worlds (hgin_env/format_worlds.py): sampled from the acting seat's observation,
they load into batched rows where that seat sees exactly what it saw, and two matches that
differ only in cards hidden from the seat give the same worlds."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_matches, same_state, swap_hidden_match

from hgin_env.batch import batch_of_matches
from hgin_env.codes import PHASE_HAND_OVER
from hgin_env.format_worlds import FormatInfoSet
from hgin_env.match import Match
from hgin_env.observation import observe

RULES = {"three_hand": "hollywood_three_hand", "partnership": "hollywood_partnership"}


@pytest.mark.parametrize("fmt", ["three_hand", "partnership"])
def test_worlds_show_the_seat_what_it_saw(fmt):
    matches = random_matches(10, seed=21, rules=RULES[fmt])
    rng = np.random.default_rng(0)
    for match in matches:
        seat = match.current_seat
        info = FormatInfoSet.from_match(match, seat)
        worlds = [info.sample(rng, model=model) for model in ("uniform", "improved")]
        batch = batch_of_matches(worlds, seeds=[1, 2])
        assert batch.current_seat.tolist() == [seat, seat]
        obs, masks = batch.observations_of(np.arange(2))
        real = observe(match, seat)
        for k in range(2):
            np.testing.assert_array_equal(obs[k], real["observation"], err_msg=f"{fmt} seed {match.seed}")
            np.testing.assert_array_equal(masks[k], real["action_mask"].astype(bool))
        if fmt == "partnership":
            partner_table = 1 - info.table_index
            running = match.tables[partner_table].running
            assert [batch.phase[2 * k + partner_table] != PHASE_HAND_OVER for k in range(2)] == [running] * 2
        # Every world plays on: a legal move steps it.
        batch.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))


@pytest.mark.parametrize("fmt", ["three_hand", "partnership"])
def test_worlds_ignore_hidden_cards(fmt):
    """Nothing hidden from the seat is read: a twin that differs only in the opponent's
    unseen cards, the stock order and (partnership) the other table gives the same
    information set and, for the same seed, the same worlds."""
    rng = np.random.default_rng(5)
    checked = 0
    for match in random_matches(8, seed=31, rules=RULES[fmt]):
        twin = swap_hidden_match(match, rng)
        seat = match.current_seat
        a, b = FormatInfoSet.from_match(match, seat), FormatInfoSet.from_match(twin, seat)
        assert a == b
        differs = any(x.game.hands != y.game.hands or x.game.stock != y.game.stock
                      for x, y in zip(match.tables, twin.tables, strict=True))
        checked += differs
        wa = a.sample(np.random.default_rng(3), model="improved")
        wb = b.sample(np.random.default_rng(3), model="improved")
        same_state(wa, wb, "world")
    assert checked >= 4


def test_refusals():
    three = random_matches(1, seed=2, rules="hollywood_three_hand")[0]
    sitter = three.sitting_out
    with pytest.raises(ValueError, match="sits this hand out"):
        FormatInfoSet.from_observation({**observe(three, sitter), "action_mask": np.ones(108, dtype=np.int8)},
                                       three.rules)
    with pytest.raises(ValueError, match="not to act"):
        FormatInfoSet.from_match(three, (three.current_seat + 1) % 3)
    duel = Match("hollywood", seed=1)
    with pytest.raises(ValueError, match="FormatInfoSet is for"):
        FormatInfoSet.from_observation(observe(duel, duel.current_seat), duel.rules)
    with pytest.raises(ValueError, match="layout has"):
        FormatInfoSet.from_observation(observe(duel, duel.current_seat), three.rules)
