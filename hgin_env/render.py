"""Text rendering shared by the environment's ``ansi``/``human`` modes and the CLI."""

from __future__ import annotations

from .cards import CARD_VALUES, format_cards, mask_to_cards
from .game import Game, HandRecord, Phase
from .melds import best_arrangement_of_mask


def grouped_hand(mask: int, symbols: bool = True) -> str:
    """A hand grouped into its best melds, then the deadwood: ``[4♥ 5♥ 6♥] [9♣ 9♦ 9♠] K♦ (dw 10)``."""
    melds, dw = best_arrangement_of_mask(mask)
    melded = 0
    parts = []
    for m in melds:
        melded |= m
        parts.append("[" + format_cards(mask_to_cards(m), symbols) + "]")
    loose = sorted(mask_to_cards(mask & ~melded), key=lambda c: (CARD_VALUES[c], c))
    if loose:
        parts.append(format_cards(loose, symbols))
    return " ".join(parts) + f"  (deadwood {dw})"


def render_table(game: Game, player: int | None = None, symbols: bool = True) -> str:
    """The table as ``player`` sees it (default: the acting player)."""
    p = game.current_player if player is None else player
    top = format_cards([game.discard_top], symbols) if game.discard_pile else "-"
    lines = [
        f"Hand {game.hand_number}  dealer player_{game.dealer}  knock limit {game.knock_limit}"
        + (f"  x{game.multiplier}" if game.multiplier > 1 else "")
        + f"  stock {len(game.stock)}  discard top {top}",
    ]
    if not game.is_over:
        lines.append(f"player_{p} to act ({Phase(game.phase).name.lower()})" if
                     p == game.current_player else f"player_{game.current_player} to act")
    lines.append(f"player_{p} hand: {grouped_hand(game.hands[p], symbols)}")
    known = game.known_cards[1 - p]
    if known:
        lines.append(f"player_{1 - p} picked up: {format_cards(mask_to_cards(known), symbols)}")
    lines.append(str(game.scoreboard))
    return "\n".join(lines)


def render_hand_result(record: HandRecord, symbols: bool = True) -> str:
    """One finished hand: who ended it how, melds shown, lay-offs, points."""
    r = record.result
    if r.kind == "dead":
        return f"Hand {record.number}: dead hand (stock exhausted), no score"
    k = record.knocker
    assert k is not None
    d = 1 - k

    def melds(ms: tuple) -> str:
        return " ".join("[" + format_cards(m, symbols) + "]" for m in ms) or "-"

    lines = [
        f"Hand {record.number}: {_what_happened(record)} -> player_{record.winner} scores {record.points}",
        f"  player_{k} (knocker) {melds(r.knocker_melds)}  deadwood "
        f"{format_cards(r.knocker_deadwood_cards, symbols) or '-'} = {r.knocker_deadwood}",
        f"  player_{d} (defender) {melds(r.defender_melds)}  deadwood "
        f"{format_cards(r.defender_deadwood_cards, symbols) or '-'} = {r.defender_deadwood}",
    ]
    if r.layoffs:
        lines.append("  laid off: " + ", ".join(
            f"{format_cards([c], symbols)} on {format_cards(r.knocker_melds[i], symbols)}"
            for c, i in r.layoffs))
    return "\n".join(lines)


def _what_happened(record: HandRecord) -> str:
    k = record.knocker
    kind = record.result.kind
    if kind == "gin":
        return f"player_{k} goes gin"
    if kind == "big_gin":
        return f"player_{k} goes big gin"
    if kind == "undercut":
        return f"player_{k} knocks, player_{1 - k} undercuts"
    return f"player_{k} knocks"
