"""How well the critic values a three-hand seat that sits the next hand out, and its calibration (a script, not a test).

Why: the three-hand search plays such a row on until the seat acts again (the other two
play a whole hand, about 53 of a searched row's 91 policy plies) because the critic, never
trained on a sitting seat's view, reads it too low (:mod:`agents.search_batched`). Here the
search (seat 0, the Expert elsewhere, matches dealt from ``seed``, ``seed + 1``, ...) is
probed at its own decisions: for every row whose seat sits out at the end of the row's
hand, ``x`` is the critic's value of the sitting view, and ``y_1 .. y_K`` the played-on
value (the rewards on the way plus the critic at the seat's next decision; a match that
ends on the way: its rewards) with ``K`` different next deals (the world's later seeds:
the hand played to its end is the same in every replay, the policy plays its most likely
moves; ``x`` differs a little between replays, since the sitter sees the next upcard). The
search itself gets the first replay's values.

What is reported (``--replays`` K ≥ 2), the error measures in squared hand points / 100:

- ``play_noise_var``: the variance of one played-on value around its mean over the next
  deals, ``n² = mean var_k(y_k)``: the noise a single play-on adds to a row's value;
- the calibration: the critic's quantile bins (``QUANTILES``), each bin's mean ``x`` and mean
  ``y`` its knot, joined by straight lines (``np.interp``), fitted on one part of the rows
  and scored on the rest: ``critic_error_var``, the calibrated value's squared error
  around the played-on value's expectation, ``e² = mean (ȳ₋ₖ − ŷ(x_k))² − n²/(K−1)``,
  each replay's ``x`` against the other replays' mean ``ȳ₋ₖ`` (independent next deals);
  ``linear_critic_error_var`` the same for a least-squares line, ``raw_critic_error_var``
  for the uncalibrated critic;
- ``e² < n²`` says the calibrated critic is the better estimate of a row's value than one
  play-on, if the critic at the seat's next decision is to be trusted (the search trusts it);
- ``knots_x``, ``knots_y``: the calibration fitted on every row, for
  ``search:sitter=critic,sitter_calibration=FILE.json`` (the shipped policy's are in
  :data:`agents.search_batched.SITTER_CALIBRATIONS`).

A probe scores its fit on its odd decisions, fitted on its even ones. ``--pool`` reads the
rows of several probes (``--samples`` files) and scores each on the knots fitted on the
others (the sets are separate matches: a held-out test across deals).

    python -m eval.sitter_value --decisions 600 --replays 4 --seed 12090000 --samples runs/sitter54/a.npz
    python -m eval.sitter_value --pool runs/sitter54/*.npz --out runs/sitter54/calibration.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.search_batched import CriticValues
from eval.search_time import add_play_arguments, play_searched
from hgin_env.rules import get_rules

#: The next deals of replay k come from the world's seed plus k times this (any odd constant:
#: a different seed for every later hand of every replay).
REPLAY_STRIDE = 1_000_003


class SitterProbe(CriticValues):
    """The search's own :class:`CriticValues` (its settings copied), valuing every call
    ``replays`` times over and keeping, per sitting row, the sitting view's value and the
    played-on values."""

    def __init__(self, base: CriticValues, replays: int):
        self.__dict__.update(base.__dict__)
        self.sitter = "play"
        self.replays = replays
        #: Per searched call with a sitting row: (x [R], y [R, K]).
        self.samples: list[tuple[np.ndarray, np.ndarray]] = []
        self._replay: list[tuple[np.ndarray, np.ndarray]] = []

    def values(self, worlds: Sequence[Any], seeds: Sequence[int], candidates: Sequence[int], me: int,
               opponent_rows: np.ndarray | None = None) -> np.ndarray:
        self._replay = []
        first = super().values(worlds, seeds, candidates, me, opponent_rows)
        for k in range(1, self.replays):
            super().values(worlds, [s + k * REPLAY_STRIDE for s in seeds], candidates, me, opponent_rows)
        if self._replay and self._replay[0][0].size:
            if any(x.shape != self._replay[0][0].shape for x, _ in self._replay):
                raise RuntimeError("the replays reached different hand ends (the policy is not deterministic?)")
            self.samples.append((np.stack([x for x, _ in self._replay], axis=1),
                                 np.stack([y for _, y in self._replay], axis=1)))
        return first

    def _play_sitters(self, batch: Any, sitting: np.ndarray, live: np.ndarray, actions: np.ndarray,
                      total: np.ndarray, plies: np.ndarray, me: int) -> None:
        rows = np.flatnonzero(sitting)
        x = self.critic_of(batch, me)[rows]
        before = total[rows].copy()
        super()._play_sitters(batch, sitting, live, actions, total, plies, me)
        later = np.where(live, self.critic_of(batch, me), 0.0)  # a match ended on the way: its rewards
        self._replay.append((x, total[rows] - before + later[rows]))


#: The critic's quantiles bounding the bins, one knot each: tenths, and narrower bins at the
#: tails, whose knots then sit near the ends (the calibration is flat beyond them). Scored
#: across the four probes of docs/runs/sitter54, these beat 12 or 20 equal bins.
QUANTILES = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)


def fit_knots(x: np.ndarray, y: np.ndarray) -> tuple[list[float], list[float]]:
    """Knots (x, y): the mean ``x`` and mean ``y`` of each bin of ``x`` (rows [R, K] or
    flat) between its :data:`QUANTILES`, the ``x`` strictly increasing."""
    x, y = np.ravel(x), np.ravel(y)
    edges = np.quantile(x, QUANTILES)
    bins = len(QUANTILES) - 1
    which = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)
    kept = [b for b in range(bins) if (which == b).any()]
    kx = np.array([x[which == b].mean() for b in kept])
    ky = np.array([y[which == b].mean() for b in kept])
    rising = np.concatenate([[True], np.diff(kx) > 0])  # equal means (ties in x): one knot
    return kx[rising].tolist(), ky[rising].tolist()


def _errors(x: np.ndarray, y: np.ndarray, knots: tuple[list[float], list[float]],
            line: tuple[float, float] | None = None) -> dict[str, float]:
    """The error measures of the module docstring on rows ``x``, ``y`` [R, K]."""
    k = y.shape[1]
    noise = float(y.var(axis=1, ddof=1).mean())
    others = (y.sum(axis=1, keepdims=True) - y) / (k - 1)

    def error(estimate: np.ndarray) -> float:
        return float(np.mean((others - estimate) ** 2) - noise / (k - 1))

    out = {"play_noise_var": noise, "critic_error_var": error(np.interp(x, *knots)),
           "raw_critic_error_var": error(x)}
    if line is not None:
        out["linear_critic_error_var"] = error(line[0] + line[1] * x)
    return out


def summarize(samples: list[tuple[np.ndarray, np.ndarray]],
              given: tuple[Sequence[float], Sequence[float]] | None = None) -> dict[str, Any]:
    """The figures of the module docstring from the probe's samples (one (x, y) entry per
    searched call, [R, K] each): fitted on the even calls, scored on the odd ones; with
    ``given`` knots, that calibration scored on every row too."""
    if len(samples) < 2:
        raise ValueError(f"need sitting rows in at least 2 searched calls, got {len(samples)}")
    calls = np.concatenate([np.full(len(x), i) for i, (x, _) in enumerate(samples)])
    x = np.concatenate([x for x, _ in samples])
    y = np.concatenate([y for _, y in samples])
    fit, held = calls % 2 == 0, calls % 2 == 1
    scale, shift = np.polyfit(x[fit].ravel(), y[fit].ravel(), 1)
    out: dict[str, Any] = {
        "calls": len(samples), "rows": int(len(x)), "replays": int(y.shape[1]), "held_out_rows": int(held.sum()),
        "x_mean": float(x.mean()), "y_mean": float(y.mean()), "bias_mean": float((y - x).mean()),
        "correlation_x_y": float(np.corrcoef(x.ravel(), y.ravel())[0, 1]),
        **_errors(x[held], y[held], fit_knots(x[fit], y[fit]), (float(shift), float(scale)))}
    if given is not None:
        out["given_critic_error_var"] = _errors(x, y, (list(given[0]), list(given[1])))["critic_error_var"]
    out["knots_x"], out["knots_y"] = fit_knots(x, y)
    return out


def pool(sets: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """Several probes' rows (name: (x, y)): each set scored on the knots fitted on the
    others, and the knots fitted on them all."""
    if len(sets) < 2:
        raise ValueError(f"--pool needs the rows of at least 2 probes, got {len(sets)}")
    held_out = {}
    for name, (x, y) in sets.items():
        rest_x = np.concatenate([sx for n, (sx, _) in sets.items() if n != name])
        rest_y = np.concatenate([sy for n, (_, sy) in sets.items() if n != name])
        held_out[name] = {"rows": int(len(x)), **_errors(x, y, fit_knots(rest_x, rest_y))}
    x = np.concatenate([sx for sx, _ in sets.values()])
    y = np.concatenate([sy for _, sy in sets.values()])
    rows = np.array([v["rows"] for v in held_out.values()], dtype=np.float64)

    def mean(key: str) -> float:
        return float(np.average([v[key] for v in held_out.values()], weights=rows))

    knots_x, knots_y = fit_knots(x, y)
    return {"sets": held_out, "rows": int(len(x)), "play_noise_var": mean("play_noise_var"),
            "critic_error_var": mean("critic_error_var"), "raw_critic_error_var": mean("raw_critic_error_var"),
            "bias_mean": float((y - x).mean()), "knots_x": knots_x, "knots_y": knots_y}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m eval.sitter_value", description=__doc__.split("\n\n")[0])
    add_play_arguments(p, "hollywood_three_hand", 400, 12090000)
    p.add_argument("--replays", type=int, default=4, help="next deals per sitting row (default 4, >= 2)")
    p.add_argument("--calibration", help="also score this calibration (a JSON with knots_x, knots_y) on every row")
    p.add_argument("--samples", help="write the rows here (.npz: x and y [rows, replays], call [rows])")
    p.add_argument("--pool", nargs="+", metavar="NPZ", help="no probe: pool these --samples files (module docstring)")
    p.add_argument("--out", help="write the summary here (JSON)")
    args = p.parse_args(argv)
    try:
        out = _pooled(args.pool) if args.pool else _probe(args, p)
    except ValueError as exc:
        p.error(str(exc))
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    return out


def _pooled(files: Sequence[str]) -> dict[str, Any]:
    sets = {}
    for name in files:
        try:
            with np.load(name) as rows:
                sets[name] = (rows["x"], rows["y"])
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"{name} is not a --samples file of this script: {exc}") from exc
    return pool(sets)


def _probe(args: argparse.Namespace, p: argparse.ArgumentParser) -> dict[str, Any]:
    rules = get_rules(args.rules)
    if rules.format != "three_hand":
        p.error(f"--rules must be a three-hand profile (a seat sits out only there), got {rules.name!r}")
    if args.replays < 2 or args.decisions < 2:
        p.error("--replays and --decisions must be >= 2")
    given = None
    if args.calibration:
        from agents.search import _read_knots

        given = _read_knots(args.calibration)
    probes: list[SitterProbe] = []

    def attach(agent: Any) -> None:
        if agent.critic_values is None:
            raise ValueError(f"{args.agent!r} does not value with the critic")
        probes.append(SitterProbe(agent.critic_values, args.replays))
        agent.critic_values = probes[0]

    _, matches = play_searched(args.agent, rules, args.decisions, args.seed, prepare=attach)
    samples = probes[0].samples
    if args.samples:
        Path(args.samples).parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.samples, x=np.concatenate([x for x, _ in samples]),
                            y=np.concatenate([y for _, y in samples]),
                            call=np.concatenate([np.full(len(x), i) for i, (x, _) in enumerate(samples)]))
    return {"agent": args.agent, "rules": rules.name, "seed": args.seed, "decisions": args.decisions,
            "matches": matches, **summarize(samples, given)}


if __name__ == "__main__":
    main()
