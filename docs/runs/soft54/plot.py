"""The soft-target runs' held-out figures over training, from their progress logs.

    python docs/runs/soft54/plot.py   # reads runs/soft54/*/progress.csv when present,
                                      # writes curves.csv and held_out.png here

``curves.csv`` keeps, per run and update, the columns drawn (the runs' folders are not
committed); without the runs it redraws the plot from ``curves.csv``.
"""

from __future__ import annotations

import csv
from pathlib import Path

HERE = Path(__file__).parent
RUNS = Path("runs/soft54")
#: The distillation runs, in the table's order, and their labels.
LABELS = {
    "soft_coef1": "c=10, coef 1",
    "soft_coef5": "c=10, coef 5",
    "soft_coef50": "c=10, coef 50",
    "soft_c30_coef5": "c=30, coef 5",
    "soft_c30_coef5_lr3e4": "c=30, coef 5, lr 3e-4",
    "soft_coef50_lr3e4": "c=10, coef 50, lr 3e-4",
    "soft_c30_coef50_lr3e4": "c=30, coef 50, lr 3e-4",
}
COLUMNS = ("distill/loss", "distill/holdout_kl", "distill/holdout_target_agreement",
           "distill/holdout_agreement", "distill/holdout_deviations")


def collect() -> list[dict]:
    rows = []
    for run in LABELS:
        path = RUNS / run / "progress.csv"
        if not path.is_file():
            continue
        for row in csv.DictReader(path.open()):
            if row.get("distill/holdout_kl"):
                rows.append({"run": run, "steps": row["time/total_timesteps"], **{c: row[c] for c in COLUMNS}})
    return rows


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = collect()
    out = HERE / "curves.csv"
    if rows:
        with out.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["run", "steps", *COLUMNS])
            writer.writeheader()
            writer.writerows(rows)
    rows = list(csv.DictReader(out.open()))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for run, label in LABELS.items():
        mine = [r for r in rows if r["run"] == run]
        if not mine:
            continue
        steps = [int(r["steps"]) / 1e6 for r in mine]
        kl = [float(r["distill/holdout_kl"]) for r in mine]
        axes[0].plot(steps, [k / kl[0] for k in kl], label=label)
        axes[1].plot(steps, [float(r["distill/holdout_deviations"]) for r in mine], label=label)
    axes[0].set(xlabel="PPO steps (millions)", ylabel="held-out KL(π' ‖ π_θ), relative to the first update",
                title="How far the policy moves toward π'")
    axes[1].set(xlabel="PPO steps (millions)", ylabel="share",
                title="Held-out decisions where the search left the policy:\nthe policy now plays the search's move")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "held_out.png", dpi=110)
    print(f"wrote {out} and {HERE / 'held_out.png'}")


if __name__ == "__main__":
    main()
