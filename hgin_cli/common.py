"""What every ``hgin`` front-end shares (the bottom of the package: it imports no other
module of ``hgin_cli``): the one-line error, printing and card text. Saved matches and the
move descriptions are :mod:`arena.records`, shared with the web table."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.records import MatchFileError, card_text

#: The agents ``hgin play --opponent`` knows by name (besides ``ppo``, checkpoint paths and
#: specs with options such as ``search:rollouts=16``).
BUILTIN_OPPONENTS = ("random", "simple", "expert", "search")
#: Every opponent named by one word: the built-in agents and ``ppo`` (the shipped policy).
OPPONENT_KINDS = (*BUILTIN_OPPONENTS, "ppo")


class CliError(Exception):
    """An error reported as one line on stderr with exit code 2 (no traceback)."""


#: Refusals ``hgin`` reports as one line on stderr with exit code 2: its own errors and a
#: saved match that cannot be used (:class:`arena.records.MatchFileError`).
REPORTED = (CliError, MatchFileError)


#: A card as the CLI prints it (``-`` for none): the fronts' one card text.
_card = card_text


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


def _column_names(n: int) -> list[str]:
    return ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"][:n]



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
