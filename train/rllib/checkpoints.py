"""The RLlib trainer's files: checkpoints (RLlib's files with ``hgin_meta.json`` and
``hgin_state.json``, written whole or not at all), the checkpoint a ``--resume`` continues
from (:func:`find_checkpoint`), the run folder cut back to it (:func:`rewind`), the league's
snapshots (the network's weights), and an SB3 checkpoint's weights for ``--init-from``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from train import run
from train.rllib.ray_setup import on_runners
from train.run import ResumeError

#: What a checkpoint adds to RLlib's files for --resume (step, league, deal streams).
STATE_NAME = "hgin_state.json"
CHECKPOINT_PREFIX = "step_"
#: The CSV logs a resume cuts back (file -> its step column).
RUN_LOGS = {"progress.csv": "env_steps", "episodes.csv": "timesteps"}


def save_checkpoint(algo: Any, path: Path, meta: dict, state: dict) -> Path:
    """``Algorithm.save_to_path`` + ``hgin_meta.json`` + ``hgin_state.json``, written in a
    temporary folder renamed into place: a kill leaves a whole checkpoint or none."""
    from agents.rllib_agent import META_NAME

    path = path.resolve()
    tmp = path.with_name(f".{path.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp))
    (tmp / META_NAME).write_text(json.dumps({**meta, "timesteps": int(state["steps"])}, indent=2))
    (tmp / STATE_NAME).write_text(json.dumps(state))
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)
    return path


def run_state(algo: Any, steps: int, iteration: int, league: Any) -> dict:
    """What a checkpoint adds to RLlib's: the step, the league, each runner's deal stream."""
    generators = dict(on_runners(algo, lambda i, env: (str(i), env.generator_state())))
    return {"steps": steps, "iteration": iteration, "generators": generators,
            "league": league.to_dict() if league is not None else None}


def find_checkpoint(path: str | Path) -> Path:
    """The checkpoint to resume: ``path`` itself, or the newest complete one of a run folder."""
    path = Path(path)
    if (path / STATE_NAME).is_file():
        return path
    found = sorted((p for p in (path / "checkpoints").glob(f"{CHECKPOINT_PREFIX}*") if (p / STATE_NAME).is_file()),
                   key=lambda p: int(p.name[len(CHECKPOINT_PREFIX):]))
    if not found:
        raise ResumeError(f"{path}: no complete checkpoint (checkpoints/{CHECKPOINT_PREFIX}N/{STATE_NAME}) to resume")
    return found[-1]


def rewind(run_dir: Path, step: int) -> None:
    """Cut the logs back to ``step`` (:func:`train.run.cut_logs`) and drop checkpoints,
    snapshots and a final checkpoint after it (what they describe is not in the checkpoint;
    it is trained and logged again)."""
    run.cut_logs(run_dir, RUN_LOGS, step)
    final = run_dir / "checkpoint" / STATE_NAME
    if final.is_file() and json.loads(final.read_text())["steps"] > step:  # a later run's end, not this one's
        shutil.rmtree(final.parent)
    for folder, prefix in (("checkpoints", CHECKPOINT_PREFIX), ("snapshots", "rllib_")):
        for p in (run_dir / folder).glob("*") if (run_dir / folder).is_dir() else []:
            stem = p.name.split(".")[0]
            if p.name.startswith(".") or (stem.startswith(prefix) and int(stem[len(prefix):]) > step):
                shutil.rmtree(p) if p.is_dir() else p.unlink()


def save_snapshot(state: dict, folder: Path, step: int, config: dict) -> Path:
    """A league snapshot: the network's weights and its config, written atomically."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rllib_{step}.pt"
    tmp = folder / f".rllib_{step}.pt.tmp"
    torch.save({"state": {k: torch.as_tensor(v) for k, v in state.items()}, "net_config": config}, tmp)
    os.replace(tmp, path)
    return path


def load_snapshot(path: str | Path) -> dict:
    import torch

    data = torch.load(path, map_location="cpu", weights_only=True)
    return {k: v.numpy() for k, v in data["state"].items()}


def sb3_start_weights(path: str, rules: Any) -> tuple[dict, dict]:
    """``--init-from``: an SB3 checkpoint's CardNet weights and its network sizes (refused,
    in one line, if it was trained for another observation layout than the run's rules)."""
    from agents.nets.policy import load_model
    from agents.ppo import check_layout, load_error, read_meta
    from hgin_env.observation import ObservationLayout

    check_layout(read_meta(path), path, layout=ObservationLayout.for_rules(rules))
    try:
        policy = load_model(path, device="cpu").policy
    except Exception as exc:  # SB3 raises many kinds on damaged files
        raise load_error(path, exc) from None
    if not hasattr(policy, "mlp_extractor") or not hasattr(policy, "sizes"):
        raise ValueError(f"{path}: not a card-network policy (agents.nets.policy.CardAwarePolicy)")
    sizes = dict(policy.sizes, relations=policy.relations, knock_bound=policy.knock_bound,
                 shared_trunk=policy.shared_trunk, privileged=policy.privileged, format=policy.format)
    return {k: v.numpy() for k, v in policy.state_dict().items()}, sizes
