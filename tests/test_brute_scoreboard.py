"""Hollywood scoreboard (RULES §10) of the engine against the reference RefScoreboard."""

from __future__ import annotations

import numpy as np
import pytest

from hgin_env import scoring
from hgin_env.rules import PROFILES, Rules

try:
    from tests import brute as B
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    import brute as B


def _state(sb):
    cols = np.asarray(sb.columns)
    winners = [None if w is None else int(w) for w in sb.column_winners]
    mw = sb.match_winner
    return (cols.tolist(), winners, [int(w) for w in sb.wins], bool(sb.match_over),
            None if mw is None else int(mw))


def _ref_state(ref):
    return ([row[:] for row in ref.totals], list(ref.winners), list(ref.win_counts),
            ref.match_over, ref.match_winner)


def _random_points(rng) -> int:
    r = rng.random()
    if r < 0.6:
        return int(rng.integers(1, 40))  # knocks
    if r < 0.85:
        return int(rng.integers(25, 70))  # gins / undercuts
    return int(rng.integers(60, 140))  # big hands (can decide a column at once)


def _play(rules, ref, rng, max_hands=200, bias=0.5):
    sb = scoring.Scoreboard(rules)
    assert _state(sb) == _ref_state(ref)
    history = []
    for _ in range(max_hands):
        if ref.match_over:
            break
        player = 0 if rng.random() < bias else 1
        points = _random_points(rng)
        history.append((player, points))
        before_cols = np.asarray(sb.columns).copy()
        before_winners = list(sb.column_winners)
        sb.record(player, points)
        ref.record(player, points)
        assert _state(sb) == _ref_state(ref), history
        after_cols = np.asarray(sb.columns)
        for col, w in enumerate(before_winners):
            if w is not None:  # a decided column never changes again
                assert (after_cols[:, col] == before_cols[:, col]).all(), (history, col)
                assert sb.column_winners[col] == w
    return sb, history


@pytest.mark.parametrize("seed", range(4))
def test_scoreboard_random_default(seed):
    rng = np.random.default_rng(seed)
    finished = 0
    for _ in range(750):
        ref = B.RefScoreboard(3, 100)
        bias = float(rng.choice([0.5, 0.5, 0.3, 0.8, 0.95]))
        rules = None if rng.random() < 0.5 else PROFILES["hollywood"]
        sb, history = _play(rules, ref, rng, bias=bias)
        finished += ref.match_over
        if ref.match_over:
            assert sb.match_winner in (0, 1)
            won = list(sb.column_winners)
            assert won.count(sb.match_winner) >= 2, history
    assert finished > 700


@pytest.mark.parametrize("target", [50, 150])
def test_scoreboard_random_target(target):
    rng = np.random.default_rng(target)
    for _ in range(500):
        _play(Rules(target=target), B.RefScoreboard(3, target), rng,
              bias=float(rng.choice([0.5, 0.7])))


def test_scoreboard_random_winner_deals_profile():
    rng = np.random.default_rng(99)
    for _ in range(500):
        _play(PROFILES["hollywood_winner_deals"], B.RefScoreboard(3, 100), rng)


def test_scoreboard_single_column_gin_us_uk():
    """gin_us_uk: one game to 100 (a single column), highest total wins."""
    rng = np.random.default_rng(5)
    for _ in range(500):
        ref = B.RefScoreboard(1, 100)
        _play(PROFILES["gin_us_uk"], ref, rng)
        assert ref.match_over


def test_scoreboard_third_win_opens_column_three_while_one_closes():
    """RULES §10.5: the counter keeps counting; the win that closes column I opens III."""
    sb = scoring.Scoreboard()
    sb.record(0, 90)
    sb.record(1, 20)
    sb.record(0, 5)
    assert np.asarray(sb.columns).tolist() == [[95, 5, 0], [20, 0, 0]]
    sb.record(0, 10)  # 3rd win: column I closes at 105, columns II and III get 10
    assert np.asarray(sb.columns).tolist() == [[105, 15, 10], [20, 0, 0]]
    assert list(sb.column_winners) == [0, None, None]
    sb.record(1, 200)  # player 1's 2nd win: column I is frozen, column II decided for 1
    assert np.asarray(sb.columns).tolist() == [[105, 15, 10], [20, 200, 0]]
    assert list(sb.column_winners) == [0, 1, None]
    assert not sb.match_over and sb.match_winner is None
    sb.record(1, 100)  # 3rd win of player 1 decides column III
    assert np.asarray(sb.columns).tolist() == [[105, 15, 10], [20, 200, 100]]
    assert list(sb.column_winners) == [0, 1, 1]
    assert sb.match_over and sb.match_winner == 1
    assert list(sb.wins) == [3, 3]
