"""``hgin rules``: the rules profiles and their options."""

from __future__ import annotations

import argparse
from typing import Any

from hgin_env.rules import PROFILES, RULES_VERSION, Rules, get_rules

from .common import _say


def _differences(rules: Rules) -> dict[str, Any]:
    base = Rules().to_dict()
    return {k: v for k, v in rules.to_dict().items() if k != "name" and base.get(k) != v}


def cmd_rules(args: argparse.Namespace) -> int:
    if args.profile:
        rules = get_rules(args.profile)
        _say(f"Profile '{args.profile}' (rules version {RULES_VERSION}):")
        for key, value in rules.to_dict().items():
            if key != "name":
                _say(f"  {key:<22} {value!r}")
        return 0
    _say(f"Rules profiles (rules version {RULES_VERSION}); use with --rules PROFILE. "
         "'hgin rules PROFILE' lists every option; the rule book is docs/RULES.md.")
    for name, rules in PROFILES.items():
        diff = _differences(rules)
        text = ", ".join(f"{k}={v!r}" for k, v in diff.items()) or "the default (docs/RULES.md)"
        _say(f"  {name:<24} {text}")
    return 0


def register(sub: Any) -> None:
    """Add ``hgin rules`` to the subcommands."""
    p = sub.add_parser("rules", help="list the rules profiles and their options",
                       description="List the rules profiles (how each differs from the default), or "
                                   "every option of one profile.")
    p.add_argument("profile", nargs="?", choices=sorted(PROFILES), metavar="PROFILE",
                   help="show every option of this profile")
    p.set_defaults(func=cmd_rules)
