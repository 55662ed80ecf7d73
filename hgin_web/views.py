"""What the web table sends a page, as JSON-ready dicts; cards in the project's notation
(``"7H"``, ``"TD"``: :func:`hgin_env.cards.format_card`), actions as their ids with the
names of :func:`hgin_env.actions.describe_action`.

Three kinds of view:

- :func:`seat_view`, a player's page: built from the seat's observation dict
  (:func:`hgin_env.observation.observe`, decoded by :func:`agents.view.parse`), the very
  dict an agent in that seat gets, plus what is public at the table: the sheet, the
  seats, who acts, the results of finished hands (both hands are shown at a showdown) and
  the moves made at the seat's table. Nothing else of the engine is read for a seat, so a
  seat's page can only hold what the observation layout lets the seat know: never another
  seat's unseen cards, never the stock.
- :func:`spectator_view`, for watching agents and for replays: every hand open, the
  discard pile in order, the stock as a count (never its order).
- :func:`public_view`, for anyone without the seat's token watching a game a person plays:
  only what every seat knows (the sheet, who acts, finished hands' results), no table.

The seed is sent only when ``seed_visible`` or the match is over: with the seed anyone
deals the same cards, every hidden hand and the stock. The web table passes
``seed_visible`` only for its seat token's holder, and only for a seed the player chose
(:meth:`hgin_web.games.WebGame.view`): a seed the server drew stays hidden from the player
too until the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.view import parse
from hgin_env import actions as A
from hgin_env.cards import format_card, mask_to_cards
from hgin_env.game import Hand, Phase
from hgin_env.match import Match, RoundResult, SeatHand
from hgin_env.observation import DEADWOOD_SCALE, ObservationLayout, observe
from hgin_env.render import hand_groups
from hgin_env.sheets import COLUMN_NAMES


def cards(ids: Sequence[int] | int) -> list[str]:
    """Card ids (or a 52-bit mask) as text, in the order given (a mask: by id)."""
    if isinstance(ids, int | np.integer):
        ids = mask_to_cards(int(ids))
    return [format_card(int(c)) for c in ids]


def action_entry(action: int) -> dict[str, Any]:
    """One action as the page shows it: id, name, kind and the card it names."""
    card = A.action_card(action)
    return {"id": int(action), "name": A.describe_action(action), "kind": A.move_kind(action),
            "card": None if card is None else format_card(card)}


def grouped(mask: int) -> dict[str, Any]:
    """A hand grouped as :func:`hgin_env.render.hand_groups` shows it: melds, loose cards,
    deadwood."""
    melds, loose, dw = hand_groups(mask)
    return {"melds": [cards(m) for m in melds], "loose": cards(loose), "deadwood": int(dw),
            "count": bin(mask).count("1")}


def seat_name(seat: int, labels: Sequence[str]) -> str:
    return f"player_{seat} ({labels[seat]})"


# --------------------------------------------------------------------------- public parts
def sheet_view(match: Match) -> dict[str, Any]:
    """The match sheet (Hollywood columns, boxes, games, settlement) with its row labels:
    players, or teams in a partnership."""
    sheet = match.sheet
    out = sheet.to_dict()
    out.update({
        # The duel's Scoreboard leaves labels and boxes out of its to_dict.
        "labels": list(sheet.labels or ()), "boxes": sheet.boxes.tolist(), "void": int(sheet.void),
        "column_names": list(COLUMN_NAMES[:sheet.num_columns]), "target": int(match.rules.target),
        "columns_won": sheet.columns_won, "totals": sheet.totals,
        "settled_totals": [int(t) for t in sheet.settled_totals()],
        "is_settled": sheet.is_settled, "settlement_text": sheet.settlement_text(),
        "rows_are": "teams" if match.format == "partnership" else "players",
    })
    return out


def result_view(hand: SeatHand) -> dict[str, Any]:
    """A finished hand at its showdown: both hands (melds, deadwood), lay-offs, points;
    players named by their seats."""
    rec = hand.record
    r = rec.result
    out: dict[str, Any] = {
        "number": hand.number, "table": hand.table, "seats": list(hand.seats), "dealer": hand.dealer,
        "round": hand.round, "sitting_out": hand.sitting_out, "kind": hand.kind,
        "knocker": hand.knocker, "winner": hand.winner, "loser": hand.loser, "points": hand.points,
        "knock_limit": rec.knock_limit, "multiplier": rec.multiplier, "turns": rec.turns,
        "knock_discard": None if rec.knock_discard is None else format_card(rec.knock_discard),
        "final_hands": {str(hand.seats[p]): cards(sorted(rec.final_hands[p])) for p in (0, 1)},
    }
    if rec.knocker is not None:
        k, d = hand.seats[rec.knocker], hand.seats[1 - rec.knocker]
        out["showdown"] = {
            "knocker": {"seat": k, "melds": [cards(m) for m in r.knocker_melds],
                        "deadwood_cards": cards(r.knocker_deadwood_cards), "deadwood": r.knocker_deadwood},
            "defender": {"seat": d, "melds": [cards(m) for m in r.defender_melds],
                         "deadwood_cards": cards(r.defender_deadwood_cards), "deadwood": r.defender_deadwood},
            "layoffs": [{"card": format_card(c), "meld": cards(r.knocker_melds[i])} for c, i in r.layoffs],
        }
    return out


def round_view(rnd: RoundResult) -> dict[str, Any]:
    return {"number": rnd.number, "dealing_team": rnd.dealing_team, "team_points": list(rnd.team_points),
            "winner": rnd.winner, "points": rnd.points, "hands": [h.number for h in rnd.hands]}


def hand_number(match: Match) -> int:
    """The number of the hand being played (the last one once the match is over), 1-based,
    the same for every seat: in a partnership, where each round deals one hand at each
    table, the round's number (both tables play their hand N in round N)."""
    if match.format == "partnership":
        return len(match.round_history) + (0 if match.is_over else 1)
    return match.hand_number


def hand_label(match: Match, hand: SeatHand) -> str:
    """A finished hand's name on the page: ``Hand 3``, or ``Round 2, table 1`` in a partnership."""
    if match.format == "partnership":
        return f"Round {(hand.round or 0) + 1}, table {hand.table}"
    return f"Hand {hand.number}"


def winner_fields(match: Match) -> dict[str, Any]:
    """Who won the match, named: ``match_winner_seat`` (duel, three-hand),
    ``match_winner_team`` (partnership), ``match_winner_agent`` (the environment's name:
    ``player_1``, or ``team_0`` in a partnership) and ``winning_seats``; all None / empty
    while running, for a draw or a match stopped at its hand cap."""
    row = match.match_winner
    team = match.format == "partnership"
    return {
        "match_winner_seat": None if team else row, "match_winner_team": row if team else None,
        "match_winner_agent": None if row is None else f"{'team' if team else 'player'}_{row}",
        "winning_seats": list(match.winning_seats),
    }


def _public(match: Match, labels: Sequence[str], seed_visible: bool) -> dict[str, Any]:
    """What every page of a match may see (the seed only when ``seed_visible``)."""
    return {
        "format": match.format, "rules": match.rules.name, "rules_options": match.rules.to_dict(),
        "seed": match.seed if seed_visible or match.is_over else None, "num_players": match.num_players,
        "players": [{"seat": s, "label": labels[s], "name": seat_name(s, labels),
                     "row": match.sheet_row(s)} for s in range(match.num_players)],
        "teams": [list(t) for t in match.teams] if match.teams else None,
        "to_act": match.current_seat, "over": match.is_over, "truncated": match.truncated,
        **winner_fields(match),
        "hand_number": hand_number(match),
        "round": match.round_number if match.format == "partnership" else None,
        "sheet": sheet_view(match),
        "results": [dict(result_view(h), label=hand_label(match, h), index=i)
                    for i, h in enumerate(match.hand_history)],
        "rounds": [round_view(r) for r in match.round_history],
    }


# --------------------------------------------------------------------------- a seat's page
def seat_view(match: Match, seat: int, labels: Sequence[str], seed_visible: bool = False) -> dict[str, Any]:
    """The page of the player at ``seat``: its observation, decoded, and the public state."""
    rules = match.rules
    obs = observe(match, seat)
    layout = ObservationLayout.for_rules(rules)
    v = parse(obs, layout, target=rules.target)
    vec = obs["observation"]
    ctx = match.seat_context(seat)
    after = layout.counts(vec, "discard_deadwood")
    held = mask_to_cards(v.hand)
    opponent = ctx["opponent"]
    table: dict[str, Any] = {
        "index": ctx["table"], "opponent": opponent, "dealer": ctx["dealer"],
        "sitting_out": ctx["sitting_out"], "partner": ctx["partner"], "partner_running": ctx["partner_running"],
        "phase": v.phase, "knock_limit": v.knock_limit, "doubled": layout.flag(vec, "doubled"),
        "is_dealer": v.is_dealer, "stock": v.stock_size,
        "discard_top": None if v.discard_top < 0 else format_card(v.discard_top),
        "discard_pile_size": bin(v.pile).count("1"),
        "hand": grouped(v.hand), "deadwood": layout.count(vec, "deadwood"),
        # Deadwood after discarding each held card (the discard phase; else empty).
        "discard_deadwood": {format_card(c): after[c] for c in held if after[c] < DEADWOOD_SCALE},
        "own_discards": cards(v.own_discards), "opponent_discards": cards(v.opponent_discards),
        "opponent_known": cards(v.opponent_known), "opponent_passed": v.opponent_passed,
    }
    out = _public(match, labels, seed_visible)
    out.update({"view": "seat", "seat": seat, "table": table,
                "your_turn": match.current_seat == seat,
                "legal_actions": [action_entry(int(a)) for a in v.legal]})
    return out


# --------------------------------------------------------------------------- spectators
def _table_open(match: Match, index: int) -> dict[str, Any]:
    t = match.tables[index]
    g: Hand = t.game
    return {
        "index": index, "seats": list(t.seats), "dealer": t.dealer, "sitting_out": t.sitting_out,
        "running": t.running, "to_act": t.current_seat if t.running else None,
        "phase": Phase(g.phase).name.lower(), "knock_limit": g.knock_limit, "multiplier": g.multiplier,
        "stock": len(g.stock), "discard_pile": cards(g.discard_pile),
        "hands": {str(t.seats[p]): grouped(g.hands[p]) for p in (0, 1)},
        "known": {str(t.seats[p]): cards(g.known_cards[p]) for p in (0, 1)},
        "discards": {str(t.seats[p]): cards(g.discarded[p]) for p in (0, 1)},
    }


def spectator_view(match: Match, labels: Sequence[str], seed_visible: bool = False) -> dict[str, Any]:
    """Every table with every hand open (watching agents, replays); the stock as a count."""
    out = _public(match, labels, seed_visible)
    out.update({"view": "spectator", "seat": None,
                "tables": [_table_open(match, i) for i in range(match.num_tables)]})
    return out


def public_view(match: Match, labels: Sequence[str], seed_visible: bool = False) -> dict[str, Any]:
    """A game a person plays, seen without its seat token: what every seat knows, no table."""
    out = _public(match, labels, seed_visible)
    out.update({"view": "public", "seat": None})
    return out


def policy_view(agent: Any, match: Match) -> list[dict[str, Any]] | None:
    """The acting agent's probabilities over the legal moves, most likely first, when the
    agent is a trained policy (it has ``action_probabilities``); else None."""
    probs_of = getattr(agent, "action_probabilities", None)
    seat = match.current_seat
    if probs_of is None or seat is None:
        return None
    obs = observe(match, seat)
    probs = np.asarray(probs_of(obs), dtype=np.float64)
    legal = np.flatnonzero(obs["action_mask"])
    rows = [dict(action_entry(int(a)), p=float(probs[a])) for a in legal]
    return sorted(rows, key=lambda r: -r["p"])
