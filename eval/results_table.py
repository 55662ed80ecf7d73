"""One results table from several tournament folders: every agent against every other.

Why: pairs cost very different amounts of time (a search agent takes a second per move,
the batched policy microseconds), so the all-against-all table is assembled from
tournaments of different sizes. Each folder's ``matches.csv`` is read back as it was
played; the rows of a pair are pooled over folders (a pair played twice with different
seeds counts both), an agent may be renamed with ``--alias`` (the same policy under two
labels), and the CIs keep the duplicate-seed unit of :func:`eval.tournament.summarize_pair`.

    python -m eval.results_table runs/tournament_final runs/search_vs_expert_400 ... \\
        --alias ppo:agents/policies/hgin_ppo.zip=ppo --order ppo expert search simple random

prints a markdown cross table (row agent's match win % against the column agent, 95% CI,
matches) and the Bradley–Terry ratings over all pooled pairs (random = 0 when present).
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.ratings import bradley_terry
from arena.stats import summarize_pair
from arena.tournament import _typed_row


def read_rows(folders: Sequence[str | Path], aliases: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every match row of the folders' ``matches.csv`` with agent labels renamed by ``aliases``."""
    aliases = aliases or {}
    rows: list[dict[str, Any]] = []
    for index, folder in enumerate(folders):
        path = Path(folder) / "matches.csv"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no matches.csv (is {folder} a tournament folder?)")
        with path.open(newline="") as f:
            for raw in csv.DictReader(f):
                row = _typed_row(raw)
                row["agent_a"] = aliases.get(row["agent_a"], row["agent_a"])
                row["agent_b"] = aliases.get(row["agent_b"], row["agent_b"])
                row["seed"] = (index, row["seed"])  # a duplicate unit is a seed of one folder
                rows.append(row)
    return rows


def pooled_pairs(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(a, b): summary}`` for both orders of every pair played, a's side first. Seeds of
    different folders are kept apart (a seed played in two folders is two units)."""
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        a, b = r["agent_a"], r["agent_b"]
        if a == b:
            continue
        by_pair.setdefault((a, b), []).append(r)
        flipped = dict(r)
        flipped["agent_a"], flipped["agent_b"] = b, a
        flipped["winner_side"] = {"a": "b", "b": "a"}.get(r["winner_side"], r["winner_side"])
        for key in list(r):  # a_* <-> b_* columns
            if key.startswith("a_") and "b_" + key[2:] in r:
                flipped[key], flipped["b_" + key[2:]] = r["b_" + key[2:]], r[key]
        flipped.pop("a_seat", None)  # meaningless once flipped; summaries don't use it
        by_pair.setdefault((b, a), []).append(flipped)
    return {pair: summarize_pair(rs, *pair) for pair, rs in by_pair.items()}


def cross_table(rows: Sequence[dict[str, Any]], order: Sequence[str] | None = None) -> str:
    """The markdown cross table and the Bradley–Terry ratings."""
    pairs = pooled_pairs(rows)
    agents = list(order) if order else sorted({a for a, _ in pairs})
    missing = sorted({a for a, _ in pairs} - set(agents))
    agents += missing
    results = {(a, b): (s["a_wins"] + 0.5 * s["draws"], s["b_wins"] + 0.5 * s["draws"])
               for (a, b), s in pairs.items() if a < b}
    ratings = bradley_terry(agents, results, anchor="random" if "random" in agents else None)
    lines = ["| row vs column | " + " | ".join(agents) + " |", "|---|" + "---|" * len(agents)]
    for a in agents:
        cells = []
        for b in agents:
            s = pairs.get((a, b))
            if a == b:
                cells.append("—")
            elif s is None:
                cells.append("not played")
            else:
                cells.append(f"{100 * s['a_win_rate']:.1f} ({100 * s['ci_low']:.1f}–{100 * s['ci_high']:.1f}), "
                             f"n={s['matches']}")
        lines.append(f"| **{a}** | " + " | ".join(cells) + " |")
    lines += ["", "| agent | Bradley–Terry rating (Elo scale" + (", random = 0" if "random" in agents else "")
              + ") |", "|---|---|"]
    for name, r in sorted(ratings.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {name} | {r:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", help="tournament folders (each with matches.csv)")
    parser.add_argument("--alias", nargs="*", default=[], help="LABEL=NAME renames an agent label")
    parser.add_argument("--order", nargs="*", default=None, help="agents in this order (rows and columns)")
    parser.add_argument("--out", default="", help="also write the markdown here")
    args = parser.parse_args(argv)
    aliases = {}
    for item in args.alias:
        if "=" not in item:
            parser.error(f"--alias {item!r}: expected LABEL=NAME")
        label, name = item.rsplit("=", 1)
        aliases[label] = name
    try:
        text = cross_table(read_rows(args.folders, aliases), args.order)
    except FileNotFoundError as exc:
        print(f"error: {exc}")
        return 2
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
