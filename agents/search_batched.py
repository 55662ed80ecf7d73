"""The search's values on the batched engine, from the learned critic (``search:value=critic``).

Every (world, candidate) pair of a decision is one row of one :class:`~hgin_env.batch.BatchGame`
(its rows set to the sampled worlds, duel games or format match states, by
:func:`hgin_env.batch.load_matches`): the candidate is played in every row at once, then the
learned policy plays every row on, for every seat, one batched torch forward per ply, until
the searching seat is to act again (at most ``plies`` plies; the hand may end on the way,
and the next one is dealt from the world's seed, the same for every candidate of a world).
The row is then worth what the critic says of it, in the units it was trained in: the
rewards the seat received on the way plus the critic's value of the state reached. A
critic trained with privileged features (``--privileged-critic``) reads the world's hidden
facts, which a determinized world has: that is what such a critic was trained to value.

Whose value. The critic values a state for the seat whose observation it reads (in
training: the learner's, at its decisions; rewards are each seat's own, partners sharing
their team's). In the duel the reached state is valued for the seat to act, negated when
that is the opponent (two seats, zero-sum). In three-hand and partnership that sign trick
is wrong (three seats; a partner's value is mine, an opponent's is not simply its
negation once a third seat's row is on the sheet), so the critic reads the **searching
seat's own** observation and privileged features of the reached state
(:meth:`~hgin_env.batch.BatchGame.seat_observations`, ``seat_privileged``), whoever acts:
the value is the seat's by construction. Where the seat waits there (for its opponent, or
for the other partnership table), the critic reads an observation it never saw at a
decision (the other player's phase); measured on 500 states of the shipped format
policies played to a hand's (round's) end, that value agrees with the one read at the
seat's next decision after the policy plays on (rewards on the way plus the critic):
mean difference 0.00 (sd 0.09, correlation 0.96 in three-hand; 0.98 in partnership). A
three-hand seat **sitting out** the next hand is another matter: its view (no cards, no
phase) is one the critic never saw in training, and it reads about 0.6 lower (in hand
points / 100) than the seat's value at its next decision, a bias against losing a hand
(``python -m eval.sitter_value``, docs/runs/sitter54, on the search's own rows; 0.17 on
states of plain play). ``sitter`` picks what the search does with such a row:

- ``"play"``: it plays on, by the same policy, until the seat acts again (the other two
  play the hand; at most ``SITTER_PLIES`` more plies), and is valued there; the sitter gets
  no reward in that hand but a match end on the way counts. Those plies are more than half
  of a three-hand row's.
- ``"critic"``: it is valued at once, by the sitting view's critic value through a
  calibration measured for the policy file (``sitter_knots``: the played-on values' mean
  per quantile bin of the critic's, :data:`SITTER_CALIBRATIONS`).

A row whose **match ends** is worth the rewards it received, the match's end included,
and nothing more: the batch deals a finished match's row a new match, which is not the
searched match's future (in training, too, the episode ends there).

Horizons (``until``): ``"turn"`` stops at the seat's next decision; ``"hand"`` at the end
of the hand that scores: in three-hand the table's hand (the sitter's row is in the
sheet part of the observation the critic reads), in a partnership the **round** (both
tables' hands: the round's score is the team's reward; stopping at the seat's own table
would value a state where its table is over, never a training decision).

The reward mode and match bonus are the policy's training ones (the shipped policies':
``points`` with a match bonus of 1.0; docs/runs/psro4/psro6/args.json, and the format
policies' checkpoint metadata).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hgin_env.batch import BatchGame, MatchState, load_matches, privileged_size
from hgin_env.game import Hand
from hgin_env.rules import Rules

#: Where a row's play stops before the critic is asked: the searching seat's next decision
#: ("turn"), or the end of the hand ("hand": the hand's points are then the rollout's, and
#: the critic values the next deal; a partnership's round); ``plies`` bounds both.
HORIZONS = ("turn", "hand")
#: At most this many more plies for a three-hand row whose seat sits the next hand out (its
#: value is read at its next decision): a hand ends by the turn cap (100 turns) or sooner.
SITTER_PLIES = 400
#: How a three-hand row whose seat sits the next hand out is valued: played on to the seat's
#: next decision ("play"), or read from its sitting view, calibrated ("critic").
SITTER_VALUES = ("play", "critic")
#: The calibration of a sitting view's critic value per three-hand policy file (the first 16
#: hex digits of its SHA-256, :func:`agents.ppo.file_digest`): knots (x, y), the critic's
#: mean value and the played-on values' mean in each of its quantile bins over the search's
#: own rows, joined by straight lines and flat beyond the ends (``np.interp``); fitted by
#: ``python -m eval.sitter_value`` (docs/runs/sitter54).
SITTER_CALIBRATIONS: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    # agents/policies/hgin_ppo_three_hand.zip; docs/runs/sitter54/calibration.json (four probes, 31,328 rows)
    "37e09d6376914142": (
        (-0.9257, -0.8782, -0.7936, -0.6975, -0.6103, -0.5288, -0.4693,
         -0.4343, -0.4118, -0.3937, -0.3592, -0.2059, 0.1452, 0.2572),
        (-0.4937, -0.4435, -0.3640, -0.2710, -0.0879, 0.0727, 0.2003,
         0.2393, 0.2805, 0.3236, 0.4713, 0.6601, 0.8487, 0.8661),
    ),
}


def check_knots(knots: Any) -> None:
    """Refuse a calibration that is not two equally long sequences of at least two
    numbers, the first strictly increasing."""
    try:
        x, y = (np.asarray(k, dtype=np.float64) for k in knots)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a sitter calibration is knots (x, y), two sequences of numbers, got {knots!r}") from exc
    if x.ndim != 1 or x.shape != y.shape or x.size < 2 or not (np.diff(x) > 0).all() \
            or not np.isfinite(x).all() or not np.isfinite(y).all():
        raise ValueError("a sitter calibration's knots are two equally long sequences of >= 2 finite numbers, "
                         f"x strictly increasing; got x={x.tolist()}, y={y.tolist()}")


class CriticValues:
    """Values (world, candidate) pairs for one seat (module docstring). ``policy`` is a
    :class:`agents.batched.BatchedPolicy` over a MaskablePPO model whose critic values the
    states; ``plies`` bounds the policy's moves before the critic is asked."""

    def __init__(self, policy: Any, rules: Rules, plies: int = 8, reward: str = "points",
                 match_bonus: float = 1.0, engine: str | None = None, until: str = "turn",
                 sitter: str = "play", sitter_knots: tuple[Sequence[float], Sequence[float]] | None = None):
        if plies < 0:
            raise ValueError(f"plies must be >= 0, got {plies}")
        if until not in HORIZONS:
            raise ValueError(f"until must be one of {HORIZONS}, got {until!r}")
        if sitter not in SITTER_VALUES:
            raise ValueError(f"sitter must be one of {SITTER_VALUES}, got {sitter!r}")
        if sitter == "critic":
            check_knots(sitter_knots)
        self.until = until
        self.sitter = sitter
        #: The calibration of a sitting view's critic value (``sitter="critic"``): knots (x, y).
        self.sitter_knots = None if sitter_knots is None else tuple(np.asarray(k, dtype=np.float64)
                                                                    for k in sitter_knots)
        self.policy = policy
        self.net = policy.model.policy
        self.privileged = int(getattr(self.net, "privileged", 0))
        if self.privileged and self.privileged != privileged_size(rules.format):
            raise ValueError(f"the critic reads {self.privileged} privileged columns, the {rules.format} "
                             f"engine gives {privileged_size(rules.format)}")
        self.rules = rules
        self.plies = plies
        self.reward = reward
        self.match_bonus = match_bonus
        self.engine = engine
        self._batches: dict[int, BatchGame] = {}
        #: The opponents' model in the playouts (a batched agent; None: the policy plays every
        #: seat): it plays the opponent seats of the worlds a call marks (``opponent_rows``).
        self.opponent: Any = None
        self._opponent_rows: np.ndarray | None = None
        self._opponent_seats: np.ndarray | None = None
        #: Policy plies played per row in the last call (its mean; for the docs' figures).
        self.last_plies = 0.0

    def _batch(self, rows: int) -> BatchGame:
        """A batch of ``rows`` matches, made once per size and reloaded at every decision."""
        batch = self._batches.get(rows)
        if batch is None:
            batch = BatchGame(rows, rules=self.rules, seed=0, reward=self.reward, match_bonus=self.match_bonus,
                              engine=self.engine)
            self._batches[rows] = batch
        return batch

    def values(self, worlds: Sequence[Hand | MatchState], seeds: Sequence[int], candidates: Sequence[int],
               me: int, opponent_rows: np.ndarray | None = None) -> np.ndarray:
        """float [W, C]: the value to seat ``me`` of candidate ``c`` played in world ``w``
        (every candidate legal in every world: the worlds share the seat's information).
        A duel's worlds are hands (``Hand`` with the sampled scoreboard) and ``me`` their player; a format's are match
        states (:class:`~hgin_env.batch.MatchState`, or ``Match``) and ``me`` the match seat.
        ``opponent_rows`` (bool [W]): the worlds whose opponent seats (a partnership's other
        team, every other seat elsewhere) :attr:`opponent` plays; the policy plays the rest."""
        w, c = len(worlds), len(candidates)
        rows = w * c
        batch = self._batch(rows)
        self._opponent_rows = None
        if opponent_rows is not None and self.opponent is not None:
            self._opponent_rows = np.repeat(np.asarray(opponent_rows, dtype=bool), c)
            seats = np.arange(batch.num_players)
            self._opponent_seats = (seats % 2 != me % 2) if self.rules.format == "partnership" else seats != me
        load_matches(batch, np.arange(rows), [world for world in worlds for _ in range(c)], np.repeat(seeds, c))
        first = batch.step(np.tile(np.asarray(candidates, dtype=np.int64), w))
        total = first.rewards[:, me].astype(np.float64)
        # A row whose match ended is worth its rewards alone (its episode is over: the batch
        # deals it a new match, which is not this one's future), so it plays no further.
        live = ~first.match_over
        plies = np.zeros(rows, dtype=np.int64)
        actions = np.full(rows, -1, dtype=np.int64)
        # What ends the horizon "hand": the hand, or a partnership's round (its score is the reward).
        scored = (lambda step: step.round_over) if self.rules.format == "partnership" else \
            (lambda step: step.hand_over)
        playing = live & ~scored(first) if self.until == "hand" else live.copy()
        for _ in range(self.plies):
            going = np.flatnonzero(playing & (batch.current_seat != me)) if self.until == "turn" \
                else np.flatnonzero(playing)
            if going.size == 0:
                break
            step = self._policy_ply(batch, going, actions, total, plies, me)
            live &= ~step.match_over
            playing &= live & ~scored(step) if self.until == "hand" else live
        if self.rules.format == "three_hand":  # a sitter's value (module docstring)
            sitting = live & (batch.seat_tables(np.arange(rows), np.full(rows, me))[1] < 0)
            if self.sitter == "play":
                self._play_sitters(batch, sitting, live, actions, total, plies, me)
        self.last_plies = float(plies.mean())
        if self.rules.format != "duel":  # the seat's own view: its value whoever acts (module docstring)
            later = self.critic_of(batch, me)
            if self.rules.format == "three_hand" and self.sitter == "critic":
                later[sitting] = np.interp(later[sitting], *self.sitter_knots)
            return (total + np.where(live, later, 0.0)).reshape(w, c)
        sign = np.where(batch.current_seat == me, 1.0, -1.0)
        return (total + np.where(live, sign * self.critic(batch), 0.0)).reshape(w, c)

    def _play_sitters(self, batch: BatchGame, sitting: np.ndarray, live: np.ndarray, actions: np.ndarray,
                      total: np.ndarray, plies: np.ndarray, me: int) -> None:
        """Plays the ``sitting`` rows on by the policy until seat ``me`` acts again (the other
        two play the hand it sits out; at most :data:`SITTER_PLIES`), or their match ends
        (``live`` is cleared there)."""
        sitting = sitting.copy()
        for _ in range(SITTER_PLIES):
            going = np.flatnonzero(sitting)
            if going.size == 0:
                break
            step = self._policy_ply(batch, going, actions, total, plies, me)
            live &= ~step.match_over
            sitting &= live & (batch.current_seat != me)

    def _policy_ply(self, batch: BatchGame, going: np.ndarray, actions: np.ndarray, total: np.ndarray,
                    plies: np.ndarray, me: int) -> Any:
        """One policy move in the rows ``going`` (one forward for all of them); the seat's
        rewards are added to ``total`` and the rows' ply counts to ``plies``."""
        obs, masks = batch.observations_of(going)
        actions.fill(-1)
        chosen = self.policy.act(obs, masks)
        if self._opponent_rows is not None:  # the opponents' own model where asked
            theirs = self._opponent_rows[going] & self._opponent_seats[batch.current_seat[going]]
            if theirs.any():
                chosen[theirs] = self.opponent.act(obs[theirs], masks[theirs])
        actions[going] = chosen
        step = batch.step(actions, checked=True)
        total += step.rewards[:, me]
        plies[going] += 1
        return step

    def seat_context(self, world: MatchState, seat: int) -> np.ndarray:
        """The match-context slices of ``seat``'s observation in a format ``world`` (public:
        the same in every world of an information set)."""
        from hgin_env.observation.layout import context_start

        batch = self._batch(1)
        load_matches(batch, np.arange(1), [world], [0])
        return batch.seat_observations(np.arange(1), np.array([seat]))[0, context_start(self.rules.columns):]

    def critic_of(self, batch: BatchGame, seat: int) -> np.ndarray:
        """float [N]: the critic's value of each match's state for ``seat``, read from that
        seat's own observation (and privileged features), whether it acts or not."""
        rows = np.arange(batch.n)
        seats = np.full(batch.n, seat, dtype=np.int64)
        x = batch.seat_observations(rows, seats)
        if self.privileged:
            x = np.concatenate([x, batch.seat_privileged(rows, seats)], axis=1)
        return self._predict(x)

    def critic(self, batch: BatchGame) -> np.ndarray:
        """float [N]: the critic's value of each match's state for its acting seat."""
        x = batch.observations()
        if self.privileged:
            x = np.concatenate([x, batch.privileged_observations()], axis=1)
        return self._predict(x)

    def _predict(self, x: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            return self.net.predict_values(torch.as_tensor(x)).numpy()[:, 0].astype(np.float64)
