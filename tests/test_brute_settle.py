"""Showdown settlement (RULES §8, §9) of the engine against the brute-force reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hgin_env import scoring
from hgin_env.rules import PROFILES, Rules

try:
    from tests import brute as B
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    import brute as B


def _ids(x) -> tuple[int, ...]:
    return tuple(int(c) for c in x)


def check_result(res, knocker, defender, knock_limit=10, gin_bonus=25, undercut_bonus=25,
                 multiplier=1):
    """Check one engine HandResult: internally consistent, optimal for the defender given the
    knocker's arrangement, and as good for the knocker as the brute-force optimum."""
    knocker = B.cards(knocker)
    defender = B.cards(defender)
    ctx = f"knocker {B.hand_text(knocker)} | defender {B.hand_text(defender)}"
    expected = B.settle(knocker, defender, knock_limit, gin_bonus, undercut_bonus, multiplier)
    got = (res.winner, int(res.points), res.kind)
    assert got == (expected.winner, expected.points, expected.kind), (ctx, got, expected)

    # Knocker side.
    k_melds = [_ids(m) for m in res.knocker_melds]
    B.check_melds(knocker, k_melds)
    assert sorted(_ids(res.knocker_deadwood_cards)) == B.unmelded(knocker, k_melds), ctx
    k = int(res.knocker_deadwood)
    assert k == B.deadwood_of(knocker, k_melds) <= knock_limit, ctx

    # Defender side.
    d_melds = [_ids(m) for m in res.defender_melds]
    B.check_melds(defender, d_melds)
    layoffs = [(int(c), int(i)) for c, i in res.layoffs]
    laid = [c for c, _ in layoffs]
    in_melds = [c for m in d_melds for c in m]
    dead = list(_ids(res.defender_deadwood_cards))
    assert sorted(in_melds + laid + dead) == sorted(defender), ctx  # each card used once
    d = int(res.defender_deadwood)
    assert d == B.hand_value(dead), ctx
    if res.kind == "gin":
        assert k == 0 and not layoffs, ctx
        assert d == B.min_deadwood(defender), ctx
    else:
        assert k > 0, ctx
        for idx in range(len(k_melds)):
            group = set(k_melds[idx]) | {c for c, i in layoffs if i == idx}
            assert B.is_meld(group), (ctx, "bad lay-off onto", B.hand_text(k_melds[idx]))
        assert all(0 <= i < len(k_melds) for _, i in layoffs), ctx
        # the defender's reply is optimal against this very arrangement
        assert d == B.defender_best(defender, k_melds), ctx
    assert B.hand_score(k, d, gin_bonus, undercut_bonus, multiplier) == got, ctx


# ------------------------------------------------------------------ brute self-tests


def _defender_best_by_assignment(defender, knocker_melds):
    """Order-free formulation: choose for each defender card 'keep' or a knocker meld; every
    extended knocker meld must still be a meld; the kept cards are melded optimally."""
    best = B.min_deadwood(defender)
    cands = [c for c in defender if any(B.can_lay_off(c, m) or
                                        any(B.can_lay_off(c, set(m) | {x}) for x in defender)
                                        for m in knocker_melds)]
    for labels in itertools.product(range(len(knocker_melds) + 1), repeat=len(cands)):
        groups = [set(m) for m in knocker_melds]
        for c, lab in zip(cands, labels, strict=True):
            if lab:
                groups[lab - 1].add(c)
        if all(B.is_meld(g) for g in groups):
            laid = {c for c, lab in zip(cands, labels, strict=True) if lab}
            best = min(best, B.min_deadwood([c for c in defender if c not in laid]))
    return best


def test_brute_defender_best_cross_check():
    rng = np.random.default_rng(7)
    checked = 0
    while checked < 150:
        knocker = B.random_knocker(rng)
        defender = B.random_defender(rng, knocker, bias=0.6)
        for coll in B.meld_collections(knocker):
            if B.deadwood_of(knocker, coll) > 10 or not coll:
                continue
            assert B.defender_best(defender, coll) == _defender_best_by_assignment(
                defender, coll
            ), (B.hand_text(knocker), B.hand_text(defender), coll)
            checked += 1


def test_brute_chained_layoff():
    assert B.defender_best("6S 7S KD", [B.cards("3S 4S 5S")]) == 10
    assert B.defender_best("7S KD", [B.cards("3S 4S 5S")]) == 17  # 7S needs 6S first
    assert B.defender_best("2S AS KD", [B.cards("3S 4S 5S")]) == 10
    nines, clubs = B.cards("9D 9H 9S"), B.cards("TC JC QC")
    assert B.defender_best("9C KD", [nines, clubs]) == 10  # 9C fits both melds
    assert B.defender_best("9C 8C KD", [nines, clubs]) == 10  # only via the run: 9C then 8C
    assert B.defender_best("9C 8C KD", [nines]) == 18
    assert B.defender_best("7C 8C 9C KD", [nines, clubs]) == 10  # own run or lay-offs
    assert B.defender_best("KC 9C 8C", [clubs, B.cards("9D 9H 9S")]) == 0  # both run ends


def test_defender_reply_is_settles_reply_and_the_brute_optimum():
    """``scoring.defender_reply`` to the knocker's melds of a settled hand gives that hand's
    defender deadwood, lay-offs and melds, and the brute-force best reply to those melds."""
    rng = np.random.default_rng(17)
    for _ in range(300):
        knocker, defender = _random_case(rng)
        res = scoring.settle(list(knocker), list(defender))
        gin = res.kind == "gin"
        dw, layoffs, melds = scoring.defender_reply(res.knocker_melds, defender, gin=gin)
        assert (dw, layoffs, melds) == (res.defender_deadwood, res.layoffs, res.defender_melds)
        if not gin:
            assert dw == B.defender_best(defender, [_ids(m) for m in res.knocker_melds])
    with pytest.raises(ValueError, match="holds a card of the knocker's melds"):
        scoring.defender_reply([B.cards("3S 4S 5S")], "5S 6S 7S KD")


# ------------------------------------------------------------------ random pairs


def _random_case(rng, knock_limit=10):
    knocker = B.random_knocker(rng, knock_limit=knock_limit,
                               gin_rate=0.3 if knock_limit else 1.0)
    defender = B.random_defender(rng, knocker, bias=float(rng.random()) * 0.7,
                                 strong=bool(rng.random() < 0.5))
    order = rng.permutation(10)
    return tuple(knocker[i] for i in order), defender


@pytest.mark.parametrize("seed", [101, 102, 103])
def test_settle_random_default(seed):
    rng = np.random.default_rng(seed)
    kinds = {"gin": 0, "knock": 0, "undercut": 0}
    for _ in range(1000):
        knocker, defender = _random_case(rng)
        res = scoring.settle(list(knocker), list(defender))
        check_result(res, knocker, defender)
        kinds[res.kind] += 1
    assert min(kinds.values()) > 10, kinds  # the generator exercises every kind


@pytest.mark.parametrize("name", ["gin_us_uk", "hollywood_winner_deals"])
def test_settle_random_profiles(name):
    rules = PROFILES[name]
    rng = np.random.default_rng(200 + len(name))
    for _ in range(400):
        knocker, defender = _random_case(rng)
        res = scoring.settle(list(knocker), list(defender), rules=rules)
        check_result(res, knocker, defender, 10, rules.gin_bonus, rules.undercut_bonus)


def test_settle_random_knock_limits_and_multiplier():
    rng = np.random.default_rng(301)
    for i in range(600):
        limit = int(rng.integers(0, 11))
        mult = 2 if i % 3 == 0 else 1
        knocker, defender = _random_case(rng, knock_limit=limit)
        res = scoring.settle(list(knocker), list(defender), knock_limit=limit, multiplier=mult)
        check_result(res, knocker, defender, knock_limit=limit, multiplier=mult)
        if limit < 10 and B.min_deadwood(knocker) <= 10 and i % 5 == 0:
            # the rules' limit applies when no explicit limit is given
            rules = Rules(knock_limit=limit)
            res2 = scoring.settle(list(knocker), list(defender), rules=rules)
            assert (res2.winner, res2.points, res2.kind) == (res.winner, res.points // mult,
                                                             res.kind)


def test_settle_text_input_and_profile_values():
    assert PROFILES["hollywood"].knock_limit == 10
    assert PROFILES["hollywood"].gin_bonus == 25 and PROFILES["hollywood"].undercut_bonus == 25
    assert PROFILES["gin_us_uk"].gin_bonus == 20 and PROFILES["gin_us_uk"].undercut_bonus == 10
    assert PROFILES["hollywood_winner_deals"].undercut_bonus == 10
    assert PROFILES["straight_gin"].knock_limit == 0
    k, d = "4H 5H 6H 9C 9D 9S AC 2C 3C KD", "5S 6S 7S JS QS KS 8D 8C 8H TD"
    check_result(scoring.settle(k, d), k, d)


def test_settle_errors():
    with pytest.raises(ValueError):  # deadwood 16 > 10
        scoring.settle("4H 5H 6H 9C 9D 9S 2C 3C KD AD", "5S 6S 7S JS QS KS 8D 8C 8H TD")
    with pytest.raises(ValueError):  # no melds at all
        scoring.settle("KC QD JH TS 9C 8D 7H 6S 5C 4D", "AC 2C 3C 4H 5H 6H 7C 7D 7S JS")
    with pytest.raises(ValueError):  # deadwood 10 over an explicit limit of 9
        scoring.settle("4H 5H 6H 9C 9D 9S AC 2C 3C KD", "5S 6S 7S JS QS KS 8D 8C 8H TD",
                       knock_limit=9)
    with pytest.raises(ValueError):  # straight gin: only gin
        scoring.settle("4H 5H 6H 9C 9D 9S AC 2C 3C AD", "5S 6S 7S JS QS KS 8D 8C 8H TD",
                       rules=PROFILES["straight_gin"])
    with pytest.raises(ValueError):  # overlapping hands
        scoring.settle("4H 5H 6H 9C 9D 9S AC 2C 3C KD", "KD 6S 7S JS QS KS 8D 8C 8H TD")
    with pytest.raises(ValueError):  # duplicate card within a hand
        scoring.settle("4H 4H 5H 6H 9C 9D 9S AC 2C 3C", "5S 6S 7S JS QS KS 8D 8C 8H TD")
    with pytest.raises(ValueError):
        Rules(knock_limit=-1)


# ------------------------------------------------------------------ hand-built hard cases

HARD_CASES = {
    # Chained lay-off 3-4-5S <- 6S <- 7S (and 2S at the other end).
    "chain": ("3S 4S 5S 9C 9D 9H JD QD KD 2C", "6S 7S 2S 5C 8H TH KC KH 3D 4D"),
    # 6S fits both the set of sixes and the 7-8-9S run; only on the run does 5S follow.
    "two_melds": ("6C 6D 6H 7S 8S 9S JC QC KC 2D", "6S TS 5S 4H 8C AD 3H QH KH 8D"),
    # Undercut on equal deadwood (10 vs 10) -> 25 to the defender.
    "equal_undercut": ("4H 5H 6H 9C 9D 9S AC 2C 3C KD", "5S 6S 7S JS QS KS 8D 8C 8H TD"),
    # Undercut thanks to lay-offs only.
    "layoff_undercut": ("4H 5H 6H 9C 9D 9S AC 2C 3C 8D", "7H 8H 9H 4C 5C TS JS QS KS 3D"),
    # Gin against a hand that could lay off everything: no lay-offs on gin.
    "gin_no_layoff": ("4H 5H 6H 7H 9C 9D 9S AC 2C 3C", "3H 8H 9H 4C 5C TS JS QS KS 8D"),
    # Best result is not the min-deadwood arrangement (found by random search):
    # K=1 (555, 345S, 89TC) lets the defender lay off 2S 6S 6C 7C JC QC -> 61-41 = 20, +19;
    # K=8 (5555, 89TC) leaves 2S 6S stuck -> D=28, +20.
    "not_min_1": ("AC 5C 8C 9C TC 5D 5H 3S 4S 5S", "2C 6C 7C JC QC AD 7H 2S 6S QS"),
    "not_min_2": ("AD 4D 5D 6D 7D 8D 9D AH 4H AS", "AC 4C 2D 3D TD JD KD 5H 8H 5S"),
    # Min deadwood (A-6H + JQK-S, K=3) is undercut 27: 7H 8H 9S TS are laid off, D=1.
    # Breaking the heart run to A-5H (6H dead, K=9) wins 16-9 = 7.
    "avoid_undercut": ("3D AH 2H 3H 4H 5H 6H JS QS KS", "4C 5C 6C 7C 8C AD 7H 8H 9S TS"),
    "avoid_undercut_2": ("KC KD 3H 4H 5H 6H 7H 8H KH 2S", "AC 2C 3C 7C 7D AH 9H TH 7S KS"),
    # Best arrangement leaves a meld (A-2-3H) unmelded: K=4 lets the defender lay off 4H 5H
    # (D=27, +23); K=10 with A23H as deadwood keeps them stuck (D=36, +26).
    "not_maximal": ("4C 8C 9C TC 8D 9D TD AH 2H 3H", "7C JC QC 7D 4H 5H 2S 5S JS QS"),
    # Knocker with a 4-set crossing a run: which card the run keeps matters.
    "set_vs_run": ("7C 7D 7H 7S 8S 9S 4D 5D 6D AC", "TS JS 6S 8D 3D KH 2H 3H 4H 9C"),
}


@pytest.mark.parametrize("name", sorted(HARD_CASES))
def test_hard_cases(name):
    knocker, defender = HARD_CASES[name]
    assert len(B.cards(knocker)) == 10 and len(B.cards(defender)) == 10, name
    res = scoring.settle(knocker, defender)
    check_result(res, knocker, defender)


def test_hard_case_values():
    """The brute force's own answers on the hard cases, checked by hand."""
    o = B.settle(*HARD_CASES["chain"])
    # knocker K=2 (2C); defender 6S 7S 2S laid off; 5C 8H TH KC KH 3D 4D = 5+8+10+10+10+3+4
    assert (o.kind, o.knocker_deadwood, o.defender_deadwood) == ("knock", 2, 50)
    o = B.settle(*HARD_CASES["equal_undercut"])
    assert (o.winner, o.points, o.kind) == ("defender", 25, "undercut")
    o = B.settle(*HARD_CASES["layoff_undercut"])
    # K=8 (8D). Defender: 7H 8H 9H own run (or 7H laid off), 4C 5C laid off on A-3C,
    # TS-KS run, 3D = 3 -> undercut 8-3+25 = 30
    assert (o.winner, o.points, o.kind) == ("defender", 30, "undercut")
    o = B.settle(*HARD_CASES["gin_no_layoff"])
    # defender own melds: 8H 9H + 3H? no; TS-KS run; deadwood 3H 8H 9H 4C 5C 8D = 37
    assert (o.winner, o.points, o.kind, o.defender_deadwood) == ("knocker", 62, "gin", 37)
    assert (B.settle(*HARD_CASES["not_min_1"]).points,) == (20,)
    assert B.min_deadwood(HARD_CASES["not_min_1"][0]) == 1
    o = B.settle(*HARD_CASES["not_maximal"])
    assert (o.winner, o.points, o.knocker_deadwood, o.defender_deadwood) == ("knocker", 26, 10, 36)
    o = B.settle(*HARD_CASES["avoid_undercut"])
    assert (o.winner, o.points, o.kind, o.knocker_deadwood) == ("knocker", 7, "knock", 9)
    assert B.min_deadwood(HARD_CASES["avoid_undercut"][0]) == 3
    o = B.settle(*HARD_CASES["avoid_undercut_2"])
    assert o.winner == "knocker" and B.min_deadwood(HARD_CASES["avoid_undercut_2"][0]) < 10
