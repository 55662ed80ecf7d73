"""One results table from several tournament folders: every agent against every other.

Why: pairs cost very different amounts of time (a search agent takes a second per move,
the batched policy microseconds), so the all-against-all table is assembled from
tournaments of different sizes. Each folder's ``matches.csv`` is read back as it was
played; the rows of a pair are pooled over folders (a pair played twice with different
seeds counts both), an agent may be renamed with ``--alias`` (the same policy under two
labels), and the CIs keep the duplicate-seed unit of :func:`eval.tournament.summarize_pair`.
``--folder-alias FOLDER LABEL=NAME`` renames a label in that folder alone: the label a
tournament gave "the shipped policy" names another policy once a newer one ships.

    python -m eval.results_table runs/tournament_final runs/search_vs_expert_400 ... \\
        --alias ppo:agents/policies/hgin_ppo.zip=ppo --order ppo expert search simple random

prints a markdown cross table (row agent's match win % against the column agent, 95% CI,
matches) and the Bradley–Terry ratings over all pooled pairs (random = 0 when present),
each with a 95% interval from a bootstrap over the duplicate seeds. ``--plot PATH`` draws
the same figures as one picture: the cross table as a heatmap of win rates and the ratings
with their intervals (docs/img/results.png, shown in docs/results.md and the README).
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena.ratings import bradley_terry
from arena.stats import interval_text, match_score, summarize_pair
from arena.tournament import _typed_row

#: Bootstrap resamples of the ratings' intervals, and the seed they are drawn from (the
#: intervals, and the picture, are the same on every run).
RATING_RESAMPLES = 1000
RATING_SEED = 0


def read_rows(folders: Sequence[str | Path], aliases: dict[str, str] | None = None,
              folder_aliases: dict[str | Path, dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """Every match row of the folders' ``matches.csv`` with agent labels renamed by
    ``aliases``, or within one folder by ``folder_aliases[folder]`` (which wins over them)."""
    aliases = aliases or {}
    scoped = {Path(folder): names for folder, names in (folder_aliases or {}).items()}
    unknown = set(scoped) - {Path(folder) for folder in folders}
    if unknown:
        raise ValueError(f"folder aliases for folders not read: {sorted(map(str, unknown))}")
    rows: list[dict[str, Any]] = []
    for index, folder in enumerate(folders):
        path = Path(folder) / "matches.csv"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no matches.csv (is {folder} a tournament folder?)")
        names = {**aliases, **scoped.get(Path(folder), {})}
        with path.open(newline="") as f:
            for raw in csv.DictReader(f):
                row = _typed_row(raw)
                row["agent_a"] = names.get(row["agent_a"], row["agent_a"])
                row["agent_b"] = names.get(row["agent_b"], row["agent_b"])
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


def ordered_agents(pairs: dict[tuple[str, str], dict[str, Any]], order: Sequence[str] | None) -> list[str]:
    """``order``, then any agent it leaves out (sorted)."""
    agents = list(order) if order else sorted({a for a, _ in pairs})
    return agents + sorted({a for a, _ in pairs} - set(agents))


def _anchor(agents: Sequence[str]) -> str | None:
    return "random" if "random" in agents else None


def _results(pairs: dict[tuple[str, str], dict[str, Any]]) -> dict[tuple[str, str], tuple[float, float]]:
    return {(a, b): (s["a_wins"] + 0.5 * s["draws"], s["b_wins"] + 0.5 * s["draws"])
            for (a, b), s in pairs.items() if a < b}


def rating_intervals(rows: Sequence[dict[str, Any]], agents: Sequence[str], resamples: int = RATING_RESAMPLES,
                     seed: int = RATING_SEED) -> dict[str, tuple[float, float]]:
    """A 95% interval of each Bradley–Terry rating: the 2.5th and 97.5th percentiles of the
    ratings refitted on ``resamples`` bootstrap samples, each pair's duplicate seeds (the
    unit of the pair's CI) drawn with replacement."""
    units: dict[tuple[str, str], dict[Any, list[float]]] = {}
    for r in rows:
        a, b = r["agent_a"], r["agent_b"]
        if a == b:
            continue
        win_a = match_score(r["winner_side"])
        key, first = ((a, b), win_a) if a < b else ((b, a), 1.0 - win_a)
        score = units.setdefault(key, {}).setdefault(r["seed"], [0.0, 0.0])
        score[0] += first
        score[1] += 1.0 - first
    per_pair = {pair: np.array(list(seeds.values())) for pair, seeds in units.items()}
    rng = np.random.default_rng(seed)
    samples: dict[str, list[float]] = {a: [] for a in agents}
    for _ in range(resamples):
        results = {}
        for pair, scores in per_pair.items():
            drawn = scores[rng.integers(len(scores), size=len(scores))].sum(axis=0)
            results[pair] = (float(drawn[0]), float(drawn[1]))
        for name, rating in bradley_terry(agents, results, anchor=_anchor(agents)).items():
            samples[name].append(rating)
    return {a: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) for a, v in samples.items()}


def cross_table(rows: Sequence[dict[str, Any]], order: Sequence[str] | None = None) -> str:
    """The markdown cross table and the Bradley–Terry ratings with their 95% intervals."""
    pairs = pooled_pairs(rows)
    agents = ordered_agents(pairs, order)
    ratings = bradley_terry(agents, _results(pairs), anchor=_anchor(agents))
    intervals = rating_intervals(rows, agents)
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
                cells.append(f"{100 * s['a_win_rate']:.1f} ({interval_text(s)}), n={s['matches']}")
        lines.append(f"| **{a}** | " + " | ".join(cells) + " |")
    lines += ["", "| agent | Bradley–Terry rating (Elo scale" + (", random = 0" if "random" in agents else "")
              + ") | 95% interval (bootstrap over seeds) |", "|---|---|---|"]
    for name, r in sorted(ratings.items(), key=lambda kv: -kv[1]):
        low, high = intervals[name]
        interval = "the anchor" if name == _anchor(agents) else f"{low:.0f}–{high:.0f}"
        lines.append(f"| {name} | {r:.0f} | {interval} |")
    return "\n".join(lines) + "\n"


def plot(rows: Sequence[dict[str, Any]], path: str | Path, order: Sequence[str] | None = None) -> Path:
    """One picture of the table: the row agent's match win % against the column agent as a
    heatmap (grey where the pair did not play), and the ratings with their 95% intervals
    (the anchor, random = 0, left out: it would squeeze the others into one point)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = pooled_pairs(rows)
    agents = ordered_agents(pairs, order)
    anchor = _anchor(agents)
    ratings = bradley_terry(agents, _results(pairs), anchor=anchor)
    intervals = rating_intervals(rows, agents)
    n = len(agents)
    rates = np.full((n, n), np.nan)
    for i, a in enumerate(agents):
        for j, b in enumerate(agents):
            if (a, b) in pairs:
                rates[i, j] = 100 * pairs[(a, b)]["a_win_rate"]
    fig, (heat, bars) = plt.subplots(1, 2, figsize=(11, 4.6), gridspec_kw={"width_ratios": [1.25, 1]})
    cmap = plt.get_cmap("RdBu").with_extremes(bad="#dddddd")
    image = heat.imshow(np.ma.masked_invalid(rates), cmap=cmap, vmin=0, vmax=100)
    for i in range(n):
        for j in range(n):
            text = "—" if i == j else "" if np.isnan(rates[i, j]) else f"{rates[i, j]:.0f}"
            dark = not np.isnan(rates[i, j]) and abs(rates[i, j] - 50) > 30
            heat.text(j, i, text, ha="center", va="center", fontsize=9, color="white" if dark else "black")
    heat.set_xticks(range(n), agents, rotation=35, ha="right")
    heat.set_yticks(range(n), agents)
    heat.set(xlabel="column agent", ylabel="row agent",
             title="row agent's match win % against the column agent\n(grey: not played)")
    fig.colorbar(image, ax=heat, fraction=0.046, pad=0.04, label="match win %")
    shown = [a for a in sorted(ratings, key=lambda a: ratings[a]) if a != anchor]
    ys = np.arange(len(shown))
    points = np.array([ratings[a] for a in shown])
    err = np.array([[ratings[a] - intervals[a][0] for a in shown], [intervals[a][1] - ratings[a] for a in shown]])
    bars.errorbar(points, ys, xerr=err, fmt="o", color="tab:blue", capsize=4)
    for y, a in zip(ys, shown, strict=True):
        bars.annotate(f"{ratings[a]:.0f}", (points[y], y), textcoords="offset points", xytext=(0, 7),
                      ha="center", fontsize=8)
    bars.set_yticks(ys, shown)
    bars.set_ylim(-0.6, len(shown) - 0.4)
    scale = "Bradley–Terry rating, Elo scale" + (f" ({anchor} = 0, not shown)" if anchor else "")
    bars.set(xlabel=scale, title="ratings with 95% intervals\n(bootstrap over duplicate seeds)")
    bars.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=72)
    plt.close(fig)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", help="tournament folders (each with matches.csv)")
    parser.add_argument("--alias", nargs="*", default=[], help="LABEL=NAME renames an agent label")
    parser.add_argument("--folder-alias", nargs="+", action="append", default=[], metavar="FOLDER LABEL=NAME",
                        help="renames agent labels in one folder alone (repeatable)")
    parser.add_argument("--order", nargs="*", default=None, help="agents in this order (rows and columns)")
    parser.add_argument("--out", default="", help="also write the markdown here")
    parser.add_argument("--plot", default="", help="also draw the heatmap and the ratings into this PNG")
    args = parser.parse_args(argv)

    def renames(items: Sequence[str], flag: str) -> dict[str, str]:
        for item in items:
            if "=" not in item:
                parser.error(f"{flag} {item!r}: expected LABEL=NAME")
        return dict(item.rsplit("=", 1) for item in items)

    aliases = renames(args.alias, "--alias")
    folder_aliases = {}
    for folder, *items in args.folder_alias:
        if not items:
            parser.error(f"--folder-alias {folder}: expected FOLDER LABEL=NAME [LABEL=NAME ...]")
        folder_aliases[folder] = renames(items, "--folder-alias")
    try:
        rows = read_rows(args.folders, aliases, folder_aliases)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}")
        return 2
    text = cross_table(rows, args.order)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    if args.plot:
        print(f"picture: {plot(rows, args.plot, args.order)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
