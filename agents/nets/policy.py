"""A card-aware actor-critic for MaskablePPO.

Why: 104 of the 108 actions name a card (discard c, knock discarding c), and the
observation has per-card slices (in hand, discard pile, opponent picks, deadwood after
discarding c...). A plain MLP must learn the same "look at card c, act on card c" mapping
52 times over; here one small network scores every card from that card's own features,
a learned card embedding and a shared summary of the whole state, so what it learns about
one card transfers to all. The draw/take/pass/big-gin logits and the value come from the
shared summary. Offsets come from :class:`hgin_env.observation.ObservationLayout`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from hgin_env.observation import ObservationLayout

# The network itself is torch alone (RLlib builds it too); SB3's policy wraps it here.
from .card_net import (  # noqa: F401  (re-exported: agents.nets.policy.CardExtractor etc.)
    CARD_EMBEDDING,
    CARD_FEATURES,
    DERIVED_CARD_FEATURES,
    MASKED_LOGIT,
    RELATION_KINDS,
    RELATION_SETS,
    CardExtractor,
    CardHead,
)


def _probabilities(log_p: th.Tensor, mask: th.Tensor | None) -> th.Tensor:
    """exp(log_p), exactly 0 at the masked actions. The masked log-probabilities are about
    -1e8, and exp takes a slow path on such values (about 4x slower on CPU than on the
    legal ones), so they are exponentiated as 0 and zeroed after: the same numbers."""
    if mask is None:
        return log_p.exp()
    return log_p.masked_fill(~mask, 0.0).exp().masked_fill_(~mask, 0.0)


class CardAwarePolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with :class:`CardExtractor` and :class:`CardHead`.

    ``columns`` and ``format`` (policy_kwargs) select the observation layout
    (``ObservationLayout(columns, format)``: 3 columns for Hollywood profiles; the duel's,
    or a three-hand or partnership layout, whose format slices the trunks read with the rest).
    ``hidden``/``summary`` size the actor and critic trunks, ``card_hidden`` the per-card
    scorer (the defaults are the imitation policy ``hgin_ppo.zip``'s; ``train.ppo`` picks
    smaller ones for 2-core training, as the shipped policy has, see its docstring).
    ``relations=True`` gives the per-card scorer each card's meld partners
    (:class:`CardExtractor`); checkpoints without it load unchanged.
    ``knock_bound=b > 0`` bounds each card's knock logit to within ``b`` of its discard
    logit (``discard + b·tanh((knock − discard)/b)``): whenever the policy may knock it
    still plays on with probability at least ``1/(1 + e^b)``, so it keeps sampling the
    waiting game (gin, undercuts) that an early habit of knocking at once would stop it
    from ever trying. Whether knocking with a card beats discarding it keeps its sign.

    ``privileged=P > 0`` is a privileged critic (PerfectDou's "perfect training, imperfect
    execution"; Suphx's oracle): the network's input is the observation followed by P
    columns of hidden facts (``train.envs.BatchedVecEnv(privileged=True)``), which only the
    value network reads. The actor slices the observation columns off first, so its output
    does not depend on the privileged ones, and the saved policy plays from the ordinary
    observation (``agents.ppo`` feeds it alone). ``shared_trunk=True`` computes one trunk
    for both heads (the critic adds a small layer over the actor's summary and the
    privileged columns): about half the FLOPs per sample of two trunks.
    """

    def __init__(self, *args, columns: int = 3, hidden: int = 256, summary: int = 128,
                 card_hidden: int = 64, relations: bool = False, knock_bound: float = 0.0,
                 privileged: int = 0, shared_trunk: bool = False, format: str = "duel", **kwargs):
        self.layout = ObservationLayout(columns, format)
        self.columns = columns
        self.format = format
        self.sizes = {"hidden": hidden, "summary": summary, "card_hidden": card_hidden}
        self.relations = relations
        self.knock_bound = float(knock_bound)
        self.privileged = int(privileged)
        self.shared_trunk = bool(shared_trunk)
        super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------ the training path
    # SB3's masked distribution builds two Categoricals per call (a log-sum-exp for the raw
    # logits, another for the masked ones, argument checks each time); PPO's rollouts and
    # updates need only the masked log-probabilities, computed once. Same numbers (masked
    # logits at -1e8, log-softmax, entropy over the legal actions); with the argument checks
    # off it makes a whole run against Simple 1.15x faster (docs/learning.md).
    # ``get_distribution`` (agents, evaluation) stays SB3's.
    #: The masked logits from the per-card scorer run on the legal cards' rows alone
    #: (``CardHead(latent, mask)``: the same function at about a third of the scorer's
    #: cost, the numbers equal to float rounding); False runs it on all 52 cards and masks
    #: after, as the code before did: weights bit-identical to that code's after any run
    #: (docs/learning.md "A leaner update"). The agents' and evaluations' paths
    #: (``get_distribution``, ``CardNet.logits``) always score all 52 cards.
    legal_cards_only = True
    #: The trunks' first layers from the observation's nonzero entries
    #: (``CardExtractor.forward(sparse=True)``, :mod:`agents.nets.sparse_input`: the same
    #: function at about a fifth of the dense product's cost on the CPU, equal to float
    #: rounding), in rollouts and updates; False: ``nn.Linear``'s dense product, as the code
    #: before (with ``legal_cards_only = False``, weights bit-identical to it). Agents and
    #: evaluations (``get_distribution``, ``CardNet.logits``) always take the dense one.
    sparse_input = True

    def _masked_log_probs(self, latent_pi: th.Tensor, action_masks) -> tuple[th.Tensor, th.Tensor | None]:
        if action_masks is None:
            return th.log_softmax(self.action_net(latent_pi), dim=-1), None
        mask = th.as_tensor(action_masks, dtype=th.bool, device=latent_pi.device).reshape(latent_pi.shape[0], -1)
        if self.legal_cards_only:
            return th.log_softmax(self.action_net(latent_pi, mask), dim=-1), mask
        return th.log_softmax(self.action_net(latent_pi).masked_fill(~mask, MASKED_LOGIT), dim=-1), mask

    def forward(self, obs: th.Tensor, deterministic: bool = False,
                action_masks=None) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs), sparse=self.sparse_input)
        values = self.value_net(latent_vf)
        log_p, mask = self._masked_log_probs(latent_pi, action_masks)
        if deterministic:
            actions = log_p.argmax(dim=-1)
        else:
            actions = th.multinomial(_probabilities(log_p, mask), 1).squeeze(1)
        return actions, values, log_p.gather(1, actions[:, None]).squeeze(1)

    def evaluate_actions(self, obs: th.Tensor, actions: th.Tensor,
                         action_masks=None) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs), sparse=self.sparse_input)
        log_p, mask = self._masked_log_probs(latent_pi, action_masks)
        log_prob = log_p.gather(1, actions.long().reshape(-1, 1)).squeeze(1)
        if mask is not None:  # p log p = 0 at the masked actions, without exp(-1e8) (see _probabilities)
            log_p = log_p.masked_fill(~mask, 0.0)
        p_log_p = log_p.exp() * log_p
        return self.value_net(latent_vf), log_prob, -p_log_p.sum(dim=-1)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = CardExtractor(self.features_dim, self.layout, hidden=self.sizes["hidden"],
                                           summary=self.sizes["summary"], relations=self.relations,
                                           privileged=self.privileged, shared_trunk=self.shared_trunk)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = CardHead(self.mlp_extractor.num_card_features, self.mlp_extractor.summary_dim,
                                   hidden=self.sizes["card_hidden"], knock_bound=self.knock_bound)
        if self.ortho_init:
            self.action_net.card_mlp[-1].apply(lambda m: self.init_weights(m, gain=0.01))
            self.action_net.global_logits.apply(lambda m: self.init_weights(m, gain=0.01))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data["columns"] = self.columns
        if self.format != "duel":  # absent in the duel's checkpoints (from before the formats)
            data["format"] = self.format
        data.update(self.sizes)
        if self.relations:  # absent (False) in checkpoints from before the option
            data["relations"] = True
        if self.knock_bound:  # likewise (0: unbounded)
            data["knock_bound"] = self.knock_bound
        if self.privileged:  # likewise (0: the critic sees the observation only)
            data["privileged"] = self.privileged
        if self.shared_trunk:  # likewise (False: separate actor and critic trunks)
            data["shared_trunk"] = True
        return data


#: The critic's own parameters: its trunk (after the shared one, if any) and its value head.
CRITIC_PARAMETERS = ("mlp_extractor.critic_trunk.", "value_net.")


def load_start_weights(policy: CardAwarePolicy | MaskableActorCriticPolicy,
                       start: MaskableActorCriticPolicy, knock_start_gap: float | None = None,
                       critic: bool = True) -> None:
    """Copy ``start``'s weights into ``policy`` (``train.ppo --init-from``).

    The same network loads as is. A card network without relation features loads into one
    with them (``relations=True``): the per-card scorer's new input columns start at zero,
    so the widened network plays exactly as ``start`` did and learns to use the new
    features from there. Into a network with ``knock_bound`` from one without, the knock
    outputs start as copies of the discard outputs (knocking with a card as likely as
    discarding it): a bound put on a network that learnt to knock at once would sit at its
    saturated end, where the tanh passes no gradient, and the policy could not learn to
    play on. ``knock_start_gap=g`` does the same for any start, with the knock outputs at the
    discard outputs + g before the bound: g < 0 starts a policy that mostly plays on and
    learns when to knock. Why that matters: from a policy that always knocks at once, a
    single step of playing on (then knocking next turn) is worse than knocking, so PPO's
    local improvement never reaches the waiting game; from one that plays on, the one-step
    comparison is the right one (knock early, play on for gin mid-hand, knock late).
    A duel network loads into a three-hand or partnership one (the same columns): the
    format layout is the duel's slice for slice, followed by the format's slices, and the
    format's privileged columns begin with the duel's. The trunks' first layers keep the
    duel's weights on the duel's columns and start at zero on the new ones, so the widened
    network plays a format seat exactly as the duel network plays the seat's own table, and
    learns the format's context (the sitting-out seat, the partner, the team sheet) from
    there (``format_input_columns``).
    Any other difference is refused, naming the first mismatch. ``critic=False`` copies
    the actor alone and leaves ``policy``'s critic (:data:`CRITIC_PARAMETERS`) as built, of
    whatever shape (``train.ppo --frozen-policy`` with a critic trunk of its own).
    """
    own, given = policy.state_dict(), start.state_dict()
    if not critic:
        own = {k: v for k, v in own.items() if not k.startswith(CRITIC_PARAMETERS)}
        given = {k: v for k, v in given.items() if not k.startswith(CRITIC_PARAMETERS)}
    if own.keys() != given.keys():
        raise ValueError(f"--init-from: the networks differ (parameters {sorted(own.keys() ^ given.keys())[:3]})")
    inputs = format_input_columns(policy, start)
    widened = {}
    for key, value in given.items():
        target = own[key]
        if target.shape == value.shape:
            widened[key] = value
            continue
        if key in inputs and target.shape[0] == value.shape[0] and int(inputs[key].max()) < target.shape[1]:
            grown = th.zeros_like(target)
            grown[:, inputs[key]] = value
            widened[key] = grown
            continue
        old_card_features = len(CARD_FEATURES) + len(DERIVED_CARD_FEATURES)
        extra = target.shape[1] - value.shape[1] if target.dim() == 2 else -1
        if not (key == "action_net.card_mlp.0.weight" and target.shape[0] == value.shape[0]
                and getattr(policy, "relations", False) and extra == len(RELATION_SETS) * len(RELATION_KINDS)):
            raise ValueError(f"--init-from: parameter {key} has shape {tuple(value.shape)}, "
                             f"this network's is {tuple(target.shape)}")
        grown = th.zeros_like(target)
        grown[:, :old_card_features] = value[:, :old_card_features]
        grown[:, old_card_features + extra:] = value[:, old_card_features:]
        widened[key] = grown
    bounded = getattr(policy, "knock_bound", 0.0)
    if knock_start_gap is not None and not bounded:
        raise ValueError("--knock-start-gap needs --knock-bound")
    if bounded and (knock_start_gap is not None or not getattr(start, "knock_bound", 0.0)):
        for name in ("weight", "bias"):
            key = f"action_net.card_mlp.{len(policy.action_net.card_mlp) - 1}.{name}"
            widened[key] = widened[key].clone()
            widened[key][1] = widened[key][0]
            if name == "bias" and knock_start_gap:
                widened[key][1] += knock_start_gap
    policy.load_state_dict(widened, strict=critic)


def freeze_actor(policy: CardAwarePolicy | MaskableActorCriticPolicy) -> int:
    """``train.ppo --frozen-policy``: only the critic learns. Every parameter outside the
    critic's own (:data:`CRITIC_PARAMETERS`; with ``shared_trunk`` the trunk it reads is the
    actor's, frozen too) stops taking gradients, so the optimizer never moves it and the
    policy's moves stay those it started with, bit for bit, while the value head learns
    the run's game (a duel network widened into a format values that format's states as
    duel states until then). Returns the number of weights left to learn."""
    learning = 0
    for name, parameter in policy.named_parameters():
        own = name.startswith(CRITIC_PARAMETERS)
        parameter.requires_grad_(own)
        learning += parameter.numel() if own else 0
    if not learning:
        raise ValueError("--frozen-policy: this network has no critic parameters of its own "
                         f"(none named {CRITIC_PARAMETERS})")
    return learning


def format_input_columns(policy: CardAwarePolicy | MaskableActorCriticPolicy,
                         start: MaskableActorCriticPolicy) -> dict[str, th.Tensor]:
    """For a duel ``start`` loading into a format ``policy`` (:func:`load_start_weights`):
    the first-layer weights whose input widens, each with the column of the format network
    that every input column of the duel network feeds. Empty when the layouts are the same,
    or when either is not a card network of the same columns."""
    own_layout, start_layout = getattr(policy, "layout", None), getattr(start, "layout", None)
    if own_layout is None or start_layout is None or own_layout == start_layout \
            or start_layout.format != "duel" or own_layout.columns != start_layout.columns:
        return {}
    duel, size = start_layout.size, own_layout.size
    # The duel's observation columns keep their offsets; its privileged columns (if any)
    # are the first of the format's, after the format's observation.
    observation = th.arange(duel)
    privileged = th.arange(size, size + start.privileged)
    columns = {"mlp_extractor.actor_trunk.0.weight": observation}
    if start.shared_trunk:  # the critic reads [actor summary, privileged columns]
        summary = start.sizes["summary"]
        columns["mlp_extractor.critic_trunk.0.weight"] = th.cat(
            [th.arange(summary), privileged - size + summary])
    else:  # the critic reads [observation, privileged columns]
        columns["mlp_extractor.critic_trunk.0.weight"] = th.cat([observation, privileged])
    return columns


#: The modules a checkpoint's card-aware policy class may be pickled under: here, and where
#: it lived before (checkpoints saved until December 2026 name ``train.policy``).
POLICY_MODULES = ("agents.nets.policy", "train.policy")


def load_model(path: str | Path, algorithm: Any = None, **kwargs: Any) -> Any:
    """``MaskablePPO.load(path, **kwargs)`` for this project's checkpoints: a card-aware
    policy is handed to SB3 as the class here (``custom_objects``) instead of unpickled by the
    module name it was saved under, so a checkpoint that names ``train.policy`` loads without
    importing the trainers (the agents sit below them). Other policies load as SB3 saved them.
    ``algorithm``: a subclass of MaskablePPO to load into (``train.pipeline.PipelinedPPO``:
    the checkpoints are the same)."""
    import json
    import zipfile

    from sb3_contrib import MaskablePPO

    custom = dict(kwargs.pop("custom_objects", None) or {})
    with zipfile.ZipFile(path) as archive:
        entry = json.loads(archive.read("data")).get("policy_class")
    if isinstance(entry, dict) and entry.get("__module__") in POLICY_MODULES \
            and "CardAwarePolicy." in str(entry.get("__init__", "")):
        custom.setdefault("policy_class", CardAwarePolicy)
    return (algorithm or MaskablePPO).load(str(path), custom_objects=custom, **kwargs)
