"""What every ``hgin`` front-end shares (the bottom of the package: it imports no other
module of ``hgin_cli``): the one-line error, printing, card text and move descriptions."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hgin_env import actions as A
from hgin_env.cards import format_card
from hgin_env.game import Game, Phase

#: The agents ``hgin play --opponent`` knows by name (besides ``ppo`` and checkpoint paths).
BUILTIN_OPPONENTS = ("random", "simple", "expert")


class CliError(Exception):
    """An error reported as one line on stderr with exit code 2 (no traceback)."""


class MatchFileError(CliError, ValueError):
    """A saved match that cannot be used (corrupt, incomplete, or another rules version)."""


def _out() -> Any:
    return sys.stdout


def _say(*lines: str) -> None:
    out = _out()
    for line in lines:
        print(line, file=out)
    out.flush()


def _can_print_symbols() -> bool:
    encoding = getattr(sys.stdout, "encoding", None)
    if encoding is None:  # an in-memory stream (StringIO) takes any text
        return True
    try:
        "♣♦♥♠".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _card(card: int | None, symbols: bool) -> str:
    return "-" if card is None else format_card(card, symbols)


def describe_move(game: Game, action: int, name: str, symbols: bool = True) -> str:
    """What ``name`` does with ``action`` in ``game``'s current state (call before applying):
    ``player_1 draws from the stock``, ``player_1 takes 7♥``, ``player_1 discards 9♣``..."""
    top = _card(game.discard_top, symbols)
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
    return f"{name} discards {_card(card, symbols)}"


def _column_names(n: int) -> list[str]:
    return ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"][:n]



def _peek_json(path: str | Path) -> Any:
    """The JSON of a saved match file, or None when it cannot be read (the loaders then
    report why)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


#: The exit code of a match or tournament stopped by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130


def end_of_play(run: Callable[[], bool], save: Callable[[], Path | None]) -> int:
    """Play (``run()``: True when the match finished), save (``save()``: the file written, or
    None), and say how it ended. Ctrl-C saves what was played, then exits 130 with one line
    on stderr (as ``hgin tournament`` does); a quit or the end of input exits 0."""
    try:
        finished = run()
    except KeyboardInterrupt:
        path = save()
        saved = f"; saved to {path}, play on with: hgin play --resume {path}" if path else ""
        print(file=_out())  # end the prompt line
        print(f"interrupted: the match was not finished{saved}", file=sys.stderr)
        return EXIT_INTERRUPTED
    path = save()
    if path:
        _say(f"Saved the match to {path} (replay it with: hgin replay {path}"
             + ("" if finished else f"; play on with: hgin play --resume {path}") + ")")
    if not finished:
        _say("The match was not finished.")
    return 0
