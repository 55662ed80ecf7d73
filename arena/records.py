"""Saved matches: the JSON files ``hgin play --save`` and the web table write and ``hgin
replay``, ``hgin play --resume`` and the web table's replays read, and the one-line
description of a move that every front shows in its move log.

Two formats, both a JSON object with the rules, the seed, the first dealer and every action
in the order it was applied:

- ``hgin-match`` (:data:`MATCH_FORMAT`, :func:`save_match` / :func:`load_match`), a duel::

    {"format": "hgin-match", "rules_version": 1, "rules": {...all Rules options...},
     "seed": 7, "first_dealer": null, "single_hand": false, "actions": [105, 12, ...],
     "players": ["human", "expert"], "complete": true}

- ``hgin-format-match`` (:data:`FORMAT_MATCH`, :func:`save_format_match` /
  :func:`load_format_match`), a three-hand or partnership match: the same keys without
  ``single_hand``, ``actions`` in the order ``Match.apply`` took them.

``seed``, ``first_dealer`` (``null`` = drawn from the seed) and the rules rebuild the deals,
so replaying ``actions`` gives back the same match. ``players`` and ``complete`` (false for
an unfinished match) are informative. Every game has a seed (an unseeded ``Game`` draws one
and keeps it), so every saved file replays; a file without one is refused.

A loader checks the whole file before anything uses it and raises :class:`MatchFileError`
(a ``ValueError``) with a one-line reason: unreadable or not JSON, a missing or mistyped
key, another format or rules version, a rule option or number out of range, or the first
action that is illegal where it occurs (by its number, 1-based).

It lives in ``arena`` (above the engine, below ``train``, ``eval`` and both fronts) so the
command line and the web table read and write one format.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hgin_env import actions as A
from hgin_env.cards import format_card
from hgin_env.game import MAX_SEED, Game, Phase
from hgin_env.match import Match
from hgin_env.rules import RULES_VERSION, Rules, get_rules

#: The ``format`` of a saved duel.
MATCH_FORMAT = "hgin-match"
#: The ``format`` of a saved three-hand or partnership match.
FORMAT_MATCH = "hgin-format-match"
#: The largest value of an integer rule option in a saved match (the profiles' are below
#: 10,000; anything larger is not a match that was played).
MAX_RULE_NUMBER = 2**31 - 1


class MatchFileError(ValueError):
    """A saved match that cannot be used (corrupt, incomplete, or another rules version)."""


# --------------------------------------------------------------------------- describing moves
def card_text(card: int | None, symbols: bool = True) -> str:
    """A card as the fronts write it (``7♥``, or ``7H`` without symbols); ``-`` for none."""
    return "-" if card is None else format_card(card, symbols)


def describe_move(game: Game, action: int, name: str, symbols: bool = True) -> str:
    """What ``name`` does with ``action`` in ``game``'s current state (call before applying):
    ``player_1 draws from the stock``, ``player_1 takes 7♥``, ``player_1 discards 9♣``...
    A draw from the stock and a knock's face-down discard never name the hidden card."""
    top = card_text(game.discard_top, symbols)
    if action == A.DRAW_STOCK:
        return f"{name} draws from the stock"
    if action == A.TAKE_DISCARD:
        if game.phase == Phase.FIRST_UPCARD:
            return f"{name} takes the upcard {top}"
        return f"{name} takes {top} from the discard pile"
    if action == A.PASS:
        return f"{name} passes on the upcard {top}"
    if action == A.BIG_GIN:
        return f"{name} lays down all 11 cards: big gin!"
    card = A.action_card(action)
    if action >= A.KNOCK:
        dw = game.deadwood_after_discard().get(card, -1) if game.phase == Phase.DISCARD else -1
        if dw == 0:
            return f"{name} goes gin! (discards one card face down)"
        return f"{name} knocks (discards one card face down)"
    return f"{name} discards {card_text(card, symbols)}"


# --------------------------------------------------------------------------- writing
def _write(path: str | Path, data: dict[str, Any]) -> Path:
    path = Path(path)
    path.write_text(json.dumps(data) + "\n")
    return path


def save_match(game: Game, path: str | Path, players: Sequence[str] | None = None) -> Path:
    """Write ``game`` (finished or not) as a ``hgin-match`` JSON file; returns the path.

    The game must have been dealt from its seed (``Game(rules, seed, first_dealer=...)``);
    a game with a stacked ``deck`` cannot be rebuilt from a seed and raises ``ValueError``.
    """
    if game.deck is not None:
        raise ValueError("a game dealt from a stacked deck cannot be saved as a seed replay")
    rules = get_rules(game.rules)
    return _write(path, {
        "format": MATCH_FORMAT, "rules_version": RULES_VERSION, "rules": rules.to_dict(),
        "seed": game.seed, "first_dealer": game.first_dealer, "single_hand": bool(game.single_hand),
        "actions": [int(a) for a in game.action_history],
        "players": list(players) if players is not None else ["player_0", "player_1"],
        "complete": bool(game.is_over),
    })


def save_format_match(match: Match, path: str | Path, players: Sequence[str]) -> Path:
    """Write a format match (finished or not) as ``hgin-format-match`` JSON."""
    return _write(path, {
        "format": FORMAT_MATCH, "rules_version": RULES_VERSION, "rules": match.rules.to_dict(),
        "seed": match.seed, "first_dealer": match.first_dealer, "players": list(players),
        "actions": list(match.action_history), "complete": bool(match.is_over),
    })


# --------------------------------------------------------------------------- reading
def parse_json(raw: bytes, where: str | Path) -> Any:
    """The JSON of a saved match file's bytes (``where`` names it in the error);
    :class:`MatchFileError` for text that is not UTF-8 JSON (or nested past Python's limit)."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MatchFileError(f"{where}: not a saved match (not UTF-8 text: {exc.reason} at byte "
                             f"{exc.start})") from None
    except RecursionError:
        raise MatchFileError(f"{where}: not a saved match (JSON nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise MatchFileError(f"{where}: not a saved match (invalid JSON: {exc})") from None


def read_json(path: str | Path) -> Any:
    """The JSON of a saved match file; :class:`MatchFileError` when it cannot be read."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise MatchFileError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    return parse_json(raw, path)


def is_format_match_file(data: Any) -> bool:
    """Whether parsed JSON claims to be a ``hgin-format-match`` file."""
    return isinstance(data, dict) and data.get("format") == FORMAT_MATCH


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _common(path: str | Path, data: Any, fmt: str, keys: Sequence[str]) -> Rules:
    """The checks both formats share; returns the file's rules."""
    if not isinstance(data, dict):
        raise MatchFileError(f"{path}: not a saved match (expected a JSON object)")
    if data.get("format") != fmt:
        raise MatchFileError(f"{path}: not a saved match (format {data.get('format')!r}, expected {fmt!r})")
    missing = [k for k in keys if k not in data]
    if missing:
        raise MatchFileError(f"{path}: saved match is missing {', '.join(missing)}")
    if data["rules_version"] != RULES_VERSION:
        raise MatchFileError(f"{path}: saved with rules version {data['rules_version']!r}, this hgin_env "
                             f"plays rules version {RULES_VERSION}; the match cannot be replayed")
    if not isinstance(data["rules"], dict):
        raise MatchFileError(f"{path}: 'rules' must be an object of rule options")
    try:
        rules = Rules.from_dict(data["rules"])
    except (TypeError, ValueError) as exc:
        raise MatchFileError(f"{path}: bad rules: {exc}") from None
    for option, value in rules.to_dict().items():
        if _is_int(value) and value > MAX_RULE_NUMBER:
            raise MatchFileError(f"{path}: bad rules: {option}={value} is over {MAX_RULE_NUMBER}")
    seed = data["seed"]
    if seed is None:  # written before unseeded games drew a seed: its deals are unknown
        raise MatchFileError(f"{path}: 'seed' is null, so the deals cannot be rebuilt; this match "
                             "cannot be replayed")
    if not _is_int(seed) or not 0 <= seed <= MAX_SEED:
        raise MatchFileError(f"{path}: 'seed' must be an integer in 0..2**63-1, got {seed!r}")
    if data["first_dealer"] not in (None, 0, 1, 2, 3) or isinstance(data["first_dealer"], bool):
        raise MatchFileError(f"{path}: 'first_dealer' must be null or a seat, got {data['first_dealer']!r}")
    actions = data["actions"]
    if not isinstance(actions, list) or not all(_is_int(a) for a in actions):
        raise MatchFileError(f"{path}: 'actions' must be a list of action ids (integers)")
    return rules


def load_match(path: str | Path, data: Any = None) -> tuple[dict[str, Any], Game]:
    """Read and check a saved duel (``data``: its JSON when already read); returns
    ``(data, game)`` with the game replayed to its end. See the module for what is refused."""
    if data is None:
        data = read_json(path)
    rules = _common(path, data, MATCH_FORMAT, ("rules_version", "rules", "seed", "first_dealer", "actions"))
    if data["first_dealer"] not in (None, 0, 1):
        raise MatchFileError(f"{path}: 'first_dealer' must be null, 0 or 1, got {data['first_dealer']!r}")
    single_hand = data.get("single_hand", False)
    if not isinstance(single_hand, bool):
        raise MatchFileError(f"{path}: 'single_hand' must be true or false, got {single_hand!r}")
    try:
        game = Game(rules=rules, seed=data["seed"], single_hand=single_hand, first_dealer=data["first_dealer"])
    except ValueError as exc:
        raise MatchFileError(f"{path}: {exc}") from None
    for i, action in enumerate(data["actions"]):
        if game.is_over:
            raise MatchFileError(f"{path}: action #{i + 1} ({action}) comes after the end of the match")
        if action not in game.legal_actions():
            name = A.describe_action(action) if 0 <= action < A.NUM_ACTIONS else "not an action id"
            raise MatchFileError(
                f"{path}: action #{i + 1} ({action}: {name}) is illegal in hand "
                f"{game.hand_number} for player_{game.current_player}; the file is corrupt")
        game.apply(action)
    return data, game


def load_format_match(path: str | Path, data: Any = None) -> Match:
    """The match of a saved ``hgin-format-match`` (``data``: its JSON when already read),
    replayed to its last action; a corrupt file raises :class:`MatchFileError` with one line."""
    if data is None:
        data = read_json(path)
    rules = _common(path, data, FORMAT_MATCH,
                    ("rules_version", "rules", "seed", "first_dealer", "actions", "players"))
    if rules.format == "duel":
        raise MatchFileError(f"{path}: a duel is saved as {MATCH_FORMAT!r}, not {FORMAT_MATCH!r}")
    if "single_hand" in data:
        raise MatchFileError(f"{path}: 'single_hand' is a duel's option ({MATCH_FORMAT!r} files)")
    try:
        match = Match(rules, seed=data["seed"], first_dealer=data["first_dealer"])
    except (TypeError, ValueError) as exc:
        raise MatchFileError(f"{path}: bad first dealer: {exc}") from None
    players = data["players"]
    if not (isinstance(players, list) and len(players) == rules.num_players
            and all(isinstance(p, str) for p in players)):
        raise MatchFileError(f"{path}: 'players' must name {rules.num_players} seats")
    for i, action in enumerate(data["actions"]):
        if match.is_over:
            raise MatchFileError(f"{path}: action #{i + 1} ({action}) comes after the end of the match")
        if action not in match.legal_actions():
            name = A.describe_action(action) if 0 <= action < A.NUM_ACTIONS else "not an action id"
            raise MatchFileError(f"{path}: action #{i + 1} ({action}: {name}) is illegal in hand "
                                 f"{match.hand_number} for seat {match.current_seat}; the file is corrupt")
        match.apply(action)
    return match
