"""Subcommands forwarded untouched to another script's ``main(argv)``: ``hgin tournament``
(``python -m eval.tournament``), ``hgin train`` (``train.ppo``), ``hgin bench``
(``eval.bench.run``). Their arguments reach the script as they are, ``--help`` included."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from .common import CliError

#: Subcommands forwarded untouched to another script's ``main(argv)``: (module, what it is).
FORWARDED = {
    "tournament": ("eval.tournament", "duplicate-deal tournament between agents"),
    "train": ("train.ppo", "train a MaskablePPO policy"),
    "bench": ("eval.bench.run", "benchmark against the reference anchors"),
}


@contextlib.contextmanager
def _prog_name(name: str) -> Iterator[None]:
    """Scripts whose argparse uses ``sys.argv[0]`` as prog show ``hgin <cmd>`` in their help."""
    saved = sys.argv[0] if sys.argv else ""
    if sys.argv:
        sys.argv[0] = name
    else:
        sys.argv.append(name)
    try:
        yield
    finally:
        sys.argv[0] = saved


def forward(command: str, argv: Sequence[str]) -> int:
    """Run ``hgin <command> ARGS`` as ``<module>.main(ARGS)``; returns an exit code."""
    module_name = FORWARDED[command][0]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        parts = module_name.split(".")
        own = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        if exc.name in own:
            raise CliError(f"'hgin {command}' needs the module {module_name}, which is not available in "
                           f"this installation (run it from a checkout of the project)") from None
        raise CliError(f"'hgin {command}' cannot start: missing package {exc.name!r} "
                       "(install the training extras: pip install 'hgin_env[train]')") from None
    main_fn = getattr(module, "main", None)
    if main_fn is None:
        raise CliError(f"{module_name} has no main(argv) entry point")
    with _prog_name(f"hgin {command}"):
        result = main_fn(list(argv))
    return result if isinstance(result, int) else 0


def register(sub: Any) -> None:
    """Add the forwarded subcommands (their options are the scripts' own)."""
    for name, (module, what) in FORWARDED.items():
        p = sub.add_parser(name, add_help=False, help=f"{what} (python -m {module}; "
                                                      f"'hgin {name} --help' for its options)",
                           description=f"Forwards every argument to python -m {module}.")
        p.add_argument("args", nargs=argparse.REMAINDER, help=f"arguments of {module}")
        p.set_defaults(func=None, forward=name)
