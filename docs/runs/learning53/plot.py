"""Learning per step of the default recipe before (commit 7542a53) and after issue 53 (the
compiled opponents, the leaner update, the batched engine's record): 1M-step runs against
Simple, seeds 21 and 22, drawn as docs/runs/learner_comparison draws its runs (training-match
win rate per 100k steps with 95% Wilson intervals, held-out evaluations).

    python docs/runs/learning53/plot.py   # writes learning_per_step.png and summary.csv
"""

from __future__ import annotations

import runpy
from pathlib import Path

HERE = Path(__file__).parent
RUNS = {
    "before_s21": "seed 21, before (7542a53)",
    "after_s21": "seed 21, after (this code's default)",
    "before_s22": "seed 22, before (7542a53)",
    "after_s22": "seed 22, after (this code's default)",
}

if __name__ == "__main__":
    runpy.run_path(str(HERE.parent / "learner_comparison" / "plot.py"))["plot"](HERE, RUNS)
