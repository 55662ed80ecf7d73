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

from hgin_env.cards import NUM_CARDS
from hgin_env.observation import ObservationLayout

#: Card slices fed to the per-card scorer, in this order.
CARD_FEATURES = ("hand", "discard_top", "discard_rest", "opponent_known", "opponent_discards",
                 "own_discards", "discard_deadwood")
#: Per-card features the extractor computes from ``discard_deadwood``.
DERIVED_CARD_FEATURES = ("discard_regret", "best_discard")
CARD_EMBEDDING = 8


def _card_feature_index(layout: ObservationLayout) -> th.Tensor:
    """(52, F) indices into the observation vector: feature f of card c."""
    rows = [[layout.slice(name).start + c for name in CARD_FEATURES] for c in range(NUM_CARDS)]
    return th.tensor(rows, dtype=th.long)


class CardExtractor(nn.Module):
    """Shared trunk: latent_pi = [per-card features, summary]; latent_vf = critic summary."""

    def __init__(self, obs_dim: int, layout: ObservationLayout, hidden: int = 256, summary: int = 128):
        super().__init__()
        self.register_buffer("card_index", _card_feature_index(layout), persistent=False)
        self.actor_trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(),
                                         nn.Linear(hidden, summary), nn.ReLU())
        self.critic_trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(),
                                          nn.Linear(hidden, summary), nn.ReLU())
        dd = layout.slice("discard_deadwood")
        self.dd_start, self.dd_stop = dd.start, dd.stop
        self.num_card_features = len(CARD_FEATURES) + len(DERIVED_CARD_FEATURES)
        self.summary_dim = summary
        self.latent_dim_pi = NUM_CARDS * self.num_card_features + summary
        self.latent_dim_vf = summary

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        cards = features[:, self.card_index]  # (B, 52, F)
        # Deadwood after each discard relative to the best discard, in tens of points: the
        # raw slice differs by a few hundredths between a good and a ruinous discard.
        dd = features[:, self.dd_start:self.dd_stop]
        regret = (dd - dd.min(dim=1, keepdim=True).values) * 10.0
        derived = th.stack([regret.clamp(max=3.0), (regret < 1e-4).float() * (dd < 1.0).float()], dim=2)
        return th.cat([th.cat([cards, derived], dim=2).flatten(1), self.actor_trunk(features)], dim=1)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.critic_trunk(features)


class CardHead(nn.Module):
    """Logits in action-id order: 52 discards, 52 knocks, then draw, take, pass, big gin."""

    def __init__(self, num_card_features: int, summary: int, hidden: int = 64):
        super().__init__()
        self.num_card_features = num_card_features
        self.embedding = nn.Embedding(NUM_CARDS, CARD_EMBEDDING)
        self.card_mlp = nn.Sequential(
            nn.Linear(num_card_features + CARD_EMBEDDING + summary, hidden), nn.ReLU(),
            nn.Linear(hidden, 2))
        self.global_logits = nn.Linear(summary, 4)
        self.register_buffer("card_ids", th.arange(NUM_CARDS), persistent=False)

    def forward(self, latent: th.Tensor) -> th.Tensor:
        batch = latent.shape[0]
        split = NUM_CARDS * self.num_card_features
        cards = latent[:, :split].reshape(batch, NUM_CARDS, self.num_card_features)
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
        return th.cat([per_card[:, :, 0], per_card[:, :, 1], self.global_logits(summary)], dim=1)


class CardAwarePolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with :class:`CardExtractor` and :class:`CardHead`.

    ``columns`` (policy_kwargs) selects the observation layout; 3 for Hollywood profiles.
    ``hidden``/``summary`` size the actor and critic trunks, ``card_hidden`` the per-card
    scorer (the defaults are the shipped policy's; ``train.ppo`` picks smaller ones for
    2-core training, see its docstring).
    """

    def __init__(self, *args, columns: int = 3, hidden: int = 256, summary: int = 128,
                 card_hidden: int = 64, **kwargs):
        self.layout = ObservationLayout(columns)
        self.columns = columns
        self.sizes = {"hidden": hidden, "summary": summary, "card_hidden": card_hidden}
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = CardExtractor(self.features_dim, self.layout, hidden=self.sizes["hidden"],
                                           summary=self.sizes["summary"])

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = CardHead(self.mlp_extractor.num_card_features, self.mlp_extractor.summary_dim,
                                   hidden=self.sizes["card_hidden"])
        if self.ortho_init:
            self.action_net.card_mlp[-1].apply(lambda m: self.init_weights(m, gain=0.01))
            self.action_net.global_logits.apply(lambda m: self.init_weights(m, gain=0.01))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data["columns"] = self.columns
        data.update(self.sizes)
        return data
