"""The card network as plain torch modules (no Stable-Baselines3): :class:`CardExtractor`
(the trunks and per-card features), :class:`CardHead` (logits in action-id order) and
:class:`CardNet`, the two with the value layer under the attribute names SB3's policy gives
them (``mlp_extractor``, ``action_net``, ``value_net``), so one ``state_dict`` moves
between SB3's :class:`agents.nets.policy.CardAwarePolicy` and RLlib's
:class:`agents.nets.rllib_module.CardRLModule` as it is.

Why its own module: RLlib's env runners and learners build the same network without
importing SB3; ``agents.nets.policy`` (the SB3 policy) imports these classes from here. The
design notes are in ``agents.nets.policy``'s docstring.

What a PPO update costs here (docs/learning.md, "A leaner update"): the per-card scorer's
(B, 52, hidden) tensors are the largest the network makes. :class:`CardHead` sums into
them in place; given the legal-action mask (``CardHead(latent, mask)``, the SB3 policy's
training path) it scores only the cards with a legal discard or knock, about a tenth of
the rows; and building it keeps the process's freed memory for reuse
(:mod:`agents.nets.heap`), instead of page-faulting each step's tensors back in. The
agents' and RLlib's paths score all 52 cards, as before, bit for bit.
"""

from __future__ import annotations

import math

import torch as th
from torch import nn

from hgin_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from hgin_env.observation import ObservationLayout

from .heap import keep_freed_memory
from .sparse_input import common_values, sparse_linears

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
        # Each input column's common value, for the first layers' sparse path (forward's
        # ``sparse``); a buffer so that it follows the module's device, not a weight.
        self.register_buffer("common_values", th.from_numpy(common_values(layout, obs_dim)), persistent=False)
        self.num_card_features = len(CARD_FEATURES) + len(DERIVED_CARD_FEATURES) + \
            (len(RELATION_SETS) * len(RELATION_KINDS) if relations else 0)
        self.summary_dim = summary
        self.latent_dim_pi = NUM_CARDS * self.num_card_features + summary
        self.latent_dim_vf = summary

    def forward(self, features: th.Tensor, sparse: bool = False) -> tuple[th.Tensor, th.Tensor]:
        """(latent_pi, latent_vf). ``sparse``: the trunks' first layers from the input's
        nonzero entries (:mod:`agents.nets.sparse_input`: the same function, about 5x less
        work on the CPU, equal to float rounding), as the SB3 policy's training path has it."""
        obs = features[:, :self.actor_dim]
        if not sparse:
            trunk = self.actor_trunk(obs)  # computed once for both heads
            return self._actor_latent(obs, trunk), self._critic_latent(features, trunk)
        firsts = [self.actor_trunk[0]] if self.shared_trunk else [self.actor_trunk[0], self.critic_trunk[0]]
        outputs = sparse_linears(features, self.common_values, firsts)
        trunk = _after_first(self.actor_trunk, outputs[0])
        if self.shared_trunk:
            return self._actor_latent(obs, trunk), self._critic_latent(features, trunk)
        return self._actor_latent(obs, trunk), _after_first(self.critic_trunk, outputs[1])

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


def _after_first(trunk: nn.Sequential, first: th.Tensor) -> th.Tensor:
    """The trunk's layers after its first, applied to that layer's output."""
    for layer in list(trunk)[1:]:
        first = layer(first)
    return first


#: What a masked logit is set to: large and negative, as SB3's masked distribution has it.
MASKED_LOGIT = -1e8


class CardHead(nn.Module):
    """Logits in action-id order: 52 discards, 52 knocks, then draw, take, pass, big gin."""

    def __init__(self, num_card_features: int, summary: int, hidden: int = 64, knock_bound: float = 0.0):
        super().__init__()
        # Its per-card tensors are the largest a training step allocates and frees: the
        # process keeps freed memory for the next step instead of page-faulting it back.
        keep_freed_memory()
        self.num_card_features = num_card_features
        self.knock_bound = knock_bound
        self.embedding = nn.Embedding(NUM_CARDS, CARD_EMBEDDING)
        self.card_mlp = nn.Sequential(
            nn.Linear(num_card_features + CARD_EMBEDDING + summary, hidden), nn.ReLU(),
            nn.Linear(hidden, 2))
        self.global_logits = nn.Linear(summary, 4)
        self.register_buffer("card_ids", th.arange(NUM_CARDS), persistent=False)

    def forward(self, latent: th.Tensor, mask: th.Tensor | None = None) -> th.Tensor:
        """The logits, (B, 108) in action-id order. With ``mask`` (B, 108, bool): the masked
        logits, the illegal actions' at :data:`MASKED_LOGIT`, and the per-card scorer run
        only on the cards whose discard or knock is legal (:meth:`_legal_card_scores`)."""
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
        first = self.card_mlp[0]
        f = self.num_card_features
        w_card, w_emb, w_ctx = first.weight[:, :f], first.weight[:, f:f + CARD_EMBEDDING], \
            first.weight[:, f + CARD_EMBEDDING:]
        per_emb = self.embedding(self.card_ids) @ w_emb.T + first.bias  # (52, hidden)
        per_state = summary @ w_ctx.T  # (B, hidden)
        if mask is None:
            # (B, 52, hidden) is the network's largest tensor (6.8 MB at B = 1,024, past
            # the cache): the two sums and the ReLU (card_mlp[1]) write into the product's
            # buffer instead of three new ones. Same operations in the same order (same
            # bits, forward and gradients); autograd allows it, as no step saves a tensor
            # that a later one overwrites (the product saves its inputs, the sums nothing,
            # the ReLU its output).
            hidden = (cards @ w_card.T).add_(per_emb).add_(per_state.unsqueeze(1)).relu_()
            per_card = self.card_mlp[2](hidden)  # (B, 52, 2)
        else:
            per_card = self._legal_card_scores(cards, w_card, per_emb, per_state, mask)
        discard, knock = per_card[:, :, 0], per_card[:, :, 1]
        if self.knock_bound:
            # Knock with c vs discard c, bounded: the policy keeps trying to play on.
            bound = self.knock_bound
            knock = discard + bound * th.tanh((knock - discard) / bound)
        logits = th.cat([discard, knock, self.global_logits(summary)], dim=1)
        return logits if mask is None else logits.masked_fill(~mask.bool(), MASKED_LOGIT)

    def _legal_card_scores(self, cards: th.Tensor, w_card: th.Tensor, per_emb: th.Tensor, per_state: th.Tensor,
                           mask: th.Tensor) -> th.Tensor:
        """(B, 52, 2): the scorer's discard and knock outputs of the cards with a legal
        discard or knock, :data:`MASKED_LOGIT` for the others.

        Why: a masked logit is replaced by :data:`MASKED_LOGIT` and passes no gradient, so
        the scorer's output for a card that can be neither discarded nor knocked with is
        never used; and there are few legal ones (none at a draw decision, the 11 cards
        in hand at a discard), about a tenth of the B x 52 rows in a PPO minibatch: the
        update's scorer costs about a third. The rows kept go through the same operations
        in the same order as in the dense scorer, so the outputs are the same function;
        the numbers agree to float rounding, not always bit for bit, as a matrix product
        over fewer rows may run another BLAS kernel (at the default sizes they came out
        equal here; at 8 hidden units 1 ulp apart), and the gradients sum the same nonzero
        terms over fewer rows, in another order (the weights after an update differ from
        the dense scorer's by ~1e-7, docs/learning.md "A leaner update")."""
        batch, f = cards.shape[0], self.num_card_features
        mask = mask.bool()
        legal = (mask[:, :NUM_CARDS] | mask[:, NUM_CARDS:2 * NUM_CARDS]).reshape(-1)
        rows = legal.nonzero().squeeze(1)  # into the (B x 52) rows, state-major
        card, state = rows % NUM_CARDS, th.div(rows, NUM_CARDS, rounding_mode="floor")
        hidden = (cards.reshape(-1, f).index_select(0, rows) @ w_card.T).add_(per_emb.index_select(0, card)) \
            .add_(per_state.index_select(0, state)).relu_()
        scores = self.card_mlp[2](hidden)  # (rows, 2)
        every = scores.new_full((batch * NUM_CARDS, 2), MASKED_LOGIT).index_copy(0, rows, scores)
        return every.view(batch, NUM_CARDS, 2)


class CardNet(nn.Module):
    """:class:`CardExtractor` + :class:`CardHead` + the value layer, under SB3's names.

    ``privileged=P`` columns follow the observation in the critic's input only
    (:meth:`values`); :meth:`logits` reads the observation alone.
    """

    def __init__(self, layout: ObservationLayout, hidden: int = 128, summary: int = 64, card_hidden: int = 32,
                 relations: bool = False, knock_bound: float = 0.0, privileged: int = 0, shared_trunk: bool = False):
        super().__init__()
        self.layout = layout
        self.privileged = privileged
        self.mlp_extractor = CardExtractor(layout.size + privileged, layout, hidden=hidden, summary=summary,
                                           relations=relations, privileged=privileged, shared_trunk=shared_trunk)
        self.action_net = CardHead(self.mlp_extractor.num_card_features, summary, hidden=card_hidden,
                                   knock_bound=knock_bound)
        self.value_net = nn.Linear(summary, 1)

    def init_like_sb3(self) -> None:
        """SB3's orthogonal init as ``CardAwarePolicy`` gets it (trunks gain sqrt 2, value 1,
        the logit layers 0.01: a near-uniform first policy), so both trainers start alike."""
        def ortho(module: nn.Module, gain: float) -> None:
            if isinstance(module, nn.Linear):
                nn.init.orthogonal_(module.weight, gain=gain)
                module.bias.data.fill_(0.0)
        self.mlp_extractor.apply(lambda m: ortho(m, math.sqrt(2)))
        self.value_net.apply(lambda m: ortho(m, 1.0))
        self.action_net.card_mlp[-1].apply(lambda m: ortho(m, 0.01))
        self.action_net.global_logits.apply(lambda m: ortho(m, 0.01))

    def logits(self, obs: th.Tensor, mask: th.Tensor | None = None) -> th.Tensor:
        """Action logits from the observation columns (wider input is cut to them), the
        illegal ones at :data:`MASKED_LOGIT`."""
        return self._masked(self.action_net(self.mlp_extractor.forward_actor(obs)), mask)

    def logits_and_critic_latent(self, features: th.Tensor, mask: th.Tensor | None = None
                                 ) -> tuple[th.Tensor, th.Tensor]:
        """:meth:`logits` and the critic's latent (``value_net``'s input) in one pass over
        the trunk, from the observation followed by the privileged columns (a training
        step's forward: the actor's half reads the observation's columns alone)."""
        latent_pi, latent_vf = self.mlp_extractor(features)
        return self._masked(self.action_net(latent_pi), mask), latent_vf

    @staticmethod
    def _masked(logits: th.Tensor, mask: th.Tensor | None) -> th.Tensor:
        return logits if mask is None else logits.masked_fill(~mask.bool(), MASKED_LOGIT)

    def values(self, features: th.Tensor) -> th.Tensor:
        """V(s) [B] from the observation followed by the privileged columns."""
        return self.value_net(self.mlp_extractor.forward_critic(features)).squeeze(-1)
