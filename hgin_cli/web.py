"""``hgin web``: the web table's entry point. The server is the :mod:`hgin_web` package
(imported only when the command runs); this module only registers the subcommand."""

from __future__ import annotations

import argparse
from typing import Any

from .common import CliError


def register(sub: Any) -> None:
    """Add ``hgin web`` to the subcommands (its options: :func:`hgin_web.cli.add_parser`);
    a server that cannot start is reported as hgin's one-line error."""
    from hgin_web.cli import StartError, add_parser  # argparse only: hgin works without the web extra

    parser = add_parser(sub)
    start = parser.get_default("func")

    def run(args: argparse.Namespace) -> int:
        try:
            return int(start(args))
        except StartError as exc:
            raise CliError(str(exc)) from None

    parser.set_defaults(func=run)
