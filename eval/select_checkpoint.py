"""Checkpoint selection on a held-out evaluation: every checkpoint of a run against the
same duplicate matches, then the best by win rate against the selection opponent.

Why a separate, larger evaluation: the periodic evaluation inside training plays 100
matches per point, whose 95% CI is about ±10 points, so the best of many such points is
mostly noise (the winner's curse). Selection here plays ≥ 400 duplicate matches per
checkpoint on seeds that neither training nor the final measurement use (the final
tournament should take yet another seed range).

    python -m eval.select_checkpoint runs/beat_expert --matches 400 --seed 500000 \\
        --opponents expert simple

writes ``selection.csv`` in the run folder (one row per checkpoint and opponent, appended
as they finish, so an interrupted selection keeps what it measured) and prints the
checkpoint with the best win rate against the first opponent.
"""

from __future__ import annotations

import argparse
import csv
import re
from collections.abc import Sequence
from pathlib import Path

FIELDS = ["checkpoint", "steps", "sha256", "opponent", "matches", "seed", "win_rate", "ci_low", "ci_high"]


def checkpoints_of(run_dir: Path) -> list[Path]:
    """The run's checkpoints (``checkpoints/ppo_<steps>_steps.zip``) by step, then ``model.zip``."""
    found = sorted(run_dir.glob("checkpoints/*.zip"), key=_steps)
    if (run_dir / "model.zip").is_file():
        found.append(run_dir / "model.zip")
    return found


def _steps(path: Path) -> int:
    m = re.search(r"(\d+)_steps", path.name)
    return int(m.group(1)) if m else -1


def evaluate_checkpoints(paths: Sequence[Path], opponents: Sequence[str], matches: int, seed: int,
                         out: Path | None = None, progress: bool = True) -> list[dict]:
    """One row per (checkpoint, opponent); ``out`` gets them as CSV as they finish. Rows
    already in ``out`` for the same file content, matches and seed are kept, not replayed."""
    from agents.ppo import PPOAgent, file_digest
    from arena.evaluate import evaluate_against

    rows: list[dict] = []
    done: set[tuple[str, str]] = set()
    if out is not None and out.is_file():  # keep what an interrupted selection measured
        with out.open(newline="") as f:
            for r in csv.DictReader(f):
                if int(r["matches"]) == matches and int(r["seed"]) == seed and r.get("sha256"):
                    rows.append(r)
                    done.add((r["sha256"], r["opponent"]))
    writer_file = None
    if out is not None:
        new = not out.is_file()
        writer_file = out.open("a", newline="")
        writer = csv.DictWriter(writer_file, fieldnames=FIELDS)
        if new:
            writer.writeheader()
    try:
        for path in paths:
            digest = file_digest(path)
            todo = [o for o in opponents if (digest, o) not in done]
            if not todo:
                continue
            agent = PPOAgent.load(path)
            for opp in todo:
                s = evaluate_against(agent, opp, matches=matches, seed=seed, rules=agent.meta["rules"])
                row = {"checkpoint": str(path), "steps": _steps(path), "sha256": digest, "opponent": opp,
                       "matches": s["matches"], "seed": seed, "win_rate": round(s["a_win_rate"], 4),
                       "ci_low": round(s["ci_low"], 4), "ci_high": round(s["ci_high"], 4)}
                rows.append(row)
                if writer_file is not None:
                    writer.writerow(row)
                    writer_file.flush()
                if progress:
                    print(f"{path.name:32s} vs {opp:8s} {100 * s['a_win_rate']:5.1f}% "
                          f"({100 * s['ci_low']:.1f}-{100 * s['ci_high']:.1f}), {s['matches']} matches", flush=True)
    finally:
        if writer_file is not None:
            writer_file.close()
    return rows


def best(rows: Sequence[dict], opponent: str) -> dict:
    """The row with the highest win rate against ``opponent`` (ties: the earlier checkpoint)."""
    mine = [r for r in rows if r["opponent"] == opponent]
    if not mine:
        raise ValueError(f"no evaluation against {opponent!r}")
    return max(mine, key=lambda r: (float(r["win_rate"]), -int(r["steps"])))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="run folder (its checkpoints/ and model.zip are evaluated)")
    parser.add_argument("--matches", type=int, default=400, help="duplicate matches per checkpoint and opponent")
    parser.add_argument("--seed", type=int, default=500_000, help="first seed (held out from training)")
    parser.add_argument("--opponents", nargs="+", default=["expert"], help="the first one selects")
    parser.add_argument("--min-steps", type=int, default=0, help="skip checkpoints before this step")
    parser.add_argument("--max-steps", type=int, default=0,
                        help="skip checkpoints after this step (0: none skipped; e.g. a fixed range of a live run)")
    args = parser.parse_args(argv)
    run_dir = Path(args.run)
    paths = [p for p in checkpoints_of(run_dir)
             if _steps(p) < 0 or args.min_steps <= _steps(p) <= (args.max_steps or _steps(p))]
    if not paths:
        print(f"error: no checkpoints in {run_dir}")
        return 2
    rows = evaluate_checkpoints(paths, args.opponents, args.matches, args.seed, run_dir / "selection.csv")
    top = best(rows, args.opponents[0])
    print(f"best against {args.opponents[0]}: {top['checkpoint']} "
          f"{100 * float(top['win_rate']):.1f}% ({100 * float(top['ci_low']):.1f}-{100 * float(top['ci_high']):.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
