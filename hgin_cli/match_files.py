"""Saved duel matches: ``hgin-match`` JSON (:func:`save_match` / :func:`load_match`)::

    {"format": "hgin-match", "rules_version": 1, "rules": {...all Rules options...},
     "seed": 7, "first_dealer": null, "actions": [105, 12, ...],
     "players": ["human", "expert"], "complete": true}

``seed``, ``first_dealer`` (``null`` = drawn from the seed, as ``Game`` does by default) and
the rules rebuild the deals; ``actions`` are the action ids of both players in order, so
``hgin_env.game.replay(rules, seed, actions, first_dealer=...)`` gives back the same match.
``players`` and ``complete`` (false for an abandoned match) are informative only. Every
game has a seed (an unseeded ``Game`` draws one and keeps it), so every saved file replays.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hgin_env import actions as A
from hgin_env.game import Game
from hgin_env.rules import RULES_VERSION, Rules, get_rules

from .common import MatchFileError

MATCH_FORMAT = "hgin-match"


def save_match(game: Game, path: str | Path, players: Sequence[str] | None = None) -> Path:
    """Write ``game`` (finished or not) as a ``hgin-match`` JSON file; returns the path.

    The game must have been dealt from its seed (``Game(rules, seed, first_dealer=...)``);
    a game with a stacked ``deck`` cannot be rebuilt from a seed and raises ``ValueError``.
    """
    if game.deck is not None:
        raise ValueError("a game dealt from a stacked deck cannot be saved as a seed replay")
    rules = get_rules(game.rules)
    data: dict[str, Any] = {
        "format": MATCH_FORMAT,
        "rules_version": RULES_VERSION,
        "rules": rules.to_dict(),
        "seed": game.seed,
        "first_dealer": game.first_dealer,
        "single_hand": bool(game.single_hand),
        "actions": [int(a) for a in game.action_history],
        "players": list(players) if players is not None else ["player_0", "player_1"],
        "complete": bool(game.is_over),
    }
    path = Path(path)
    path.write_text(json.dumps(data) + "\n")
    return path


def load_match(path: str | Path) -> tuple[dict[str, Any], Game]:
    """Read and check a saved match; returns ``(data, game)`` with the game replayed to its end.

    Raises :class:`MatchFileError` (a ``ValueError``) with a one-line reason for a missing
    or unreadable file, bad JSON, missing or mistyped keys, another format or rules version,
    unknown rule options, or an action that is illegal where it occurs.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise MatchFileError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MatchFileError(f"{path}: not a saved match (not UTF-8 text: {exc.reason} at byte "
                             f"{exc.start})") from None
    except json.JSONDecodeError as exc:
        raise MatchFileError(f"{path}: not a saved match (invalid JSON: {exc})") from None
    if not isinstance(data, dict):
        raise MatchFileError(f"{path}: not a saved match (expected a JSON object)")
    if data.get("format") != MATCH_FORMAT:
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
    seed = data["seed"]
    if seed is None:  # written before unseeded games drew a seed: its deals are unknown
        raise MatchFileError(f"{path}: 'seed' is null, so the deals cannot be rebuilt; this match "
                             "cannot be replayed")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise MatchFileError(f"{path}: 'seed' must be an integer >= 0, got {seed!r}")
    if data["first_dealer"] not in (None, 0, 1) or isinstance(data["first_dealer"], bool):
        raise MatchFileError(f"{path}: 'first_dealer' must be null, 0 or 1, got {data['first_dealer']!r}")
    actions = data["actions"]
    if not isinstance(actions, list) or not all(
            isinstance(a, int) and not isinstance(a, bool) for a in actions):
        raise MatchFileError(f"{path}: 'actions' must be a list of action ids (integers)")
    single_hand = data.get("single_hand", False)
    if not isinstance(single_hand, bool):
        raise MatchFileError(f"{path}: 'single_hand' must be true or false, got {single_hand!r}")
    try:
        game = Game(rules=rules, seed=seed, single_hand=single_hand, first_dealer=data["first_dealer"])
    except ValueError as exc:
        raise MatchFileError(f"{path}: {exc}") from None
    for i, action in enumerate(actions):
        if game.is_over:
            raise MatchFileError(f"{path}: action #{i + 1} ({action}) comes after the end of the match")
        if action not in game.legal_actions():
            raise MatchFileError(
                f"{path}: action #{i + 1} ({action}: {A.describe_action(action)}) is illegal in hand "
                f"{game.hand_number} for player_{game.current_player}; the file is corrupt")
        game.apply(action)
    return data, game
