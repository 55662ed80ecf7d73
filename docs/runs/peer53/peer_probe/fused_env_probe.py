"""Measurements 3a/3b/3d in the peer's own fused PPO environment (env_init / env_step_fused /
env_reset_if_done from ppo_gin_rummy_v3_fused.py, unmodified).

The "agent" is driven by one of several policies; what the PPO agent would do when the legal
mask is all-false (all logits -1e9 => uniform categorical over 241 actions) is reproduced
exactly: uniform over 0..240.

policies:
  bot_literal : peer's simple_bot_action_opt for the agent (at an agent stock-draw chance node it
                returns argmax(deck) = lowest-index card left in the stock)
  bot_fair    : same, but at an agent chance node the card is uniform among the legal (deck) cards
  bot_cheat   : same, but at an agent chance node pick the deck card minimising the hand's
                deadwood after the best discard (what a learned policy can do; it sees the mask)
  random      : uniform over the legal mask
usage: python fused_env_probe.py POLICY NUM_ENVS NUM_STEPS SEED
"""

import json
import os
import sys
import time
from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import peer_import as P
from probe_stats import normal_ci, per_hand_sums

gin, ppo = P.gin, P.ppo

policy = sys.argv[1]
B = int(sys.argv[2])
T = int(sys.argv[3])
seed = int(sys.argv[4])


def cheat_card(gs, mask):
    player = gs["current_player"]
    hand = gin.get_hand(gs, player)

    def dw_with(c):
        return gin.min_deadwood_after_discard(hand.at[c].set(1))

    dws = jax.vmap(dw_with)(jnp.arange(52))
    dws = jnp.where(mask[:52], dws, 10_000)
    return jnp.argmin(dws).astype(jnp.int32)


if policy.startswith("ppo"):
    _params = P.load_params()  # peer's final 91% checkpoint (update 9535)
    _net = ppo.ActorCritic()


def agent_action(env_state, key):
    gs = env_state["game_state"]
    mask = env_state["legal_mask"]
    k1, k2 = jax.random.split(key)
    any_legal = mask.any()
    uni241 = jax.random.randint(k1, (), 0, 241)
    rand_legal = jax.random.categorical(k2, jnp.where(mask, 0.0, -1e9)).astype(jnp.int32)
    at_chance = gin.is_chance_node(gs) & any_legal
    bot = gin.simple_bot_action_opt(gs)
    if policy == "bot_literal":
        a = bot
    elif policy == "bot_fair":
        a = jnp.where(at_chance, rand_legal, bot)
    elif policy == "bot_cheat":
        a = jnp.where(at_chance, cheat_card(gs, mask), bot)
    elif policy in ("ppo_sample", "ppo_fair", "ppo_greedy"):
        logits, _ = _net.apply(_params, env_state["obs"][None, :])
        logits = jnp.where(mask, logits[0].astype(jnp.float32), -1e9)
        if policy == "ppo_greedy":
            a = jnp.argmax(logits).astype(jnp.int32)  # evaluate_checkpoint.py style
        else:
            a = jax.random.categorical(k2, logits).astype(jnp.int32)  # training-rollout style
        if policy == "ppo_fair":
            a = jnp.where(at_chance, rand_legal, a)
    elif policy == "random":
        a = rand_legal
    else:
        raise ValueError(policy)
    a = jnp.where(any_legal, a, uni241).astype(jnp.int32)
    return a


def one_env_step(env_state, key):
    gs = env_state["game_state"]
    mask = env_state["legal_mask"]
    a = agent_action(env_state, key)
    true_mask = gin.legal_actions_mask(gs)  # legal set of whoever is to move
    any_legal = mask.any()
    is_chance = gin.is_chance_node(gs)
    strategic_phase = (
        (gs["phase"] == gin.PHASE_FIRST_UPCARD) | (gs["phase"] == gin.PHASE_DRAW) | (gs["phase"] == gin.PHASE_DISCARD)
    )
    info = dict(
        overflow=~any_legal,
        agent_chance=is_chance & any_legal,
        ovf_agent_endgame=any_legal & ~is_chance & ~strategic_phase,
        phase=gs["phase"],
        cur=gs["current_player"],
        is_chance=is_chance,
        agent_player=env_state["agent_player"],
        action=a,
        action_legal_for_mover=true_mask[a],
        action_in_mask=mask[a],
    )
    nxt, reward = ppo.env_step_fused(env_state, a)
    done = nxt["done"]
    info["done"] = done
    info["reward"] = reward
    info["p0_score"] = nxt["game_state"]["p0_score"]
    info["agent_player_ep"] = nxt["agent_player"]
    # sanity of the resulting state
    h0 = nxt["game_state"]["player0_hand"]
    h1 = nxt["game_state"]["player1_hand"]
    info["bad_hand"] = (h0.min() < 0) | (h1.min() < 0) | (((h0 > 0) & (h1 > 0)).any())
    nxt = ppo.env_reset_if_done(nxt)
    return nxt, info


@jax.jit
def batched_step(env_states, key):
    keys = jax.random.split(key, B)
    return jax.vmap(one_env_step)(env_states, keys)


key = jax.random.PRNGKey(seed)
key, *ks = jax.random.split(key, B + 1)
t0 = time.time()
env_states = jax.jit(jax.vmap(ppo.env_init))(jnp.stack(ks))
infos = []
for t in range(T):
    key, sk = jax.random.split(key)
    env_states, info = batched_step(env_states, sk)
    infos.append(jax.device_get(info))
    if t == 0:
        print(f"first step (incl. compile) {time.time() - t0:.1f}s", flush=True)
print(f"total {time.time() - t0:.1f}s", flush=True)
arr = {k: np.stack([i[k] for i in infos]) for k in infos[0]}  # (T, B)
np.savez_compressed(f"/tmp/peer_probe_{policy}_{seed}.npz", **arr)


# ---- summaries ----
def action_kinds(actions):
    names = {52: "draw_up", 53: "draw_stock", 54: "pass", 55: "knock"}
    return dict(Counter("card" if a < 52 else names.get(int(a), "meld") for a in actions))


# env_init starts every env on a fresh hand, so every finished hand is a whole one.
done = arr["done"]
rew = arr["reward"]
n = int(done.sum())
wins = int(((rew > 0) & done).sum())
zeros = int(((rew == 0) & done).sum())
losses = int(((rew < 0) & done).sum())
sums, ep_rew = per_hand_sums(arr, ("overflow", "agent_chance", "ovf_agent_endgame"))
ep_ovf = sums["overflow"] > 0
ep_ach = sums["agent_chance"]
ep_nonstrat = sums["ovf_agent_endgame"] > 0
# every step of this env is one of the agent's decisions
steps = done.size
ovf = arr["overflow"]
res = dict(
    policy=policy,
    envs=B,
    steps_per_env=T,
    seed=seed,
    agent_steps=int(steps),
    hands=n,
    peer_metric_win=wins / max(n, 1),
    win_ci=normal_ci(wins / max(n, 1), n),
    zero_score_share=zeros / max(n, 1),
    zero_ci=normal_ci(zeros / max(n, 1), n),
    loss_share=losses / max(n, 1),
    mean_reward_points=float(ep_rew.mean() * 100),
    overflow_steps=int(ovf.sum()),
    overflow_step_share=float(ovf.mean()),
    hands_with_overflow=int(ep_ovf.sum()),
    hands_with_overflow_share=float(ep_ovf.mean()),
    win_rate_hands_with_overflow=float((ep_rew[ep_ovf] > 0).mean()) if ep_ovf.any() else None,
    win_rate_hands_without_overflow=float((ep_rew[~ep_ovf] > 0).mean()),
    agent_chance_steps=int(arr["agent_chance"].sum()),
    agent_chance_per_hand=float(ep_ach.mean()),
    agent_endgame_overflow_steps=int(arr["ovf_agent_endgame"].sum()),
    hands_with_agent_endgame_overflow=int(ep_nonstrat.sum()),
    win_rate_hands_with_agent_endgame_overflow=float((ep_rew[ep_nonstrat] > 0).mean()) if ep_nonstrat.any() else None,
    hands_with_any_overflow_share=float((ep_ovf | ep_nonstrat).mean()),
    win_rate_hands_without_any_overflow=float((ep_rew[~(ep_ovf | ep_nonstrat)] > 0).mean()),
    bad_hand_states=int(arr["bad_hand"].sum()),
)
# overflow breakdown
if arr["ovf_agent_endgame"].any():
    m = arr["ovf_agent_endgame"]
    res["agent_endgame_overflow_phases"] = dict(Counter(arr["phase"][m].tolist()))
    res["agent_endgame_overflow_actions"] = action_kinds(arr["action"][m])
if ovf.any():
    ph = arr["phase"][ovf]
    cur = arr["cur"][ovf]
    ag = arr["agent_player"][ovf]
    ch = arr["is_chance"][ovf]
    act = arr["action"][ovf]
    legal = arr["action_legal_for_mover"][ovf]
    res["overflow_phase_counts"] = {
        f"phase{int(p)}_{'chance' if c else ('agent' if u == g else 'opp')}": v
        for (p, c, u, g), v in Counter(zip(ph.tolist(), ch.tolist(), cur.tolist(), ag.tolist(), strict=False)).items()
    }
    res["overflow_action_legal_for_mover_share"] = float(legal.mean())
    res["overflow_action_kinds"] = action_kinds(act)
print(json.dumps(res, indent=1, default=float))
with open(f"{os.path.dirname(os.path.abspath(__file__))}/result_fused_{policy}_{seed}.json", "w") as f:
    json.dump(res, f, indent=1, default=float)
