"""The RLlib trainer's logs, written on the driver: ``episodes.csv`` (one row per finished
match, sent by the runners as :data:`train.rllib.config.EPISODES_METRIC` items),
``progress.csv`` (one row per iteration) and TensorBoard.
"""

from __future__ import annotations

import csv
from collections import deque
from pathlib import Path

from train import run
from train.rllib.config import EPISODES_METRIC


class RunLogger:
    """Driver-side logs: episodes.csv, progress.csv (rewritten whole: columns appear as
    their values first do) and TensorBoard."""

    def __init__(self, run_dir: Path, window: int):
        from torch.utils.tensorboard import SummaryWriter

        from train.callbacks import EPISODE_FIELDS

        self.run_dir = run_dir
        self.progress: list[dict] = []
        if (run_dir / "progress.csv").exists():  # a resumed run keeps its rows (cut back by rewind)
            with (run_dir / "progress.csv").open() as f:
                self.progress = list(csv.DictReader(f))
        self.episodes = run.CsvWriter(run_dir / "episodes.csv", EPISODE_FIELDS)
        self.tb = SummaryWriter(str(run_dir / "tb"))
        self.recent: deque[dict] = deque(maxlen=window)

    def log(self, result: dict, steps: int, rows: list[dict], elapsed: float, started: int) -> dict[str, float]:
        from ray.rllib.core import DEFAULT_MODULE_ID
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, LEARNER_RESULTS

        from train.callbacks import outcome_scalars
        from train.rllib.pipeline import UPDATE_SECONDS, WAIT_SECONDS
        from train.rllib.runner import SAMPLE_SECONDS

        for row in rows:
            row = dict(row, timesteps=steps)
            self.recent.append(row)
            self.episodes.write(row)
        learner = result.get(LEARNER_RESULTS, {}).get(DEFAULT_MODULE_ID, {})
        scalars: dict[str, float] = {
            "iteration": float(result.get("training_iteration", 0)),
            "env_steps": float(steps),
            "perf/env_steps_per_s": (steps - started) / max(elapsed, 1e-9),
            "perf/iteration_s": float(result.get("time_this_iter_s", 0.0)),
            "perf/matches_this_iter": float(len(rows)),
        }
        sample_s = result.get(ENV_RUNNER_RESULTS, {}).get(SAMPLE_SECONDS)
        wait_s = result.get(WAIT_SECONDS)
        if wait_s is not None:  # pipelined: sampling overlaps the update; the driver's wait and update
            scalars["perf/sample_s"] = float(sample_s or 0.0)
            scalars["perf/wait_s"] = float(wait_s)
            scalars["perf/learn_s"] = float(result.get(UPDATE_SECONDS, 0.0))
        elif sample_s is not None:  # this iteration: the slowest runner's sampling, and the rest (the update)
            scalars["perf/sample_s"] = float(sample_s)
            scalars["perf/learn_s"] = scalars["perf/iteration_s"] - float(sample_s)
        for key in ("policy_loss", "vf_loss", "entropy", "vf_explained_var"):
            if key in learner:
                scalars[f"learner/{key}"] = float(learner[key])
        scalars.update(outcome_scalars(list(self.recent)))
        for key, value in scalars.items():
            if "/" in key:
                self.tb.add_scalar(key, value, steps)
        self.tb.flush()
        self.progress.append(scalars)
        fields = list(dict.fromkeys(k for row in self.progress for k in row))
        tmp = self.run_dir / ".progress.csv.tmp"
        with tmp.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(self.progress)
        tmp.replace(self.run_dir / "progress.csv")
        return scalars

    def close(self) -> None:
        self.episodes.close()
        self.tb.close()


def episode_items(result: dict) -> list[dict]:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS

    items = result.get(ENV_RUNNER_RESULTS, {}).get(EPISODES_METRIC) or []
    return items if isinstance(items, list) else [items]
