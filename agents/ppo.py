"""Trained MaskablePPO policies as agents, and the checkpoint format they are saved in.

A checkpoint is SB3's ``.zip`` with one extra member, ``hgin_meta.json``: the observation
layout version and size, the rules version and options, and the env name. Loading refuses
(``CheckpointError``, a ``ValueError``) a missing file, a corrupt zip, a zip without the
metadata, or one trained for another observation layout or rules version, because such a
policy would silently read the wrong inputs.

    agent = make_agent("ppo:")   # the shipped policy; "ppo:PATH" or PPOAgent.load(path) for another
"""

from __future__ import annotations

import io
import json
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from hgin_env import actions as A
from hgin_env.observation import (
    FORMAT_OBSERVATION_VERSION,
    LAYOUT_FORMATS,
    OBSERVATION_VERSION,
    ObservationLayout,
)
from hgin_env.rules import RULES_VERSION, Rules

from .spec import register_agent_prefix, register_batched

META_NAME = "hgin_meta.json"
FORMAT = "hgin-maskable-ppo"
#: The policy shipped with the package, ``ppo:`` (learned from scratch, no imitation: the
#: commands are in README.md and docs/runs/ship_scratch). ``hgin_ppo.zip`` beside it is the
#: earlier default, which imitated the Expert before PPO.
SHIPPED_POLICY = Path(__file__).parent / "policies" / "hgin_ppo_scratch.zip"
#: The shipped policy of each observation layout format: what ``ppo:`` (no path) loads for a
#: game of that layout (the duel's is :data:`SHIPPED_POLICY`; the formats' were started from
#: its weights, docs/runs/formats_warm).
SHIPPED_POLICIES = {
    "duel": SHIPPED_POLICY,
    "three_hand": SHIPPED_POLICY.parent / "hgin_ppo_three_hand.zip",
    "partnership": SHIPPED_POLICY.parent / "hgin_ppo_partnership.zip",
}


def shipped_policy(layout: ObservationLayout | None = None) -> Path:
    """The shipped policy for ``layout``'s format (the duel's without one)."""
    return SHIPPED_POLICIES["duel" if layout is None else layout.format]


class CheckpointError(ValueError):
    """A checkpoint that cannot be used, with the reason."""


def checkpoint_meta(rules: Rules, extra: dict | None = None) -> dict:
    layout = ObservationLayout.for_rules(rules)
    meta = {
        "format": FORMAT,
        "env": "hollywood_gin_v0",
        "observation_version": layout.version,
        "observation_format": layout.format,
        "observation_size": layout.size,
        "rules_version": RULES_VERSION,
        "rules": rules.to_dict(),
    }
    meta.update(extra or {})
    return meta


def _write_zip_atomically(path: Path, members: dict[str, bytes], meta: dict) -> None:
    """Write ``members`` + the metadata as ``path`` via a temporary file and a rename, so that a
    kill at any moment leaves either the old file or the complete new one, never half a zip."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in members.items():
                if name != META_NAME:
                    zf.writestr(name, data)
            zf.writestr(META_NAME, json.dumps(meta, indent=2))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_meta(path: str | Path, meta: dict) -> None:
    """Add (or replace) the metadata member of a saved SB3 zip (atomically)."""
    path = Path(path)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    _write_zip_atomically(path, members, meta)


def save_checkpoint(model: Any, path: str | Path, meta: dict) -> Path:
    """Save an SB3 model as a complete checkpoint in one atomic step: the zip with
    ``hgin_meta.json`` (``meta`` plus the model's ``timesteps``) appears under ``path`` whole
    or not at all. Every checkpoint, snapshot and final model of a run is written this way."""
    path = Path(path)
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    with zipfile.ZipFile(buffer) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    _write_zip_atomically(path, members, {**meta, "timesteps": int(model.num_timesteps)})
    return path


def file_digest(path: str | Path) -> str:
    """The first 16 hex digits of the file's SHA-256, which names a checkpoint's content:
    ``model.zip`` is rewritten when a run resumes (checkpoint selection keeps a measurement
    for the content, not the name; an averaged checkpoint records its inputs by it)."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def read_meta(path: str | Path) -> dict:
    """The checkpoint's metadata, validated against this version of the environment.

    Every way a file can be unusable (missing, a directory, unreadable, not a zip, a damaged
    member, metadata that is not a JSON object of the expected fields, another layout or
    rules version) raises :class:`CheckpointError` with a one-line reason.
    """
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if path.is_dir():
        raise CheckpointError(f"{path} is a directory, not a checkpoint .zip")
    try:
        with zipfile.ZipFile(path) as zf:
            if META_NAME not in zf.namelist():
                raise CheckpointError(f"{path} has no {META_NAME}: not a hgin_env checkpoint "
                                      "(save models with train.ppo, which writes it)")
            meta = json.loads(zf.read(META_NAME).decode("utf-8"))
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise CheckpointError(f"{path} is not a valid checkpoint zip (corrupt?): {exc}") from None
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot read the checkpoint ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: {META_NAME} is corrupt: {exc}") from None
    return check_meta(meta, path)


def check_meta(meta: Any, path: str | Path, fmt: str = FORMAT) -> dict:
    """Refuse metadata of another checkpoint format, observation layout or rules version."""
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: {META_NAME} is corrupt: a JSON {type(meta).__name__}, "
                              "expected an object")
    if meta.get("format") != fmt:
        raise CheckpointError(f"{path}: unknown checkpoint format {meta.get('format')!r}, expected {fmt!r}")
    layout_format = meta.get("observation_format", "duel")  # checkpoints from before formats: duel
    if layout_format not in LAYOUT_FORMATS:
        raise CheckpointError(f"{path}: unknown observation layout format {layout_format!r}")
    version = OBSERVATION_VERSION if layout_format == "duel" else FORMAT_OBSERVATION_VERSION
    if meta.get("observation_version") != version:
        raise CheckpointError(
            f"{path} was trained with observation layout version {meta.get('observation_version')}, "
            f"this hgin_env uses version {version}; retrain the policy")
    if meta.get("rules_version") != RULES_VERSION:
        raise CheckpointError(f"{path} was trained with rules version {meta.get('rules_version')}, "
                              f"this hgin_env uses version {RULES_VERSION}; retrain the policy")
    rules = meta.get("rules")
    size = meta.get("observation_size")
    if not (isinstance(rules, dict) and type(rules.get("columns")) is int and type(size) is int):
        raise CheckpointError(f"{path}: {META_NAME} is corrupt: 'rules' (with 'columns') and "
                              "'observation_size' are missing or mistyped")
    return meta


def check_layout(meta: dict, path: str | Path, layout: ObservationLayout | None = None,
                 columns: int | None = None, error: type[CheckpointError] = CheckpointError) -> None:
    """Refuse, in one line, a checkpoint whose observation layout is not ``layout`` (the
    env's: ``ObservationLayout.for_rules(rules)``) or whose column count is not ``columns``."""
    if layout is not None:
        trained = ObservationLayout(int(meta["rules"]["columns"]), meta.get("observation_format", "duel"))
        if trained != layout or int(meta["observation_size"]) != layout.size:
            raise error(f"{path} was trained for the {trained.format} layout ({trained.columns} "
                        f"column(s), size {meta['observation_size']}); this match needs the "
                        f"{layout.format} layout ({layout.columns} column(s), size {layout.size})")
    if columns is not None and columns != int(meta["rules"]["columns"]):
        raise error(f"{path} plays {meta['rules']['columns']} column(s), the environment has {columns}")


def load_error(path: str | Path, exc: BaseException) -> CheckpointError:
    """A one-line :class:`CheckpointError` for a checkpoint that SB3/torch failed to load (their
    messages can run over many lines)."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return CheckpointError(f"{path} could not be loaded: {type(exc).__name__}: {first}".rstrip(": "))


class TrainedAgent:
    """What every trained-policy agent shares (SB3 PPO here, RLlib in ``agents.rllib_agent``):
    the checkpoint's metadata, a seeded generator, the observation-size check and the move
    choice. Subclasses give ``action_probabilities``.

    ``deterministic=True`` plays :func:`most_likely_move`; ``False`` samples the policy.
    """

    def __init__(self, model: Any, meta: dict, deterministic: bool = True, seed: int | None = None):
        self.model = model
        self.meta = meta
        self.deterministic = deterministic
        self.columns = int(meta["rules"]["columns"])
        self.observation_size = int(meta["observation_size"])
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def _check(self, observation: dict) -> None:
        size = observation["observation"].shape[-1]
        if size != self.observation_size:
            raise ValueError(f"observation has size {size}, the policy expects {self.observation_size}")

    def action_probabilities(self, observation: dict) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, observation: dict) -> int:
        probs = self.action_probabilities(observation)
        if self.deterministic:
            return most_likely_move(probs)
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))


class PPOAgent(TrainedAgent):
    """A trained SB3 MaskablePPO policy acting on observation dicts (see :class:`TrainedAgent`)."""

    @classmethod
    def load(cls, path: str | Path = SHIPPED_POLICY, deterministic: bool = True,
             seed: int | None = None, columns: int | None = None,
             layout: ObservationLayout | None = None) -> PPOAgent:
        """Load a checkpoint; with ``layout`` (the env's, ``ObservationLayout.for_rules``)
        or ``columns``, a checkpoint trained for another layout is refused in one line."""
        meta = read_meta(path)
        check_layout(meta, path, layout=layout, columns=columns)
        import torch

        from .nets.policy import load_model

        torch.set_num_threads(1)
        try:
            model = load_model(path, device="cpu")
        except Exception as exc:  # SB3 raises many kinds on damaged files
            raise load_error(path, exc) from None
        obs_shape = model.observation_space.shape
        # A policy trained with a privileged critic has extra input columns that only its
        # critic reads (agents.nets.policy); it plays from the ordinary observation.
        privileged = meta.get("privileged_size", 0)
        if type(privileged) is not int or obs_shape != (meta["observation_size"] + privileged,):
            raise CheckpointError(f"{path}: model observation shape {obs_shape} does not match its "
                                  f"metadata ({meta['observation_size']} + privileged {privileged!r})")
        return cls(model, meta, deterministic=deterministic, seed=seed)

    def action_probabilities(self, observation: dict) -> np.ndarray:
        """The policy's probability of each of the 108 actions (0 where illegal)."""
        from .batched import policy_probabilities

        self._check(observation)
        return policy_probabilities(self.model.policy, np.asarray(observation["observation"])[None],
                                    np.asarray(observation["action_mask"], dtype=bool)[None])[0]


#: Kinds of move: discard any card, knock with any card, draw, take, pass, big gin.


def most_likely_move(probs: np.ndarray) -> int:
    """The deterministic choice: the kind of move with the most probability, then its most
    likely card. A plain argmax over the 108 actions would under-pick knocking, whose mass is
    split over every card one may knock with, against one favourite discard."""
    kind = max(A.MOVE_KINDS.values(), key=lambda k: probs[k[0]:k[1]].sum())
    return int(kind[0] + np.argmax(probs[kind[0]:kind[1]]))


def _load_spec(arg: str, seed: int | None = None, **kwargs: Any) -> PPOAgent:
    path = Path(arg) if arg else shipped_policy(kwargs.get("layout"))
    return PPOAgent.load(path, seed=seed, **kwargs)


def _batched_spec(arg: str, seed: int | None = None, layout: ObservationLayout | None = None) -> Any:
    """``ppo:PATH`` over a batch: one torch call for every row (``ppo:`` the shipped policy)."""
    from .batched import BatchedPolicy

    agent = PPOAgent.load(arg or shipped_policy(layout), seed=seed, layout=layout)
    return BatchedPolicy(agent.model, deterministic=agent.deterministic, seed=seed)


register_agent_prefix("ppo", _load_spec)
register_batched("ppo", _batched_spec)
