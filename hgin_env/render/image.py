"""Pictures of the table, drawn with Pillow: the environment's ``rgb_array`` mode and GIFs.

:func:`table_image` draws a duel (a two-seat :class:`~hgin_env.match.Match`) as a ``PIL.Image``:

- during a hand: the acting player's cards grouped into melds (loose cards sorted by suit
  and rank), the opponent's cards face down (those it took from the discard pile, which
  are public, face up), the stock with its count, the discard pile with its top card, and
  whose turn it is;
- at a showdown (``showdown=record`` or a finished match): both hands as the hand result
  shows them, the knocker's melds with the defender's lay-offs on them (outlined), each
  side's deadwood and the points scored;
- always: the Hollywood sheet, the column totals of both players with decided columns
  marked and the hands won.

:func:`table_array` returns the same picture as an ``(H, W, 3)`` ``uint8`` array (what
``render_mode="rgb_array"`` returns) and :func:`save_gif` writes frames as an animated GIF.

:func:`match_image` / :func:`match_array` draw a whole :class:`~hgin_env.match.Match`, what
the environment renders in a format: a title bar, then every table of the match side by
side, each with its own title (its two seats, with their teams in a partnership; who deals
and sits out in three-hand) and the same hand or showdown panel as the duel's, then the
match's sheet (one row per player or team, decided columns gold, who sits out, the dealing
team, the match result and settlement). One format's pictures all have one size (454 px
high; 1054 px wide in three-hand, 1694 px in a partnership with 3 columns). For a duel
:func:`match_image` is :func:`table_image` of its table, unchanged.
Suits are drawn as shapes, so no font with card symbols is needed; text uses Pillow's
bundled font, so pictures look the same on every machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..cards import NUM_CARDS, NUM_RANKS, mask_to_cards
from ..game import Hand, HandRecord, Phase
from ..rules import get_rules
from .text import hand_groups

if TYPE_CHECKING:
    from ..match import Match
    from ..sheets import Sheet

CARD_W, CARD_H = 50, 70
#: Horizontal step between overlapping cards of one meld, and the gap between groups.
MELD_STEP, GROUP_GAP = 31, 14
FELT = (28, 84, 56)
FELT_DARK = (20, 62, 41)
INK = (245, 245, 235)
MUTED = (190, 210, 195)
GOLD = (250, 205, 80)
LAYOFF = (255, 140, 0)
RED = (200, 16, 46)
BLACK = (25, 25, 25)
BACK = (40, 70, 150)
LEFT_W = 640  # width of the cards area; the sheet is to its right
NAME_W = 150  # width of the player names in the sheet
HEIGHT = 420
_SUPERSAMPLE = 4
_RANK_TEXT = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
_COLUMN_NAMES = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX")


# --------------------------------------------------------------------------- fonts and shapes
@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font at ``size`` px (the fixed bitmap font if FreeType is missing)."""
    return ImageFont.load_default(size=size)


def _text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int,
          fill: tuple[int, int, int] = INK, bold: bool = False, anchor: str = "la") -> None:
    draw.text(xy, text, font=_font(size), fill=fill, anchor=anchor,
              stroke_width=1 if bold else 0, stroke_fill=fill)


@cache
def _rank_mask(text: str, size: int) -> Image.Image:
    """A card's rank as an antialiased mask, drawn at ``_SUPERSAMPLE`` x and scaled down.

    Why not ``_text(..., bold=True)``: a one-pixel stroke at 17 px closes the gap in the 5,
    which then reads as a 6 at 1x. Drawn large with a stroke of a quarter of a 1x pixel per
    side, the digits keep their openings and still read as bold."""
    big_font = _font(size * _SUPERSAMPLE)
    left, top, right, bottom = big_font.getbbox(text, stroke_width=_SUPERSAMPLE // 2)
    mask = Image.new("L", (right + _SUPERSAMPLE, bottom + _SUPERSAMPLE), 0)
    ImageDraw.Draw(mask).text((0, 0), text, font=big_font, fill=255, stroke_width=_SUPERSAMPLE // 2, stroke_fill=255)
    width, height = -(-mask.width // _SUPERSAMPLE), -(-mask.height // _SUPERSAMPLE)
    return mask.resize((width, height), Image.Resampling.LANCZOS)


def _fit(text: str, size: int, width: int) -> str:
    """``text`` cut (ending in "..") so that it is at most ``width`` px wide at ``size`` px."""
    font = _font(size)
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + "..") > width:
        text = text[:-1]
    return text + ".."


def _suit_shape(draw: ImageDraw.ImageDraw, suit: int, size: int) -> None:
    """Draw suit ``suit`` (0 = clubs .. 3 = spades) filling a ``size`` x ``size`` box at (0, 0)."""
    s = float(size)

    def circle(cx: float, cy: float, r: float) -> None:
        draw.ellipse([(cx - r) * s, (cy - r) * s, (cx + r) * s, (cy + r) * s], fill=255)

    def poly(*pts: tuple[float, float]) -> None:
        draw.polygon([(x * s, y * s) for x, y in pts], fill=255)

    if suit == 1:  # diamond
        poly((0.5, 0.0), (0.88, 0.5), (0.5, 1.0), (0.12, 0.5))
    elif suit == 2:  # heart
        circle(0.28, 0.32, 0.25)
        circle(0.72, 0.32, 0.25)
        poly((0.05, 0.42), (0.95, 0.42), (0.5, 0.96))
    elif suit == 3:  # spade
        circle(0.28, 0.56, 0.23)
        circle(0.72, 0.56, 0.23)
        poly((0.06, 0.48), (0.94, 0.48), (0.5, 0.02))
        poly((0.5, 0.6), (0.32, 1.0), (0.68, 1.0))
    else:  # club
        circle(0.5, 0.26, 0.22)
        circle(0.26, 0.6, 0.22)
        circle(0.74, 0.6, 0.22)
        circle(0.5, 0.55, 0.12)
        poly((0.5, 0.5), (0.32, 1.0), (0.68, 1.0))


@cache
def _suit_mask(suit: int, size: int) -> Image.Image:
    """An antialiased ``L`` mask of a suit symbol, ``size`` px square (drawn 4x, then reduced)."""
    big = Image.new("L", (size * _SUPERSAMPLE, size * _SUPERSAMPLE), 0)
    _suit_shape(ImageDraw.Draw(big), suit, size * _SUPERSAMPLE)
    return big.resize((size, size), Image.Resampling.LANCZOS)


def _suit_colour(suit: int) -> tuple[int, int, int]:
    return RED if suit in (1, 2) else BLACK


@cache
def _card_outline(fill: tuple[int, int, int], border: tuple[int, int, int], width: int) -> Image.Image:
    """A rounded card shape (RGBA), drawn at 4x and reduced so that its corners are smooth."""
    k = _SUPERSAMPLE
    big = Image.new("RGBA", (CARD_W * k, CARD_H * k), (0, 0, 0, 0))
    ImageDraw.Draw(big).rounded_rectangle([0, 0, CARD_W * k - 1, CARD_H * k - 1], radius=6 * k,
                                          fill=fill + (255,), outline=border + (255,), width=width * k)
    return big.resize((CARD_W, CARD_H), Image.Resampling.LANCZOS)


@cache
def card_face(card: int) -> Image.Image:
    """The face of card ``card`` (id 0..51) as an RGBA image of ``CARD_W`` x ``CARD_H`` px."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card} is outside 0..51")
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    img = _card_outline((252, 252, 248), (120, 120, 120), 1).copy()
    colour = _suit_colour(suit)
    glyph = _rank_mask(_RANK_TEXT[rank], 17)
    img.paste(Image.new("RGBA", glyph.size, colour + (255,)), (4 if rank != 9 else 2, 3), glyph)
    pip = _suit_mask(suit, 13)
    img.paste(Image.new("RGBA", pip.size, colour + (255,)), (5, 23), pip)
    big = _suit_mask(suit, 24)
    img.paste(Image.new("RGBA", big.size, colour + (255,)), (CARD_W - 29, CARD_H - 30), big)
    return img


@cache
def card_back() -> Image.Image:
    """The back of a card (RGBA, ``CARD_W`` x ``CARD_H`` px)."""
    img = _card_outline(BACK, (235, 235, 235), 2).copy()
    draw = ImageDraw.Draw(img)
    for x in range(-CARD_H, CARD_W, 8):  # a diagonal lattice inside the border
        draw.line([(x, CARD_H), (x + CARD_H, 0)], fill=(70, 100, 180), width=1)
    inner = Image.new("L", img.size, 0)
    ImageDraw.Draw(inner).rounded_rectangle([5, 5, CARD_W - 6, CARD_H - 6], radius=3, fill=255)
    plain = _card_outline(BACK, (235, 235, 235), 2)
    return Image.composite(img, plain, inner)


@cache
def card_back_edge() -> Image.Image:
    """A plain face-side card (no rank): the cards under the top of the discard pile."""
    return _card_outline((235, 235, 228), (120, 120, 120), 1)


# --------------------------------------------------------------------------- layout helpers
def _paste(canvas: Image.Image, card_img: Image.Image, x: int, y: int,
           outline: tuple[int, int, int] | None = None) -> None:
    canvas.paste(card_img, (x, y), card_img)
    if outline is not None:
        ImageDraw.Draw(canvas).rounded_rectangle([x - 2, y - 2, x + CARD_W + 1, y + CARD_H + 1],
                                                 radius=7, outline=outline, width=3)


def _group_width(n: int) -> int:
    return 0 if n == 0 else CARD_W + MELD_STEP * (n - 1)


def _sorted_meld(cards: Sequence[int]) -> list[int]:
    """Cards of a meld in table order: a run by rank, a set by suit (both = id order)."""
    return sorted(cards)


def _draw_groups(canvas: Image.Image, x: int, y: int, groups: Sequence[tuple[str, Sequence[int]]],
                 outlined: frozenset[int] = frozenset()) -> int:
    """Draw card groups left to right from (x, y), each labelled underneath ("meld" or
    "deadwood 12"); cards in ``outlined`` get a coloured frame. Returns the x after the last."""
    draw = ImageDraw.Draw(canvas)
    for label, cards in groups:
        if not cards:
            continue
        width = _group_width(len(cards))
        for i, c in enumerate(cards):
            _paste(canvas, card_face(c), x + i * MELD_STEP, y, LAYOFF if c in outlined else None)
        bar_y = y + CARD_H + 5
        colour = GOLD if label == "meld" else MUTED
        draw.line([(x + 2, bar_y), (x + width - 3, bar_y)], fill=colour, width=2)
        _text(draw, (x + width / 2, bar_y + 3), label, 13, colour, anchor="ma")
        x += width + GROUP_GAP
    return x


def _hand_groups(mask: int) -> tuple[list[tuple[str, list[int]]], int]:
    """A hand's melds then its loose cards (as the text render groups them), and the deadwood."""
    melds, loose, dw = hand_groups(mask)
    groups = [("meld", list(m)) for m in melds]
    if loose:
        groups.append((f"deadwood {dw}", list(loose)))
    return groups, dw


def _player_name(names: Sequence[str] | None, p: int) -> str:
    return names[p] if names is not None else f"player_{p}"


# --------------------------------------------------------------------------- panels
def _draw_sheet_grid(draw: ImageDraw.ImageDraw, sheet: Sheet, x0: int, y: int, name_w: int,
                     labels: Sequence[str], muted_row: int | None = None) -> int:
    """The sheet's grid, for the duel's board and the formats' sheets alike: a header row
    of column names and "wins", then one row per sheet row (its label, one cell per column,
    decided columns filled with gold, unopened ones "-", its wins). ``muted_row`` greys a
    label (the three-hand player sitting out). Returns the y below the grid."""
    n, cell_w = sheet.num_columns, 46
    for j in range(n):
        _text(draw, (x0 + 12 + name_w + cell_w * j + cell_w / 2, y), _COLUMN_NAMES[j], 15, MUTED, anchor="ma")
    _text(draw, (x0 + 12 + name_w + cell_w * n + 26, y), "wins", 14, MUTED, anchor="ma")
    for p in range(sheet.size):
        row_y = y + 28 + 40 * p
        _text(draw, (x0 + 12, row_y + 8), _fit(labels[p], 14, name_w - 6), 14, MUTED if p == muted_row else INK)
        for j in range(n):
            cx = x0 + 12 + name_w + cell_w * j
            box = [cx + 2, row_y, cx + cell_w - 3, row_y + 32]
            if sheet.column_winners[j] == p:
                draw.rounded_rectangle(box, radius=5, fill=GOLD)
                colour = BLACK
            else:
                draw.rounded_rectangle(box, radius=5, outline=(60, 100, 75), width=1)
                colour = INK
            text = str(int(sheet.columns[p, j])) if j < sheet.wins[p] else "-"
            _text(draw, (cx + cell_w / 2, row_y + 9), text, 15, colour, anchor="ma")
        _text(draw, (x0 + 12 + name_w + cell_w * n + 26, row_y + 9), str(sheet.wins[p]), 15, INK, anchor="ma")
    return y + 28 + 40 * sheet.size + 16


def _draw_sheet(canvas: Image.Image, match: Match, x0: int, names: Sequence[str] | None) -> None:
    """The Hollywood sheet: one column per contest, decided columns filled with gold."""
    board = match.sheet
    n = board.num_columns
    draw = ImageDraw.Draw(canvas)
    width = canvas.width - x0 - 12
    draw.rounded_rectangle([x0, 44, x0 + width, HEIGHT - 14], radius=8, fill=FELT_DARK)
    _text(draw, (x0 + 12, 54), "Hollywood sheet", 17, INK)
    rules = get_rules(match.rules)
    _text(draw, (x0 + 12, 78), f"{n} column{'s' if n > 1 else ''} to {rules.target}", 13, MUTED)
    y = _draw_sheet_grid(draw, board, x0, 108, NAME_W, [_player_name(names, p) for p in (0, 1)])
    won = board.columns_won
    lines = [f"columns won: {won[0]} - {won[1]}"]
    if board.dead_hands:
        lines.append(f"dead hands: {board.dead_hands}")
    if board.match_over:
        winner = board.match_winner
        lines.append("match over: " + ("a draw" if winner is None else f"{_player_name(names, winner)} wins"))
    if board.is_settled:  # the totals paid on, with the game, shutout and box bonuses
        totals = board.settled_totals()
        lines.append(f"settled with bonuses: {int(totals[0])} - {int(totals[1])}")
        diff = int(totals[0] - totals[1])
        if diff:
            payer, payee = (1, 0) if diff > 0 else (0, 1)
            lines.append(_fit(f"{_player_name(names, payer)} pays {_player_name(names, payee)} "
                              f"{abs(diff)}", 14, width - 24))
    lines.append("gold: column decided (won)")
    for i, line in enumerate(lines):
        _text(draw, (x0 + 12, y + 22 * i), line, 14, GOLD if line.startswith("match over") else MUTED)


def _phase_text(game: Hand) -> str:
    if game.phase == Phase.FIRST_UPCARD:
        return "take the first upcard or pass"
    if game.phase == Phase.DRAW:
        if game.forced_stock_draw or not game.discard_pile:
            return "draw from the stock"
        return "draw from the stock or take the discard"
    return "discard a card or knock"


def _draw_playing(canvas: Image.Image, game: Hand, player: int, names: Sequence[str] | None) -> None:
    draw = ImageDraw.Draw(canvas)
    other = 1 - player
    # The opponent: its cards face down, except those it took from the pile (public).
    known = mask_to_cards(game.known_cards[other])
    count = game.hands[other].bit_count()
    _text(draw, (16, 46), f"{_player_name(names, other)}: {count} cards"
          + (", face up: taken from the discard pile" if known else ""), 14, MUTED)
    x = 16
    for c in known:
        _paste(canvas, card_face(c), x, 66)
        x += 20
    for _ in range(count - len(known)):
        _paste(canvas, card_back(), x, 66)
        x += 20
    # Stock and discard pile.
    y = 158
    if game.stock:
        for i in range(min(3, len(game.stock))):
            _paste(canvas, card_back(), 16 + 2 * i, y - 2 * i)
    else:
        draw.rounded_rectangle([16, y, 16 + CARD_W, y + CARD_H], radius=6, outline=MUTED, width=1)
    _text(draw, (16 + CARD_W / 2 + 2, y + CARD_H + 6), f"stock {len(game.stock)}", 14, INK, anchor="ma")
    px = 110
    pile = game.discard_pile
    below = min(len(pile) - 1, 6)  # the edges of a few cards under the top one
    for i in range(below):
        _paste(canvas, card_back_edge(), px + 4 * i, y)
    if pile:
        _paste(canvas, card_face(pile[-1]), px + 4 * max(below, 0), y)
    if not pile:
        draw.rounded_rectangle([px, y, px + CARD_W, y + CARD_H], radius=6, outline=MUTED, width=1)
    _text(draw, (px, y + CARD_H + 6), f"discard pile ({len(pile)})", 14, INK)
    info_x = 270
    rules = get_rules(game.rules)
    _text(draw, (info_x, y + 2), f"{_player_name(names, game.current_player)} to act:", 16, GOLD)
    _text(draw, (info_x, y + 26), _phase_text(game), 15, INK)
    limit = f"knock limit {game.knock_limit}" + (f", hand x{game.multiplier}" if game.multiplier > 1 else "")
    _text(draw, (info_x, y + 50), limit + f", gin bonus {rules.gin_bonus}", 14, MUTED)
    # The shown hand, grouped into melds.
    groups, dw = _hand_groups(game.hands[player])
    _text(draw, (16, 268), f"{_player_name(names, player)}'s hand: deadwood {dw}", 16, INK)
    taken = game.taken_card
    _draw_groups(canvas, 16, 292, groups, frozenset([taken]) if taken >= 0 else frozenset())
    if taken >= 0:
        _text(draw, (16, 396), "outlined: just taken from the discard pile (may not be discarded)", 13, LAYOFF)


def _what_happened(record: HandRecord, names: Sequence[str] | None, number: int | None = None) -> str:
    number = record.number if number is None else number
    if record.kind == "dead":
        return f"Hand {number}: dead hand, no score"
    k = record.knocker
    assert k is not None and record.winner is not None
    how = {"gin": "goes gin", "big_gin": "goes big gin", "undercut": "knocks and is undercut"}.get(
        record.kind, "knocks")
    return (f"Hand {number}: {_player_name(names, k)} {how}; "
            f"{_player_name(names, record.winner)} scores {record.points}")


def _draw_hand_result(canvas: Image.Image, record: HandRecord, names: Sequence[str] | None,
                      number: int | None = None) -> None:
    """A finished hand: what happened, then both hands in melds with the lay-offs outlined
    (``number``: the hand's number in the match, default the record's)."""
    draw = ImageDraw.Draw(canvas)
    r = record.result
    _text(draw, (16, 48), _what_happened(record, names, number), 17, GOLD)
    if record.kind == "dead" or record.knocker is None:
        for row, p in enumerate((0, 1)):
            groups, dw = _hand_groups(sum(1 << c for c in record.final_hands[p]))
            y = 84 + 150 * row
            _text(draw, (16, y), f"{_player_name(names, p)}: deadwood {dw}", 15, INK)
            _draw_groups(canvas, 16, y + 24, groups)
    else:
        k, d = record.knocker, 1 - record.knocker
        laid: dict[int, list[int]] = {}
        for card, i in r.layoffs:
            laid.setdefault(i, []).append(card)
        k_groups = [("meld", _sorted_meld(list(m) + laid.get(i, []))) for i, m in enumerate(r.knocker_melds)]
        if r.knocker_deadwood_cards:
            k_groups.append((f"deadwood {r.knocker_deadwood}", list(r.knocker_deadwood_cards)))
        d_groups = [("meld", _sorted_meld(m)) for m in r.defender_melds]
        if r.defender_deadwood_cards:
            d_groups.append((f"deadwood {r.defender_deadwood}", list(r.defender_deadwood_cards)))
        role = "goes gin" if r.kind in ("gin", "big_gin") else "knocks"
        _text(draw, (16, 84), f"{_player_name(names, k)} {role}: deadwood {r.knocker_deadwood}", 15, INK)
        outlined = frozenset(c for c, _ in r.layoffs)
        _draw_groups(canvas, 16, 108, k_groups, outlined)
        after = " after lay-offs" if r.layoffs else ""
        _text(draw, (16, 234), f"{_player_name(names, d)}: deadwood {r.defender_deadwood}{after}", 15, INK)
        _draw_groups(canvas, 16, 258, d_groups)
        if r.layoffs:
            _text(draw, (16, 362), f"outlined: laid off by {_player_name(names, d)} on the knocker's melds",
                  13, LAYOFF)


def _draw_showdown(canvas: Image.Image, match: Match, record: HandRecord, names: Sequence[str] | None) -> None:
    _draw_hand_result(canvas, record, names)
    draw = ImageDraw.Draw(canvas)
    if match.is_over:
        board = match.sheet
        won = board.columns_won
        note = f"match over after {len(match.hand_history)} hands, columns {won[0]} - {won[1]}"
        if board.is_settled:
            totals = board.settled_totals()
            note += f", settled with bonuses {int(totals[0])} - {int(totals[1])}"
    elif record is match.hand_history[-1].record:
        game = match.current_game
        note = f"next: hand {game.hand_number}, {_player_name(names, game.dealer)} deals"
    else:
        note = ""
    _text(draw, (16, 384), note, 14, MUTED)


# --------------------------------------------------------------------------- public API
def table_image(match: Match, player: int | None = None, showdown: HandRecord | bool | None = None,
                names: Sequence[str] | None = None) -> Image.Image:
    """A duel's table as an RGB ``PIL.Image`` (readable at 1x: 1028 x 420 px with 3 columns).

    ``match`` is a duel :class:`~hgin_env.match.Match`. ``player`` is whose hand is shown
    face up during a hand (default: the acting player). ``showdown`` shows a finished hand
    instead: a ``HandRecord``, or ``True`` for the last one; a finished match always shows
    its last hand. ``names`` replaces ``player_0`` / ``player_1`` in the labels.
    """
    from ..match import Match

    if not isinstance(match, Match) or match.format != "duel":
        what = f"format={match.format!r} (match_image draws it)" if isinstance(match, Match) \
            else type(match).__name__
        raise TypeError(f"table_image needs a duel hgin_env.match.Match, got {what}")
    if player is not None and player not in (0, 1):
        raise ValueError(f"player must be 0, 1 or None, got {player!r}")
    if names is not None and (len(names) != 2 or not all(isinstance(n, str) for n in names)):
        raise ValueError(f"names must be two strings, got {names!r}")
    record: HandRecord | None
    if isinstance(showdown, HandRecord):
        record = showdown
    elif showdown is True or (showdown is None and match.is_over):
        if not match.hand_history:
            raise ValueError("showdown=True needs a finished hand; no hand has ended yet")
        record = match.hand_history[-1].record
    elif showdown in (None, False):
        record = None
    else:
        raise TypeError(f"showdown must be a HandRecord, True, False or None, got {showdown!r}")
    game = match.current_game
    n = match.sheet.num_columns
    width = LEFT_W + 12 + NAME_W + 46 * n + 52 + 24 + 12
    canvas = Image.new("RGB", (width, HEIGHT), FELT)
    draw = ImageDraw.Draw(canvas)
    draw.rectangle([0, 0, width, 34], fill=FELT_DARK)
    rules = get_rules(game.rules)
    head = (f"Hollywood Gin ({rules.name})   hand {game.hand_number}   "
            f"{_player_name(names, game.dealer)} deals   knock limit {game.knock_limit}")
    if record is not None:
        head = f"Hollywood Gin ({rules.name})   showdown of hand {record.number}"
    _text(draw, (14, 9), head, 16, INK)
    if record is not None:
        _draw_showdown(canvas, match, record, names)
    else:
        p = game.current_player if player is None else player
        _draw_playing(canvas, game, p, names)
    _draw_sheet(canvas, match, LEFT_W + 12, names)
    return canvas


def table_array(match: Match, player: int | None = None, showdown: HandRecord | bool | None = None,
                names: Sequence[str] | None = None) -> np.ndarray:
    """:func:`table_image` as an ``(H, W, 3)`` ``uint8`` array (the ``rgb_array`` render)."""
    return np.asarray(table_image(match, player, showdown, names), dtype=np.uint8)


# --------------------------------------------------------------------------- formats
#: Width of the row labels on a format's sheet (team labels name both seats).
MATCH_NAME_W = 176
#: Height of the match's title bar above the tables.
TITLE_H = 34


def seat_label(match: Match, seat: int) -> str:
    """``player_3`` (three-hand), ``player_3 (team 1)`` (partnership)."""
    if match.format == "partnership":
        return f"player_{seat} (team {seat % 2})"
    return f"player_{seat}"


def _row_labels(match: Match) -> list[str]:
    if match.format == "partnership":
        return [f"team {t}: player_{a} & {b}" for t, (a, b) in enumerate(match.teams or ())]
    return [f"player_{i}" for i in range(match.num_players)]


def _match_panels(match: Match, showdown: bool) -> list[dict]:
    """What each table panel shows: ``seats``, and a ``record`` (a finished hand, its
    showdown) or a ``game`` (a hand in play), ``number`` (the hand in the match, None for a
    partnership hand in play: hands are numbered as they end),
    ``acting`` (the table that acts next), ``sitting_out``."""
    history = match.hand_history
    if match.format == "three_hand":
        if showdown and history:
            h = history[-1]
            return [{"seats": h.seats, "record": h.record, "number": h.number, "acting": False,
                     "sitting_out": h.sitting_out, "table": 0}]
        t = match.tables[0]
        return [{"seats": t.seats, "game": t.game, "number": len(history) + 1, "acting": True,
                 "sitting_out": t.sitting_out, "table": 0}]
    rounds = match.round_history
    if showdown and rounds and (match.is_over or history[-1].round != match.round_number):
        return [{"seats": h.seats, "record": h.record, "number": h.number, "acting": False,
                 "sitting_out": None, "table": h.table} for h in rounds[-1].hands]
    panels = []
    this_round = [h for h in history if h.round == match.round_number]
    for t in match.tables:
        if t.running:
            panels.append({"seats": t.seats, "game": t.game, "acting": t.index == match.current_table,
                           "number": None, "sitting_out": None, "table": t.index})
        else:  # this table's hand is over; the other table plays on
            h = next(h for h in this_round if h.table == t.index)
            panels.append({"seats": t.seats, "record": h.record, "number": h.number, "acting": False,
                           "sitting_out": None, "table": t.index})
    return panels


def _draw_table_panel(match: Match, panel: dict) -> Image.Image:
    """One table of a format as a ``LEFT_W`` x ``HEIGHT`` picture with its own title bar."""
    img = Image.new("RGB", (LEFT_W, HEIGHT), FELT)
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, LEFT_W, 34], fill=FELT_DARK)
    seats = panel["seats"]
    names = [seat_label(match, s) for s in seats]
    head = f"table {panel['table']}: {names[0]} v {names[1]}"
    if panel["sitting_out"] is not None:
        head += f", player_{panel['sitting_out']} sits out (deals)"
    if "record" in panel:
        _text(draw, (14, 9), _fit(f"{head}   showdown", 15, LEFT_W - 28), 15, INK)
        _draw_hand_result(img, panel["record"], names, panel["number"])
        note = "waiting for the other table" if match.format == "partnership" and \
            any(t.running for t in match.tables) else ""
        _text(draw, (16, 384), note, 14, MUTED)
    else:
        game = panel["game"]
        state = "acts now" if panel["acting"] else "waits for the other table"
        if panel["number"] is not None:  # three-hand: hands are numbered as they are dealt
            state = f"hand {panel['number']}"
        _text(draw, (14, 9), _fit(f"{head}   {state}", 15, LEFT_W - 28), 15,
              GOLD if panel["acting"] and match.format == "partnership" else INK)
        _draw_playing(img, game, game.current_player, names)
    return img


def _draw_match_sheet(canvas: Image.Image, match: Match, x0: int, y0: int) -> None:
    """The match's sheet: one row per player (three-hand) or team (partnership)."""
    sheet = match.sheet
    n = sheet.num_columns
    labels = _row_labels(match)
    draw = ImageDraw.Draw(canvas)
    width = canvas.width - x0 - 12
    draw.rounded_rectangle([x0, y0 + 10, x0 + width, canvas.height - 14], radius=8, fill=FELT_DARK)
    rules = get_rules(match.rules)
    _text(draw, (x0 + 12, y0 + 20), "Hollywood sheet" if n > 1 else "Sheet", 17, INK)
    what = "per team" if match.format == "partnership" else "per player"
    _text(draw, (x0 + 12, y0 + 44), f"{n} column{'s' if n > 1 else ''} to {rules.target}, {what}", 13, MUTED)
    out = match.sitting_out if match.format == "three_hand" and not match.is_over else None
    y = _draw_sheet_grid(draw, sheet, x0, y0 + 74, MATCH_NAME_W, labels, muted_row=out)
    lines = ["columns won: " + " - ".join(str(w) for w in sheet.columns_won)]
    if match.format == "three_hand":
        if out is not None:
            lines.append(f"player_{out} deals and sits out")
        if sheet.void:
            lines.append(f"dead hands: {sheet.void}")
    else:
        if not match.is_over and match.dealing_team is not None:
            lines.append(f"round {match.round_number + 1}: team {match.dealing_team} deals")
        if sheet.void:
            lines.append(f"rounds with no score: {sheet.void}")
    if match.is_over:
        winner = match.match_winner
        if match.truncated:
            lines.append(f"match cut after {len(match.hand_history)} hands")
        else:
            lines.append("match over: " + ("a draw" if winner is None else f"{labels[winner].split(':')[0]} wins"))
    if sheet.is_settled:
        totals = " - ".join(str(int(t)) for t in sheet.settled_totals())
        lines.append(f"settled with bonuses: {totals}")
    lines.append("gold: column decided (won)")
    for i, line in enumerate(lines):
        _text(draw, (x0 + 12, y + 22 * i), _fit(line, 14, width - 24), 14,
              GOLD if line.startswith("match over") else MUTED)


def match_image(match: Match, showdown: bool | None = None) -> Image.Image:
    """A whole match as an RGB ``PIL.Image``: every table in play, and the match's sheet.

    A duel is :func:`table_image` of its one table (the same picture, byte for byte). A
    three-hand match shows its table (the two seats playing, who deals and sits out) and
    the sheet's three rows, the sitting-out player's greyed; a partnership shows both
    tables side by side (seats with their teams, the acting table's title in gold; a
    table whose hand has ended shows that hand's showdown while the other plays on) and
    the two team rows. ``showdown=True`` shows the last finished hand (partnership: both
    hands of the last round, once the round is over) instead of the new deal; ``None``
    shows it only once the match is over. Each table shows the hand of the seat to act
    there, like the duel's picture (a spectator's view, not a seat's).
    """
    from ..match import Match

    if not isinstance(match, Match):
        raise TypeError(f"match_image needs a hgin_env.match.Match, got {type(match).__name__}")
    if match.format == "duel":
        return table_image(match, showdown=showdown)
    if showdown not in (None, True, False):
        raise TypeError(f"showdown must be True, False or None, got {showdown!r}")
    show = bool(showdown) or (showdown is None and match.is_over)
    panels = _match_panels(match, show and bool(match.hand_history))
    n = match.sheet.num_columns
    sheet_w = 12 + MATCH_NAME_W + 46 * n + 52 + 24 + 12
    width = LEFT_W * len(panels) + sheet_w
    canvas = Image.new("RGB", (width, TITLE_H + HEIGHT), FELT)
    draw = ImageDraw.Draw(canvas)
    draw.rectangle([0, 0, width, TITLE_H], fill=BLACK)
    rules = get_rules(match.rules)
    if match.format == "three_hand":
        number = len(match.hand_history) + (0 if match.is_over else 1)
        head = f"Hollywood Gin ({rules.name})   three-hand   hand {number}"
    else:
        head = (f"Hollywood Gin ({rules.name})   partnership: team 0 = player_0 & player_2, "
                f"team 1 = player_1 & player_3   round {match.round_number + 1}")
    if match.is_over:
        head += "   match over"
    _text(draw, (14, 9), _fit(head, 16, width - 28), 16, INK)
    for i, panel in enumerate(panels):
        canvas.paste(_draw_table_panel(match, panel), (LEFT_W * i, TITLE_H))
        if i:
            draw.line([(LEFT_W * i, TITLE_H), (LEFT_W * i, TITLE_H + HEIGHT)], fill=BLACK, width=2)
    _draw_match_sheet(canvas, match, LEFT_W * len(panels) + 12, TITLE_H)
    return canvas


def match_array(match: Match, showdown: bool | None = None) -> np.ndarray:
    """:func:`match_image` as an ``(H, W, 3)`` ``uint8`` array (a format's ``rgb_array`` render)."""
    return np.asarray(match_image(match, showdown), dtype=np.uint8)


def save_gif(frames: Sequence[np.ndarray | Image.Image], path: str | Path,
             duration_ms: int | Sequence[int] = 400, loop: int = 0) -> Path:
    """Write ``frames`` (RGB arrays or images of one size) as an animated GIF; returns the path.

    ``duration_ms`` is one display time for every frame or one per frame (hold showdowns
    longer); ``loop=0`` repeats forever.
    """
    if len(frames) == 0:
        raise ValueError("save_gif needs at least one frame")
    images = []
    for i, f in enumerate(frames):
        img = f if isinstance(f, Image.Image) else Image.fromarray(np.asarray(f, dtype=np.uint8))
        if img.size != (images[0].size if images else img.size):
            raise ValueError(f"frame {i} is {img.size[0]}x{img.size[1]}, frame 0 is "
                             f"{images[0].size[0]}x{images[0].size[1]}: all frames need one size")
        images.append(img.convert("RGB"))
    if not isinstance(duration_ms, int):
        duration_ms = [int(d) for d in duration_ms]
        if len(duration_ms) != len(images):
            raise ValueError(f"{len(duration_ms)} durations for {len(images)} frames")
    # One shared 64-colour palette (from the first, middle and last frames), no dithering:
    # the table has few colours, and unchanged regions then compress to almost nothing.
    picks = sorted({0, len(images) // 2, len(images) - 1})
    sample = Image.new("RGB", (images[0].width, images[0].height * len(picks)))
    for k, i in enumerate(picks):
        sample.paste(images[i], (0, images[0].height * k))
    palette = sample.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    frames_p = [img.quantize(palette=palette, dither=Image.Dither.NONE) for img in images]
    path = Path(path)
    frames_p[0].save(path, save_all=True, append_images=frames_p[1:], duration=duration_ms, loop=loop)
    return path
