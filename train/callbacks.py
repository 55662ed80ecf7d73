"""SB3 callbacks: Hollywood outcome logging, periodic evaluation, checkpoints, self-play
snapshots; and the run-folder logs that survive a crash.

Everything is written both to SB3's logger (TensorBoard ``charts/`` and ``eval/``, CSV
``progress.csv``) and to plain CSV files in the run folder (``episodes.csv`` one row per
finished match, ``eval.csv`` one row per evaluation), which the plots and notebooks read.

Periodic events (evaluations, checkpoints, snapshots) happen when the step count crosses a
multiple of their period, so a resumed run keeps the schedule of the run it continues.
Checkpoints are written at the start of a rollout, after the previous update: a checkpoint at
step T holds everything learnt from the first T steps. :func:`rewind_run` cuts a run folder
back to such a checkpoint before training resumes from it.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter, deque
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import CSVOutputFormat, TensorBoardOutputFormat

from hgin_env.codes import SCORED_KINDS as HAND_KINDS
from train.plots import hand_outcomes
from train.run import EVAL_SEED, CsvWriter, cut_logs, eval_log, evaluation_row, rows_up_to

EPISODE_FIELDS = ["timesteps", "opponent", "won", "lost", "truncated", "columns_won", "columns_lost",
                  "col1", "col2", "col3", "opp_col1", "opp_col2", "opp_col3", "hands", "dead_hands",
                  "points", "opp_points"] + \
    [f"my_{k}" for k in HAND_KINDS] + [f"opp_{k}" for k in HAND_KINDS]


def episode_row(s: dict, timesteps: int, opponent: str) -> dict:
    """One ``episodes.csv`` row (``EPISODE_FIELDS``) from ``hgin_env.summary``."""
    cols = list(s["column_totals"]) + [0, 0, 0]
    opp = list(s["opponent_column_totals"]) + [0, 0, 0]
    row = {"timesteps": timesteps, "opponent": opponent, "won": int(s["won"]),
           "lost": int(s["lost"]), "truncated": int(s["truncated"]), "columns_won": s["columns_won"],
           "columns_lost": s["columns_lost"], "col1": cols[0], "col2": cols[1], "col3": cols[2],
           "opp_col1": opp[0], "opp_col2": opp[1], "opp_col3": opp[2], "hands": s["hands"],
           "dead_hands": s["dead_hands"], "points": s.get("points", 0),
           "opp_points": s.get("opponent_points", 0)}
    for k in HAND_KINDS:
        row[f"my_{k}"] = s["hand_kinds"].get(k, 0)
        row[f"opp_{k}"] = s["opponent_hand_kinds"].get(k, 0)
    return row


def outcome_scalars(rows: list[dict]) -> dict[str, float]:
    """The ``charts/`` scalars (win rate, columns won, column totals, hand kinds, win rate per
    heuristic opponent) over ``episode_row`` rows; opponents named ``prefix:...`` (frozen
    snapshots) get no per-opponent rate."""
    out: dict[str, float] = {}
    if not rows:
        return out

    def mean(key: str) -> float:
        return float(np.mean([r[key] for r in rows]))

    out["charts/match_win_rate"] = mean("won")
    out["charts/columns_won"] = mean("columns_won")
    out["charts/columns_lost"] = mean("columns_lost")
    for j in (1, 2, 3):
        out[f"charts/column{j}_total"] = mean(f"col{j}")
        out[f"charts/opponent_column{j}_total"] = mean(f"opp_col{j}")
    out["charts/hands_per_match"] = mean("hands")
    hands = max(1.0, sum(r["hands"] for r in rows))
    out["charts/dead_hand_rate"] = sum(r["dead_hands"] for r in rows) / hands
    for k in HAND_KINDS:
        out[f"charts/my_{k}_rate"] = sum(r[f"my_{k}"] for r in rows) / hands
        out[f"charts/opp_{k}_rate"] = sum(r[f"opp_{k}"] for r in rows) / hands
    # Hand-level curves: they move long before the match win rate does.
    won, knocked, net = np.sum([hand_outcomes(r) for r in rows], axis=0)
    out["charts/hand_win_rate"] = won / hands
    out["charts/knock_rate"] = knocked / hands
    out["charts/points_per_hand"] = net / hands
    by_opp: Counter[str] = Counter()
    wins: Counter[str] = Counter()
    for r in rows:
        by_opp[r["opponent"]] += 1
        wins[r["opponent"]] += r["won"]
    for opp, n in by_opp.items():
        if ":" not in opp:
            out[f"charts/win_rate_vs_{opp}"] = wins[opp] / n
    return out


class HollywoodLogger(BaseCallback):
    """Logs match outcomes as they happen (rolling means over the last ``window`` matches)."""

    def __init__(self, run_dir: Path, window: int = 100):
        super().__init__()
        self.run_dir = Path(run_dir)
        self.recent: deque[dict] = deque(maxlen=window)
        self.writer: CsvWriter | None = None

    def _on_training_start(self) -> None:
        self.writer = CsvWriter(self.run_dir / "episodes.csv", EPISODE_FIELDS)

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", []):
            summary = info.get("episode_summary")
            if summary is None:
                continue
            row = self._row(summary, info.get("opponent_spec", ""))
            self.recent.append(row)
            assert self.writer is not None
            self.writer.write(row)
        return True

    def _row(self, s: dict, opponent: str) -> dict:
        return episode_row(s, self.num_timesteps, opponent)

    def _on_rollout_end(self) -> None:
        if not self.recent:
            return
        for key, value in outcome_scalars(list(self.recent)).items():
            self.logger.record(key, value)

    def _on_training_end(self) -> None:
        if self.writer:
            self.writer.close()


class PeriodicEval(BaseCallback):
    """Every ``every`` steps: duplicate matches against each opponent with the tournament
    harness (masks respected, deterministic policy); logs ``eval/win_rate_vs_*``. An opponent
    is any agent spec (``simple``, ``expert``, ``ppo:PATH``...: :func:`train.run.evaluation_row`).

    A training that crossed no multiple of ``every`` (a run, or a resumed stretch, shorter
    than the period) evaluates once at its end, so that it still says how it plays."""

    def __init__(self, run_dir: Path, every: int, matches: int, opponents: list[str], rules: object,
                 seed: int = EVAL_SEED):
        super().__init__()
        self.run_dir = Path(run_dir)
        self.every = every
        self.matches = matches
        self.opponents = opponents
        self.rules = rules
        self.seed = seed
        self.last = 0
        self.evaluations = 0  # made by this training (the end evaluates if none was)
        self.writer: CsvWriter | None = None

    def _on_training_start(self) -> None:
        self.writer = eval_log(self.run_dir)
        self.last = self.num_timesteps
        self.evaluations = 0

    def _on_step(self) -> bool:
        if crossed(self.last, self.num_timesteps, self.every):
            self.last = self.num_timesteps
            self.evaluate()
        return True

    def evaluate(self) -> dict[str, float]:
        from agents.ppo import PPOAgent, checkpoint_meta

        agent = PPOAgent(self.model, checkpoint_meta(self.rules))
        out = {}
        for opp in self.opponents:
            row = evaluation_row(agent, opp, self.matches, self.rules, self.num_timesteps, seed=self.seed)
            out[opp] = row["win_rate"]
            self.logger.record("time/total_timesteps", self.num_timesteps)  # every row has its step
            self.logger.record(f"eval/win_rate_vs_{opp}", row["win_rate"])
            assert self.writer is not None
            self.writer.write(row)
        self.logger.dump(self.num_timesteps)
        self.evaluations += 1
        return out

    def _on_training_end(self) -> None:
        if not self.evaluations:
            print(f"evaluating the final policy at step {self.num_timesteps:,} ({self.matches} duplicate matches "
                  f"against each of {', '.join(self.opponents)}: the run ended before --eval-every "
                  f"{self.every:,}; --eval-every 0 skips this)", flush=True)
            self.evaluate()
        if self.writer:
            self.writer.close()


class SelfPlaySnapshots(BaseCallback):
    """Every ``every`` steps: save a frozen copy of the learner and put it in the opponent
    pool (the newest ``pool_size`` snapshots share ``weight`` of the opponent draws)."""

    def __init__(self, run_dir: Path, every: int, pool_size: int, weight: float,
                 base_specs: list[str], base_weights: list[float], meta: dict):
        super().__init__()
        self.dir = Path(run_dir) / "snapshots"
        self.every = every
        self.pool_size = pool_size
        self.weight = weight
        self.base_specs = base_specs
        self.base_weights = base_weights
        self.meta = meta
        self.snapshots: list[str] = []
        self.last = 0

    def _on_training_start(self) -> None:
        self.last = self.num_timesteps
        self.dir.mkdir(parents=True, exist_ok=True)
        self.snapshots = sorted(str(p) for p in self.dir.glob("snapshot_*.zip"))[-self.pool_size:]
        if self.snapshots:
            self._update_pool()

    def _on_step(self) -> bool:
        if self.weight > 0 and crossed(self.last, self.num_timesteps, self.every):
            self.last = self.num_timesteps
            path = save_snapshot(self.model, self.dir, self.meta)
            self.snapshots = (self.snapshots + [str(path)])[-self.pool_size:]
            self._update_pool()
        return True

    def _update_pool(self) -> None:
        specs = self.base_specs + [f"ppo:{p}" for p in self.snapshots]
        base_total = sum(self.base_weights)
        share = self.weight / len(self.snapshots)
        weights = [w / base_total * (1 - self.weight) for w in self.base_weights] + \
            [share] * len(self.snapshots)
        self.training_env.env_method("set_opponent_specs", specs, weights)
        self.logger.record("charts/self_play_pool", len(self.snapshots))


def save_snapshot(model, folder: Path, meta: dict) -> Path:
    """A frozen copy of the learner as ``folder/snapshot_<steps>.zip`` (a complete checkpoint),
    for self-play pools and the league; ``rewind_run`` knows the name."""
    from agents.ppo import save_checkpoint

    return save_checkpoint(model, Path(folder) / f"snapshot_{model.num_timesteps:09d}.zip", meta)


def crossed(last: int, now: int, every: int) -> bool:
    """Whether the step count passed a multiple of ``every`` since ``last`` (never if 0)."""
    return every > 0 and now // every > last // every


class Checkpoints(BaseCallback):
    """Every ``every`` steps, at the start of the next rollout (after the update, so the
    checkpoint holds everything learnt so far): ``checkpoints/ppo_<steps>_steps.zip``, written
    atomically with its ``hgin_meta.json`` (:func:`agents.ppo.save_checkpoint`), so that a run
    killed at any moment can be resumed from its newest checkpoint."""

    def __init__(self, run_dir: Path, every: int, meta: dict, companions: list | None = None):
        super().__init__()
        self.dir = Path(run_dir) / "checkpoints"
        self.every = every
        self.meta = meta
        self.last = 0
        # Objects whose state a resume needs at the same step (the league): each one's
        # ``save_with_checkpoint(step)`` runs after the checkpoint is written.
        self.companions = list(companions or [])

    def _on_training_start(self) -> None:
        self.last = self.num_timesteps
        self.dir.mkdir(parents=True, exist_ok=True)

    def _on_rollout_start(self) -> None:
        if crossed(self.last, self.num_timesteps, self.every):
            self.last = self.num_timesteps
            from agents.ppo import save_checkpoint

            path = self.dir / f"ppo_{self.num_timesteps}_steps.zip"
            # The companions and the resume state first: a checkpoint on disk has its state.
            for companion in self.companions:
                companion.save_with_checkpoint(self.num_timesteps)
            save_resume_state(self.model, path)
            save_checkpoint(self.model, path, self.meta)

    def _on_step(self) -> bool:
        return True


# ------------------------------------------------------------------ resuming a run folder
def resume_state_path(checkpoint: Path) -> Path:
    """``ppo_<steps>_steps.zip`` -> ``ppo_<steps>_steps.resume.json`` (beside it)."""
    checkpoint = Path(checkpoint)
    return checkpoint.with_name(checkpoint.stem + ".resume.json")


def save_resume_state(model: Any, checkpoint: Path) -> Path:
    """What a checkpoint's zip does not hold but a resumed run needs, written beside it:
    the vector env's generator state (``generator_state()``, the batched env's; so the
    resumed run deals on instead of dealing its first matches again) and the ``train/*``
    metrics of the update just made, which SB3 writes only with the next row of
    ``progress.csv`` (a row the resume drops): the resumed run writes them there."""
    env = model.get_env()
    state: dict[str, Any] = {
        "train_metrics": {k: float(v) for k, v in model.logger.name_to_value.items()
                          if k.startswith("train/") and isinstance(v, (int, float, np.floating, np.integer))},
    }
    if hasattr(env, "generator_state"):
        state["generator_state"] = env.generator_state()
    path = resume_state_path(checkpoint)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state))
    tmp.replace(path)
    return path


def read_resume_state(checkpoint: Path) -> dict | None:
    """The state :func:`save_resume_state` wrote beside ``checkpoint``, or None (a final
    ``model.zip``, or a checkpoint from before these files existed)."""
    path = resume_state_path(checkpoint)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


#: The CSV logs of a run folder and the column holding each row's step.
RUN_LOGS = {"progress.csv": "time/total_timesteps", "episodes.csv": "timesteps", "eval.csv": "timesteps"}
_STEP_FILES = (("checkpoints", re.compile(r"ppo_(\d+)_steps\.(?:zip|resume\.json)")),
               ("checkpoints", re.compile(r"league_(\d+)\.json")),
               ("snapshots", re.compile(r"snapshot_(\d+)\.zip")))


def rewind_run(run_dir: Path, step: int) -> dict[str, int]:
    """Cut a run folder back to a checkpoint at ``step`` before training resumes from it.

    The CSV logs keep their rows up to ``step`` and drop the later ones
    (:func:`train.run.cut_logs`: the checkpoint does not contain what they describe; the
    resumed run logs those steps afresh). Checkpoints and self-play snapshots after
    ``step`` and temporary files of interrupted saves are deleted. SB3's logger then opens
    ``progress.csv`` where the cut left it (:func:`continued_csv_output`); TensorBoard hides
    the later events itself (:func:`continued_tensorboard_output`). Returns how many rows
    each log dropped.
    """
    run_dir = Path(run_dir)
    dropped = cut_logs(run_dir, RUN_LOGS, step)
    for folder, pattern in _STEP_FILES:
        for path in (run_dir / folder).glob("*") if (run_dir / folder).is_dir() else []:
            match = pattern.fullmatch(path.name)
            if (match and int(match.group(1)) > step) or path.name.endswith(".tmp"):
                path.unlink()
    return dropped


def continued_csv_output(path: Path, step: int | None) -> CSVOutputFormat:
    """SB3's ``progress.csv`` writer; when resuming at ``step``, the file keeps its rows up to
    ``step`` (SB3's own writer would truncate it) and new rows follow them."""
    kept = rows_up_to(path, RUN_LOGS["progress.csv"], step) if step is not None and path.exists() else []
    out = CSVOutputFormat(str(path))  # opens with "w+": empty
    if kept:
        out.file.write("".join(kept))
        out.file.flush()
        out.keys = next(csv.reader([kept[0]]))
    return out


class _PurgingTensorBoard(TensorBoardOutputFormat):
    def __init__(self, folder: str, purge_step: int):
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=folder, purge_step=purge_step)
        self._is_closed = False


def continued_tensorboard_output(folder: Path, step: int | None) -> TensorBoardOutputFormat:
    """SB3's TensorBoard writer; when resuming at ``step`` it starts with TensorBoard's purge
    marker, so events the crashed run logged after ``step`` are hidden and the charts continue
    from the checkpoint without overlap."""
    if step is None:
        return TensorBoardOutputFormat(str(folder))
    _wait_for_a_later_event_file_name(folder)
    return _PurgingTensorBoard(str(folder), step + 1)


def _wait_for_a_later_event_file_name(folder: Path, most_s: float = 2.0) -> None:
    """TensorBoard reads a folder's event files in name order, and the purge marker only hides
    events of files read before it. A resumed run's file must therefore sort after the crashed
    run's: names start with the creation second, then the process id, so a resume in the same
    second as the crashed run's start (toy runs) could sort first. Wait for the next second;
    a newer file from a clock set back is left alone after ``most_s``."""
    import time

    # names: events.out.tfevents.<seconds>.<host>.<pid>.<n>
    seconds = [int(second) for second in (p.name.split(".")[3] for p in folder.glob("events.out.tfevents.*"))
               if second.isdigit()]
    if not seconds:
        return
    deadline = time.monotonic() + most_s
    while int(time.time()) <= max(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)


class ProgressFps(BaseCallback):
    """A progress bar of training steps, with environment steps per second since the start
    (PPO updates included) and the mean episode return of the last 100 matches.

    ``total`` is the run's total (``--total-timesteps``, counted from step 0 also when
    resuming). SB3 collects whole rollouts, so a run ends at the first multiple of the rollout
    size (``n_steps`` x ``n_envs``) at or past it: the bar's total is that step, so it ends at
    100% and a resumed run shows its total and where it resumed."""

    def __init__(self, total: int):
        super().__init__()
        self.total = total
        self.bar = None
        self.start = 0.0
        self.start_steps = 0

    @staticmethod
    def planned_steps(total: int, start: int, rollout: int) -> int:
        """The step count at which ``learn`` stops: whole rollouts of ``rollout`` steps from
        ``start`` until ``total`` is reached (``start`` itself when nothing is left)."""
        if rollout <= 0:
            raise ValueError(f"rollout size must be positive, got {rollout}")
        return start + -(-max(0, total - start) // rollout) * rollout

    def _on_training_start(self) -> None:
        import time

        from tqdm import tqdm

        self.start = time.perf_counter()
        self.start_steps = self.num_timesteps
        rollout = int(getattr(self.model, "n_steps", 1)) * int(self.training_env.num_envs)
        planned = self.planned_steps(self.total, self.num_timesteps, rollout)
        self.bar = tqdm(total=planned, initial=self.num_timesteps, unit="step", unit_scale=True,
                        desc="training" if not self.num_timesteps else f"training (resumed at {self.num_timesteps:,})",
                        smoothing=0.1)

    def _on_step(self) -> bool:
        assert self.bar is not None
        self.bar.update(self.num_timesteps - self.bar.n)
        return True

    def _on_rollout_end(self) -> None:
        import time

        assert self.bar is not None
        fps = (self.num_timesteps - self.start_steps) / max(1e-9, time.perf_counter() - self.start)
        buffer = getattr(self.model, "ep_info_buffer", None) or []
        self.bar.set_postfix(fps=f"{fps:,.0f}", ep_rew=f"{np.mean([e['r'] for e in buffer]):.2f}" if buffer else "-")

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()
