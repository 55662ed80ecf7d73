"""Every reward of the environment, in one place: the base modes and potential-based shaping.

One function, :func:`step_rewards`, pays every seat of every path: the AEC environment
(:mod:`hgin_env.envs.aec`, so the single-agent adapter), the batched engine
(:class:`hgin_env.batch.BatchGame`, so the vector envs) and the imitation recorder
(:mod:`train.imitation`). Each describes a step as a :class:`SheetChange` (the points
paid, the columns decided, the match outcome), so a mode, and the optional match bonus,
mean the same thing everywhere.

Base modes (zero-sum, paid when a hand ends; see the reward table of :mod:`hgin_env.envs.aec`),
for every format over a :class:`~hgin_env.match.Match`'s seats:

* ``"match"``: ±1 to the match winner when the match ends (a one-hand episode: ±1 to the
  hand's winner); 0 for a truncated match.
* ``"columns"``: ±1/C for each column decided by the hand (C columns).
* ``"points"``: ± hand points / 100 to the hand's winner.

Potential-based shaping (Ng, Harada & Russell 1999)
---------------------------------------------------
:class:`PotentialShaping` adds, for each player *i* separately, ``F = γ Φ(o') − Φ(o)``
between two consecutive decisions of *i* (``o`` and ``o'`` are *i*'s observations at
those decisions), and ``F = 0 − Φ(o_last)`` when the episode ends. ``Φ`` is a function of
the player's own observation vector only (default :func:`deadwood_potential`:
``−weight × best reachable deadwood / 100``; or :func:`lookahead_potential`, which also
counts the expected deadwood after the next draw), so shaping never uses hidden cards.

Why the optimal policy is unchanged. Fix the opponent's policy; player *i* then faces a
(partially observed) decision process whose steps are *i*'s own decisions
``k = 0 .. T−1`` and whose episode ends after step ``T−1``. Along any trajectory the
discounted sum of the shaping terms telescopes::

    Σ_k γ^k (γ Φ_{k+1} − Φ_k) = γ^T Φ_T − Φ_0 = −Φ_0       (Φ_T := 0 at the end)

so the shaped return of every trajectory is its base return minus ``Φ(o_0)``, the
potential of the first observation, which no decision of *i* can influence. Every policy's
expected return (from any first observation) therefore moves by the same constant: the
ranking of policies, the optimal policies and the best responses (hence the equilibria of
the two-player game) are those of the base reward. This is stronger than Ng et al.'s
MDP result (it needs neither the Markov property nor stationarity, since it holds per
trajectory), and it is why the potential may be any function of the observation.

The subtleties, each handled here:

* **Φ = 0 at the end.** Without it the shaped return would be ``base + γ^T Φ(o_T) − Φ_0``:
  the last potential depends on the policy (a deadwood potential would pay for finishing
  the match with a low-deadwood hand instead of winning). Every episode end, truncation
  included, pays ``−Φ_last`` so the sum telescopes to ``−Φ_0``.
* **Per-agent potentials in an alternating game.** Each player's terms are computed
  between *its own* consecutive decisions, with its own potential; the opponent's moves
  in between are part of the environment's transition. A player who acts twice in a row
  (draw, then discard) gets a term between those two decisions too. The shaping terms are
  not zero-sum (both players are paid for lowering their own deadwood), but each one
  telescopes on its own, so each player's objective moves by a constant.
* **γ must be the learner's discount, counted in the learner's decisions.** With a
  learner discount γ' ≠ γ the sum is ``Σ γ'^k (γ Φ_{k+1} − Φ_k)``, which no longer
  telescopes and biases the learner (with γ = 1 and γ' < 1 it rewards postponing the
  drop of the potential). Set ``shaping_gamma`` to the learner's ``gamma`` (PPO counts
  one step per learner decision, as here).

The deadwood potential helps a learner from scratch because a random policy almost never
knocks: the base reward is nearly always 0, while the potential rewards every decision
that lowers the deadwood at once (and takes it back if the deadwood rises again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .codes import PHASE_DISCARD
from .observation import DEADWOOD_SCALE, ObservationLayout

if TYPE_CHECKING:
    from .match import Match

REWARD_MODES = ("match", "columns", "points")

#: A potential: (observation vector, its layout) -> float. It sees only the observation.
Potential = Callable[[np.ndarray, ObservationLayout], float]


def check_mode(mode: str) -> str:
    """``mode`` if it is a reward mode, else ``ValueError`` naming the modes (the one check
    every environment and trainer calls)."""
    if mode not in REWARD_MODES:
        raise ValueError(f"invalid reward {mode!r}; expected one of {REWARD_MODES}")
    return mode


def check_match_bonus(bonus: float) -> float:
    """``bonus`` as a float if it is a finite number >= 0, else ``ValueError``."""
    if isinstance(bonus, bool) or not isinstance(bonus, int | float | np.floating | np.integer) \
            or not np.isfinite(bonus) or bonus < 0:
        raise ValueError(f"match_bonus must be a finite number >= 0, got {bonus!r}")
    return float(bonus)


@dataclass(frozen=True)
class SheetChange:
    """What one step did to a match's sheet, in seat terms: all that a reward mode reads.
    The scalar engine (:func:`sheet_change` of a :class:`~hgin_env.match.Match`) and the
    batched engine (one per ended hand) both describe a step this way, so
    :func:`step_rewards` is the one reward function of every path."""

    #: The seats of each sheet row: a player (duel, three-hand) or a team (partnership).
    row_seats: tuple[tuple[int, ...], ...]
    #: Hand (partnership: round) points paid to each seat this step, zero-sum
    #: (``Match.last_rewards``: the winner +points, the loser -points, a sitter 0).
    points: tuple[float, ...]
    #: For each column the step decided, the row that won it.
    columns_won: tuple[int, ...] = ()
    num_columns: int = 3
    #: Each seat's match outcome (``Match.returns()``) if the step ended the match, else None.
    outcome: tuple[float, ...] | None = None


def _share(out: np.ndarray, winners: Sequence[int], amount: float) -> None:
    """Zero-sum payment: each of ``winners`` gets +amount, the other seats share the loss
    equally (duel ∓amount; three-hand −amount/2 each; partnership −amount each)."""
    loss = amount * len(winners) / (len(out) - len(winners))
    out -= loss
    for w in winners:
        out[w] += amount + loss


def step_rewards(mode: str, change: SheetChange, match_bonus: float = 0.0) -> np.ndarray:
    """THE reward of every seat for one step (float64 [seats]), every mode, every path:

    * ``"match"``: the match outcome when the step ends the match (duel ±1; three-hand +1
      and −1/2 each; partnership ±1 per partner; 0 when drawn or truncated);
    * ``"columns"``: for each column the step decided, +1/C to each seat of the row that
      won it, the other seats sharing the loss;
    * ``"points"``: the hand (round) points paid / 100.

    ``match_bonus`` (modes other than ``"match"``) adds ``match_bonus ×`` the match outcome
    when the match ends: a dense per-hand signal while the match result still counts.
    """
    seats = len(change.points)
    if mode == "points":
        out = np.asarray(change.points, dtype=np.float64) / 100.0
    elif mode == "columns":
        out = np.zeros(seats, dtype=np.float64)
        for row in change.columns_won:
            _share(out, change.row_seats[row], 1.0 / change.num_columns)
    elif mode == "match":
        return np.zeros(seats) if change.outcome is None else np.asarray(change.outcome, dtype=np.float64)
    else:
        check_mode(mode)
    if match_bonus and change.outcome is not None:
        out += match_bonus * np.asarray(change.outcome, dtype=np.float64)
    return out


def row_seats(match: Match) -> tuple[tuple[int, ...], ...]:
    """The seats of each sheet row of ``match``: its teams, or one seat per row."""
    teams = match.teams
    return tuple(teams) if teams is not None else tuple((s,) for s in range(match.num_players))


def match_outcome(match: Match) -> tuple[float, ...] | None:
    """Each seat's outcome if ``match`` is over (``Match.returns()``; a one-hand duel
    episode's outcome is its hand's: ±1 to the hand's winner), else None."""
    if not match.is_over:
        return None
    if match.single_hand:
        out = [0.0] * match.num_players
        winner = match.hand_history[-1].winner if match.hand_history else None
        if winner is not None:
            out[winner], out[1 - winner] = 1.0, -1.0
        return tuple(out)
    return tuple(float(x) for x in match.returns())


def sheet_change(match: Match, columns_before: Sequence[int | None]) -> SheetChange:
    """The :class:`SheetChange` of the ``Match.apply`` that just ran (``columns_before``:
    ``list(match.sheet.column_winners)`` taken before it)."""
    sheet = match.sheet
    won = tuple(w for w, before in zip(sheet.column_winners, columns_before, strict=True)
                if before is None and w is not None)
    return SheetChange(row_seats=row_seats(match), points=tuple(float(x) for x in match.last_rewards),
                       columns_won=won, num_columns=sheet.num_columns, outcome=match_outcome(match))


def seat_rewards(mode: str, match: Match, columns_before: Sequence[int | None],
                 match_bonus: float = 0.0) -> np.ndarray:
    """Every seat's reward for the ``Match.apply`` that just ran: :func:`step_rewards` of
    its :func:`sheet_change` (0 for a step that settled nothing)."""
    return step_rewards(mode, sheet_change(match, columns_before), match_bonus)


# --------------------------------------------------------------------------- shaping
def best_deadwood(vector: np.ndarray, layout: ObservationLayout) -> float | np.ndarray:
    """The acting player's best reachable 10-card deadwood / 100, read from its observation
    (one vector, or a batch ``[N, size]`` of them: then an array of N values).

    Draw phases: the ``deadwood`` slice (10 cards). Discard phase: the least value of the
    ``discard_deadwood`` slice (deadwood after the best discard), so that a draw is judged
    by what it makes reachable, not by the eleventh card it adds.
    """
    v = np.asarray(vector)
    discard_phase = layout.get(v, "phase")[..., PHASE_DISCARD] > 0.5
    best = np.where(discard_phase, layout.get(v, "discard_deadwood").min(axis=-1),
                    layout.get(v, "deadwood")[..., 0])
    return float(best) if best.ndim == 0 else best.astype(np.float64)


def deadwood_potential(vector: np.ndarray, layout: ObservationLayout) -> float | np.ndarray:
    """Φ = −(best reachable deadwood) / 100 (in [−1, 0]; 0 with gin in hand); batched as
    :func:`best_deadwood`."""
    return -best_deadwood(vector, layout)


#: Weight of the expected deadwood after the next draw in :func:`lookahead_potential` (the
#: rest on today's deadwood): the Expert's discard score uses the same split.
LOOKAHEAD_WEIGHT = 0.75


def expected_deadwood_after_draw(vector: np.ndarray, layout: ObservationLayout) -> np.ndarray:
    """For a batch ``[N, size]`` of observations: the expected best 10-card deadwood / 100
    after drawing one card uniformly from the cards the player has not seen (not in its
    hand, not in the pile, not known to be the opponent's) and discarding the worst.

    The 10 cards drawn to are the hand (draw phases) or the hand after its least-deadwood
    discard (discard phase). Only the observation is read. Exact: every unseen card is
    tried, with every re-discard (:func:`hgin_env.melds.deadwood_without_batch`).
    """
    from .melds import CARD_BITS_U64, deadwood_without_batch  # the engine's tables; import on first use

    v = np.atleast_2d(np.asarray(vector))
    n = v.shape[0]
    hand = layout.get(v, "hand") > 0.5
    discard_phase = layout.get(v, "phase")[:, PHASE_DISCARD] > 0.5
    dd = layout.get(v, "discard_deadwood")
    best = np.where(hand, dd, np.inf).argmin(axis=1)
    # Seen before the discard: the discarded card goes to the pile, it is not drawn again.
    seen = hand | (layout.get(v, "discard_top") > 0.5) | (layout.get(v, "discard_rest") > 0.5) \
        | (layout.get(v, "opponent_known") > 0.5)
    drop = discard_phase & (hand.sum(axis=1) == 11)
    hand[np.flatnonzero(drop), best[drop]] = False
    rows, draws = np.nonzero(~seen)
    out = np.full(n, np.nan)
    if rows.size:
        ten = (hand * CARD_BITS_U64).sum(axis=1, dtype=np.uint64)
        eleven = ten[rows] | CARD_BITS_U64[draws]
        held = np.nonzero(hand[rows] | (np.arange(52) == draws[:, None]))[1].reshape(rows.size, -1)
        # 10 cards never hold more than 100 points of deadwood: no clip needed at this scale.
        after = deadwood_without_batch(eleven, held).min(axis=1).astype(np.float64)
        count = np.bincount(rows, minlength=n)
        total = np.bincount(rows, weights=after, minlength=n)
        drawn = count > 0
        out[drawn] = total[drawn] / count[drawn] / DEADWOOD_SCALE
    nothing_unseen = np.isnan(out)
    if nothing_unseen.any():  # no card left to draw: the deadwood stays as it is
        out[nothing_unseen] = best_deadwood(v[nothing_unseen], layout)
    return out


def lookahead_potential(vector: np.ndarray, layout: ObservationLayout) -> float | np.ndarray:
    """Φ = −(¼ best reachable deadwood + ¾ expected best deadwood after the next draw) / 100.

    Why: :func:`deadwood_potential` pays for lowering the deadwood now but not for keeping
    cards that the next draws can meld, which is most of the Expert's edge over Simple
    (61% with its draw lookahead, 52% without, both knocking as soon as they may, 600
    duplicate matches each). Like every potential it leaves the optimal policy unchanged.
    """
    v = np.asarray(vector)
    now = np.atleast_1d(best_deadwood(v, layout))
    phi = -((1.0 - LOOKAHEAD_WEIGHT) * now + LOOKAHEAD_WEIGHT * expected_deadwood_after_draw(v, layout))
    return float(phi[0]) if v.ndim == 1 else phi


#: Potentials by name (``shaping_potential=``, ``train.ppo --shaping-potential``).
POTENTIALS: dict[str, Potential] = {"deadwood": deadwood_potential, "lookahead": lookahead_potential}


def potential_named(name: str) -> Potential:
    if name not in POTENTIALS:
        raise ValueError(f"invalid shaping potential {name!r}; expected one of {sorted(POTENTIALS)}")
    return POTENTIALS[name]


class PotentialShaping:
    """Potential-based shaping terms ``γ Φ(o') − Φ(o)`` (module docstring), kept per *slot*:
    a slot is a player of one match (the AEC environment, ``num_players`` slots) or the
    learner of one match in a batch (:class:`hgin_env.batch.vector.LearnerBatch`, one slot per
    match).

    Call :meth:`reset` at the episode start, :meth:`at_decision` each time a slot's player
    is about to act (with its observation vector; :meth:`at_decisions` for many slots at
    once), :meth:`at_end` for a slot whose episode ends. Each returns the shaping reward to
    pay now. A slot's first decision pays 0.
    """

    def __init__(self, layout: ObservationLayout, weight: float = 1.0, gamma: float = 1.0,
                 potential: Potential | str = deadwood_potential, num_players: int = 2):
        if not 0.0 < gamma <= 1.0:
            raise ValueError(f"shaping_gamma must be in (0, 1], got {gamma!r}")
        self.layout = layout
        self.weight = float(weight)
        self.gamma = float(gamma)
        self.potential = potential_named(potential) if isinstance(potential, str) else potential
        self.num_players = num_players
        self.last = np.full(num_players, np.nan)  # NaN: no decision yet in this episode

    def reset(self) -> None:
        self.last[:] = np.nan

    def at_decisions(self, slots: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """The terms for ``slots`` whose players are about to act on ``vectors`` [k, size]."""
        phi = self.weight * np.asarray(self.potential(vectors, self.layout), dtype=np.float64)
        prev = self.last[slots]
        self.last[slots] = phi
        return np.where(np.isnan(prev), 0.0, self.gamma * phi - np.nan_to_num(prev))

    def at_decision(self, player: int, vector: np.ndarray) -> float:
        """``γ Φ(o) − Φ(o_prev)`` for ``player`` about to act on ``vector`` (0 at its first)."""
        return float(self.at_decisions(np.array([player]), np.asarray(vector)[None])[0])

    def at_end(self, player: int) -> float:
        """``γ·0 − Φ(o_last)``: the last term of ``player`` when the episode ends."""
        prev = self.last[player]
        self.last[player] = np.nan
        return 0.0 if np.isnan(prev) else -float(prev)
