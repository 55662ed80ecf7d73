"""Duplicate-deal tournaments between agents over whole Hollywood Gin matches.

Why duplicate deals: the luck of the cards dwarfs skill differences over a few hundred
matches. Every match seed is played twice with the seats swapped: ``Match(rules, seed)``
deals the same cards (and draws the same first dealer) for the same seed, so each agent
gets the other's cards in the second game. A duplicate pair is the statistical unit of
the confidence interval (its two games are correlated). An agent against itself is then
exactly 50% in expectation.

Matches are played through the engine directly (``Match`` + ``observation.observe``):
agents only ever receive the observation dict of the player to act, as the environment
would give it, but without the PettingZoo bookkeeping.

The runner lives here, below ``train`` and ``eval``, which both use it; its command line
is ``python -m eval.tournament`` (:mod:`eval.tournament`)::

    python -m eval.tournament --agents expert simple random --matches 2000 --workers 2 \\
        --out runs/tournament_x --rules hollywood

Python::

    from arena.tournament import run_tournament
    result = run_tournament(["expert", "simple"], matches=200, seed=0, workers=2)
    print(result.markdown())
    result.table()          # pandas DataFrame, one row per pair
"""

from __future__ import annotations

import csv
import json
import math
import multiprocessing as mp
import os
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from hgin_env.rules import Rules, get_rules

from .matches import AgentSpec, as_spec, derive_seed, play_match, reset_agent, seatings
from .ratings import bradley_terry
from .stats import (
    MIN_SEEDS_FOR_CI,
    OUTCOME_KINDS,
    duplicate_interval,
    interval_text,
    match_score,
    summarize_pair,
    wilson_interval,
)

__all__ = ["OUTCOME_KINDS", "AgentSpec", "MatchLog", "TournamentResult", "as_spec", "derive_seed",
           "duplicate_interval", "play_match", "plot_summary", "reset_agent", "run_tournament", "seatings",
           "summarize_pair", "wilson_interval"]


# --------------------------------------------------------------------------- workers
def _run_chunk(task: tuple[AgentSpec, AgentSpec, list[int], dict, bool]) -> list[dict[str, Any]]:
    spec_a, spec_b, seeds, rules_dict, reduce_variance = task
    rules = Rules.from_dict(rules_dict)
    agent_a = spec_a.build(rules)
    agent_b = spec_b.build(rules)
    luck = None
    if reduce_variance:
        from .variance import recorder_for

        luck = recorder_for(rules)
    rows = []
    for seed in seeds:
        for a_seat in range(len(seatings(rules.format))):
            rows.append(play_match(agent_a, agent_b, seed, a_seat, rules, spec_a.display, spec_b.display,
                                   luck=luck))
    return rows


@dataclass
class TournamentResult:
    """All match rows of a tournament, with per-pair summaries and ratings."""

    agents: list[str]
    rows: list[dict[str, Any]]
    rules_name: str
    matches_per_pair: int
    seed: int
    pairs: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    #: Matches this run played; the others (``len(rows) - played``) were already in the
    #: folder's ``matches.csv`` from an earlier run of the same tournament.
    played: int = 0
    #: Seatings per seed (:func:`seatings`): 2 in the duel and partnership, 6 in three-hand.
    seatings: int = 2

    def pair_rows(self, a: str, b: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["agent_a"] == a and r["agent_b"] == b]

    def summaries(self) -> list[dict[str, Any]]:
        """One summary dict per pair (see :func:`summarize_pair`)."""
        return [summarize_pair(self.pair_rows(a, b), a, b) for a, b in self.pairs]

    def table(self) -> Any:
        """Per-pair summary as a pandas DataFrame (a list of dicts when pandas is missing)."""
        data = self.summaries()
        try:
            import pandas as pd
        except ImportError:
            return data
        return pd.DataFrame(data)

    def matches(self) -> Any:
        """Every match row as a pandas DataFrame (a list of dicts when pandas is missing)."""
        try:
            import pandas as pd
        except ImportError:
            return list(self.rows)
        return pd.DataFrame(self.rows)

    def agent_summaries(self) -> list[dict[str, Any]]:
        """Per agent, over all its pairs: match win rate (draws half) and a 95% CI whose
        unit is one (pair, seed) duplicate set of matches."""
        out = []
        for name in self.agents:
            units: dict[tuple, list[float]] = {}
            for r in self.rows:
                if name not in (r["agent_a"], r["agent_b"]):
                    continue
                side = "a" if r["agent_a"] == name else "b"
                score = match_score(r["winner_side"], side)
                units.setdefault((r["agent_a"], r["agent_b"], r["seed"]), []).append(score)
            means = [float(np.mean(v)) for v in units.values()]
            lo, hi = duplicate_interval(means)
            out.append({"agent": name, "matches": sum(len(v) for v in units.values()),
                        "win_rate": float(np.mean(means)) if means else float("nan"),
                        "ci_low": lo, "ci_high": hi, "seeds": len(means),
                        "ci_too_few_seeds": len(means) < MIN_SEEDS_FOR_CI})
        return out

    def ratings(self, anchor: str | None = None) -> dict[str, float]:
        """Bradley-Terry ratings on the Elo scale (anchor: ``random`` if present)."""
        results = {}
        for s in self.summaries():
            results[(s["agent_a"], s["agent_b"])] = (s["a_wins"] + 0.5 * s["draws"],
                                                     s["b_wins"] + 0.5 * s["draws"])
        if anchor is None and "random" in self.agents:
            anchor = "random"
        return bradley_terry(self.agents, results, anchor=anchor)

    def markdown(self) -> str:
        """A markdown report: the pair table (win rate, CIs, columns, outcomes) and ratings."""
        how = "seats swapped" if self.seatings == 2 else "every agent at every seat"
        lines = [f"Rules `{self.rules_name}`, {self.matches_per_pair} matches per pair "
                 f"({self.matches_per_pair // self.seatings} duplicate seeds from {self.seed}, "
                 f"{self.seatings} seatings each: {how}).", ""]
        lines.append("| A | B | matches | A match win % | 95% CI (dup. pairs) | 95% CI (Wilson) | "
                     "columns won A–B | mean column total A–B | hands/match | "
                     "A knock/gin/undercut % of hands | B knock/gin/undercut % of hands | dead % |")
        lines.append("|" + "---|" * 12)
        few = False
        for s in self.summaries():
            few |= s["ci_too_few_seeds"]
            lines.append(
                f"| {s['agent_a']} | {s['agent_b']} | {s['matches']} | {100 * s['a_win_rate']:.1f} | "
                f"{interval_text(s)} | {interval_text(s, 'wilson')} | "
                f"{s['a_columns_won']:.2f}–{s['b_columns_won']:.2f} | "
                f"{s['a_column_total']:.1f}–{s['b_column_total']:.1f} | {s['hands_per_match']:.1f} | "
                f"{_mix(s, 'a')} | {_mix(s, 'b')} | {100 * s['dead_rate']:.1f} |")
        if len(self.agents) > 2:
            lines += ["", "| agent | matches | match win % vs all | 95% CI (seeds) | "
                      "rating (Bradley–Terry, Elo scale) |", "|---|---|---|---|---|"]
            per_agent = {a["agent"]: a for a in self.agent_summaries()}
            for name, r in sorted(self.ratings().items(), key=lambda kv: -kv[1]):
                a = per_agent[name]
                few |= a["ci_too_few_seeds"]
                lines.append(f"| {name} | {a['matches']} | {100 * a['win_rate']:.1f} | "
                             f"{interval_text(a)} | {r:.0f} |")
        reduced = [s for s in self.summaries() if "reduced_win_rate" in s]
        if reduced:
            lines += ["", "Luck-adjusted (arena.variance: the critic's value of each deal and stock card taken out, "
                          "unbiased; docs/evaluation.md):", "",
                      "| A | B | A match win % | 95% CI (dup. pairs) | luck-adjusted A win % | 95% CI | "
                      "CI width ratio (plain / adjusted) | β (two halves) | luck s/match |", "|" + "---|" * 9]
            for s in reduced:
                lines.append(
                    f"| {s['agent_a']} | {s['agent_b']} | {100 * s['a_win_rate']:.1f} | {interval_text(s)} | "
                    f"{100 * s['reduced_win_rate']:.1f} | {interval_text(s, 'reduced')} | "
                    f"{s['ci_width_ratio']:.2f} | {s['luck_beta'][0]:.2f}, {s['luck_beta'][1]:.2f} | "
                    f"{s['luck_seconds_per_match']:.3f} |")
        if few:
            lines += ["", f"No interval where fewer than {MIN_SEEDS_FOR_CI} duplicate seeds were played: over so "
                          "few the interval means nothing (2 seeds that each split give 50.0–50.0)."]
        return "\n".join(lines) + "\n"

    def save(self, out: str | Path, plot: bool = True) -> dict[str, Path]:
        """Write ``matches.csv``, ``summary.md``, ``summary.json`` and ``summary.png`` under ``out``."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"csv": out / "matches.csv", "markdown": out / "summary.md", "json": out / "summary.json"}
        _write_csv(paths["csv"], self.rows)
        paths["markdown"].write_text(self.markdown())
        paths["json"].write_text(json.dumps({
            "agents": self.agents, "rules": self.rules_name, "matches_per_pair": self.matches_per_pair,
            "seed": self.seed, "seconds": self.seconds, "pairs": self.summaries(),
            "ratings": self.ratings(), "per_agent": self.agent_summaries(),
            "seatings": self.seatings,
        }, indent=2))
        if plot:
            paths["plot"] = out / "summary.png"
            plot_summary(self, paths["plot"])
        return paths


def _mix(s: dict[str, Any], side: str) -> str:
    return "/".join(f"{100 * s[f'{side}_{k}_rate']:.1f}" for k in OUTCOME_KINDS)


def _write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    import csv

    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def plot_summary(result: TournamentResult, path: str | Path) -> None:
    """Win rates with 95% CI bars, and how each pair's hands ended (Agg backend).

    Each row is one pair "A vs B"; the left panel is A's match win rate (written at the bar's
    foot, so that a 0% pair shows a figure rather than an empty row), the right one splits all
    hands of the pair by who won them and how (knock, gin, undercut) or dead.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summaries = result.summaries()
    names = [f"{s['agent_a']} vs {s['agent_b']}" for s in summaries]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 1.6 + 0.6 * max(1, len(names))), layout="constrained")
    y = np.arange(len(names))
    rate = np.array([s["a_win_rate"] for s in summaries])
    err = np.array([[s["a_win_rate"] - s["ci_low"] for s in summaries],
                    [s["ci_high"] - s["a_win_rate"] for s in summaries]])
    ax1.barh(y, rate, xerr=err, color="tab:blue", capsize=4, label="A's match win rate, 95% CI")
    for row, s in zip(y, summaries, strict=True):  # each rate written out, so a 0% bar still shows
        ax1.text(0.01, row, f"{100 * s['a_win_rate']:.1f}%", va="center", ha="left", fontsize=8,
                 bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1})
    ax1.axvline(0.5, color="grey", linestyle="--", linewidth=1, label="50% (even)")
    ax1.set_yticks(y, names)
    ax1.set_xlim(0, 1)
    ax1.set_xlabel("match win rate of A (share of matches)")
    ax1.set_ylabel("pair (A vs B)")
    ax1.set_title("Who wins the match (95% CI over duplicate pairs)", fontsize=10)
    ax1.invert_yaxis()
    ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22 - 0.3 / max(1, len(names))), ncol=2)
    how = {"knock": "by knocking", "gin": "by gin", "undercut": "by undercut"}
    parts = [(f"{side}_{k}_rate", f"{side.upper()} won {how[k]}") for side in "ab" for k in OUTCOME_KINDS]
    parts.append(("dead_rate", "dead hand (nobody scores)"))
    left = np.zeros(len(names))
    colors = ["#1f77b4", "#6baed6", "#c6dbef", "#d62728", "#fc9272", "#fee0d2", "#999999"]
    for (key, label), color in zip(parts, colors, strict=True):
        vals = np.array([s[key] for s in summaries])
        ax2.barh(y, vals, left=left, label=label, color=color)
        left += vals
    ax2.set_yticks(y, names)
    ax2.set_xlim(0, 1)
    ax2.set_xlabel("share of the pair's hands")
    ax2.set_ylabel("pair (A vs B)")
    ax2.set_title("How hands ended: who won them, and how", fontsize=10)
    ax2.invert_yaxis()
    ax2.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.22 - 0.3 / max(1, len(names))))
    fig.suptitle(f"Tournament, rules '{result.rules_name}': {result.matches_per_pair} matches per pair "
                 f"(duplicate deals, seats swapped)", fontsize=11)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


# --------------------------------------------------------------------------- driver
def run_tournament(agents: Sequence[str | AgentSpec | tuple[str, dict]], matches: int = 200, seed: int = 0,
                   workers: int | None = None, rules: Rules | str | dict | None = "hollywood",
                   pairs: Iterable[tuple[int, int]] | None = None, chunk: int = 4,
                   progress: bool = True, out: str | Path | None = None,
                   reduce_variance: bool = False) -> TournamentResult:
    """Round-robin (or the given index ``pairs``) over ``matches`` duplicate matches per pair.

    ``matches`` counts games: ``matches // 2`` seeds (``seed``, ``seed + 1``, ...), each
    played with both seatings; an odd count is rounded up. Every pair plays the same
    seeds. ``workers`` processes (default: all cores; 1 = in this process).

    With ``out``, every finished match is appended to ``out/matches.csv`` as it arrives, so
    an interrupted tournament keeps its matches; a run into a folder that holds matches of
    the same tournament (same agents and rules, :class:`MatchLog`) plays only the missing ones.

    ``reduce_variance``: every match also records its luck (:mod:`arena.variance`),
    and each pair's summary holds the luck-adjusted win rate beside the plain one.
    """
    if matches < 1:
        raise ValueError(f"matches must be >= 1, got {matches}")
    specs = [as_spec(a) for a in agents]
    labels = [s.display for s in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"agent labels must be distinct, got {labels}; name variants as 'label=name'")
    if len(specs) < 2:
        raise ValueError("a tournament needs at least two agents")
    rules_obj = get_rules(rules)
    per_seed = len(seatings(rules_obj.format))
    n_seeds = max(1, math.ceil(matches / per_seed))
    seeds = [seed + i for i in range(n_seeds)]
    pair_idx = list(pairs) if pairs is not None else list(combinations(range(len(specs)), 2))
    rules_dict = rules_obj.to_dict()
    log = MatchLog(out, specs, rules_dict, reduce_variance) if out is not None else None
    wanted = {(labels[i], labels[j], sd) for i, j in pair_idx for sd in seeds}
    rows: list[dict[str, Any]] = [r for r in log.rows if (r["agent_a"], r["agent_b"], r["seed"]) in wanted] \
        if log is not None else []
    done = {(r["agent_a"], r["agent_b"], r["seed"]) for r in rows}
    tasks = []
    for i, j in pair_idx:
        todo = [sd for sd in seeds if (labels[i], labels[j], sd) not in done]
        for k in range(0, len(todo), chunk):
            tasks.append((specs[i], specs[j], todo[k:k + chunk], rules_dict, reduce_variance))
    workers = workers or os.cpu_count() or 1
    total = per_seed * n_seeds * len(pair_idx)
    start = time.perf_counter()
    already = len(rows)
    bar = _progress(total, progress)
    bar.update(already)

    def arrived(got: list[dict[str, Any]]) -> None:
        rows.extend(got)
        if log is not None:
            log.append(got)
        bar.update(len(got))

    try:
        if workers <= 1:
            for task in tasks:
                arrived(_run_chunk(task))
        elif tasks:
            ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
            with ctx.Pool(workers) as pool:
                for got in pool.imap_unordered(_run_chunk, tasks):
                    arrived(got)
    finally:
        bar.close()
        if log is not None:
            log.close()
    rows.sort(key=lambda r: (labels.index(r["agent_a"]), labels.index(r["agent_b"]), r["seed"], r["a_seat"]))
    return TournamentResult(agents=labels, rows=rows, rules_name=rules_obj.name,
                            matches_per_pair=per_seed * n_seeds, seatings=per_seed,
                            seed=seed, pairs=[(labels[i], labels[j]) for i, j in pair_idx],
                            seconds=time.perf_counter() - start, played=len(rows) - already)


#: Text columns of a match row (the others are numbers; ``truncated`` is a bool).
_TEXT_FIELDS = {"agent_a", "agent_b", "player_0", "player_1", "player_2", "player_3", "a_seats",
                "winner", "winner_side"}


def _typed_row(row: dict[str, str]) -> dict[str, Any]:
    """A ``matches.csv`` row read back with the types :func:`play_match` gave it."""
    out: dict[str, Any] = {}
    for key, text in row.items():
        if key in _TEXT_FIELDS or key.endswith("_winner"):
            out[key] = text
        elif key == "truncated":
            out[key] = text == "True"
        elif key in ("seconds", "a_luck", "luck_seconds"):
            out[key] = float(text)
        else:
            out[key] = int(text)
    return out


class MatchLog:
    """``matches.csv`` written as matches finish, and the matches an earlier run of the same
    tournament (same agents and rules, recorded in ``tournament.json``) left in the folder.

    A seed counts as played when both of its seatings are in the file; a row cut short by a
    kill, or a seed with one seating only, is played again. A folder holding another
    tournament is started afresh.
    """

    def __init__(self, out: str | Path, specs: Sequence[AgentSpec], rules_dict: dict, luck: bool = False):
        self.dir = Path(out)
        self.csv = self.dir / "matches.csv"
        self.seatings = len(seatings(Rules.from_dict(rules_dict).format))
        config = {"agents": [[s.name, [list(kv) for kv in s.kwargs], s.display] for s in specs],
                  "rules": rules_dict}
        if luck:  # rows with the luck columns are another tournament's (a folder without them is not resumed)
            config["reduce_variance"] = True
        config_path = self.dir / "tournament.json"
        self.rows: list[dict[str, Any]] = []
        try:
            same = json.loads(config_path.read_text()) == json.loads(json.dumps(config))
        except (OSError, ValueError):
            same = False
        if same and self.csv.is_file():
            self.rows = self._read()
        self.dir.mkdir(parents=True, exist_ok=True)
        config_path.write_text(json.dumps(config, indent=2))
        self.fields: list[str] = list(self.rows[0]) if self.rows else []
        self.file = None
        self._rewrite()

    def _read(self) -> list[dict[str, Any]]:
        rows = []
        with self.csv.open(newline="") as f:
            lines = f.read().splitlines(keepends=True)
        complete = [ln for ln in lines if ln.endswith("\n")]
        for raw in csv.DictReader(complete):
            try:
                rows.append(_typed_row(raw))
            except (TypeError, ValueError):  # a damaged row: its match is played again
                continue
        # A match is its pair, seed and seating: a row repeated (a file concatenated or
        # appended to twice) is one match, counted once, said aloud.
        unique: dict[tuple, dict[str, Any]] = {}
        for r in rows:
            unique.setdefault((r["agent_a"], r["agent_b"], r["seed"], r["a_seat"]), r)
        if len(unique) < len(rows):
            warnings.warn(f"{self.csv}: {len(rows) - len(unique)} duplicated match row(s) (same pair, "
                          f"seed and seating) counted once", stacklevel=2)
            rows = list(unique.values())
        seats: dict[tuple, set] = {}
        for r in rows:
            seats.setdefault((r["agent_a"], r["agent_b"], r["seed"]), set()).add(r["a_seat"])
        every = set(range(self.seatings))
        return [r for r in rows if seats[(r["agent_a"], r["agent_b"], r["seed"])] == every]

    def _rewrite(self) -> None:
        tmp = self.csv.with_name(".matches.csv.tmp")
        with tmp.open("w", newline="") as f:
            if self.fields:
                writer = csv.DictWriter(f, fieldnames=self.fields)
                writer.writeheader()
                writer.writerows(self.rows)
        tmp.replace(self.csv)

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Add finished matches to the file (flushed at once)."""
        if not rows:
            return
        if self.file is None:
            if not self.fields:
                self.fields = list(rows[0])
                self._rewrite()
            self.file = self.csv.open("a", newline="")
            self.writer = csv.DictWriter(self.file, fieldnames=self.fields)
            if self.csv.stat().st_size == 0:
                self.writer.writeheader()
        self.writer.writerows(rows)
        self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="match", smoothing=0.05)
