"""Pictures of the table (``render_mode="rgb_array"``, GIFs) and the notebook HTML views."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import render_test
from PIL import Image

from hgin_env import actions as A
from hgin_env import hollywood_gin_v0
from hgin_env.cards import parse_card
from hgin_env.game import build_deck
from hgin_env.match import Match
from hgin_env.render.image import GOLD, LAYOFF, card_face, save_gif, table_array, table_image
from hgin_env.scoring import Scoreboard

# The README's settlement: the defender lays 6♠ 7♠ and 9♥ off on the knocker's melds.
KNOCKER = "3S 4S 5S 9C 9D 9S AC 2C 3C 2H"
DEFENDER = "6S 7S 8D 8H KD QD JD 4C 5C 9H"


def _knocked_match() -> Match:
    m = Match(deck=build_deck(KNOCKER, DEFENDER, "KC", "KH"), first_dealer=1)
    for a in (A.PASS, A.PASS, A.DRAW_STOCK, A.KNOCK + parse_card("KH")):
        m.apply(a)
    return m


def _has_colour(img: np.ndarray, colour: tuple[int, int, int]) -> bool:
    return bool((img == np.array(colour, dtype=np.uint8)).all(axis=2).any())


def test_pettingzoo_render_test_rgb_array() -> None:
    assert "rgb_array" in hollywood_gin_v0.raw_env.metadata["render_modes"]
    render_test(lambda render_mode=None: hollywood_gin_v0.env(render_mode=render_mode))


def test_rgb_array_shows_the_showdown_once_then_the_new_deal() -> None:
    env = hollywood_gin_v0.env(render_mode="rgb_array")
    env.reset(seed=0, options={"deck": build_deck(KNOCKER, DEFENDER, "KC", "KH"), "first_dealer": 1})
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    assert first.shape[0] >= 400 and first.shape[1] >= 900  # readable at 1x
    for a in (A.PASS, A.PASS, A.DRAW_STOCK, A.KNOCK + parse_card("KH")):
        env.step(a)
    match = env.unwrapped.match
    showdown = env.render()
    np.testing.assert_array_equal(showdown, table_array(match, showdown=match.hand_history[0].record))
    assert _has_colour(showdown, LAYOFF)  # the laid-off cards are outlined
    after = env.render()  # the showdown is shown once, then the new deal
    np.testing.assert_array_equal(after, table_array(match, showdown=False))
    assert not np.array_equal(after, showdown)


def _knock_or_random(obs: dict, rng: np.random.Generator) -> int:
    """The first legal knock, else a random legal action (matches end in a few hands)."""
    legal = np.flatnonzero(obs["action_mask"])
    knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
    return int(knocks[0]) if knocks else int(rng.choice(legal))


def test_match_end_shows_the_last_hand_and_decided_columns() -> None:
    env = hollywood_gin_v0.env(render_mode="rgb_array", rules={"target": 20})
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(_knock_or_random(obs, rng))
    match = env.unwrapped.match
    assert match.is_over
    img = env.render()
    np.testing.assert_array_equal(img, table_array(match, showdown=match.hand_history[-1].record))
    assert _has_colour(img, GOLD)  # decided columns are filled with gold


def test_table_image_is_deterministic_and_sized_by_columns() -> None:
    g = Match(seed=5)
    np.testing.assert_array_equal(table_array(g), table_array(g))
    assert not np.array_equal(table_array(g, player=0), table_array(g, player=1))
    one = table_image(Match(rules="gin_us_uk", seed=5))
    assert one.width < table_image(g).width < table_image(Match(rules={"columns": 5}, seed=5)).width
    # A card face is drawn with its suit colour.
    face = np.asarray(card_face(parse_card("7H")))
    assert _has_colour(face[..., :3], (200, 16, 46))


def test_table_image_rejects_bad_input() -> None:
    g = Match(seed=1)
    with pytest.raises(TypeError, match="needs a duel hgin_env.match.Match, got str"):
        table_image("not a game")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs a duel hgin_env.match.Match, got Hand"):
        table_image(g.current_game)  # type: ignore[arg-type]  # the duel's hand, not its match
    with pytest.raises(TypeError, match="got format='three_hand' \\(match_image draws it\\)"):
        table_image(Match("hollywood_three_hand", seed=1))
    with pytest.raises(ValueError, match="player must be 0, 1 or None"):
        table_image(g, player=2)
    with pytest.raises(ValueError, match="no hand has ended yet"):
        table_image(g, showdown=True)
    with pytest.raises(TypeError, match="showdown must be"):
        table_image(g, showdown="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="names must be two strings"):
        table_image(g, names=["only one"])
    with pytest.raises(ValueError, match="outside 0..51"):
        card_face(52)


def test_save_gif_round_trip_and_errors(tmp_path: Path) -> None:
    g = _knocked_match()
    frames = [table_array(Match(deck=build_deck(KNOCKER, DEFENDER, "KC", "KH"), first_dealer=1)),
              table_image(g, showdown=True)]
    path = save_gif(frames, tmp_path / "m.gif", duration_ms=[300, 1500])
    with Image.open(path) as gif:
        assert gif.format == "GIF" and gif.n_frames == 2 and gif.size == frames[1].size
    with pytest.raises(ValueError, match="at least one frame"):
        save_gif([], tmp_path / "x.gif")
    with pytest.raises(ValueError, match="all frames need one size"):
        save_gif([frames[0], np.zeros((10, 10, 3), np.uint8)], tmp_path / "x.gif")
    with pytest.raises(ValueError, match="1 durations for 2 frames"):
        save_gif(frames, tmp_path / "x.gif", duration_ms=[100])


def test_scoreboard_and_match_html() -> None:
    board = Scoreboard()
    board.record(0, 60)
    board.record(0, 50)
    html = board._repr_html_()
    assert html.startswith("<table") and "<th" in html and "III" in html
    assert "font-weight:bold" in html and ">110<" in html and "match running" in html
    g = _knocked_match()
    page = g._repr_html_()
    assert "<table" in page and "player_0 hand" in page and "player_1 hand" in page
    assert "Hollywood sheet" in page and "player_0 knocks -&gt; player_0 scores 17" in page
    assert "stacked first deal" in page
    assert '<span style="color:#c8102e">' in page  # red suits



@pytest.mark.parametrize("profile", ["hollywood", "hollywood_three_hand", "hollywood_partnership"])
def test_a_match_of_each_format_shows_as_html(profile: str) -> None:
    """``Match._repr_html_`` (what a notebook shows for a match): its seed, the hand of
    every seat at a table (a three-hand seat sitting out has none), and its sheet; after a
    hand ends too, with that hand's result."""
    from hgin_env.render.text import grouped_hand_html

    match = Match(profile, seed=7)
    rng = np.random.default_rng(7)
    cell = "padding:2px 10px;text-align:left;border:1px solid #bbb"
    for finished in (0, 1, 3):
        while len(match.hand_history) < finished:  # knock when possible: hands end quickly
            legal = match.legal_actions()
            knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
            match.apply(int(knocks[0]) if knocks else int(rng.choice(legal)))
        page = match._repr_html_()
        assert page.startswith("<div><table") and f"({profile}), seed 7</caption>" in page
        shown = set()
        for table in match.tables:
            for p, seat in enumerate(table.seats):
                assert f">player_{seat} hand</th>" in page
                assert grouped_hand_html(table.game.hands[p]) in page
                shown.add(seat)
        assert len(shown) == match.num_players - (match.sitting_out is not None)
        if match.sitting_out is not None:
            assert f">player_{match.sitting_out} hand</th>" not in page
        assert page.endswith(match.sheet._repr_html_() + "</div>")
        assert ("last hand" in page) == bool(finished)
        if finished:  # the match's number of the hand, not its table's (a format table's Hand is 1)
            assert f'last hand</th><td style="{cell}">Hand {match.hand_history[-1].number}:' in page
        # A partnership's tables are named by their round (one round deals both), the others by the hand.
        deal = f"round {match.round_number + 1}" if match.format == "partnership" else f"hand {match.hand_number}"
        assert page.count(f'>{deal}, player_') == match.num_tables


# --------------------------------------------------------------------------- formats
def _format_env(profile: str, seed: int):
    from hgin_env.rules import get_rules

    rules = get_rules(profile).replace(target=40, name=profile).to_dict()
    env = hollywood_gin_v0.env(rules=rules, render_mode="rgb_array")
    env.reset(seed=seed)
    return env


def _play_rendering(env, seed: int, max_frames: int | None = None) -> list[np.ndarray]:
    """Play a match (knocking when possible), rendering every 60th move, after every hand
    and at the end (drawing costs more than playing)."""
    rng = np.random.default_rng(seed)
    frames = []
    hands = 0
    for n, _agent in enumerate(env.agent_iter()):
        obs, _, term, trunc, info = env.last()
        if n % 60 == 0 or info.get("hands_played", 0) > hands:
            hands = info.get("hands_played", 0)
            frames.append(env.render())
            if max_frames is not None and len(frames) >= max_frames:
                return frames
        if term or trunc:
            env.step(None)
            continue
        env.step(_knock_or_random(obs, rng))
    frames.append(env.render())
    return frames


@pytest.mark.parametrize("profile,tables", [("hollywood_three_hand", 1), ("gin_three_hand", 1),
                                            ("hollywood_partnership", 2), ("gin_partnership", 2)])
def test_format_pictures_show_the_whole_match(profile, tables) -> None:
    from hgin_env.render.image import LEFT_W, match_array

    env = _format_env(profile, 2)
    match = env.unwrapped.match
    first = env.render()
    np.testing.assert_array_equal(first, match_array(match, showdown=False))
    np.testing.assert_array_equal(first, match_array(match.clone(), showdown=False))  # deterministic
    # every table side by side, then the match's sheet
    assert first.dtype == np.uint8 and first.shape[0] == 454 and first.shape[1] > LEFT_W * tables + 300
    frames = _play_rendering(env, 2)
    assert len({f.shape for f in frames}) == 1  # one size for the whole match (GIFs)
    assert match.is_over
    last = frames[-1]
    np.testing.assert_array_equal(last, match_array(match, showdown=True))
    assert _has_colour(last, GOLD)  # decided columns on the match's sheet
    again = _play_rendering(_format_env(profile, 2), 2, max_frames=6)
    assert all(np.array_equal(a, b) for a, b in zip(frames, again, strict=False))


def test_partnership_picture_keeps_a_finished_tables_showdown_while_the_other_plays() -> None:
    from hgin_env.render.image import LEFT_W, match_array, match_image

    env = _format_env("hollywood_partnership", 5)
    match = env.unwrapped.match
    rng = np.random.default_rng(5)
    while all(t.running for t in match.tables):  # play until one table's hand ends
        legal = match.legal_actions()
        knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
        env.step(int(knocks[0]) if knocks else int(rng.choice(legal)))
    finished = next(t for t in match.tables if not t.running)
    img = env.render()
    assert _has_colour(img, GOLD)
    # that table's panel is its showdown, whatever showdown= asks; the other table plays on
    panel = np.s_[34:, LEFT_W * finished.index:LEFT_W * (finished.index + 1)]
    np.testing.assert_array_equal(img[panel], match_array(match, showdown=False)[panel])
    with pytest.raises(TypeError, match="needs a hgin_env.match.Match"):
        match_image(match.current_game)  # type: ignore[arg-type]


def test_duel_match_picture_is_the_table_picture() -> None:
    from hgin_env.match import Match
    from hgin_env.render.image import match_array

    m = Match(seed=5)
    np.testing.assert_array_equal(match_array(m), table_array(m))


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "gin_partnership"])
def test_pettingzoo_render_test_for_formats(profile) -> None:
    render_test(lambda render_mode=None: hollywood_gin_v0.env(rules=profile, render_mode=render_mode))


def test_rank_five_keeps_its_opening_at_1x() -> None:
    """The 5 is not a closed 6: right of its stem, between the top bar and the bowl, the 5
    has a notch of felt where the 6 has ink (the old one-pixel bold stroke filled it)."""
    from hgin_env.render.image import _rank_mask

    def notch(text: str) -> float:  # ink in the upper right of the glyph's box, below the bar
        m = np.asarray(_rank_mask(text, 17), dtype=float) / 255
        ys, xs = np.nonzero(m > 0.5)
        m = m[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
        h, w = m.shape
        return float(m[int(0.2 * h):int(0.36 * h) + 1, int(0.4 * w):].mean())

    assert notch("5") < 0.45 < notch("6")


def test_render_viewpoint_keeps_one_players_hand_face_up() -> None:
    """``render_viewpoint="player_0"``: every frame during a hand shows player_0's hand, as
    ``table_array(match, player=0)`` draws it, whoever acts; bad values are refused."""
    import numpy as np
    import pytest

    from hgin_env import hollywood_gin_v0
    from hgin_env.render.image import table_array

    env = hollywood_gin_v0.env(render_mode="rgb_array", render_viewpoint="player_0")
    env.reset(seed=3)
    acting = set()
    for _ in range(8):
        agent = env.agent_selection
        acting.add(agent)
        frame = env.render()
        assert np.array_equal(frame, table_array(env.unwrapped.match, player=0))
        obs = env.observe(agent)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert acting == {"player_0", "player_1"}
    with pytest.raises(ValueError, match="render_viewpoint"):
        hollywood_gin_v0.env(render_mode="rgb_array", render_viewpoint="player_2")
    with pytest.raises(ValueError, match="for the duel"):
        hollywood_gin_v0.env(rules="hollywood_three_hand", render_viewpoint="player_0")
