"""Two players on the same deals: each one's win rate, the paired difference and its 95% CI.

``python -m eval.paired OLD NEW [OLD NEW ...] [--opponent LABEL] [--names OLD_NAME NEW_NAME]``

``OLD`` and ``NEW`` are two tournament folders (or their ``matches.csv``) where each player
was the first agent (``agent_a``) against the same opponents on the same seeds: the
candidate and the policy it would replace, or a search and the policy it searches with.
Matches are paired by (seed, the first agent's seating, the opponent's label); only the
matches both folders played count. Several ``OLD NEW`` pairs print a line each and a pooled
line.

The duplicate deal (one seed against one opponent, every seating) is the unit of every
interval, as in :mod:`arena.stats`: a player's rate has :func:`arena.stats.duplicate_interval`,
the difference :func:`arena.stats.mean_interval` of the per-deal differences. A match scores
1 won, 0.5 drawn, 0 lost. "Outcomes differ" counts the matches whose score differs, the
only ones that move the difference.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from arena.stats import duplicate_interval, match_score, mean_interval


def match_scores(path: str | Path, opponent: str | None = None) -> dict[tuple[str, str, str], float]:
    """{(seed, the first agent's seating, opponent's label): score} of a tournament's
    ``matches.csv`` (``path`` the file or its folder), only against ``opponent`` if given. A
    three-hand or partnership seating is the ``a_seats`` column, a duel's ``a_seat``."""
    path = Path(path)
    csv_path = path / "matches.csv" if path.is_dir() else path
    if not csv_path.is_file():
        raise FileNotFoundError(f"no matches.csv at {path} (give a tournament's --out folder or its matches.csv)")
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {(r["seed"], r.get("a_seats") or r["a_seat"], r["agent_b"]): match_score(r["winner_side"])
            for r in rows if opponent is None or r["agent_b"] == opponent}


def compare(old: dict, new: dict) -> dict:
    """The paired figures of two :func:`match_scores` on the matches both hold: ``n``,
    ``deals``, each side's ``rate`` and ``ci``, the ``difference`` (new minus old) with its
    ``difference_ci``, and ``differ`` (matches whose score differs). Keys may carry a prefix
    before (seed, seating, opponent), as pooled sets do."""
    keys = sorted(old.keys() & new.keys())
    if not keys:
        raise ValueError("the two sets share no match (same seed, seating and opponent label): "
                         "were they played on the same seeds, with the same --opponent?")
    by_deal: dict[tuple, list[tuple[float, float]]] = {}
    for key in keys:
        by_deal.setdefault(key[:-2] + key[-1:], []).append((old[key], new[key]))
    per_deal = [[sum(pair[i] for pair in deal) / len(deal) for deal in by_deal.values()] for i in (0, 1)]
    diff = [n - o for o, n in zip(*per_deal, strict=True)]
    return {
        "n": len(keys), "deals": len(by_deal),
        "old_rate": sum(old[k] for k in keys) / len(keys), "old_ci": duplicate_interval(per_deal[0]),
        "new_rate": sum(new[k] for k in keys) / len(keys), "new_ci": duplicate_interval(per_deal[1]),
        "difference": sum(diff) / len(diff), "difference_ci": mean_interval(diff),
        "differ": sum(old[k] != new[k] for k in keys),
    }


def line(name: str, result: dict, names: tuple[str, str] = ("old", "new")) -> str:
    """One printed line of :func:`compare`'s figures, rates and points in percent."""
    def rate(side: str) -> str:
        low, high = result[side + "_ci"]
        return f"{result[side + '_rate']:.1%} ({low:.1%}-{high:.1%})"

    low, high = result["difference_ci"]
    return (f"{name}: n={result['n']} {names[0]} {rate('old')} {names[1]} {rate('new')} "
            f"paired {100 * result['difference']:+.1f} ({100 * low:+.1f} to {100 * high:+.1f}), "
            f"{result['differ']} outcomes differ")


def pooled(sets: list[tuple[dict, dict]]) -> tuple[dict, dict]:
    """Several (old, new) score sets as one, each key prefixed by its set's index (so a deal
    stays its own set's)."""
    old: dict = {}
    new: dict = {}
    for i, (a, b) in enumerate(sets):
        old.update({(i, *k): v for k, v in a.items()})
        new.update({(i, *k): v for k, v in b.items()})
    return old, new


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m eval.paired", description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", metavar="OLD NEW",
                        help="tournament folders (or matches.csv files), in (old, new) pairs")
    parser.add_argument("--opponent", help="only the matches against this label (agent_b); default every one")
    parser.add_argument("--names", nargs=2, default=("old", "new"), metavar=("OLD", "NEW"),
                        help="what the two players are called in the output")
    args = parser.parse_args(argv)
    if len(args.folders) % 2:
        parser.error(f"folders come in (old, new) pairs; got {len(args.folders)}")
    sets = [(match_scores(args.folders[i], args.opponent), match_scores(args.folders[i + 1], args.opponent))
            for i in range(0, len(args.folders), 2)]
    names = tuple(args.names)
    for i, (old, new) in enumerate(sets):
        print(line(f"{args.folders[2 * i]} -> {args.folders[2 * i + 1]}", compare(old, new), names))
    if len(sets) > 1:
        print(line("pooled", compare(*pooled(sets)), names))


if __name__ == "__main__":
    main()
