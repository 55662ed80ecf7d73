"""The opponents' moves of a :class:`hgin_env.batch.vector.LearnerBatch` in one compiled call.

Why: a three-hand learner sits out every hand it lost, so its match waits while the two
opponents play the whole hand, one small engine pass per decision. The Python loop
(``LearnerBatch._play_opponents``) pays for each pass an observation call, a grouping by
opponent, an agent call per opponent, a check and a ``BatchGame.step`` with a full-size
``StepResult``: about 65 passes per vector step in three-hand, 2.8 s of 3.7 s of rollouts
(docs/learning.md, "The formats' training speed"). Here those passes run in one njit call
(:func:`play_passes`): the waiting matches' observations and masks (the engine's
``table_views``), each opponent's decision (its own kernel, row by row), the engine's step
(``kernels.step_matches``), again, until every match waits for its learner or a hand ends.
A hand's end stays Python (``BatchGame.close_step``: the exact settle, the scalar sheet, the
next deal, the contexts), so the kernel returns for it and is called again.

Which agents: those with a compiled form (``agent.compiled_form()`` gives a
:class:`CompiledForm`): the batched Simple, the Expert and OpenSpiel's bot on the compiled
engine. A pool with any other agent (a policy, a league snapshot, the live learner, a
numpy-engine agent) keeps the Python loop. ``hgin_env`` imports nothing of ``agents``: the
learner batch reaches this module through the forms (:meth:`CompiledForm.make_loop`).

The same moves, exactly (``tests/test_opponent_loop.py`` replays both loops step by step):

* the passes are the Python loop's: the same waiting rows, in each pass the agents in the
  Python loop's order (the partner agent, then the pool's opponents by index), each over
  its rows in row order;
* Simple draws one uniform per discard row from its own generator, in that order. The
  kernel reads them from a buffer drawn ahead from the agent's generator (whose state is
  then put back), and afterwards the agent's generator draws exactly the uniforms the
  passes used: numpy's ``random(k)`` then ``random(m)`` is ``random(k + m)``, so the
  generator ends where the Python loop leaves it (checkpoints save it);
* a row the kernel would not decide as the Python loop does (an agent's error, an illegal
  or missing move, a knock limit the bot refuses, a buffer running short) stops the kernel
  *before* that pass moves anything; the Python loop then plays on from there, raising
  what it raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from hgin_env import actions as A
from hgin_env.batch.kernels import step_matches, table_views

from .expert_kernels import PARAMS, SLICES, expert_row, simple_discards, simple_row
from .openspiel_bot_kernels import bot_read_row, bot_row

#: The kinds of compiled agents (:attr:`CompiledForm.kind`).
SIMPLE, EXPERT, BOT = 0, 1, 2
#: What :func:`play_passes` returns: every match waits for its learner; a hand ended in
#: the last pass (the caller closes the step and calls again); a Simple's uniforms ran
#: short before a pass (call again with a new buffer); a pass the kernel leaves to Python.
WAITING, HAND_ENDED, REFILL, TO_PYTHON = 0, 1, 2, 3
_OFFSETS = len(SLICES)  # the widest offsets row (the Expert's and Simple's slices)
_PARAMS = len(PARAMS)  # the widest parameter row (the Expert's)
_NUM_ACTIONS = A.NUM_ACTIONS


@dataclass(eq=False)
class CompiledForm:
    """What the compiled loop needs of one batched agent: its ``kind``, the starts of the
    observation slices its kernel reads (``offsets``), its parameters as floats
    (``params``: the Expert's; the bot's knock scale and highest knock limit), the sheet's
    ``columns`` (the Expert), the observation ``size`` its layout reads, and the ``agent``
    (Simple's generator, the bot's fallback count)."""

    kind: int
    agent: Any
    size: int
    offsets: np.ndarray
    params: np.ndarray = field(default_factory=lambda: np.zeros(0))
    columns: int = 0

    @staticmethod
    def make_loop(forms: list[CompiledForm], n: int, tables: int, partner_agent: bool,
                  learner_partner: bool) -> OpponentLoop:
        """The loop over these forms (``forms[0]`` the partner's when ``partner_agent``,
        then the pool's opponents in order) for ``n`` matches at ``tables`` tables."""
        return OpponentLoop(forms, n, tables, partner_agent, learner_partner)


class OpponentLoop:
    """The compiled opponents' passes for one learner batch and one opponent pool (its
    buffers, the forms as arrays); :meth:`run` is one kernel call."""

    WAITING, HAND_ENDED, REFILL, TO_PYTHON = WAITING, HAND_ENDED, REFILL, TO_PYTHON

    def __init__(self, forms: list[CompiledForm], n: int, tables: int, partner_agent: bool, learner_partner: bool):
        self.forms = forms
        self.partner_agent = partner_agent
        self.learner_partner = learner_partner
        jobs = len(forms)
        self.kinds = np.array([f.kind for f in forms], dtype=np.int64)
        self.offsets = np.zeros((jobs, _OFFSETS), dtype=np.int64)
        self.params = np.zeros((jobs, _PARAMS), dtype=np.float64)
        for j, f in enumerate(forms):
            self.offsets[j, :f.offsets.size] = f.offsets
            self.params[j, :f.params.size] = f.params
        self.columns = np.array([f.columns for f in forms], dtype=np.int64)
        # One uniform stream per Simple object (the same object twice in the pool draws from
        # one generator, in the Python loop's order).
        simples: list[Any] = []
        self.streams = np.full(jobs, -1, dtype=np.int64)
        for j, f in enumerate(forms):
            if f.kind == SIMPLE:
                if not any(a is f.agent for a in simples):
                    simples.append(f.agent)
                self.streams[j] = next(s for s, a in enumerate(simples) if a is f.agent)
        self.simples = simples
        # Room for four full passes per call: a pass needs at most one uniform per match.
        self.uniforms = np.zeros((len(simples), 4 * n), dtype=np.float64)
        self.used = np.zeros(len(simples), dtype=np.int64)
        self.fallbacks = np.zeros(jobs, dtype=np.int64)
        self.table_actions = np.full(tables, -1, dtype=np.int64)
        self.counts = np.zeros(2, dtype=np.int64)

    def run(self, batch: Any, seat: np.ndarray, opponent_index: np.ndarray) -> tuple[int, int, list[int]]:
        """Play the opponents' passes of ``batch`` (a ``BatchGame`` on the compiled engine;
        ``seat`` and ``opponent_index`` per match, the learner batch's): returns (status,
        passes played, the tables whose hand ended in the last pass). The caller closes
        the step when passes were played (``batch.close_step(ended, self.table_actions)``)."""
        for s, agent in enumerate(self.simples):
            rng = agent.rng  # read each call: reset(seed) gives the agent a new generator
            saved = rng.bit_generator.state
            self.uniforms[s] = rng.random(self.uniforms.shape[1])
            rng.bit_generator.state = saved
        self.used[:] = 0
        self.fallbacks[:] = 0
        engine = batch.step_kernel_arguments()
        status = play_passes(
            *engine, seat, opponent_index, self.learner_partner, self.partner_agent, self.kinds, self.offsets,
            self.params, self.columns, self.streams, self.uniforms, self.used, self.fallbacks, self.table_actions,
            self.counts)
        # The generators draw what the passes used, so they end where the Python loop's would.
        for s, agent in enumerate(self.simples):
            if self.used[s]:
                agent.rng.random(int(self.used[s]))
        for j in np.flatnonzero(self.fallbacks):
            self.forms[j].agent.fallbacks += int(self.fallbacks[j])
        played, n_ended = int(self.counts[0]), int(self.counts[1])
        ended = engine[2]  # the batch's buffer of the tables whose hand ended
        return int(status), played, ended[:n_ended].tolist()


def warm_opponent_loop() -> float:
    """Compile the loop (or load it from numba's cache) before anything is timed, as
    :func:`hgin_env.batch.engines.warm_kernels` does the engine's; returns the seconds. One
    specialisation serves every format and pool (the agents are dispatched by their kind)."""
    import time

    from hgin_env.batch.vector import LearnerBatch

    from .batched import BatchedSimple

    t0 = time.perf_counter()
    batch = LearnerBatch(2, [BatchedSimple(seed=0)], seed=0)
    batch.step(np.argmax(batch.action_masks(), axis=1))
    return time.perf_counter() - t0


@njit(cache=True)
def _decide(kind, o, m, off, params, columns, stream, uniforms, used, prob, error, fallbacks) -> int:
    """One row's move by a compiled agent (``kind``), as its ``act`` decides it; -1 where
    the kernel leaves the row to Python (``act`` would raise, or the bot refuses the knock
    limit). A Simple discard row takes the next uniform of its ``stream``."""
    if kind == SIMPLE:
        u = 0.0
        if simple_discards(o, off):
            u = uniforms[stream, used[stream]]
            used[stream] += 1
        return simple_row(o, m, off, u)
    if kind == EXPERT:
        move = expert_row(o, m, off, columns, params, prob, error, 0)
        if error[0]:
            error[0] = 0
            return -1
        return move
    hand, top, phase, knock = bot_read_row(o, off, params[0])
    if knock > params[1]:  # BatchedOpenSpielBot.read raises
        return -1
    return bot_row(hand, top, phase, knock, m, fallbacks)


@njit(cache=True)
def play_passes(st, step_rules, ended, settled, obs_offsets, big_gin, context, current_seat, acting_table,
                table_seats, duel, partnership, size, seat, opponent_index, learner_partner, partner_agent, kinds,
                offsets, params, columns, streams, uniforms, used, fallbacks, table_actions, counts) -> int:
    """The Python loop's passes (``LearnerBatch._play_opponents``) until every match waits for
    its learner (``WAITING``) or a pass ended a hand (``HAND_ENDED``, its tables in
    ``ended[:counts[1]]``); ``counts[0]`` the passes played. ``REFILL`` / ``TO_PYTHON``: the
    next pass was not started (the uniforms would run short / a row is Python's)."""
    n = seat.shape[0]
    counts[0] = 0
    counts[1] = 0
    rows = np.empty(n, dtype=np.int64)
    tables = np.empty(n, dtype=np.int64)
    job = np.empty(n, dtype=np.int64)
    moves = np.empty(n, dtype=np.int64)
    prob = np.empty(52)
    error = np.zeros(3, dtype=np.int64)
    pass_used = np.empty_like(used)
    pass_fallbacks = np.zeros((kinds.shape[0], 1), dtype=np.int64)
    while True:
        # The matches whose learner does not act (its seat, or its partner's when it plays both).
        k = 0
        for i in range(n):
            s = current_seat[i]
            if s != seat[i] and not (learner_partner and s == (seat[i] + 2) % 4):
                rows[k] = i
                tables[k] = acting_table[i]  # i itself in a duel and three-hand
                # The partner agent acts at the learner's partner seat, the match's opponent elsewhere.
                job[k] = 0 if partner_agent and s == (seat[i] + 2) % 4 else partner_agent + opponent_index[i]
                k += 1
        if k == 0:
            return WAITING
        for stream in range(used.shape[0]):
            if used[stream] + k > uniforms.shape[1]:
                return REFILL
        obs = np.empty((k, size), dtype=np.float32)
        masks = np.empty((k, _NUM_ACTIONS), dtype=np.bool_)
        table_views(obs, masks, tables[:k], rows[:k], current_seat, context, obs_offsets, st, big_gin)
        pass_used[:] = used
        pass_fallbacks[:] = 0
        # The Python loop asks the agents in job order, each over its rows in row order.
        for j in range(kinds.shape[0]):
            for r in range(k):
                if job[r] != j:
                    continue
                move = _decide(kinds[j], obs[r], masks[r], offsets[j], params[j], columns[j], streams[j], uniforms,
                               used, prob, error, pass_fallbacks[j])
                if move < 0 or move >= _NUM_ACTIONS or not masks[r, move]:
                    used[:] = pass_used  # this pass is Python's: its draws are not spent
                    return TO_PYTHON
                moves[r] = move
        for j in range(kinds.shape[0]):
            fallbacks[j] += pass_fallbacks[j, 0]
        n_ended = step_matches(k, rows, tables, moves, table_actions, st, step_rules, ended, settled, current_seat,
                               acting_table, table_seats, duel, partnership)
        counts[0] += 1
        if n_ended:
            counts[1] = n_ended
            return HAND_ENDED
