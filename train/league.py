"""A league for self-play from scratch: frozen snapshots of the learner and fixed opponents,
drawn by prioritized fictitious self-play (PFSP, AlphaStar).

Why: a learner trained against one opponent learns to exploit it (the from-scratch policy
that beat Simple by never knocking lost 92% of its matches to the Expert). A league keeps
every kind of opponent in play, old versions of the learner included, so an exploit of one
is punished by another; PFSP spends the matches where they teach most. Each member's
weight is a function of the learner's running win rate ``x`` against it:

* ``hard``: ``(1 - x) ** p``, chase the opponents the learner still loses to;
* ``even``: ``x (1 - x)``, the opponents it beats about half the time;
* ``uniform``: every member alike (fictitious self-play).

Win rates are exponentially decayed counts per member (about the last ``memory`` matches
against it) with a Beta(1, 1) prior, so a new snapshot starts at 0.5. A small floor keeps
every member in play.

The league is one object: the trainer's :class:`LeagueCallback` records every finished
match, adds a snapshot every N steps, gives the vec env the members and their weights after
each rollout, logs ``league/*`` per member to TensorBoard, and saves ``league.json`` in the
run folder (and one copy per checkpoint, ``checkpoints/league_<step>.json``, which
``--resume`` restores). The heuristics may be members (opponents), never teachers.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from train.callbacks import crossed, save_snapshot

PFSP_MODES = ("hard", "even", "uniform")
#: Prefix of the frozen-snapshot members' specs (sampled policies: ``train.envs.batched_opponent``).
SNAPSHOT_PREFIX = "snapshot:"
#: Share of the weight spread evenly over all members, so none stops being played.
WEIGHT_FLOOR = 0.02


def pfsp_weights(win_rates: np.ndarray, mode: str = "hard", exponent: float = 2.0) -> np.ndarray:
    """Normalised PFSP weights from the learner's win rates against each member."""
    if mode not in PFSP_MODES:
        raise ValueError(f"unknown PFSP mode {mode!r}; choose one of {', '.join(PFSP_MODES)}")
    x = np.clip(np.asarray(win_rates, dtype=np.float64), 0.0, 1.0)
    if x.size == 0:
        raise ValueError("a league needs at least one member")
    if mode == "hard":
        f = (1.0 - x) ** exponent
    elif mode == "even":
        f = x * (1.0 - x)
    else:
        f = np.ones_like(x)
    total = f.sum()
    f = f / total if total > 0 else np.full_like(x, 1.0 / x.size)
    return (1.0 - WEIGHT_FLOOR) * f + WEIGHT_FLOOR / x.size


@dataclass
class Member:
    """One opponent of the league and the learner's decayed record against it."""

    spec: str
    added_step: int = 0
    wins: float = 0.0  # decayed: a win counts 1, a draw (truncated match) 0.5
    games: float = 0.0
    total_games: int = 0  # undecayed, for the record

    @property
    def win_rate(self) -> float:
        return (self.wins + 1.0) / (self.games + 2.0)

    @property
    def name(self) -> str:
        """A short name for charts: the snapshot's file stem, else the spec."""
        if self.spec.startswith(SNAPSHOT_PREFIX):
            return Path(self.spec[len(SNAPSHOT_PREFIX):]).stem
        return self.spec


class League:
    """Fixed members (agent specs, e.g. ``random``, ``simple``, ``expert``) plus at most
    ``pool_size`` newest snapshots; see the module docstring."""

    def __init__(self, fixed: list[str], mode: str = "hard", exponent: float = 2.0, pool_size: int = 8,
                 memory: int = 200, step: int = 0):
        if mode not in PFSP_MODES:
            raise ValueError(f"unknown PFSP mode {mode!r}; choose one of {', '.join(PFSP_MODES)}")
        if pool_size < 1 or memory < 1:
            raise ValueError(f"pool_size and memory must be >= 1, got {pool_size} and {memory}")
        if len(set(fixed)) != len(fixed):
            raise ValueError(f"league members must differ, got {fixed}")
        self.mode = mode
        self.exponent = exponent
        self.pool_size = pool_size
        self.memory = memory
        self.step = step  # the learner's step when the league was last updated
        self.members = [Member(spec) for spec in fixed]

    # ------------------------------------------------------------------ state
    @property
    def specs(self) -> list[str]:
        return [m.spec for m in self.members]

    def weights(self) -> np.ndarray:
        return pfsp_weights(np.array([m.win_rate for m in self.members]), self.mode, self.exponent)

    def record(self, spec: str, score: float) -> None:
        """The learner's result against member ``spec``: 1 won, 0 lost, 0.5 drawn (a match
        cut short). Results against opponents no longer in the league are ignored (a match
        that began before its snapshot was dropped)."""
        for m in self.members:
            if m.spec == spec:
                decay = 1.0 - 1.0 / self.memory
                m.wins = m.wins * decay + score
                m.games = m.games * decay + 1.0
                m.total_games += 1
                return

    def add_member(self, spec: str, step: int = 0) -> bool:
        """Add a fixed member (an agent spec) unless it is in the league; returns whether added."""
        if spec in self.specs:
            return False
        fixed = [m for m in self.members if not m.spec.startswith(SNAPSHOT_PREFIX)]
        self.members.insert(len(fixed), Member(spec, added_step=step))
        return True

    def add_snapshot(self, path: str | Path, step: int) -> list[str]:
        """Add a frozen snapshot; returns the specs of snapshots dropped to keep the pool size."""
        self.members.append(Member(f"{SNAPSHOT_PREFIX}{path}", added_step=step))
        self.step = step
        snapshots = [m for m in self.members if m.spec.startswith(SNAPSHOT_PREFIX)]
        dropped = snapshots[:max(0, len(snapshots) - self.pool_size)]
        self.members = [m for m in self.members if m not in dropped]
        return [m.spec for m in dropped]

    def drop_missing(self) -> list[str]:
        """Remove snapshot members whose file is gone (a league copied without every
        snapshot, e.g. a run folder committed with its newest ones only); returns their specs."""
        gone = [m.spec for m in self.members
                if m.spec.startswith(SNAPSHOT_PREFIX) and not Path(m.spec[len(SNAPSHOT_PREFIX):]).is_file()]
        self.members = [m for m in self.members if m.spec not in gone]
        return gone

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        return {"mode": self.mode, "exponent": self.exponent, "pool_size": self.pool_size,
                "memory": self.memory, "step": self.step, "members": [asdict(m) for m in self.members]}

    @classmethod
    def from_dict(cls, data: dict) -> League:
        try:
            league = cls([], mode=data["mode"], exponent=float(data["exponent"]),
                         pool_size=int(data["pool_size"]), memory=int(data["memory"]), step=int(data["step"]))
            league.members = [Member(**m) for m in data["members"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a league state: {exc}") from None
        return league

    def save(self, path: str | Path) -> None:
        """Write the league as JSON atomically (a kill leaves the old file or the new one)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | Path) -> League:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: cannot read the league state ({exc})") from None
        return cls.from_dict(data)

    def table(self) -> str:
        """The members, their win rates and weights, one line each."""
        lines = [f"{'member':<28} {'games':>7} {'win rate':>9} {'weight':>7}"]
        for m, w in zip(self.members, self.weights(), strict=True):
            lines.append(f"{m.name:<28} {m.total_games:>7} {m.win_rate:>9.3f} {w:>7.3f}")
        return "\n".join(lines)


def league_state_path(run_dir: Path, step: int) -> Path:
    """Where the league is saved beside the checkpoint at ``step``."""
    return Path(run_dir) / "checkpoints" / f"league_{step}.json"


class LeagueCallback(BaseCallback):
    """Plays the league during training (see the module docstring).

    Every ``every`` steps a snapshot of the learner is saved to ``snapshots/`` (a complete
    checkpoint) and joins the league; after every rollout the vec env gets the members and
    their PFSP weights (new matches draw from them), TensorBoard gets ``league/win_rate/*``
    and ``league/weight/*`` per member, and ``league.json`` is rewritten.
    """

    def __init__(self, run_dir: Path, league: League, every: int, meta: dict):
        super().__init__()
        self.run_dir = Path(run_dir)
        self.league = league
        self.every = every
        self.meta = meta
        self.last = 0

    def _push(self) -> None:
        self.training_env.env_method("set_opponent_specs", self.league.specs, list(self.league.weights()))

    def _on_training_start(self) -> None:
        self.last = self.num_timesteps
        (self.run_dir / "snapshots").mkdir(parents=True, exist_ok=True)
        self._push()

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", []):
            summary = info.get("episode_summary")
            if summary is not None:
                score = 1.0 if summary["won"] else 0.0 if summary["lost"] else 0.5
                self.league.record(info.get("opponent_spec", ""), score)
        if crossed(self.last, self.num_timesteps, self.every):
            self.last = self.num_timesteps
            path = save_snapshot(self.model, self.run_dir / "snapshots", self.meta)
            self.league.add_snapshot(path, self.num_timesteps)
            self._push()
        return True

    def _on_rollout_end(self) -> None:
        self.league.step = self.num_timesteps
        self._push()
        for m, w in zip(self.league.members, self.league.weights(), strict=True):
            self.logger.record(f"league/win_rate/{m.name}", m.win_rate)
            self.logger.record(f"league/weight/{m.name}", float(w))
        self.logger.record("league/members", len(self.league.members))
        self.league.save(self.run_dir / "league.json")

    def save_with_checkpoint(self, step: int) -> None:
        """Called by :class:`train.callbacks.Checkpoints` after it saves the checkpoint at ``step``."""
        self.league.step = step
        self.league.save(league_state_path(self.run_dir, step))
