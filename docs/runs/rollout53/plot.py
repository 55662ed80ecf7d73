"""Learning per step of the default recipe with the rollout in two parts against the code
before (8b21fe9: docs/runs/sparse53's split runs for seeds 21 to 24, this folder's
base8b2 runs for 25 to 36) and 7542a53 (seeds 21 to 24): 1M steps against Simple, drawn by
docs/runs/sparse53/plot.py (each seed a thin line, each code's mean a thick one).

    python docs/runs/rollout53/plot.py   # writes learning_per_step.png here
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).parent
SPARSE = HERE.parent / "sparse53"


def main() -> None:
    spec = importlib.util.spec_from_file_location("sparse53_plot", SPARSE / "plot.py")
    sparse = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sparse)
    seeds = range(21, 37)
    codes = {"7542a53": sparse.CODES["7542a53"],
             "8b21fe9 (one part)": ("tab:blue", [SPARSE / f"split_s{s}" if s < 25 else HERE / f"base8b2_s{s}"
                                                 for s in seeds]),
             "two-part rollouts": ("tab:orange", [HERE / f"parts_s{s}" for s in seeds])}
    sparse.main(codes, HERE / "learning_per_step.png")


if __name__ == "__main__":
    main()
