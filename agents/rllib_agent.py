"""Ray RLlib checkpoints (from ``train/rllib/ppo.py``) as agents: the ``rllib:PATH`` spec.

PATH is a run folder (its ``checkpoint/`` is used) or a checkpoint folder. A checkpoint
holds ``hgin_meta.json`` (observation layout and rules versions, written by the training
script) next to RLlib's own files; the trained RLModule is read from
``learner_group/learner/rl_module/<module>``. Loading refuses (:class:`RLlibCheckpointError`,
a ``ValueError``) a missing folder, a folder without the metadata or the module, and a
policy trained for another observation layout, rules version or number of columns.

    agent = make_agent("rllib:runs/my_rllib_run")       # or RLlibAgent.load(path)
    python -m eval.tournament --agents rllib:runs/my_rllib_run expert
    hgin play --opponent rllib:runs/my_rllib_run

Ray is imported only when a checkpoint is loaded (``pip install 'hgin_env[rllib]'``).
Loading imports nothing from ``train``: the module's class is
:class:`agents.nets.rllib_module.CardRLModule`, and checkpoints saved when it was
``train.rllib_module.CardRLModule`` load through :func:`agents.nets.rllib_module.load_module`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from hgin_env.envs.rllib import MASK_KEY, OBS_KEY, to_rllib_obs
from hgin_env.observation import ObservationLayout

from .batched import BatchedPolicy
from .ppo import META_NAME, CheckpointError, TrainedAgent, check_layout, check_meta
from .spec import register_agent_prefix, register_batched

FORMAT = "hgin-rllib-ppo"
#: Where ``Algorithm.save_to_path`` puts the learner's modules inside a checkpoint.
MODULES_DIR = Path("learner_group") / "learner" / "rl_module"


class RLlibCheckpointError(CheckpointError):
    """An RLlib checkpoint that cannot be used, with the reason."""


def checkpoint_dir(path: str | Path) -> Path:
    """The checkpoint folder of PATH: PATH itself, or a run folder's ``checkpoint/``."""
    path = Path(path)
    if not path.exists():
        raise RLlibCheckpointError(f"RLlib checkpoint {path} does not exist")
    if not path.is_dir():
        raise RLlibCheckpointError(f"{path} is a file, not an RLlib checkpoint folder "
                                   "(ppo:PATH loads Stable-Baselines3 .zip files)")
    if not (path / META_NAME).exists() and (path / "checkpoint" / META_NAME).exists():
        return path / "checkpoint"
    return path


def read_meta(path: str | Path) -> dict:
    """The checkpoint's metadata, validated against this version of the environment."""
    path = checkpoint_dir(path)
    meta_path = path / META_NAME
    if not meta_path.exists():
        raise RLlibCheckpointError(f"{path} has no {META_NAME}: not a hgin_env RLlib checkpoint "
                                   "(save it with train.rllib.ppo, which writes it)")
    try:
        meta = json.loads(meta_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RLlibCheckpointError(f"{meta_path} is corrupt: {exc}") from None
    try:
        return check_meta(meta, path, fmt=FORMAT)
    except RLlibCheckpointError:
        raise
    except CheckpointError as exc:
        raise RLlibCheckpointError(str(exc)) from None


class RLlibAgent(TrainedAgent):
    """A trained RLlib RLModule acting on observation dicts (see :class:`agents.ppo.TrainedAgent`)."""

    @classmethod
    def load(cls, path: str | Path, deterministic: bool = True, seed: int | None = None,
             columns: int | None = None, layout: ObservationLayout | None = None) -> RLlibAgent:
        ckpt = checkpoint_dir(path)
        meta = read_meta(ckpt)
        check_layout(meta, ckpt, layout=layout, columns=columns, error=RLlibCheckpointError)
        module_dir = ckpt / MODULES_DIR / meta.get("module", "main")
        if not module_dir.is_dir():
            raise RLlibCheckpointError(f"{ckpt} has no RLModule at {module_dir.relative_to(ckpt)}")
        try:
            import torch

            from .nets.rllib_module import load_module
        except ImportError as exc:
            raise ImportError(f"rllib:PATH agents need Ray RLlib (pip install 'hgin_env[rllib]'): {exc}") from exc
        torch.set_num_threads(1)
        try:
            module = load_module(module_dir)  # also a checkpoint naming the module's old place in train
        except Exception as exc:  # RLlib raises many kinds on damaged folders
            raise RLlibCheckpointError(f"{module_dir} could not be loaded: {exc}") from exc
        space = getattr(module, "observation_space", None)
        shape = getattr(space["observations"], "shape", None) if hasattr(space, "spaces") else None
        if shape != (meta["observation_size"],):
            raise RLlibCheckpointError(f"{module_dir}: module observation shape {shape} does not match "
                                       f"its metadata ({meta['observation_size']})")
        module.eval()
        return cls(module, meta, deterministic=deterministic, seed=seed)

    def action_probabilities(self, observation: dict) -> np.ndarray:
        """The policy's probability of each of the 108 actions (0 where illegal)."""
        import torch
        from ray.rllib.core.columns import Columns

        self._check(observation)
        batch = {k: torch.as_tensor(v)[None] for k, v in to_rllib_obs(observation).items()}
        with torch.no_grad():
            logits = self.model.forward_inference({Columns.OBS: batch})[Columns.ACTION_DIST_INPUTS]
            return torch.softmax(logits[0].double(), dim=-1).numpy()


    def batched(self, seed: int | None = None) -> BatchedRLlibPolicy:
        """The module acting on whole batches (``arena.evaluate`` plays every match at once)."""
        return BatchedRLlibPolicy(self.model, deterministic=self.deterministic, seed=seed)


class BatchedRLlibPolicy(BatchedPolicy):
    """An RLlib RLModule on a batch of observations: one ``forward_inference`` per call."""

    name = "rllib"

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        import torch
        from ray.rllib.core.columns import Columns

        batch = {OBS_KEY: torch.as_tensor(np.asarray(observations, dtype=np.float32)),
                 MASK_KEY: torch.as_tensor(np.asarray(masks, dtype=np.float32))}
        with torch.no_grad():
            logits = self.model.forward_inference({Columns.OBS: batch})[Columns.ACTION_DIST_INPUTS]
            return torch.softmax(logits.double(), dim=-1).numpy()


def _load_spec(arg: str, seed: int | None = None, **kwargs: Any) -> RLlibAgent:
    if not arg:
        raise RLlibCheckpointError("rllib:PATH needs a run or checkpoint folder, e.g. rllib:runs/my_rllib_run")
    return RLlibAgent.load(arg, seed=seed, **kwargs)


def _batched_spec(arg: str, seed: int | None = None, layout: ObservationLayout | None = None) -> Any:
    """``rllib:PATH`` over a batch: its module on the whole batch."""
    return _load_spec(arg, seed=seed, layout=layout).batched(seed)


register_agent_prefix("rllib", _load_spec)
register_batched("rllib", _batched_spec)
