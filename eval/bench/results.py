"""The benchmark's sizes, result rows and groups (what ``eval.bench.run`` measures into)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("runs/bench")
OPENSPIEL_OBS = "OpenSpiel gin_rummy (Python, obs + mask)"
GROUPS = ("meld", "discard", "env", "heuristic", "batch", "expert", "train")
#: The formats' rows of the batch group (beside the duel's), one profile per format.
FORMAT_PROFILES = ("hollywood_three_hand", "hollywood_partnership")
#: How the rows name the batched engine's two implementations (hgin_env.batch.engines).
ENGINE_LABELS = {"numba": "compiled", "numpy": "numpy"}


def batch_label(n: int, engine: str, profile: str | None = None) -> str:
    """The row of the batched engine with ``n`` matches on ``engine`` ("numba", "numpy")."""
    return f"ours BatchGame N={n} {ENGINE_LABELS[engine]}" + (f" ({profile})" if profile else "")


# ----------------------------------------------------------------------------- sizes
@dataclass
class Sizes:
    rounds: int = 7
    hands: int = 2000  # 10-card hands per meld set
    meld_repeat: int = 10  # passes over the hands per round (ours and OpenSpiel)
    rlcard_hands: int = 150  # RLCard is ~100x slower: a prefix of the hands, one pass
    hands11: int = 500  # 11-card hands for the after-discard benchmark
    discard_repeat: int = 4
    rlcard_hands11: int = 30
    env_steps: int = 20000  # decisions per round for each env contender
    pz_steps: int = 3000  # PettingZoo is slow: fewer steps (per-step time is what counts)
    heuristic_hands: int = 30  # heuristic hands per round (simple, expert)
    real_games: int = 300  # simple-vs-simple hands played to collect real-play hands
    batch_n: int = 1024  # games in the batched engine (the reference row, the formats' rows)
    batch_steps: int = 300  # batched steps per round at batch_n (batch_n decisions each)
    batch_ns: tuple[int, ...] = (64, 256, 1024, 4096)  # the duel rows per engine (same decisions each)
    os_observed_steps: int = 3000  # OpenSpiel decisions per round with observation tensor + mask
    train_steps: int = 16384  # environment steps per PPO training contender (0 = skip)
    train_rounds: int = 2  # rounds that include the (slow) training contenders
    expert_calls: int = 6  # batches of expert_n states the batched Expert decides per round
    expert_row_calls: int = 1  # of those, how many the row-by-row Expert decides per round
    expert_n: int = 256  # states per call (the N)

    @classmethod
    def quick(cls) -> Sizes:
        return cls(rounds=3, hands=300, meld_repeat=3, rlcard_hands=40, hands11=100,
                   discard_repeat=2, rlcard_hands11=10, env_steps=1500, pz_steps=500,
                   heuristic_hands=3, real_games=40, batch_steps=40, os_observed_steps=800,
                   train_steps=4096, train_rounds=1, expert_calls=3)

    @classmethod
    def tiny(cls) -> Sizes:
        return cls(rounds=2, hands=40, meld_repeat=1, rlcard_hands=10, hands11=20,
                   discard_repeat=1, rlcard_hands11=3, env_steps=200, pz_steps=100,
                   heuristic_hands=1, real_games=6, batch_n=64, batch_steps=20, batch_ns=(64,),
                   os_observed_steps=100,
                   train_steps=0, train_rounds=0, expert_calls=1, expert_n=64)


# ----------------------------------------------------------------------------- results
@dataclass
class Row:
    bench: str
    contender: str
    unit: str
    ours: bool = False
    note: str = ""
    times: list[float] = field(default_factory=list)  # seconds per unit, one per round
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")


@dataclass
class Bench:
    """One benchmark: its contenders' rows; ``ref`` names our reference row."""

    name: str
    title: str
    ref: str
    rows: dict[str, Row] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def row(self, contender: str, unit: str, ours: bool = False, note: str = "") -> Row:
        if contender not in self.rows:
            self.rows[contender] = Row(self.name, contender, unit, ours, note)
        return self.rows[contender]

    def ratio(self, contender: str, ref: str | None = None) -> float:
        """Median over rounds of time(contender) / time(ref): how many times ``ref`` is faster."""
        a, b = self.rows[contender].times, self.rows[ref or self.ref].times
        n = min(len(a), len(b))
        if not n:
            return float("nan")
        return statistics.median(a[i] / b[i] for i in range(n))
