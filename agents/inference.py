"""Policy-based inference of worlds: sampled worlds weighted by what the opponent did.

A determinized world fixes the opponent's hidden cards. How likely is the opponent's play
this hand (its upcard take or pass, its pile or stock draws, its discards, not knocking)
if it held them? Under a model of the opponent (the search's own policy by default: the
shipped policy is a model of exactly that behaviour; a given agent when the opponent is
known) that is a product over its past decisions of the model's probability of the move
it made, on the observation it had then. The search samples more worlds than it keeps
from its prior (:mod:`hgin_env.determinize`, :mod:`hgin_env.format_worlds`) and resamples
them by that likelihood (:class:`WorldInference`).

What the opponent did is rebuilt from the searching seat's **own** observations only
(:class:`OpponentHistory`): between two of its decisions the seat knows its previous
information set and the move it made; replaying that move on a stand-in world of the
previous information set gives the table as the opponent found it, and the seat's next
observation says what the opponent did there (it passed the upcard or not, took the
discard it now holds or drew from the stock, threw the card now on the pile). Each such
point is kept as a *template*: a ``Hand`` with the opponent to act and every public fact of
that moment, its hand a stand-in. Nothing hidden is read, so the no-leak property of the
world samplers holds (twin states give the same worlds: tests/test_inference.py).

In a world, the opponent's hand at each past point is its hand now, walked backwards
through its moves since: a discard puts the card back, a pile take removes that card, a
stock draw removes a card it drew then, which the seat never saw: one of the hand's
cards that it did not hold visibly at the time, chosen at random from the world's own
generator (the draw is part of the world). The template with that hand is observed by
:func:`hgin_env.observation.observe` (the one observer: the same vector and legal moves
the opponent had), a format's match context appended, and all worlds x points go through
the model in one forward.

Limits: of the opponent's decisions before the seat's first decision of a hand, only a
pass of the upcard is rebuilt (not a take of it and the discard that followed); a knock ends the hand,
so "not knocking" is seen only through the discards made instead; the model's probability
is mixed with ``epsilon`` of a uniform choice over the legal moves, so one move the model
would never make does not rule a world out (the opponent is not the model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hgin_env import actions as A
from hgin_env.codes import Phase
from hgin_env.determinize import InfoSet
from hgin_env.game import Hand
from hgin_env.observation import observe
from hgin_env.observation.layout import context_start


@dataclass
class OpponentPoint:
    """One past decision of the opponent: ``game`` is the table as it found it (the
    opponent to act, its hand a stand-in), ``action`` what it did, ``context`` the
    opponent seat's match-context slices then (formats; None in the duel)."""

    game: Hand
    player: int
    action: int
    context: np.ndarray | None


class _Inconsistent(Exception):
    """The seat's memory and its observation disagree (e.g. a new hand it did not notice)."""


def moves_between(previous: InfoSet, action: int, current: InfoSet) -> list[tuple[Hand, int]]:
    """The opponent's decisions between the seat's decision at ``previous`` (where it
    played ``action``) and its decision at ``current``: (template, move) pairs in order.
    Raises :class:`_Inconsistent` when ``current`` cannot follow."""
    me = previous.seat
    # Any world of the previous information set shows the public facts after the seat's move;
    # a fixed generator: the stand-in reads nothing but the information set.
    game = previous.sample(np.random.default_rng(0))
    if game.apply(action) is not None:
        raise _Inconsistent("the seat's move ended the hand")
    out: list[tuple[Hand, int]] = []
    while game.current_player != me:
        phase = game.phase
        if phase == Phase.FIRST_UPCARD:
            move = A.PASS if current.opponent_passed else A.TAKE_DISCARD
        elif phase == Phase.DRAW:
            top = game.discard_pile[-1] if game.discard_pile else -1
            took = top >= 0 and current.opponent_known >> top & 1
            move = A.TAKE_DISCARD if took else A.DRAW_STOCK
        elif phase == Phase.DISCARD:
            card = current.discard_top
            if card < 0 or not current.opponent_discards >> card & 1 or previous.opponent_discards >> card & 1:
                raise _Inconsistent("no new opponent discard on the pile")
            move = A.DISCARD + card
        else:
            raise _Inconsistent(f"the hand is over ({phase.name})")
        # A discard's legality depends on the hand (a stand-in here): only the card just
        # taken is public to refuse; the draws and upcard moves are checked in full.
        if move == A.DISCARD + game.taken_card or (phase != Phase.DISCARD and not game.is_legal(move)):
            raise _Inconsistent(f"the opponent's move {move} is not legal there")
        out.append((game.clone(), move))
        if phase == Phase.DISCARD:
            break  # the seat acts next: its current observation
        game.apply(move)
    return out


@dataclass
class OpponentHistory:
    """The opponent's decisions at the seat's table this hand (module docstring), kept
    from the seat's consecutive decisions: :meth:`update` at each decision with the
    seat's table information set, :meth:`note` with the move it then made."""

    points: list[OpponentPoint] = field(default_factory=list)
    #: The memory no longer matches the observations this hand: no inference until the next.
    broken: bool = False
    _current: tuple[InfoSet, np.ndarray | None] | None = None
    _last: tuple[InfoSet, np.ndarray | None, int] | None = None

    def forget(self) -> None:
        """A new hand: nothing seen yet."""
        self.points, self.broken, self._current, self._last = [], False, None, None

    def update(self, info: InfoSet, context: np.ndarray | None = None) -> None:
        """The seat decides at ``info`` (its table's information set; ``context`` the
        opponent seat's match context now, formats only): add what the opponent did since
        the seat's last decision."""
        if self._last is not None and not self.broken:
            previous, previous_context, action = self._last
            try:
                moves = moves_between(previous, action, info)
            except _Inconsistent:
                self.points, self.broken = [], True
            else:
                self.points += [OpponentPoint(g, 1 - previous.seat, a, previous_context) for g, a in moves]
        elif self._last is None and not self.points and info.phase == Phase.FIRST_UPCARD and info.opponent_passed:
            # The seat's first decision, the dealer's upcard offer: the other seat passed it first.
            game = info.sample(np.random.default_rng(0))
            opp = 1 - info.seat
            game.current_player, game.passed_upcard[opp] = opp, False
            game.forget_cached()
            self.points.append(OpponentPoint(game, opp, A.PASS, context))
        self._last = None
        self._current = (info, context)

    def note(self, action: int) -> None:
        """The move the seat made at its last :meth:`update`."""
        if self._current is not None:
            self._last = (*self._current, action)
            self._current = None


def past_hands(points: list[OpponentPoint], hand_now: int, rng: np.random.Generator) -> list[int]:
    """The opponent's hand at each point (in ``points``' order), walked back from
    ``hand_now`` (module docstring); a stock draw's card is drawn from ``rng``."""
    picked = 0
    picked_before = []
    for p in points:  # cards it visibly held before each point: its pile takes so far
        picked_before.append(picked)
        if p.action == A.TAKE_DISCARD:
            picked |= 1 << p.game.discard_pile[-1]
    hands = [0] * len(points)
    hand = hand_now
    for i in range(len(points) - 1, -1, -1):
        action = points[i].action
        if A.DISCARD <= action < A.KNOCK:
            hand |= 1 << (action - A.DISCARD)
        elif action == A.TAKE_DISCARD:
            hand &= ~(1 << points[i].game.discard_pile[-1])
        elif action == A.DRAW_STOCK:
            options = [c for c in range(52) if (hand & ~picked_before[i]) >> c & 1]
            hand &= ~(1 << options[int(rng.integers(len(options)))])
        hands[i] = hand
    return hands


def tempered_weights(log_likelihoods: np.ndarray | list[float], temperature: float = 1.0) -> np.ndarray:
    """Normalised weights proportional to ``exp(log_likelihood / temperature)``, computed
    from the largest so that none overflows: the one tempering that resampling, the
    weighted search and :mod:`eval.inference_quality` share."""
    z = np.asarray(log_likelihoods, dtype=np.float64) / temperature
    w = np.exp(z - z.max())
    return w / w.sum()


class WorldInference:
    """Resamples worlds by the likelihood of the opponent's past decisions under ``model``
    (module docstring). ``model``: a batched agent; one with ``probabilities`` (a policy)
    gives the probability of each move, any other (e.g. the Expert) is taken as choosing
    its move (probability 1, else 0). Each probability is mixed with ``epsilon`` of a
    uniform legal choice; the log-likelihood is divided by ``temperature``; only the
    ``max_points`` most recent decisions count (they carry the most; each costs a row of
    the forward per world). ``moves_only=True`` takes a policy as choosing its move too (its
    ``act``: the most likely move of a deterministic policy, as ``ppo:`` plays), the exact
    model of a deterministic opponent."""

    def __init__(self, model: Any, epsilon: float = 0.05, temperature: float = 1.0, max_points: int = 16,
                 moves_only: bool = False):
        if not 0 < epsilon <= 1:
            raise ValueError(f"epsilon must be in (0, 1], got {epsilon!r}")
        if not (temperature > 0 and np.isfinite(temperature)):
            raise ValueError(f"the inference temperature must be a finite number > 0, got {temperature!r}")
        if max_points < 1:
            raise ValueError(f"max_points must be >= 1, got {max_points}")
        self.model = model
        self.epsilon = epsilon
        self.temperature = temperature
        self.max_points = max_points
        self.moves_only = moves_only

    def log_likelihoods(self, points: list[OpponentPoint], hands_now: list[int],
                        rng: np.random.Generator) -> np.ndarray:
        """float [W]: log P(the opponent's moves at ``points`` | its hand now is
        ``hands_now[w]``) under the model (0 for every world when there is no point)."""
        points = points[-self.max_points:]
        if not points or not hands_now:
            return np.zeros(len(hands_now))
        rows, masks = [], []
        for hand_now in hands_now:
            for point, hand in zip(points, past_hands(points, hand_now, rng), strict=True):
                game = point.game
                game.hands[point.player] = hand
                game.forget_cached()  # the caches were the stand-in hand's
                seen = observe(game, point.player)
                vec = seen["observation"]
                if point.context is not None:  # a format: the table part, then the seat's context
                    vec = np.concatenate([vec[:context_start(game.rules.columns)], point.context])
                rows.append(vec)
                masks.append(seen["action_mask"])
        x, m = np.stack(rows), np.stack(masks)
        actions = np.tile([p.action for p in points], len(hands_now))
        if hasattr(self.model, "probabilities") and not self.moves_only:
            p = self.model.probabilities(x, m)[np.arange(len(actions)), actions].astype(np.float64)
        else:
            p = (np.asarray(self.model.act(x, m)) == actions).astype(np.float64)
        legal = m.sum(axis=1)
        p = (1 - self.epsilon) * p + self.epsilon / legal
        return np.log(p).reshape(len(hands_now), len(points)).sum(axis=1)

    def resample(self, log_likelihoods: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` indices drawn by systematic resampling with weights proportional to
        ``exp(log_likelihood / temperature)`` (the kept worlds count equally)."""
        cum = np.cumsum(tempered_weights(log_likelihoods, self.temperature))
        cum[-1] = 1.0
        return np.searchsorted(cum, (rng.random() + np.arange(n)) / n, side="right")
