"""The duel's Scoreboard is the two-row Sheet: one set of attributes, one column rule, one
settlement, one to_dict/str/HTML, with the duel's names and its draw rule on top."""

from __future__ import annotations

import copy
import pickle

import pytest

from hgin_env.rules import Rules
from hgin_env.scoring import Scoreboard
from hgin_env.sheets import Sheet


def test_scoreboard_is_a_two_row_sheet_with_the_duel_names():
    board = Scoreboard("gin_classic")
    assert isinstance(board, Sheet) and board.size == 2 and board.labels == ("player_0", "player_1")
    board.record(0, 40)
    board.record_dead()
    assert board.dead_hands == board.void == 1
    assert list(board.to_dict()) == ["columns", "column_winners", "wins", "settlement", "dead_hands",
                                     "match_over", "match_winner"]
    assert list(Sheet("gin_three_hand", 3).to_dict()) == [
        "labels", "columns", "column_winners", "wins", "boxes", "settlement", "void", "match_over",
        "match_winner"]
    with pytest.raises(ValueError, match="player must be an int in 0..1"):
        board.record(2, 5)
    with pytest.raises(TypeError):
        Scoreboard(Rules(), 3)  # the size is the duel's


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda b: pickle.loads(pickle.dumps(b)), Scoreboard.copy])
def test_scoreboard_copies_are_independent(clone):
    board = Scoreboard()
    board.record(1, 30)
    board.record_dead()
    twin = clone(board)
    assert type(twin) is Scoreboard and twin.to_dict() == board.to_dict() and str(twin) == str(board)
    twin.record(1, 80)
    twin.record_dead()
    assert board.to_dict()["columns"] == [[0, 0, 0], [30, 0, 0]] and board.dead_hands == 1
    assert twin.column_winners[0] == 1 and twin.dead_hands == 2


def test_even_split_is_a_duel_draw_but_a_sheet_tie_break():
    rules = Rules(columns=2, target=10)
    board, sheet = Scoreboard(rules), Sheet(rules, 2)
    for row, points in ((0, 12), (1, 5), (1, 20)):
        board.record(row, points)
        sheet.record(row, points)
    assert board.columns_won == sheet.columns_won == [1, 1]
    assert board.match_winner is None and sheet.match_winner == 1  # totals 12 v 25


def test_format_sheets_render_html_with_their_labels():
    sheet = Sheet("gin_three_hand", 3, ("player_0", "player_1", "player_2"))
    sheet.record_void()
    sheet.record(2, 100)
    html = sheet._repr_html_()
    assert "player_2 wins" in html and "1 void result" in html and "player_2</th>" in html
