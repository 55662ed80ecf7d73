"""``hgin web``: the web table's entry point. The server is the :mod:`hgin_web` package
(imported only when the command runs); this module only registers the subcommand."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Add ``hgin web`` to the subcommands (its options: :func:`hgin_web.cli.add_parser`)."""
    from hgin_web.cli import add_parser  # argparse only: hgin works without the web extra

    add_parser(sub)
