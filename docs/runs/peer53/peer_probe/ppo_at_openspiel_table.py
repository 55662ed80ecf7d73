"""Peer's final PPO checkpoint (update 9535, '91%') played at OpenSpiel's C++ table (pyspiel gin_rummy,
default params) against the real C++ SimpleGinRummyBot. Stock draws are real chance outcomes.
The agent's strategic decisions (FirstUpcard/Draw/Discard) come from the PPO net (greedy = argmax, as
evaluate_checkpoint.py; or sampled), using the peer's own observation built from a mirrored peer-engine
state; the agent's knock/layoff/wall decisions come from the peer's simple_bot_action_opt (as in the
peer's training env). If that port-bot action is illegal in OpenSpiel (rare meld tie-break), the
first legal OpenSpiel action is used (counted). usage: N MODE(greedy|sample) SEED"""

import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import peer_import as P
import pyspiel
from probe_stats import normal_ci

gin, ppo = P.gin, P.ppo
N = int(sys.argv[1])
MODE = sys.argv[2]
SEED = int(sys.argv[3])
params = P.load_params()
net = ppo.ActorCritic()


@jax.jit
def policy_logits(gs, known, agent):
    obs = ppo.make_observation(gs, known, agent)
    lg, _ = net.apply(params, obs[None, :])
    return lg[0].astype(jnp.float32)


game = pyspiel.load_game("gin_rummy")
gp = game.get_parameters()
rng = np.random.RandomState(SEED)
res = dict(hands=0, won=0, lost=0, zero=0, pts=0.0, fallback=0, illegal_ppo=0, eval_script_count_won=0)
t0 = time.time()
for h in range(N):
    agent = h % 2
    st = game.new_initial_state()
    js = gin.init_state()
    known = jnp.zeros((2, 52), dtype=jnp.bool_)
    opp_bot = pyspiel.make_simple_gin_rummy_bot(gp, 1 - agent)
    while not st.is_terminal():
        if st.is_chance_node():
            acts, probs = zip(*st.chance_outcomes(), strict=False)
            a = int(rng.choice(acts, p=probs))
        else:
            cur = st.current_player()
            L = st.legal_actions()
            if cur != agent:
                a = int(opp_bot.step(st))
                known = ppo.update_known_cards(js, jnp.int32(a), known)
            else:
                ph = int(js["phase"])
                if ph in (gin.PHASE_FIRST_UPCARD, gin.PHASE_DRAW, gin.PHASE_DISCARD):
                    lg = np.asarray(policy_logits(js, known, jnp.int8(agent)))
                    m = np.zeros(241, bool)
                    m[L] = True
                    lg = np.where(m, lg, -1e9)
                    if MODE == "greedy":
                        a = int(np.argmax(lg))
                    else:
                        p = np.exp(lg - lg.max())
                        p /= p.sum()
                        a = int(rng.choice(241, p=p))
                else:
                    a = int(gin.simple_bot_action_opt(js))
                    if a not in L:
                        res["fallback"] += 1
                        a = int(L[0])
                known = ppo.update_known_cards(js, jnp.int32(a), known)
        st.apply_action(a)
        js = gin.step(js, jnp.int32(a))
    r = st.returns()[agent]
    res["hands"] += 1
    res["pts"] += r
    res["won"] += r > 0
    res["lost"] += r < 0
    res["zero"] += r == 0
    p0 = st.returns()[0]
    res["eval_script_count_won"] += bool((p0 > 0) == (agent == 0))  # evaluate_checkpoint.py's formula
    if (h + 1) % 100 == 0:
        print(h + 1, res, f"{time.time() - t0:.0f}s", flush=True)
n = res["hands"]
w = res["won"] / n
res.update(
    win_rate=w,
    win_ci=normal_ci(w, n),
    mean_pts=res["pts"] / n,
    zero_share=res["zero"] / n,
    eval_script_win_rate=res["eval_script_count_won"] / n,
    mode=MODE,
    seed=SEED,
)
print(json.dumps(res, indent=1, default=float))
out_path = f"{os.path.dirname(os.path.abspath(__file__))}/result_table_{MODE}_{SEED}.json"
with open(out_path, "w") as handle:
    json.dump(res, handle, indent=1, default=float)
