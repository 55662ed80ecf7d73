"""Saved matches: the JSON files ``hgin play --save`` and the web table write and ``hgin
replay``, ``hgin play --resume`` and the web table's replays read, and the one-line
description of a move that every front shows in its move log.

One format for every match format (duel, three-hand, partnership): ``hgin-match``
(:data:`MATCH_FORMAT`), written by :func:`save_match` from a
:class:`~hgin_env.match.Match` and read back by :func:`load_match` as one::

    {"format": "hgin-match", "rules_version": 2, "rules": {...all Rules options...},
     "seed": 7, "first_dealer": null, "single_hand": false, "actions": [105, 12, ...],
     "players": ["human", "expert"], "complete": true}

``seed``, ``first_dealer`` (``null`` = drawn from the seed; a seat, or a partnership's
dealing team), ``single_hand`` (a one-hand duel) and the rules rebuild the deals, so
replaying ``actions`` (in the order ``Match.apply`` took them) gives back the same match.
``players`` names each seat (``"human"`` marks the seat ``hgin play --resume`` gives the
person); ``complete`` (false for an unfinished match) is informative. Every match has a
seed (an unseeded one draws one and keeps it), so every saved file replays; a file without
one is refused.

Files written before issue 55 still load: a duel's ``hgin-match`` file is this format
already, and three-hand and partnership matches were saved as ``hgin-format-match``
(:data:`OLD_FORMAT_MATCH`, the same keys), which is read as ``hgin-match`` and never written
(``tests/data/saved_matches`` holds files of both old writers; ``tests/test_saved_matches.py``).

The loader checks the whole file before anything uses it and raises :class:`MatchFileError`
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
from hgin_env.game import MAX_SEED, Hand, Phase
from hgin_env.match import Match
from hgin_env.rules import RULES_VERSION, Rules

#: The ``format`` of a saved match, of every match format.
MATCH_FORMAT = "hgin-match"
#: The ``format`` three-hand and partnership matches were saved under before issue 55 gave
#: every match one file format: read as :data:`MATCH_FORMAT`, never written.
OLD_FORMAT_MATCH = "hgin-format-match"
#: Every ``format`` a saved match file may name.
SAVED_MATCH_FORMATS = (MATCH_FORMAT, OLD_FORMAT_MATCH)
#: The largest value of an integer rule option in a saved match (the profiles' are below
#: 10,000; anything larger is not a match that was played).
MAX_RULE_NUMBER = 2**31 - 1


class MatchFileError(ValueError):
    """A saved match that cannot be used (corrupt, incomplete, or another rules version)."""


# --------------------------------------------------------------------------- describing moves
def card_text(card: int | None, symbols: bool = True) -> str:
    """A card as the fronts write it (``7♥``, or ``7H`` without symbols); ``-`` for none."""
    return "-" if card is None else format_card(card, symbols)


def describe_move(game: Hand, action: int, name: str, symbols: bool = True) -> str:
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


def save_match(match: Match, path: str | Path, players: Sequence[str] | None = None) -> Path:
    """Write ``match`` (any format, finished or not) as a ``hgin-match`` JSON file; returns
    the path. ``players`` names each seat (default ``player_<seat>``).

    The match must have been dealt from its seed; a duel with a stacked ``deck`` cannot be
    rebuilt from a seed and raises ``ValueError``."""
    if match.deck is not None:
        raise ValueError("a match dealt from a stacked deck cannot be saved as a seed replay")
    names = list(players) if players is not None else default_players(match.num_players)
    if len(names) != match.num_players:
        raise ValueError(f"players must name the {match.num_players} seats of the match, got {names!r}")
    return _write(path, {
        "format": MATCH_FORMAT, "rules_version": RULES_VERSION, "rules": match.rules.to_dict(),
        "seed": match.seed, "first_dealer": match.first_dealer, "single_hand": bool(match.single_hand),
        "actions": [int(a) for a in match.action_history], "players": names,
        "complete": bool(match.is_over),
    })


def default_players(num_players: int) -> list[str]:
    """The seats' names of a file that names none: ``player_<seat>``."""
    return [f"player_{s}" for s in range(num_players)]


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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _checked_rules(path: str | Path, data: Any) -> Rules:
    """The checks of the file's keys, rules, seed, first dealer and action ids; returns
    the file's rules."""
    if not isinstance(data, dict):
        raise MatchFileError(f"{path}: not a saved match (expected a JSON object)")
    if data.get("format") not in SAVED_MATCH_FORMATS:
        raise MatchFileError(f"{path}: not a saved match (format {data.get('format')!r}, "
                             f"expected {MATCH_FORMAT!r})")
    missing = [k for k in ("rules_version", "rules", "seed", "first_dealer", "actions") if k not in data]
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
    if not isinstance(data.get("single_hand", False), bool):
        raise MatchFileError(f"{path}: 'single_hand' must be true or false, got {data['single_hand']!r}")
    actions = data["actions"]
    if not isinstance(actions, list) or not all(_is_int(a) for a in actions):
        raise MatchFileError(f"{path}: 'actions' must be a list of action ids (integers)")
    return rules


def _checked_players(path: str | Path, data: dict, num_players: int) -> list[str]:
    """The file's names of the seats (``player_<seat>`` when it names none)."""
    players = data.get("players")
    if players is None:
        return default_players(num_players)
    if not (isinstance(players, list) and len(players) == num_players
            and all(isinstance(p, str) for p in players)):
        raise MatchFileError(f"{path}: 'players' must name {num_players} seats")
    return players


def load_match(path: str | Path, data: Any = None) -> tuple[dict[str, Any], Match]:
    """Read and check a saved match of any format (``data``: its JSON when already read);
    returns ``(data, match)``, the match replayed to its last action and ``data["players"]``
    naming every seat. A corrupt file raises :class:`MatchFileError` with one line (see the
    module for what is refused)."""
    if data is None:
        data = read_json(path)
    rules = _checked_rules(path, data)
    try:
        match = Match(rules, seed=data["seed"], first_dealer=data["first_dealer"],
                      single_hand=data.get("single_hand", False))
    except (TypeError, ValueError) as exc:
        raise MatchFileError(f"{path}: {exc}") from None
    data = {**data, "players": _checked_players(path, data, match.num_players)}
    for i, action in enumerate(data["actions"]):
        if match.is_over:
            raise MatchFileError(f"{path}: action #{i + 1} ({action}) comes after the end of the match")
        if action not in match.legal_actions():
            name = A.describe_action(action) if 0 <= action < A.NUM_ACTIONS else "not an action id"
            raise MatchFileError(f"{path}: action #{i + 1} ({action}: {name}) is illegal in hand "
                                 f"{match.hand_number} for player_{match.current_seat}; the file is corrupt")
        match.apply(action)
    return data, match
