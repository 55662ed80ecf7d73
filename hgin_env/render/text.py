"""Text rendering shared by the environment's ``ansi``/``human`` modes and the CLI."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..cards import NUM_RANKS, format_card, format_cards, mask_to_cards
from ..game import Hand, HandRecord, Phase
from ..melds import best_arrangement_of_mask

if TYPE_CHECKING:  # for the type only: rendering never needs the match module
    from ..match import Match, Table
    from ..sheets import Sheet


def hand_groups(mask: int) -> tuple[list[tuple[int, ...]], tuple[int, ...], int]:
    """A hand as it is shown: its best melds, then the loose cards, and the deadwood.

    Every group (each meld, the loose cards) is sorted by suit (♣ ♦ ♥ ♠) then rank, and
    the melds are ordered by their first card, so a hand always reads the same way.
    """
    melds, dw = best_arrangement_of_mask(mask)
    melded = 0
    for m in melds:
        melded |= m
    groups = sorted(mask_to_cards(m) for m in melds)
    return groups, mask_to_cards(mask & ~melded), dw


def hand_order(mask: int) -> list[int]:
    """The cards of a hand in the order :func:`grouped_hand` shows them."""
    melds, loose, _ = hand_groups(mask)
    return [c for m in melds for c in m] + list(loose)


def grouped_hand(mask: int, symbols: bool = True) -> str:
    """A hand grouped into its best melds, then the deadwood: ``[4♥ 5♥ 6♥] [9♣ 9♦ 9♠] K♦ (dw 10)``."""
    melds, loose, dw = hand_groups(mask)
    parts = ["[" + format_cards(m, symbols) + "]" for m in melds]
    if loose:
        parts.append(format_cards(loose, symbols))
    return " ".join(parts) + f"  (deadwood {dw})"


def turn_text(game: Hand, player: int | None = None, you: bool = False,
              names: Sequence[str] | None = None) -> str:
    """Whose turn it is and what they may do, in words (not the engine's phase names):
    ``player_0 to act: take the first upcard or pass``; with ``you`` (``player`` is the
    person reading it) ``Your turn: ...`` or ``player_1's turn``. ``names[p]`` names the
    table's player p (default ``player_p``)."""
    name = _namer(names)
    acting = game.current_player
    if player is not None and player != acting:
        return f"{name(acting)}'s turn" if you else f"{name(acting)} to act"
    if game.phase == Phase.FIRST_UPCARD:
        what = "take the first upcard or pass"
    elif game.phase == Phase.DRAW:
        can_take = bool(game.discard_pile) and not game.forced_stock_draw
        what = "draw from the stock or take the discard" if can_take else "draw from the stock"
    else:
        what = "discard a card, or knock"
    return f"{'Your turn' if you else f'{name(acting)} to act'}: {what}"


#: ``render_table``'s default sheet: the game's own scoreboard.
_OWN_SHEET = object()


def render_table(game: Hand, player: int | None = None, symbols: bool = True,
                 deal: str | None = None, number: int | None = None, you: bool = False,
                 names: Sequence[str] | None = None, sheet: Sheet | None | object = _OWN_SHEET) -> str:
    """The table as ``player`` sees it (default: the acting player). ``deal`` (a format
    table's :func:`deal_text`) replaces "dealer player_N" with a line of its own;
    ``number`` replaces the game's hand number (a format match counts its own hands);
    ``you``: ``player`` is the person reading it (the turn line says "Your turn");
    ``names[p]`` names the table's player p (a format table: its seats' agents);
    ``sheet``: the sheet drawn below (default the game's scoreboard; a format passes the
    match's sheet; None draws none)."""
    name = _namer(names)
    p = game.current_player if player is None else player
    top = format_cards([game.discard_top], symbols) if game.discard_pile else "-"
    dealer = "" if deal is not None else f"  dealer {name(game.dealer)}"
    lines = [
        f"Hand {game.hand_number if number is None else number}{dealer}  knock limit {game.knock_limit}"
        + (f"  x{game.multiplier}" if game.multiplier > 1 else "")
        + f"  stock {len(game.stock)}  discard top {top}",
    ]
    if deal is not None:
        lines.append(deal)
    if not game.is_over:
        lines.append(turn_text(game, p, you, names))
    lines.append(f"{name(p)} hand: {grouped_hand(game.hands[p], symbols)}")
    known = game.known_cards[1 - p]
    if known:
        lines.append(f"{name(1 - p)} picked up: {format_cards(mask_to_cards(known), symbols)}")
    board = game.scoreboard if sheet is _OWN_SHEET else sheet
    if board is not None:
        lines.append(str(board))
    return "\n".join(lines)


def render_seat_table(match: Match, seat: int | None = None, symbols: bool = True, you: bool = False,
                      names: Sequence[str] | None = None) -> str:
    """A match table of any format as ``seat`` sees it (default: the acting seat; a seat
    sitting out sees the acting seat's table from its side: the public cards only): the
    table's players named by their seats (``names[seat]``, default ``player_<seat>``), who
    dealt and the match's hand number (three-hand: the dealer sits out; a partnership: the
    round's number, both tables' hands), and the match's sheet.
    A duel is :func:`render_table` of its table's hand, from ``seat``'s side, with the
    match's hand number and sheet."""
    who = seat if seat is not None else match.current_seat
    index = None if who is None else match.table_of(who)
    table = match.tables[match.current_table if index is None else index]
    game = table.game
    player = None if index is None else table.player_of(who)  # type: ignore[arg-type]
    if match.format == "duel":
        return render_table(game, player, symbols, you=you, names=names, number=match.hand_number,
                            sheet=match.sheet)
    seat_names = [f"player_{s}" for s in range(match.num_players)] if names is None else list(names)
    # Three-hand: the table game's "dealer" only plays the dealer's part; say who dealt, and
    # count the match's hands (one table, a new table game every hand).
    # A partnership round deals both tables at once: their hands carry the round's number,
    # as the web table shows them.
    three_hand = table.sitting_out is not None
    number = match.hand_number if three_hand else match.round_number + 1
    return render_table(game, player, symbols, deal=deal_text(table, seat_names) if three_hand else None,
                        number=number, you=you and index is not None,
                        names=[seat_names[s] for s in table.seats], sheet=match.sheet)


def render_hand_result(record: HandRecord, symbols: bool = True, names: Sequence[str] | None = None,
                       number: int | None = None) -> str:
    """One finished hand: who ended it how, melds shown, lay-offs, points. ``names[p]``
    names the table's player p (default ``player_p``; a format table passes its seats'
    names); ``number`` replaces the table game's hand number (a format match counts its
    hands over every table)."""
    name = _namer(names)
    n = record.number if number is None else number
    r = record.result
    if r.kind == "dead":
        return f"Hand {n}: dead hand (stock exhausted), no score"
    k = record.knocker
    assert k is not None and record.winner is not None
    d = 1 - k

    def melds(ms: tuple) -> str:
        return " ".join("[" + format_cards(m, symbols) + "]" for m in ms) or "-"

    lines = [
        f"Hand {n}: {_what_happened(record, name)} -> {name(record.winner)} scores {record.points}",
        f"  {name(k)} (knocker) {melds(r.knocker_melds)}  deadwood "
        f"{format_cards(r.knocker_deadwood_cards, symbols) or '-'} = {r.knocker_deadwood}",
        f"  {name(d)} (defender) {melds(r.defender_melds)}  deadwood "
        f"{format_cards(r.defender_deadwood_cards, symbols) or '-'} = {r.defender_deadwood}",
    ]
    if r.layoffs:
        lines.append("  laid off: " + ", ".join(
            f"{format_cards([c], symbols)} on {format_cards(r.knocker_melds[i], symbols)}"
            for c, i in r.layoffs))
    return "\n".join(lines)


def _namer(names: Sequence[str] | None) -> Callable[[int], str]:
    return (lambda p: f"player_{p}") if names is None else names.__getitem__


def _what_happened(record: HandRecord, name: Callable[[int], str]) -> str:
    k = record.knocker
    assert k is not None
    kind = record.result.kind
    if kind == "gin":
        return f"{name(k)} goes gin"
    if kind == "big_gin":
        return f"{name(k)} goes big gin"
    if kind == "undercut":
        return f"{name(k)} knocks, {name(1 - k)} undercuts"
    return f"{name(k)} knocks"


def deal_text(table: Table, names: Sequence[str] | None = None) -> str:
    """Who dealt and who plays at a match table (RULES.md §13), ``names[seat]`` naming the
    seats (default ``player_<seat>``). Three-hand: the dealer deals and sits the hand out,
    "player_2 dealt and sits out; player_0 vs player_1, player_0 plays first" (its table's
    ``Hand`` gives the dealer's part to the second player, who did not deal); otherwise
    "player_1 deals; player_0 vs player_1, player_0 plays first"."""
    name = _namer(names)
    a, b = table.seats
    who = f"{name(a)} vs {name(b)}, {name(table.non_dealer)} plays first"
    if table.sitting_out is not None:
        return f"{name(table.sitting_out)} dealt and sits out; {who}"
    return f"{name(table.dealer)} deals; {who}"


def _cards_html(cards: tuple[int, ...] | list[int]) -> str:
    """Cards with suit symbols, hearts and diamonds in red."""
    out = []
    for c in cards:
        colour = "#c8102e" if c // NUM_RANKS in (1, 2) else "inherit"
        out.append(f'<span style="color:{colour}">{html.escape(format_card(c, True))}</span>')
    return " ".join(out)


def grouped_hand_html(mask: int) -> str:
    """:func:`grouped_hand` as HTML: ``[4♥ 5♥ 6♥] [9♣ 9♦ 9♠] K♦ (deadwood 10)``."""
    melds, loose, dw = hand_groups(mask)
    parts = ["[" + _cards_html(m) + "]" for m in melds]
    if loose:
        parts.append(_cards_html(loose))
    return " ".join(parts) + f" &nbsp;(deadwood {dw})"


def match_html(match: Match) -> str:
    """A :class:`~hgin_env.match.Match` as an HTML table (its ``_repr_html_``, what a
    notebook shows for a match as a cell's value): each table's hand as the engine sees it
    (both hands are shown; the environment's observations never show the opponent's
    cards), the last finished hand, and the sheet."""
    cell = "padding:2px 10px;text-align:left;border:1px solid #bbb"
    # A partnership round deals both tables at once: its tables are named by the round.
    deal = f"round {match.round_number + 1}" if match.format == "partnership" else f"hand {match.hand_number}"
    rows: list[tuple[str, str]] = []
    for table in match.tables:
        game = table.game
        at = "" if match.num_tables == 1 and table.sitting_out is None else \
            f"table {table.index} ({' v '.join(f'player_{s}' for s in table.seats)}): "
        if match.is_over:
            state = "match over"
        elif game.is_over:
            state = "hand over"
        else:
            state = turn_text(game, names=[f"player_{s}" for s in table.seats])
        top = _cards_html([game.discard_top]) if game.discard_pile else "-"
        rows += [
            (at + "deal", f"{deal}, player_{table.dealer} deals, knock limit {game.knock_limit}"
             + (f", hand x{game.multiplier}" if game.multiplier > 1 else "")
             + ("" if table.sitting_out is None else f", player_{table.sitting_out} sits out")),
            (at + "state", html.escape(state)),
            (at + "stock", f"{len(game.stock)} cards"),
            (at + "discard pile", f"{len(game.discard_pile)} cards, top {top}"),
        ]
        for p, seat in enumerate(table.seats):
            rows.append((f"player_{seat} hand", grouped_hand_html(game.hands[p])))
            if game.known_cards[p]:
                rows.append((f"player_{seat} took", _cards_html(mask_to_cards(game.known_cards[p]))))
    if match.hand_history:
        last = match.hand_history[-1]
        text = render_hand_result(last.record, names=[f"player_{s}" for s in last.seats], number=last.number)
        rows.append(("last hand", html.escape(text.splitlines()[0])))
    body = "".join(f'<tr><th style="{cell}">{k}</th><td style="{cell}">{v}</td></tr>' for k, v in rows)
    rules = html.escape(getattr(match.rules, "name", str(match.rules)))
    origin = "stacked first deal" if match.deck is not None else f"seed {match.seed}"
    return (f'<div><table style="border-collapse:collapse"><caption style="text-align:left">Hollywood Gin '
            f'({rules}), {origin}</caption>{body}</table>{match.sheet._repr_html_()}</div>')
