"""Agents that act on a whole batch of observations at once: ``act(obs[N, 394], masks[N, 108])``.

Why: the batched engine (:mod:`hgin_env.batch`) produces thousands of observations per
call; an opponent that answers them one Python call at a time would set the pace again.
Random and Simple are a few numpy operations over the batch; the Expert is
:class:`BatchedExpert` (:mod:`agents.batched_expert`, the scalar Expert's decisions in
numpy); a PPO snapshot is one torch forward pass; agents without a batched form (search)
are run row by row through :class:`RowByRow`, which gives them exactly the observation
dicts they always see.

Every agent reads only the observation (through :class:`hgin_env.observation.ObservationLayout`)
and the legal-action mask, like the scalar agents; :func:`agents.spec.make_batched_agent` builds
one from the same specs as :func:`agents.spec.make_agent`.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from hgin_env import actions as A
from hgin_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from hgin_env.codes import PHASE_DISCARD
from hgin_env.compiled import resolve_engine
from hgin_env.observation import observation_dict

from .base import SeededAgent
from .batched_expert import BatchedExpert
from .spec import make_batched_agent, register_batched, register_row_by_row  # noqa: F401  (re-exported)

__all__ = ["BatchedAgent", "BatchedExpert", "BatchedPolicy", "BatchedRandom", "BatchedSimple", "RowByRow",
           "make_batched_agent", "most_likely_moves", "uniform_choice"]


class BatchedAgent(Protocol):
    """``agent.act(observations, masks) -> int64 actions``; ``reset(seed)`` re-seeds."""

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray: ...

    def reset(self, seed: int | None = None) -> None: ...


class _Seeded(SeededAgent):
    """A seeded generator and the layout read (any format's: ``layout=``, or a duel's by
    ``columns``), as the scalar agents take them."""


def uniform_choice(rng: np.random.Generator, allowed: np.ndarray) -> np.ndarray:
    """One index per row, uniform over the row's True entries (each row needs one)."""
    n, width = allowed.shape
    flat = np.flatnonzero(allowed)  # row-major: each row's allowed columns, in order
    counts = np.bincount(flat // width, minlength=n)
    if (counts == 0).any():
        raise ValueError("a row has no legal action")
    first = np.cumsum(counts) - counts
    pick = (rng.random(n) * counts).astype(np.int64)  # 0 .. count-1
    return flat[first + pick] - np.arange(n) * width


class BatchedRandom(_Seeded):
    """Uniform over the legal actions of each row (as :class:`agents.random_agent.RandomAgent`)."""

    name = "random"

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return uniform_choice(self.rng, np.asarray(masks, dtype=bool))


class BatchedSimple(_Seeded):
    """Neller's simple player (:class:`agents.simple.SimpleAgent`) over a batch.

    Take the face-up card only if it melds with the hand; discard uniformly among the legal
    discards leaving the least deadwood (read from the observation's ``discard_deadwood``,
    exact since a 10-card hand never counts more than 98); knock whenever that card may
    knock. Decisions equal the scalar agent's wherever it has no random tie to break.

    ``engine`` picks the compiled loop (:func:`agents.expert_kernels.simple_act`, where
    numba is installed) or the numpy one below, its reference; both draw the same uniform
    numbers, so they choose the same ties.
    """

    name = "simple"

    def __init__(self, seed: int | None = None, columns: int | None = None, layout: Any = None,
                 engine: str | None = None):
        super().__init__(seed=seed, columns=columns, layout=layout)
        self.engine = resolve_engine(engine)
        self._offsets = None
        if self.engine == "numba":
            from .expert_kernels import slice_offsets

            self._offsets = slice_offsets(self.layout)

    def compiled_form(self) -> Any:
        """Its form for the compiled opponent loop (:mod:`agents.opponent_loop`), None on
        the numpy engine."""
        if self._offsets is None:
            return None
        from .opponent_loop import SIMPLE, CompiledForm

        return CompiledForm(SIMPLE, self, self.layout.size, self._offsets)

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self._offsets is not None:
            return self._act_compiled(observations, masks)
        return self._act_numpy(observations, masks)

    def _act_compiled(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        from .expert_kernels import simple_act

        obs = np.ascontiguousarray(observations)
        masks = np.ascontiguousarray(masks, dtype=bool)
        discarding = self.layout.get(obs, "phase").argmax(axis=1) == PHASE_DISCARD
        uniform = np.zeros(obs.shape[0])
        if discarding.any():  # one draw per discard row, as uniform_choice makes them
            uniform[discarding] = self.rng.random(int(discarding.sum()))
        out = np.empty(obs.shape[0], dtype=np.int64)
        simple_act(obs, masks, self._offsets, uniform, out)
        if (out < 0).any():
            raise ValueError("a row has no legal action")
        return out

    def _act_numpy(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations)
        masks = np.asarray(masks, dtype=bool)
        lay = self.layout
        n = obs.shape[0]
        out = np.empty(n, dtype=np.int64)
        phase = lay.get(obs, "phase").argmax(axis=1)
        drawing = np.flatnonzero(phase < PHASE_DISCARD)
        if drawing.size:
            m = masks[drawing]
            hand = lay.get(obs[drawing], "hand") > 0.5
            top_v = lay.get(obs[drawing], "discard_top") > 0.5
            has_top = top_v.any(axis=1)
            top = top_v.argmax(axis=1)
            take = m[:, A.TAKE_DISCARD] & has_top & _melds_with(top, hand)
            fallback = np.where(m[:, A.PASS], A.PASS, A.DRAW_STOCK)
            out[drawing] = np.where(take, A.TAKE_DISCARD, fallback)
        disc = np.flatnonzero(phase == PHASE_DISCARD)
        if disc.size:
            m = masks[disc]
            legal = m[:, A.DISCARD:A.DISCARD + NUM_CARDS]
            dd = lay.get(obs[disc], "discard_deadwood")
            dd = np.where(legal, dd, np.inf)
            best = legal & (dd == dd.min(axis=1, keepdims=True))
            card = uniform_choice(self.rng, best)
            knock = m[np.arange(disc.size), A.KNOCK + card]
            out[disc] = np.where(knock, A.KNOCK + card, A.DISCARD + card)
        return out


def _melds_with(top: np.ndarray, hand: np.ndarray) -> np.ndarray:
    """Vectorised :func:`agents.view.melds_with`: does card ``top[i]`` meld with ``hand[i]``."""
    n = top.shape[0]
    rows = np.arange(n)
    rank, suit = top % NUM_RANKS, top // NUM_RANKS
    grid = hand.reshape(n, NUM_SUITS, NUM_RANKS)
    same_rank = grid[rows, :, rank].sum(axis=1) - grid[rows, suit, rank]
    padded = np.zeros((n, NUM_RANKS + 4), dtype=bool)
    padded[:, 2:-2] = grid[rows, suit]
    w = padded[rows[:, None], rank[:, None] + np.arange(5)]  # ranks r-2 .. r+2
    run = (w[:, 0] & w[:, 1]) | (w[:, 1] & w[:, 3]) | (w[:, 3] & w[:, 4])
    return (same_rank >= 2) | run


class RowByRow:
    """Any scalar agent (``agent(obs_dict) -> action``) behind the batched interface.

    The agent sees the usual ``{"observation", "action_mask"}`` dicts, one row at a time.
    """

    def __init__(self, agent: Any):
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)

    def reset(self, seed: int | None = None) -> None:
        reset = getattr(self.agent, "reset", None)
        if reset is not None:
            reset(seed=seed)

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks8 = np.asarray(masks).astype(np.int8)
        return np.array([int(self.agent(observation_dict(o, m)))
                         for o, m in zip(observations, masks8, strict=True)], dtype=np.int64)


#: Kind boundaries of the action ids (:data:`hgin_env.actions.KIND_STARTS`).
_KIND_STARTS = np.array(A.KIND_STARTS)
_KIND_OF: dict[int, np.ndarray] = {}


def most_likely_moves(probs: np.ndarray) -> np.ndarray:
    """Vectorised :func:`agents.ppo.most_likely_move`: the kind of move with the most
    probability, then its most likely action (first one on ties, as the scalar version)."""
    kind = np.add.reduceat(probs, _KIND_STARTS, axis=1).argmax(axis=1)
    inside = _kind_of(probs.shape[1])[None, :] == kind[:, None]
    return np.where(inside, probs, -1.0).argmax(axis=1)


def _kind_of(width: int) -> np.ndarray:
    """Each action id's kind of move (made once per width: a search asks every ply)."""
    if width not in _KIND_OF:
        _KIND_OF[width] = np.searchsorted(_KIND_STARTS, np.arange(width), side="right") - 1
    return _KIND_OF[width]


def policy_probabilities(policy: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A MaskablePPO policy's masked move probabilities, float32 [N, actions], as
    ``policy.get_distribution(obs, action_masks=masks).distribution.probs`` gives them (the
    same floats): the actor's forward pass, then :func:`masked_probabilities`. Every PPO
    agent reads its probabilities here, one observation or a batch; a policy asked often
    runs both from one traced graph (:mod:`agents.traced_forward`: the same operations,
    the same floats, about a third less time per call)."""
    import torch

    from .traced_forward import TRACED

    with torch.no_grad():
        # Straight to a tensor (not policy.obs_to_tensor, which checks the shape against the
        # model's space: wider than the observation for a privileged critic's policy).
        obs_t = torch.as_tensor(np.asarray(observations, dtype=np.float32), device=policy.device)
        legal = torch.as_tensor(np.asarray(masks, dtype=bool), device=obs_t.device)
        probs = TRACED.probabilities(policy, obs_t, legal) if legal.dim() == 2 else None
        if probs is None:
            probs = masked_probabilities(actor_logits(policy, obs_t), masks)
        return probs.cpu().numpy()


def actor_logits(policy: Any, observations: Any) -> Any:
    """A MaskablePPO policy's actor logits (unmasked) on a float32 tensor of observations:
    the forward pass of ``policy.get_distribution``, alone (:func:`policy_probabilities`)
    or with other policies' weights stacked (:mod:`agents.policy_stack`)."""
    from stable_baselines3.common.policies import BaseModel

    features = BaseModel.extract_features(policy, observations, policy.pi_features_extractor)
    return policy.action_net(policy.mlp_extractor.forward_actor(features))


def masked_probabilities(logits: Any, masks: np.ndarray) -> Any:
    """Softmax of the actor's ``logits`` over the legal moves (``masks``, bool, reshaped to
    the logits' shape), computed as sb3_contrib's ``MaskableCategorical`` computes its
    ``probs``: :func:`agents.traced_forward.masked_softmax` (``tests/test_batched_agents.py``
    compares them bit for bit)."""
    import torch

    from .traced_forward import masked_softmax

    legal = torch.as_tensor(np.asarray(masks, dtype=bool), device=logits.device).reshape(logits.shape)
    return masked_softmax(logits, legal)


class BatchedPolicy:
    """A MaskablePPO model acting on a batch in one torch forward pass.

    ``deterministic`` plays :func:`most_likely_moves` (as :class:`agents.ppo.PPOAgent`),
    else samples the masked distribution with the agent's own generator.
    """

    name = "ppo"

    def __init__(self, model: Any, deterministic: bool = True, seed: int | None = None):
        self.model = model
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masked move probabilities, float32 [N, actions]: the actor's forward pass of
        ``policy.get_distribution`` and :func:`masked_probabilities` (the same floats as the
        distribution's ``probs``, without building its three torch distributions: at the
        small batches of a search that was most of a ply's time)."""
        return policy_probabilities(self.model.policy, observations, masks)

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.choose(self.probabilities(observations, masks), masks)

    @staticmethod
    def act_together(jobs: list[tuple[BatchedPolicy, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        """Several policies' :meth:`act` on their own rows (``(agent, observations, masks)``
        jobs), the policies of one architecture in one stacked forward
        (:mod:`agents.policy_stack`); each agent then chooses with its own generator, in
        the jobs' order. :meth:`hgin_env.batch.vector.LearnerBatch` asks the opponents of
        a pass this way (the league's snapshots: one forward, not one each). A subclass
        with probabilities of its own (an RLlib module's agent) acts alone."""
        from .policy_stack import STACKS

        stacked = [i for i, (agent, _, _) in enumerate(jobs)
                   if type(agent).probabilities is BatchedPolicy.probabilities]
        probs = dict(zip(stacked, STACKS.probabilities([(jobs[i][0].model.policy, *jobs[i][1:]) for i in stacked]),
                         strict=True))
        return [agent.choose(probs[i], masks) if i in probs else agent.act(obs, masks)
                for i, (agent, obs, masks) in enumerate(jobs)]

    def choose(self, probs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The moves :meth:`act` plays given the move probabilities it computed (for a
        caller that also needs the probabilities: one forward pass, not two)."""
        if self.deterministic:
            return most_likely_moves(probs)
        cum = np.cumsum(probs, axis=1)
        u = self.rng.random(probs.shape[0]) * cum[:, -1]
        choice = (cum <= u[:, None]).sum(axis=1)
        # Never an illegal action from rounding at the top of the cumulative sum.
        legal = np.asarray(masks, dtype=bool)
        bad = ~legal[np.arange(len(choice)), np.minimum(choice, probs.shape[1] - 1)]
        choice = np.minimum(choice, probs.shape[1] - 1)
        if bad.any():
            choice[bad] = np.where(legal[bad], probs[bad], -1.0).argmax(axis=1)
        return choice


# The batched forms of the built-in agents; ppo and rllib register theirs where they load.
register_batched("random", lambda arg, seed=None, layout=None: BatchedRandom(seed=seed, layout=layout))
register_batched("simple", lambda arg, seed=None, layout=None: BatchedSimple(seed=seed, layout=layout))
register_batched("expert", lambda arg, seed=None, layout=None: BatchedExpert(seed=seed, layout=layout))
register_row_by_row(RowByRow)
