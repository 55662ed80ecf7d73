"""Every worked example of RULES.md (§8.1, §10), through the engine's public API."""

from __future__ import annotations

import numpy as np
import pytest

from hgin_env import melds as hm
from hgin_env import scoring
from hgin_env.cards import parse_cards
from hgin_env.rules import PROFILES

try:
    from tests import brute as B
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    import brute as B


def _cols(sb):
    return np.asarray(sb.columns).tolist()


def _card(text: str) -> int:
    return int(parse_cards(text)[0])


# ------------------------------------------------------------------ 000 §06


A_HAND = "4H 5H 6H 9C 9D 9S AC 2C 3C KD"
A_GIN = "4H 5H 6H 7H 9C 9D 9S AC 2C 3C"  # after drawing 7H and discarding KD
# Defender with 18 deadwood (8H TC); 8H could be laid off on 4-7H, but not against gin.
DEF_18 = "JS QS KS 4D 5D 6D 7D 8D 8H TC"


def test_000_06_draw_7h_discard_kd_is_gin():
    assert int(hm.min_deadwood(A_HAND)) == 10
    after = {int(k): int(v) for k, v in hm.deadwood_after_discard(A_HAND + " 7H").items()}
    assert after[_card("KD")] == 0
    assert min(after.values()) == 0
    assert after == B.deadwood_after_discard(A_HAND + " 7H")
    assert int(hm.min_deadwood(A_GIN)) == 0


@pytest.mark.parametrize("rules", [None, PROFILES["hollywood"]])
def test_000_06_gin_scores_43(rules):
    assert B.min_deadwood(DEF_18) == 18
    res = scoring.settle(A_GIN, DEF_18, rules=rules)
    assert (res.winner, res.points, res.kind) == ("knocker", 43, "gin")
    assert res.knocker_deadwood == 0 and res.defender_deadwood == 18
    assert not res.layoffs


@pytest.mark.parametrize("player", [0, 1])
def test_000_06_columns(player):
    sb = scoring.Scoreboard()
    sb.record(player, 30)
    assert _cols(sb)[player] == [30, 0, 0]
    sb.record(player, 43)
    assert _cols(sb)[player] == [73, 43, 0]
    sb.record(player, 35)
    assert _cols(sb)[player] == [108, 78, 35]
    assert _cols(sb)[1 - player] == [0, 0, 0]
    assert list(sb.column_winners) == [player, None, None]
    assert list(sb.wins)[player] == 3 and list(sb.wins)[1 - player] == 0
    assert not sb.match_over and sb.match_winner is None


# ------------------------------------------------------------------ 002


@pytest.mark.parametrize("bob", [0, 1])
@pytest.mark.parametrize("profile", ["hollywood", "hollywood_winner_deals"])
def test_002_bob_alexandra(bob, profile):
    alexandra = 1 - bob
    sb = scoring.Scoreboard(PROFILES[profile])
    sb.record(bob, 10)
    sb.record(alexandra, 18)
    sb.record(bob, 30)
    sb.record(bob, 4)
    assert _cols(sb)[alexandra] == [18, 0, 0]
    assert _cols(sb)[bob] == [44, 34, 4]
    assert list(sb.column_winners) == [None, None, None]
    assert list(sb.wins)[bob] == 3 and list(sb.wins)[alexandra] == 1
    assert not sb.match_over and sb.match_winner is None


# ------------------------------------------------------------------ 004

CASES_004 = [
    # gin against 21 deadwood (2H 8D TC AD) scores 25 + 21 = 46
    ("4H 5H 6H 7H 9C 9D 9S AC 2C 3C", "5S 6S 7S JD QD KD 2H 8D TC AD",
     ("knocker", 46, "gin"), (0, 21)),
    # knock 3 (3D) vs 12 (AD 2H 4D 5C, nothing to lay off) scores 9 for the knocker
    ("4H 5H 6H 9C 9D 9S AC 2C 3C 3D", "5S 6S 7S JD QD KD AD 2H 4D 5C",
     ("knocker", 9, "knock"), (3, 12)),
    # knock 10 (KD) vs 10 (TD): undercut 0 + 25
    ("4H 5H 6H 9C 9D 9S AC 2C 3C KD", "5S 6S 7S JS QS KS 8D 8C 8H TD",
     ("defender", 25, "undercut"), (10, 10)),
    # knock 10 vs 6 (6D): undercut 4 + 25
    ("4H 5H 6H 9C 9D 9S AC 2C 3C KD", "5S 6S 7S JS QS KS 8D 8C 8H 6D",
     ("defender", 29, "undercut"), (10, 6)),
]


@pytest.mark.parametrize("profile", ["hollywood", "gin_classic"])
@pytest.mark.parametrize("case", range(len(CASES_004)))
def test_004_scores(case, profile):
    knocker, defender, expected, (k, d) = CASES_004[case]
    ref = B.settle(knocker, defender)
    assert (ref.winner, ref.points, ref.kind) == expected
    assert (ref.knocker_deadwood, ref.defender_deadwood) == (k, d)
    res = scoring.settle(knocker, defender, rules=PROFILES[profile])
    assert (res.winner, res.points, res.kind) == expected
    assert (res.knocker_deadwood, res.defender_deadwood) == (k, d)


def test_004_score_formula():
    assert B.hand_score(0, 21) == ("knocker", 46, "gin")
    assert B.hand_score(3, 12) == ("knocker", 9, "knock")
    assert B.hand_score(10, 10) == ("defender", 25, "undercut")
    assert B.hand_score(10, 6) == ("defender", 29, "undercut")


# ------------------------------------------------------------------ §8.1 chained lay-off


def test_8_1_chained_layoff_3_4_5s_takes_6s_then_7s():
    knocker = "3S 4S 5S 9C 9D 9H JD QD KD 2C"  # K = 2
    defender = "6S 7S 5C 8H TH KC KH 3D 4D AD"
    res = scoring.settle(knocker, defender)
    laid = {int(c) for c, _ in res.layoffs}
    assert {_card("6S"), _card("7S")} <= laid
    # 5C 8H TH KC KH 3D 4D AD = 5+8+10+10+10+3+4+1 = 51
    assert res.defender_deadwood == 51
    assert (res.winner, res.points, res.kind) == ("knocker", 49, "knock")
    spade_run = [i for i, m in enumerate(res.knocker_melds) if _card("3S") in
                 [int(c) for c in m]]
    assert spade_run and all(i == spade_run[0] for c, i in res.layoffs
                             if int(c) in (_card("6S"), _card("7S")))
