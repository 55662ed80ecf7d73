"""The fine-tune's training curve: the share of training matches won against each opponent
per 2M steps, from the run's episodes.csv (or its committed copy's first columns), drawn
into curve.png and printed:

    python docs/runs/ft54/curve.py runs/ft54_lr3e5/episodes.csv
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).parent
BIN = 2_000_000


def main() -> None:
    bins: dict[str, dict[int, list[int]]] = {}
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            bins.setdefault(row["opponent"], {}).setdefault(int(row["timesteps"]) // BIN, []).append(int(row["won"]))
    fig, ax = plt.subplots(figsize=(7, 4))
    for opponent, by_bin in sorted(bins.items()):
        keep = [b for b in sorted(by_bin) if len(by_bin[b]) >= 100]
        xs = [(b + 0.5) * BIN / 1e6 for b in keep]
        ys = [100 * sum(by_bin[b]) / len(by_bin[b]) for b in keep]
        ax.plot(xs, ys, marker="o", ms=3, label=f"against {opponent or 'the shipped policy'}")
        print(opponent, " ".join(f"{x:.0f}M:{y:.1f}%({len(by_bin[b])})" for x, y, b in zip(xs, ys, keep, strict=True)))
    ax.set(title="fine-tune from the shipped policy: training matches won (per 2M steps)",
           xlabel="million steps of this run", ylabel="%")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "curve.png", dpi=110)


if __name__ == "__main__":
    main()
