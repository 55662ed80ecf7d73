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

import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from hgin_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from hgin_env.observation import ObservationLayout

#: Card slices fed to the per-card scorer, in this order.
CARD_FEATURES = ("hand", "discard_top", "discard_rest", "opponent_known", "opponent_discards",
                 "own_discards", "discard_deadwood")
#: Per-card features the extractor computes from ``discard_deadwood``.
DERIVED_CARD_FEATURES = ("discard_regret", "best_discard")
#: With ``relations=True``: for each card, how many cards of each set are its meld
#: partners of each kind (same rank; same suit one rank away; same suit two ranks away).
RELATION_SETS = ("hand", "unseen", "opponent_known", "opponent_discards", "pile")
RELATION_KINDS = ("same_rank", "run_1", "run_2")
CARD_EMBEDDING = 8


class CardExtractor(nn.Module):
    """Shared trunk: latent_pi = [per-card features, summary]; latent_vf = critic summary.

    Why ``relations``: whether a card is worth keeping depends on the cards around it (the
    Expert's edge over Simple is mostly its draw lookahead: 61% with it, 52% without, both
    knocking as soon as they may, 600 duplicate matches each), and a per-card scorer that
    sees only its own card's slices cannot tell a lone K from a K next to a Q and two unseen
    Js. The relation features count, for every card, its meld partners in the player's
    hand, among the unseen cards, in the opponent's known picks and discards and in the pile
    (sums of shifted copies of those sets on a suit-by-rank grid; nothing the player could
    not count itself).
    """

    def __init__(self, obs_dim: int, layout: ObservationLayout, hidden: int = 256, summary: int = 128,
                 relations: bool = False, privileged: int = 0, shared_trunk: bool = False):
        super().__init__()
        if obs_dim != layout.size + privileged:
            raise ValueError(f"the network's input has {obs_dim} columns; the {layout.format} layout has "
                             f"{layout.size} and the privileged critic {privileged}")
        # The actor reads the first ``actor_dim`` columns (the observation) and nothing else;
        # the critic may also read the ``privileged`` columns after them.
        self.actor_dim = layout.size
        self.privileged = privileged
        self.shared_trunk = shared_trunk
        self.card_slices = [layout.slice(name) for name in CARD_FEATURES]
        self.relations = relations
        if relations:
            self.set_slices = {name: layout.slice(name) for name in
                               ("hand", "discard_top", "discard_rest", "opponent_known", "opponent_discards")}
        self.actor_trunk = nn.Sequential(nn.Linear(self.actor_dim, hidden), nn.ReLU(),
                                         nn.Linear(hidden, summary), nn.ReLU())
        if shared_trunk:
            # The critic reads the actor's summary (and the privileged columns): one trunk
            # instead of two, about half the network's FLOPs per sample.
            self.critic_trunk = nn.Sequential(nn.Linear(summary + privileged, summary), nn.ReLU())
        else:
            self.critic_trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(),
                                              nn.Linear(hidden, summary), nn.ReLU())
        dd = layout.slice("discard_deadwood")
        self.dd_start, self.dd_stop = dd.start, dd.stop
        self.num_card_features = len(CARD_FEATURES) + len(DERIVED_CARD_FEATURES) + \
            (len(RELATION_SETS) * len(RELATION_KINDS) if relations else 0)
        self.summary_dim = summary
        self.latent_dim_pi = NUM_CARDS * self.num_card_features + summary
        self.latent_dim_vf = summary

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        obs = features[:, :self.actor_dim]
        trunk = self.actor_trunk(obs)  # computed once for both heads
        return self._actor_latent(obs, trunk), self._critic_latent(features, trunk)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        """The actor's latent from the observation columns alone (a wider input, holding the
        privileged columns, is cut to them: nothing hidden reaches the policy)."""
        obs = features[:, :self.actor_dim]
        return self._actor_latent(obs, self.actor_trunk(obs))

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        if self.shared_trunk:
            return self._critic_latent(features, self.actor_trunk(features[:, :self.actor_dim]))
        return self._critic_latent(features, None)

    def _critic_latent(self, features: th.Tensor, trunk: th.Tensor | None) -> th.Tensor:
        if not self.shared_trunk:
            return self.critic_trunk(features)
        if self.privileged:
            trunk = th.cat([trunk, features[:, self.actor_dim:]], dim=1)
        return self.critic_trunk(trunk)

    def _actor_latent(self, features: th.Tensor, trunk: th.Tensor) -> th.Tensor:
        return th.cat([self.per_card_features(features).flatten(1), trunk], dim=1)

    def per_card_features(self, features: th.Tensor) -> th.Tensor:
        """(B, 52, F): each card's own columns, the two derived features and the relation
        counts: a function of the observation alone, with no parameter (CardHead relies on
        it)."""
        # Slices stacked, not an index gather (several times slower on CPU).
        cards = th.stack([features[:, sl] for sl in self.card_slices], dim=2)
        # Deadwood after each discard relative to the best discard, in tens of points: the
        # raw slice differs by a few hundredths between a good and a ruinous discard.
        dd = features[:, self.dd_start:self.dd_stop]
        regret = (dd - dd.min(dim=1, keepdim=True).values) * 10.0
        derived = th.stack([regret.clamp(max=3.0), (regret < 1e-4).float() * (dd < 1.0).float()], dim=2)
        per_card = [cards, derived]
        if self.relations:
            per_card.append(self._relations(features))
        return th.cat(per_card, dim=2)

    def _relations(self, features: th.Tensor) -> th.Tensor:
        """(B, 52, 15): partners of each card (:func:`hgin_env.melds.meld_partners`), by set
        and kind, scaled to about [0, 1]. Counted on a (suit, rank) grid: the same rank in
        the other suits, and the same suit one and two ranks away (a sum of shifted copies:
        about 25x fewer operations than the 0/1 matrix product it replaces, same counts)."""
        sl = self.set_slices
        hand, known = features[:, sl["hand"]], features[:, sl["opponent_known"]]
        pile = features[:, sl["discard_top"]] + features[:, sl["discard_rest"]]
        unseen = (1.0 - hand - pile - known).clamp(min=0.0)
        batch = features.shape[0]
        sets = th.stack([hand, unseen, known, features[:, sl["opponent_discards"]], pile], dim=1)
        grid = sets.reshape(batch, len(RELATION_SETS), NUM_SUITS, NUM_RANKS)
        same_rank = grid.sum(dim=2, keepdim=True) - grid
        padded = nn.functional.pad(grid, (2, 2))  # rank r sits at r + 2
        run_1 = padded[..., 1:-3] + padded[..., 3:-1]
        run_2 = padded[..., :-4] + padded[..., 4:]
        counts = th.stack([same_rank, run_1, run_2], dim=2)  # (B, set, kind, suit, rank)
        counts = counts.reshape(batch, len(RELATION_SETS) * len(RELATION_KINDS), NUM_CARDS)
        return counts.transpose(1, 2) / 3.0


class CardHead(nn.Module):
    """Logits in action-id order: 52 discards, 52 knocks, then draw, take, pass, big gin."""

    def __init__(self, num_card_features: int, summary: int, hidden: int = 64, knock_bound: float = 0.0):
        super().__init__()
        self.num_card_features = num_card_features
        self.knock_bound = knock_bound
        self.embedding = nn.Embedding(NUM_CARDS, CARD_EMBEDDING)
        self.card_mlp = nn.Sequential(
            nn.Linear(num_card_features + CARD_EMBEDDING + summary, hidden), nn.ReLU(),
            nn.Linear(hidden, 2))
        self.global_logits = nn.Linear(summary, 4)
        self.register_buffer("card_ids", th.arange(NUM_CARDS), persistent=False)

    def forward(self, latent: th.Tensor) -> th.Tensor:
        batch = latent.shape[0]
        split = NUM_CARDS * self.num_card_features
        # The per-card block (CardExtractor.per_card_features) has no parameter before it, so
        # no gradient of the loss flows back into it: detached, the update skips the scorer's
        # input gradient and the latent's slicing in the backward pass (same gradients).
        cards = latent[:, :split].detach().reshape(batch, NUM_CARDS, self.num_card_features)
        summary = latent[:, split:]
        # The first layer of card_mlp on [card features, embedding, summary], split by
        # input block: the summary's share is computed once per state, not 52 times, and
        # the embedding's once per call (same weights and function, ~8x fewer FLOPs).
        first, rest = self.card_mlp[0], self.card_mlp[1:]
        f = self.num_card_features
        w_card, w_emb, w_ctx = first.weight[:, :f], first.weight[:, f:f + CARD_EMBEDDING], \
            first.weight[:, f + CARD_EMBEDDING:]
        per_emb = self.embedding(self.card_ids) @ w_emb.T + first.bias  # (52, hidden)
        per_state = summary @ w_ctx.T  # (B, hidden)
        hidden = cards @ w_card.T + per_emb.unsqueeze(0) + per_state.unsqueeze(1)
        per_card = rest(hidden)  # (B, 52, 2)
        discard, knock = per_card[:, :, 0], per_card[:, :, 1]
        if self.knock_bound:
            # Knock with c vs discard c, bounded: the policy keeps trying to play on.
            bound = self.knock_bound
            knock = discard + bound * th.tanh((knock - discard) / bound)
        return th.cat([discard, knock, self.global_logits(summary)], dim=1)


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
    def _masked_log_probs(self, latent_pi: th.Tensor, action_masks) -> tuple[th.Tensor, th.Tensor | None]:
        logits = self.action_net(latent_pi)
        if action_masks is None:
            return th.log_softmax(logits, dim=-1), None
        mask = th.as_tensor(action_masks, dtype=th.bool, device=logits.device).reshape(logits.shape)
        return th.log_softmax(logits.masked_fill(~mask, -1e8), dim=-1), mask

    def forward(self, obs: th.Tensor, deterministic: bool = False,
                action_masks=None) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        values = self.value_net(latent_vf)
        log_p, mask = self._masked_log_probs(latent_pi, action_masks)
        if deterministic:
            actions = log_p.argmax(dim=-1)
        else:
            actions = th.multinomial(_probabilities(log_p, mask), 1).squeeze(1)
        return actions, values, log_p.gather(1, actions[:, None]).squeeze(1)

    def evaluate_actions(self, obs: th.Tensor, actions: th.Tensor,
                         action_masks=None) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
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


def load_start_weights(policy: CardAwarePolicy | MaskableActorCriticPolicy,
                       start: MaskableActorCriticPolicy, knock_start_gap: float | None = None) -> None:
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
    Any other difference is refused, naming the first mismatch.
    """
    own, given = policy.state_dict(), start.state_dict()
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
    policy.load_state_dict(widened)


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
