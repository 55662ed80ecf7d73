"""Evaluation with less noise: the luck of the cards, as the critic sees it, taken out of a
match's (or a hand's) outcome, AIVAT-style, without bias (docs/evaluation.md holds the
argument and the measurements).

Where agent A's outcome is ``Y`` (1, ½, 0 for a match; signed points for a hand), the
estimate is ``Y − β·C``, ``C`` A's luck summed over the game's chance events::

    C = Σ_events  V(state after the actual outcome) − mean over the alternatives of V(state after it)

Each alternative state has, given the whole history before the event, the distribution of
the actual one, so every term has mean zero for **any** ``V`` (which may therefore read
every card, hidden ones included), ``E[C] = 0``, and ``Y − β·C`` has the mean of ``Y`` for
any ``β`` chosen without the unit it corrects (:func:`reduced_mean` cross-fits it). The
events, at every table of every format:

* **a deal** (a partnership round deals two tables): the actual deal, and
  :data:`DEAL_SAMPLES` fresh decks dealt at the same tables by the same dealers from the
  same sheet (a generator of the estimate's own, seeded from the match seed);
* **a stock draw**: the drawn card swapped with each card of the stock in turn
  (:func:`drawn_instead`; a swap maps the stock's uniform order onto itself).

Players' moves are not corrected (every agent we rate plays deterministically from its
seed). ``V`` (:class:`CriticValue`) is the critic of the shipped ``ppo:`` policy of the
rules' layout, privileged features included, in its training units (hand points / 100 plus
the match bonus); ``β`` converts them into the outcome's.

Cost: every alternative is a row loaded into a :class:`~hgin_env.batch.BatchGame` (Python
per row), one critic forward per hand; :class:`LuckRecorder` reports its seconds.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hgin_env import actions as A
from hgin_env.batch import BatchGame, MatchState, load_matches
from hgin_env.cards import NUM_CARDS
from hgin_env.game import Hand
from hgin_env.match import Match
from hgin_env.rules import Rules

from .stats import mean_interval

#: Fresh decks dealt to estimate a deal's expected value (the Monte-Carlo mean; more only
#: adds the cost of loading them: the mean's own noise is a small part of the correction's).
DEAL_SAMPLES = 16
#: Rows of the batch a hand's events are loaded into (more are loaded in turns).
FLUSH_ROWS = 512


def chance_correction(actual: float, outcomes: Sequence[float] | np.ndarray,
                      probabilities: Sequence[float] | np.ndarray | None = None) -> float:
    """One chance event's term: the value after the actual outcome minus the expected value
    over the outcomes (``probabilities``, uniform without; a Monte-Carlo sample of outcomes
    drawn independently of the actual one is uniform too). Mean zero under the event."""
    values = np.asarray(outcomes, dtype=np.float64)
    if values.size == 0:
        raise ValueError("a chance event needs at least one outcome")
    if probabilities is None:
        return float(actual - values.mean())
    p = np.asarray(probabilities, dtype=np.float64)
    if p.shape != values.shape or (p < 0).any() or not math.isclose(float(p.sum()), 1.0, rel_tol=1e-9):
        raise ValueError(f"probabilities must be {values.shape} non-negative weights summing to 1")
    return float(actual - p @ values)


def reduced_mean(outcomes: Sequence[float], corrections: Sequence[float], z: float = 1.96) -> dict[str, Any]:
    """The control-variate estimate of the mean outcome over independent units (duplicate
    seeds, deals): ``mean(Y − β·C)`` with its normal 95% interval, beside the plain
    ``mean(Y)`` and its interval.

    ``β`` is cross-fitted: the units are split into two halves (even and odd positions) and
    each half is corrected with the least-squares ``β = cov(Y, C) / var(C)`` of the other
    half, so a unit's ``β`` never depends on the unit itself and the estimate stays exactly
    unbiased when ``E[C] = 0``. Fewer than 4 units (two per half): ``β = 0``, the plain mean."""
    y = np.asarray(outcomes, dtype=np.float64)
    c = np.asarray(corrections, dtype=np.float64)
    if y.shape != c.shape or y.ndim != 1:
        raise ValueError(f"outcomes and corrections must be 1-d of one length, got {y.shape} and {c.shape}")
    halves = [np.arange(0, y.size, 2), np.arange(1, y.size, 2)]
    betas = [0.0, 0.0]
    if y.size >= 4:
        for k, other in ((0, halves[1]), (1, halves[0])):
            var = float(np.var(c[other]))
            betas[k] = float(np.cov(y[other], c[other], bias=True)[0, 1] / var) if var > 0 else 0.0
    reduced = y.copy()
    for k in (0, 1):
        reduced[halves[k]] -= betas[k] * c[halves[k]]

    plain_ci, reduced_ci = mean_interval(y, z), mean_interval(reduced, z)
    plain_w, reduced_w = plain_ci[1] - plain_ci[0], reduced_ci[1] - reduced_ci[0]
    return {"units": int(y.size), "plain": float(y.mean()) if y.size else float("nan"), "plain_ci": plain_ci,
            "reduced": float(reduced.mean()) if y.size else float("nan"), "reduced_ci": reduced_ci,
            "beta": betas, "width_ratio": plain_w / reduced_w if reduced_w > 0 else float("nan"),
            "correction_mean": float(c.mean()) if c.size else float("nan"), "correction_ci": mean_interval(c, z)}


class CriticValue:
    """The shipped policy's critic of the rules' layout as ``V``: values of loaded batch rows
    for agent A (module docstring)."""

    def __init__(self, rules: Rules, policy: str | None = None):
        from agents.ppo import PPOAgent, shipped_policy
        from hgin_env.observation import ObservationLayout

        layout = ObservationLayout.for_rules(rules)
        self.path = policy or shipped_policy(layout)
        self.net = PPOAgent.load(self.path, layout=layout).model.policy
        self.privileged = int(getattr(self.net, "privileged", 0))
        self.format = rules.format
        self.num_players = rules.num_players

    def inputs(self, batch: BatchGame, rows: np.ndarray, a_seats: set[int]) -> tuple[np.ndarray, np.ndarray]:
        """The critic's inputs for ``rows`` (observation, then privileged features), ``m`` per
        row, and float [rows, m] weights: A's value of row ``k`` is the weighted sum of its
        ``m`` critic values. The duel: the acting seat's value, negated when it is B's (two
        seats, zero sum). A format: every seat's own view (``BatchGame.seat_observations``,
        as the format search reads it), A's seats' mean minus B's seats' mean."""
        if self.format == "duel":
            x = batch.observations()[rows]
            if self.privileged:
                x = np.concatenate([x, batch.privileged_observations()[rows]], axis=1)
            acting = batch.current_seat[rows]
            return x, np.where(np.isin(acting, list(a_seats)), 1.0, -1.0)[:, None]
        m = self.num_players
        rr, seats = np.repeat(rows, m), np.tile(np.arange(m), rows.size)
        x = batch.seat_observations(rr, seats)
        if self.privileged:
            x = np.concatenate([x, batch.seat_privileged(rr, seats)], axis=1)
        mine = np.array([s in a_seats for s in range(m)])
        w = np.where(mine, 1.0 / mine.sum(), -1.0 / (m - mine.sum()))
        return x, np.tile(w, (rows.size, 1))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            return self.net.predict_values(torch.as_tensor(x)).numpy()[:, 0].astype(np.float64)


@dataclass
class _Event:
    kind: str  # "deal" or "draw"
    states: list[MatchState]  # the actual state first, then the alternatives


class LuckRecorder:
    """Records a match's chance events as it is played and sums their corrections for agent A.

    ``start(match, a_seats, seed)`` before the first move, ``on_move`` as
    :func:`hgin_env.loop.run_match`'s hook, ``finish()`` at the end: the match's ``C`` (in
    the critic's units, for A), its events and the seconds spent. A hand's events are
    snapshots, valued together when a hand ends (one batch load and one critic forward
    per :data:`FLUSH_ROWS` rows: a load's fixed cost is most of a small one's)."""

    def __init__(self, rules: Rules, value: CriticValue | None = None, deal_samples: int = DEAL_SAMPLES):
        if deal_samples < 1:
            raise ValueError(f"deal_samples must be >= 1, got {deal_samples}")
        self.value = value or CriticValue(rules)
        self.rules = rules
        self.deal_samples = deal_samples
        self.batch = BatchGame(FLUSH_ROWS, rules=rules, seed=0)
        self.seconds = 0.0

    def start(self, match: Match, a_seats: Sequence[int], seed: int) -> None:
        if match.rules != self.rules:
            raise ValueError(f"the recorder values {self.rules.name!r}, the match plays {match.rules.name!r}")
        began = time.perf_counter()
        self.match = match
        self.a_seats = set(a_seats)
        self.rng = np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, 0x1C4]))
        self.pending: list[_Event] = []
        self.total = 0.0
        self.counts = {"deal": 0, "draw": 0}
        self.seconds = 0.0
        self.games: list[Hand | None] = [None] * len(match.tables)
        self._after_move(None)
        self.seconds += time.perf_counter() - began

    def on_move(self, seat: int, obs: dict, action: int, finished: list) -> None:
        began = time.perf_counter()
        if finished:
            self._flush()  # the sheet changes now; the events so far hold their own copies
        if not self.match.is_over:
            self._after_move(action)
        self.seconds += time.perf_counter() - began

    def finish(self) -> dict[str, Any]:
        began = time.perf_counter()
        self._flush()
        self.seconds += time.perf_counter() - began
        return {"a_luck": self.total, "luck_deals": self.counts["deal"], "luck_draws": self.counts["draw"],
                "luck_seconds": round(self.seconds, 4)}

    # ------------------------------------------------------------------ internals
    def _after_move(self, action: int | None) -> None:
        """Record the move's chance event, if it had one: a stock draw at the table whose
        stock shrank, or the deal of the tables whose hand is new."""
        tables = self.match.tables
        games = [t.game for t in tables]
        # a new hand: a new Hand at the table (a format deals one per hand), or the next hand
        # of the same one (the match deals its hands itself)
        dealt = [k for k, g in enumerate(games)
                 if k >= len(self.games) or g is not self.games[k] or g.hand_number != self.hand_numbers[k]]
        if action == A.DRAW_STOCK:
            drew = [k for k, g in enumerate(games) if k not in dealt and len(g.stock) < self.stock_left[k]]
            assert len(drew) == 1, "a stock draw shrinks one table's stock"
            k = drew[0]
            base = self._state()
            self._add("draw", [dataclasses.replace(base, games=_with(base.games, k, alt))
                               for alt in drawn_instead(games[k], self.tops[k])])
        if dealt:
            self._deal(dealt)
        self.games = games
        self.hand_numbers = [g.hand_number for g in games]
        self.tops = [g.stock[-1] if g.stock else -1 for g in games]
        self.stock_left = [len(g.stock) for g in games]

    def _state(self) -> MatchState:
        """The match as it stands, as snapshots (nothing of it changes later)."""
        base = MatchState.of(self.match)
        return dataclasses.replace(base, games=tuple(snapshot(g) for g in base.games), sheet=base.sheet.copy())

    def _deal(self, tables: list[int]) -> None:
        """The deal of ``tables`` (one, or a partnership round's two): the actual one, then
        fresh decks dealt at the same tables by the same dealers."""
        base = self._state()
        states = [base]
        for _ in range(self.deal_samples):
            games = base.games
            for k in tables:
                g = games[k]
                # only the table's state is loaded (the sheet is the match's): a Hand serves
                games = _with(games, k, Hand(self.rules, dealer=g.dealer,
                                             deck=self.rng.permutation(NUM_CARDS).tolist()))
            states.append(dataclasses.replace(base, games=games))
        self._add("deal", states)

    def _add(self, kind: str, states: list[MatchState]) -> None:
        self.pending.append(_Event(kind, states))
        self.counts[kind] += 1

    def _flush(self) -> None:
        """Value every pending event's states and add their terms to the match's luck."""
        if not self.pending:
            return
        states = [st for e in self.pending for st in e.states]
        n = self.batch.n
        xs, ws = [], []
        for lo in range(0, len(states), n):
            chunk = states[lo:lo + n]
            rows = np.arange(len(chunk))
            load_matches(self.batch, rows, chunk, np.zeros(len(chunk), dtype=np.int64))
            x, w = self.value.inputs(self.batch, rows, self.a_seats)
            xs.append(x)
            ws.append(w)
        w = np.concatenate(ws)
        v = (self.value(np.concatenate(xs)).reshape(w.shape) * w).sum(axis=1)  # A's value of each state
        at = 0
        for e in self.pending:  # the actual state first, then the alternatives
            k = len(e.states)
            self.total += chance_correction(v[at], v[at + 1:at + k])
            at += k
        self.pending = []


def _with(games: tuple[Hand, ...], k: int, game: Hand) -> tuple[Hand, ...]:
    return games[:k] + (game,) + games[k + 1:]


def snapshot(game: Hand) -> Hand:
    """A copy of ``game``'s hand as it stands, for the batch loader (which reads the hand's
    fields only): the fields a move changes are copied, the match's history is shared."""
    out = object.__new__(type(game))  # copy.copy's result, five times faster
    out.__dict__.update(game.__dict__)
    for name in ("hands", "stock", "discard_pile", "known_cards", "discarded", "passed_upcard"):
        setattr(out, name, list(getattr(game, name)))
    return out


def drawn_instead(game: Hand, drawn: int) -> list[Hand]:
    """The state after a stock draw had the drawer taken each card of the stock instead, the
    actual one first: the drawn card and that card swap places (the drawer holds the other,
    the drawn card lies where it lay in the stock). A swap is a bijection of the stock's
    orders, so each of these states has the law of the actual one given the history before
    the draw. Snapshots (:func:`snapshot`)."""
    drawer = game.current_player
    if not game.hands[drawer] >> drawn & 1:
        raise ValueError(f"the drawer holds no card {drawn}: not the state right after its stock draw")
    out = []
    for card in [drawn, *game.stock]:
        alt = snapshot(game)
        if card != drawn:
            alt.hands[drawer] ^= (1 << drawn) | (1 << card)
            alt.stock = [drawn if c == card else c for c in game.stock]
        out.append(alt)
    return out


_RECORDERS: dict[str, LuckRecorder] = {}


def recorder_for(rules: Rules) -> LuckRecorder:
    """This process's recorder for ``rules`` (made once: loading the critic and compiling the
    batch engine take seconds, a tournament's worker plays many chunks)."""
    key = json.dumps(rules.to_dict(), sort_keys=True)
    if key not in _RECORDERS:
        _RECORDERS[key] = LuckRecorder(rules)
    return _RECORDERS[key]


def luck_summary(rows: Sequence[dict[str, Any]], score_key: str, unit_key: str = "seed") -> dict[str, Any] | None:
    """The variance-reduced estimate of the mean ``score_key`` over rows grouped into units
    by ``unit_key`` (a duplicate seed's seatings; a deal's two hands): :func:`reduced_mean` of
    the units' mean score and mean ``a_luck``, and the seconds per row the luck cost. None
    when the rows hold no luck (played without the estimate)."""
    if not rows or any("a_luck" not in r for r in rows):
        return None
    units: dict[Any, list[tuple[float, float]]] = {}
    for r in rows:
        units.setdefault(r[unit_key], []).append((float(r[score_key]), float(r["a_luck"])))
    y = [float(np.mean([s for s, _ in v])) for v in units.values()]
    c = [float(np.mean([lk for _, lk in v])) for v in units.values()]
    out = reduced_mean(y, c)
    out["luck_seconds"] = float(np.mean([r["luck_seconds"] for r in rows]))
    return out
