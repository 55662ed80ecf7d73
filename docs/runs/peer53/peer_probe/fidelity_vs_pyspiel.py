"""Measurement 3c: rules fidelity of the peer's gin_rummy_jax.step/legal_actions_mask against
OpenSpiel's C++ gin_rummy (pyspiel 2.0.2, default parameters).

Each hand: the same chance outcomes (sampled from pyspiel's chance_outcomes) are applied to both
engines; both seats are driven by the real C++ SimpleGinRummyBot (pyspiel.make_simple_gin_rummy_bot)
with epsilon-random legal moves in FIRST_UPCARD/DRAW/DISCARD/WALL. A player whose epsilon move
was a KNOCK plays the rest of the hand uniformly at random (the C++ bot's internal state would be
inconsistent). With probability P_END_RANDOM a hand's knock/layoff phases are played uniformly at
random by both players. At every decision/chance node the legal action sets are compared.
Random moves are drawn from the intersection of both legal sets (so the comparison can continue);
if the action chosen is not legal in the port, the hand is marked diverged and stopped.
usage: python fidelity_vs_pyspiel.py N_HANDS EPS P_END_RANDOM SEED
"""

import json
import os
import sys
import time
from collections import Counter

import jax.numpy as jnp
import numpy as np
import peer_import as P
import pyspiel

gin = P.gin

N = int(sys.argv[1])
EPS = float(sys.argv[2])
P_END = float(sys.argv[3])
SEED = int(sys.argv[4])
game = pyspiel.load_game("gin_rummy")
params = game.get_parameters()
PH = {0: "DEAL", 1: "FIRST_UPCARD", 2: "DRAW", 3: "DISCARD", 4: "KNOCK", 5: "LAYOFF", 6: "WALL", 7: "OVER"}
STRAT = {"FirstUpcard", "Draw", "Discard", "Wall"}


def cs(c):
    return "A23456789TJQK"[c % 13] + "scdh"[c // 13]


def astr(a):
    if a < 52:
        return cs(a)
    return {52: "DrawUp", 53: "DrawStock", 54: "Pass", 55: "Knock"}.get(
        a, "Meld" + "".join(cs(c) for c in gin.ALL_MELDS[a - 56])
    )


rng = np.random.RandomState(SEED)
stats = Counter()
mism_kinds = Counter()
examples = {}
ret_diffs = Counter()
ret_examples = {}
t0 = time.time()
for h in range(N):
    st = game.new_initial_state()
    js = gin.init_state()
    bots = [pyspiel.make_simple_gin_rummy_bot(params, p) for p in range(2)]
    rand_mode = [False, False]
    end_random = rng.rand() < P_END
    hist = []
    diverged = False
    while not st.is_terminal():
        Lc = sorted(st.legal_actions()) if not st.is_chance_node() else sorted(a for a, _ in st.chance_outcomes())
        Lp = sorted(np.nonzero(np.asarray(gin.legal_actions_mask(js)))[0].tolist())
        jphase = int(js["phase"])
        jcur = int(js["current_player"])
        jchance = bool(gin.is_chance_node(js))
        cur = st.current_player()
        # player-to-move agreement
        if (cur == pyspiel.PlayerId.CHANCE) != jchance or (cur >= 0 and cur != jcur):
            stats["mover_mismatch"] += 1
            mism_kinds["mover"] += 1
            examples.setdefault(
                "mover", dict(hand=h, hist=[astr(a) for a in hist], cpp_cur=cur, jax_cur=jcur, jax_chance=jchance)
            )
        if Lc != Lp:
            stats["legal_mismatch_nodes"] += 1
            node = "chance" if cur < 0 else "player"
            cpp_only, jax_only = len(set(Lc) - set(Lp)) > 0, len(set(Lp) - set(Lc)) > 0
            key = f"{PH.get(jphase)}:{node}:cpp_only={cpp_only}:jax_only={jax_only}"
            mism_kinds[key] += 1
            if key not in examples:
                examples[key] = dict(
                    hand=h,
                    cpp_phase=str(st.current_phase()),
                    jax_phase=PH.get(jphase),
                    cpp_only=[astr(a) for a in sorted(set(Lc) - set(Lp))],
                    jax_only=[astr(a) for a in sorted(set(Lp) - set(Lc))],
                    state=str(st),
                )
        stats["nodes"] += 1
        if st.is_chance_node():
            acts, probs = zip(*st.chance_outcomes(), strict=False)
            a = int(rng.choice(acts, p=probs))
        else:
            phase_str = str(st.current_phase()).upper()
            strategic = any(s in phase_str for s in ("FIRST_UPCARD", "DRAW", "DISCARD", "WALL"))
            inter = sorted(set(Lc) & set(Lp))
            if rand_mode[cur] or (not strategic and end_random) or (strategic and rng.rand() < EPS):
                if not inter:
                    stats["hands_stopped_no_common_action"] += 1
                    diverged = True
                    break
                a = int(rng.choice(inter))
                stats["random_moves"] += 1
                if a == 55 and strategic:
                    rand_mode[cur] = True
            else:
                a = int(bots[cur].step(st))
                stats["bot_moves"] += 1
        if a not in Lp:
            stats["hands_stopped_action_illegal_in_port"] += 1
            diverged = True
            k = f"illegal_in_port:{PH.get(jphase)}"
            mism_kinds[k] += 1
            examples.setdefault(k, dict(hand=h, action=astr(a), state=str(st)))
            break
        hist.append(a)
        st.apply_action(a)
        js = gin.step(js, jnp.int32(a))
        if bool(js["done"]) and not st.is_terminal():
            stats["jax_done_early"] += 1
            diverged = True
            examples.setdefault("jax_done_early", dict(hand=h, last=astr(a), state=str(st)))
            break
    stats["hands"] += 1
    if diverged:
        stats["hands_diverged"] += 1
        continue
    r = st.returns()[0]
    pj = int(js["p0_score"])
    stats["hands_compared"] += 1
    stats["end_random_hands"] += int(end_random)
    if r == 0:
        stats["cpp_zero"] += 1
    if (r > 0) != (pj > 0) or (r < 0) != (pj < 0):
        stats["winner_mismatch"] += 1
    if r != pj:
        stats["return_mismatch"] += 1
        kn = [bool(v) for v in np.asarray(js["knocked"])]
        dw = np.asarray(js["deadwood"]).tolist()
        cdw = list(st.deadwood())
        cknock = list(st.knocked())
        if r == 0 and any(cknock) and pj != 0:
            kind = "knock_tie_scored_as_undercut_by_port"
        elif any(cdw[p] > dw[p] for p in range(2)):
            kind = "unlaid_melds_counted_by_openspiel_not_by_port"
        else:
            kind = "other"
        if (r > 0) != (pj > 0) or (r < 0) != (pj < 0):
            ret_diffs["winner_mismatch:" + kind] += 1
        ret_diffs[kind] += 1
        ret_examples.setdefault(
            kind,
            dict(
                hand=h,
                cpp_return_p0=r,
                jax_p0=pj,
                jax_deadwood=dw,
                cpp_deadwood=cdw,
                jax_knocked=kn,
                end_random=end_random,
                history=[astr(a) for a in hist[21:]],
                state=str(st),
            ),
        )
    if (h + 1) % 250 == 0:
        print(h + 1, dict(stats), f"{time.time() - t0:.0f}s", flush=True)
res = dict(
    N=N,
    eps=EPS,
    p_end_random=P_END,
    seed=SEED,
    stats=dict(stats),
    mismatch_kinds=dict(mism_kinds),
    return_mismatch_kinds=dict(ret_diffs),
)
print(json.dumps(res, indent=1))
json.dump(
    dict(res, examples=examples, return_examples=ret_examples),
    open(f"{os.path.dirname(os.path.abspath(__file__))}/result_fidelity_{EPS}_{P_END}_{SEED}.json", "w"),
    indent=1,
)
