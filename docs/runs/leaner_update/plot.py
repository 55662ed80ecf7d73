"""Learning per step before and after the leaner update: the 1M-step runs against
Simple (``cmp_old``'s flags), seeds 21 and 22, drawn as docs/runs/learner_comparison draws its runs
(training-match win rate per 100k steps with 95% Wilson intervals, held-out evaluations).

    python docs/runs/leaner_update/plot.py   # writes learning_per_step.png and summary.csv
"""

from __future__ import annotations

import runpy
from pathlib import Path

HERE = Path(__file__).parent
RUNS = {
    "before": "seed 21, before (b19731e: all 52 cards scored)",
    "after": "seed 21, after (the legal cards scored)",
    "before_s22": "seed 22, before",
    "after_s22": "seed 22, after",
}

if __name__ == "__main__":
    runpy.run_path(str(HERE.parent / "learner_comparison" / "plot.py"))["plot"](HERE, RUNS)
