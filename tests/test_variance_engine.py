"""The variance-reduced estimate (arena.variance) on the real engine: a stock draw's
alternatives, the correction's mean ~0 within its interval on many hands, its reporting by
the tournament (and resuming) and eval.hands, the formats' matches played as without it."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from agents.spec import make_agent
from arena.matches import as_spec, play_match
from arena.tournament import run_tournament
from arena.variance import drawn_instead, recorder_for
from eval import hands as hands_cli
from hgin_env import actions as A
from hgin_env.cards import NUM_CARDS
from hgin_env.game import Hand
from hgin_env.match import Match
from hgin_env.rules import get_rules


def _after_a_stock_draw(seed: int) -> tuple[Hand, int]:
    game = Match("hollywood", seed=seed, single_hand=True).current_game
    while A.PASS in game.legal_actions():  # both pass the upcard, then the non-dealer draws
        game.apply(A.PASS)
    drawn = game.stock[-1]
    game.apply(A.DRAW_STOCK)
    return game, drawn


def test_a_draws_alternatives_hold_each_stock_card_once_and_the_first_is_the_actual():
    game, drawn = _after_a_stock_draw(3)
    drawer = game.current_player
    alts = drawn_instead(game, drawn)
    assert len(alts) == len(game.stock) + 1
    assert alts[0].hands == game.hands and alts[0].stock == game.stock
    held = set()
    for alt in alts:
        cards = [c for c in range(NUM_CARDS) if alt.hands[drawer] >> c & 1]
        new = set(cards) - {c for c in range(NUM_CARDS) if game.hands[drawer] >> c & 1}
        held |= new or {drawn}
        every = [c for p in (0, 1) for c in range(NUM_CARDS) if alt.hands[p] >> c & 1] + alt.stock + alt.discard_pile
        assert sorted(every) == list(range(NUM_CARDS))  # 52 cards, each once
    assert held == {drawn, *game.stock}
    assert game.hands[drawer] >> drawn & 1  # the real game is untouched
    with pytest.raises(ValueError, match="holds no card"):
        drawn_instead(game, game.stock[0])


def test_real_hands_correction_has_mean_zero_within_its_interval_and_tracks_the_points():
    out = hands_cli.duplicate_hands(make_agent("simple", seed=0), make_agent("simple", seed=1), deals=100,
                                    seed=54_000, reduce_variance=True)
    lo, hi = out["luck_ci"]
    assert lo < 0 < hi
    assert out["luck_beta"][0] > 0 and out["luck_beta"][1] > 0  # good luck, more points
    assert out["reduced_points_ci"][0] < out["reduced_points_per_hand"] < out["reduced_points_ci"][1]
    assert out["luck_seconds_per_hand"] > 0


def test_the_tournament_reports_the_luck_adjusted_rate_and_resumes_it(tmp_path):
    result = run_tournament(["simple", "random"], matches=4, seed=7, workers=1, progress=False,
                            out=tmp_path, reduce_variance=True)
    rows = result.rows
    assert all(isinstance(r["a_luck"], float) and r["luck_deals"] >= 1 for r in rows)
    s = result.summaries()[0]
    assert {"reduced_win_rate", "reduced_low", "reduced_high", "ci_width_ratio", "luck_beta"} <= set(s)
    assert "luck-adjusted A win %" in result.markdown()
    # enough seeds for intervals (the two played ones repeated under other seeds)
    many = dataclasses.replace(result, rows=[{**r, "seed": r["seed"] + 100 * k} for k in range(6) for r in rows])
    line = next(ln for ln in many.markdown().splitlines() if ln.startswith("| simple | random |") and "β" not in ln
                and ln.count("|") == 10)
    lo, hi = many.summaries()[0]["reduced_low"], many.summaries()[0]["reduced_high"]
    assert f"{100 * lo:.1f}–{100 * hi:.1f}" in line
    result.save(tmp_path, plot=False)
    assert json.loads((tmp_path / "tournament.json").read_text())["reduce_variance"] is True
    again = run_tournament(["simple", "random"], matches=4, seed=7, workers=1, progress=False,
                           out=tmp_path, reduce_variance=True)
    assert again.played == 0 and [r["a_luck"] for r in again.rows] == [r["a_luck"] for r in rows]
    plain = run_tournament(["simple", "random"], matches=4, seed=7, workers=1, progress=False)
    assert "luck-adjusted" not in plain.markdown() and "a_luck" not in plain.rows[0]
    assert [r["winner_side"] for r in plain.rows] == [r["winner_side"] for r in rows]  # same play


def test_the_luck_is_reproducible_and_leaves_play_alone_in_every_format():
    rules = get_rules("hollywood")
    first = hands_cli.play_hand(make_agent("simple", seed=0), make_agent("simple", seed=1), 5, 0, rules,
                                recorder_for(rules))
    second = hands_cli.play_hand(make_agent("simple", seed=0), make_agent("simple", seed=1), 5, 0, rules,
                                 recorder_for(rules))
    assert first["a_luck"] == second["a_luck"]
    for name in ("hollywood_three_hand", "hollywood_partnership"):
        fmt = get_rules(name)
        a, b = as_spec("simple").build(fmt), as_spec("expert").build(fmt)
        for seating in range(2):
            plain = play_match(a, b, 3, seating, fmt)
            luck = play_match(a, b, 3, seating, fmt, luck=recorder_for(fmt))
            assert {k: v for k, v in luck.items() if k in plain and k != "seconds"} == \
                {k: v for k, v in plain.items() if k != "seconds"}
            assert np.isfinite(luck["a_luck"]) and luck["luck_deals"] >= 1 and luck["luck_draws"] >= 1
    with pytest.raises(ValueError, match="values 'hollywood'"):
        recorder_for(rules).start(Match("hollywood_three_hand", seed=1), (0,), 1)


def test_eval_hands_prints_both_figures(capsys):
    out = hands_cli.main(["--agents", "simple", "random", "--deals", "4", "--reduce-variance"])
    printed = json.loads(capsys.readouterr().out)
    assert printed["reduced_points_per_hand"] == out["reduced_points_per_hand"]
    assert "points_ci_width_ratio" in printed
