"""Every shown result of a settling profile (004's gin_classic) gives the settled totals,
game, shutout and box bonuses included, and the difference the loser pays (RULES.md §12)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from helpers import play_random

from hgin_cli.narration import DuelNarration, TablesNarration
from hgin_env.match import Match
from hgin_env.render import render_table
from hgin_env.render.image import table_image
from hgin_env.scoring import Scoreboard
from hgin_env.sheets import Sheet

SETTLED = "settled with the bonuses: player_0 361, player_1 142; player_1 pays player_0 219"


def board_101_to_62() -> Scoreboard:
    """004's example: won 101 to 62 with 8 hands against 4 -> 101 + 100 + 8 x 20 = 361 and
    62 + 4 x 20 = 142."""
    board = Scoreboard("gin_classic")
    for points in (20, 20, 11, 11):
        board.record(1, points)
    for _ in range(7):
        board.record(0, 12)
    assert not board.is_settled and "settled" not in str(board)
    assert board.settled_totals().tolist() == [84, 62]
    assert board.record(0, 17) == [0]
    return board


def test_scoreboard_str_shows_the_settlement_and_the_difference_paid():
    board = board_101_to_62()
    assert board.columns[:, 0].tolist() == [101, 62]
    assert board.settled_totals().tolist() == [361, 142]
    assert board.settlement_text() == SETTLED
    assert str(board).splitlines()[-1] == SETTLED
    assert SETTLED in board._repr_html_()
    assert board.settlement_text(("ann", "bob")).endswith("bob pays ann 219")


def test_shutout_bonus_is_in_the_settled_totals():
    board = Scoreboard("gin_classic")
    for points in (50, 50):
        board.record(1, points)
    assert board.settled_totals().tolist() == [0, 100 + 200 + 2 * 20]
    assert board.settlement_text().endswith("player_0 pays player_1 340")


def test_profiles_without_bonuses_show_no_settlement(rng):
    match = play_random(Match(rules="gin_us_uk", seed=1), rng, prefer_knock=True)
    assert not match.sheet.is_settled
    assert "settled" not in str(match.sheet)
    assert "settled" not in DuelNarration(match, ["a", "b"], True).winner()


def test_cli_result_line_gives_running_and_settled_totals():
    fake = SimpleNamespace(sheet=board_101_to_62(), hand_history=[None] * 12, truncated=False)
    assert DuelNarration(fake, ["ann", "bob"], True).winner() == (
        "Match over after 12 hands: ann wins, 101 to 62; settled with the bonuses: ann 361, "
        "bob 142; bob pays ann 219.")


def test_rendered_table_and_image_of_a_finished_gin_classic_match():
    match = play_random(Match(rules="gin_classic", seed=4), np.random.default_rng(1), prefer_knock=True)
    board = match.sheet
    assert board.is_settled and match.current_game.scoreboard is board  # the last hand, on the match's sheet
    totals = board.settled_totals()
    w = match.match_winner
    assert totals[w] - totals[1 - w] == (board.final_scores()[w] - board.final_scores()[1 - w]).sum()
    text = render_table(match.current_game, player=0)
    assert board.settlement_text() in text
    assert f"pays player_{w} {int(totals[w] - totals[1 - w])}" in text
    plain = table_image(match, player=0)
    assert plain.size[0] > 0 and table_image(match, showdown=True).size == plain.size


def test_format_sheets_show_the_settlement_and_what_each_pays():
    sheet = Sheet("gin_three_hand", 3, ("player_0", "player_1", "player_2"))
    for row, points in ((1, 30), (2, 10), (0, 50)):
        sheet.record(row, points)
    assert not sheet.is_settled and "settled" not in str(sheet)
    sheet.record(0, 51)
    # 101 + 100 game + 2 x 20 box; 30 + 20; 10 + 20.
    assert sheet.settled_totals().tolist() == [241, 50, 30]
    text = ("settled with the bonuses: player_0 241, player_1 50, player_2 30; "
            "player_1 pays player_0 191, player_2 pays player_0 211")
    assert sheet.settlement_text() == text
    assert str(sheet).splitlines()[-1] == text
    match = SimpleNamespace(truncated=False, match_winner=0, format="three_hand", sheet=sheet)
    assert TablesNarration(match, ["ann", "bob", "cy"], True).winner() == f"Match over: ann wins; {text}."
