"""Held-out learning curves of training runs, checkpoint by checkpoint, on the same deals.

Every checkpoint of every run plays the same duplicate matches against each opponent, so
curves of two trainers (``train.ppo``'s SB3 checkpoints, ``train.rllib.ppo``'s RLlib
ones) compare deal for deal; ``--start SPEC`` adds the shared starting point (a warm
start's policy) at step 0 of every run.

    python -m eval.learning_curves runs/parity_warm_sb3 runs/parity_warm_rllib \\
        --start ppo:agents/policies/hgin_ppo_scratch.zip --opponents expert simple \\
        --matches 400 --seed 6200000 --out docs/runs/rllib_parity/warm

writes ``curves.csv`` (one row per run, checkpoint and opponent, appended as they finish:
an interrupted evaluation keeps what it measured and resumes), ``curves.png`` (win rate
with its 95% CI against steps, one panel per opponent) and, for two or more runs,
``comparison.txt`` (the second run given minus the first at each step both have, with the 95%
CI of the difference) in ``--out``.

A run folder's checkpoints: ``checkpoints/ppo_<N>_steps.zip`` and the final ``model.zip``
(SB3, played as ``ppo:``) or ``checkpoints/step_<N>/`` and the final ``checkpoint/``
(RLlib, played as ``rllib:``).
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Sequence
from pathlib import Path

FIELDS = ["run", "steps", "checkpoint", "opponent", "matches", "seed", "win_rate", "ci_low", "ci_high"]


def run_checkpoints(run_dir: Path) -> list[tuple[int, str]]:
    """(steps, agent spec) of a run's checkpoints, by step."""
    from eval.select_checkpoint import _steps, checkpoints_of

    found: dict[int, str] = {}
    for path in checkpoints_of(run_dir):  # train.ppo's checkpoints, then model.zip (no step in its name)
        steps = _steps(path)
        if steps < 0:
            from agents.ppo import read_meta

            steps = read_meta(path).get("timesteps", -1)
        if steps >= 0:
            found.setdefault(int(steps), f"ppo:{path}")
    for path in run_dir.glob("checkpoints/step_*"):
        if (path / "hgin_state.json").is_file():
            found[int(path.name[len("step_"):])] = f"rllib:{path}"
    final = run_dir / "checkpoint"
    if (final / "hgin_state.json").is_file():
        found[int(json.loads((final / "hgin_state.json").read_text())["steps"])] = f"rllib:{final}"
    return sorted(found.items())


def evaluate_runs(runs: Sequence[Path], opponents: Sequence[str], matches: int, seed: int, out: Path,
                  start: str = "", progress: bool = True) -> list[dict]:
    """One row per (run, checkpoint, opponent) in ``out/curves.csv``; rows already there
    (same checkpoint, opponent, matches and seed) are kept, not replayed."""
    from agents.spec import make_agent
    from arena.evaluate import evaluate_against

    out.mkdir(parents=True, exist_ok=True)
    path = out / "curves.csv"
    rows: list[dict] = []
    if path.is_file():
        with path.open(newline="") as f:
            rows = [r for r in csv.DictReader(f) if int(r["matches"]) == matches and int(r["seed"]) == seed]
    done = {(r["run"], r["checkpoint"], r["opponent"]) for r in rows}
    new = not path.is_file()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        cache: dict[tuple[str, str], dict] = {}  # the start point is one evaluation for every run
        for run in runs:
            points = ([(0, start)] if start else []) + run_checkpoints(run)
            for steps, spec in points:
                todo = [o for o in opponents if (run.name, spec, o) not in done]
                if not todo:
                    continue
                agent = None
                for opp in todo:
                    s = cache.get((spec, opp))
                    if s is None:
                        agent = agent or make_agent(spec, seed=seed)
                        rules = agent.meta["rules"] if hasattr(agent, "meta") else None
                        s = evaluate_against(agent, opp, matches=matches, seed=seed, rules=rules)
                        cache[(spec, opp)] = s
                    row = {"run": run.name, "steps": steps, "checkpoint": spec, "opponent": opp,
                           "matches": s["matches"], "seed": seed, "win_rate": round(s["a_win_rate"], 4),
                           "ci_low": round(s["ci_low"], 4), "ci_high": round(s["ci_high"], 4)}
                    rows.append(row)
                    writer.writerow(row)
                    f.flush()
                    if progress:
                        print(f"{run.name:28s} {steps:>10,d} vs {opp:8s} {100 * s['a_win_rate']:5.1f}% "
                              f"({100 * s['ci_low']:.1f}-{100 * s['ci_high']:.1f}), {s['matches']} matches", flush=True)
    return rows


def compare(rows: Sequence[dict], order: Sequence[str] = ()) -> list[str]:
    """For the first two runs (of ``order``, the run names as given; else as the rows have
    them), at each step both have, per opponent: the difference of their win rates and its
    95% CI (from each point's CI, as independent samples: the deals are shared, so this is
    conservative), and whether it includes 0."""
    present = set(r["run"] for r in rows)
    runs = [name for name in order if name in present] or list(dict.fromkeys(r["run"] for r in rows))
    if len(runs) < 2:
        return []
    a_run, b_run = runs[:2]
    index = {(r["run"], r["opponent"], int(r["steps"])): r for r in rows}
    lines = [f"{b_run} minus {a_run}, win percentage points (95% CI):", ""]
    agree = total = 0
    for opp in dict.fromkeys(r["opponent"] for r in rows):
        steps = sorted({k[2] for k in index if k[1] == opp and k[0] == a_run}
                       & {k[2] for k in index if k[1] == opp and k[0] == b_run})
        for step in steps:
            a, b = index[(a_run, opp, step)], index[(b_run, opp, step)]
            se = [(float(x["ci_high"]) - float(x["ci_low"])) / (2 * 1.96) for x in (a, b)]
            diff = float(b["win_rate"]) - float(a["win_rate"])
            half = 1.96 * (se[0] ** 2 + se[1] ** 2) ** 0.5
            inside = diff - half <= 0 <= diff + half
            agree += inside
            total += 1
            lines.append(f"  vs {opp:8s} {step:>10,d}: {100 * float(a['win_rate']):5.1f} -> "
                         f"{100 * float(b['win_rate']):5.1f}  {100 * diff:+5.1f} ({100 * (diff - half):+.1f} to "
                         f"{100 * (diff + half):+.1f}){'' if inside else '  <- differs'}")
    lines += ["", f"{agree} of {total} points agree within the CI of their difference"]
    return lines


def plot(rows: Sequence[dict], out: Path, title: str = "") -> Path:
    """``curves.png``: one panel per opponent, one line (with its CI band) per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    opponents = list(dict.fromkeys(r["opponent"] for r in rows))
    runs = list(dict.fromkeys(r["run"] for r in rows))
    fig, axes = plt.subplots(1, len(opponents), figsize=(5.5 * len(opponents), 4), squeeze=False)
    for ax, opp in zip(axes[0], opponents, strict=True):
        for run in runs:
            mine = sorted((int(r["steps"]), float(r["win_rate"]), float(r["ci_low"]), float(r["ci_high"]))
                          for r in rows if r["run"] == run and r["opponent"] == opp)
            if not mine:
                continue
            x = [m[0] / 1e6 for m in mine]
            ax.plot(x, [100 * m[1] for m in mine], marker="o", label=run)
            ax.fill_between(x, [100 * m[2] for m in mine], [100 * m[3] for m in mine], alpha=0.2)
        ax.set_title(f"against {opp}")
        ax.set_xlabel("env steps (millions)")
        ax.set_ylabel("win % (95% CI), held-out duplicate matches")
        ax.grid(alpha=0.3)
        ax.legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = out / "curves.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run folders (SB3 or RLlib)")
    parser.add_argument("--opponents", nargs="+", default=["expert", "simple"])
    parser.add_argument("--matches", type=int, default=400, help="duplicate matches per checkpoint and opponent")
    parser.add_argument("--seed", type=int, default=6_200_000, help="first seed (held out from training)")
    parser.add_argument("--start", default="", help="agent spec of the runs' shared start, plotted at step 0")
    parser.add_argument("--out", required=True, help="folder for curves.csv and curves.png")
    parser.add_argument("--title", default="")
    args = parser.parse_args(argv)
    runs = [Path(r) for r in args.runs]
    missing = [str(r) for r in runs if not r.is_dir()]
    if missing:
        print(f"error: not a run folder: {', '.join(missing)}")
        return 2
    rows = evaluate_runs(runs, args.opponents, args.matches, args.seed, Path(args.out), start=args.start)
    lines = compare(rows, [r.name for r in runs])
    if lines:
        (Path(args.out) / "comparison.txt").write_text("\n".join(lines) + "\n")
        print("\n".join(lines))
    print(f"wrote {plot(rows, Path(args.out), args.title)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
