"""A larger check of the batched bot than the tests: 30,720 states of batched single hands (the
compiled bot against Random, Simple and the Expert, 256 hands each, 40 steps), the compiled
loop against the reference on all of them and against the real bot (pyspiel) on 5,000.

    python docs/runs/peer53/check_bot.py
"""
import numpy as np

from agents.batched import RowByRow, make_batched_agent
from agents.openspiel import OpenSpielBotAgent
from agents.openspiel_bot import BatchedOpenSpielBot
from hgin_env.batch import BatchGame

ref, comp = BatchedOpenSpielBot(engine="numpy"), BatchedOpenSpielBot(engine="numba")
obs_all, m_all = [], []
for k, opp in enumerate(("random", "simple", "expert")):
    b = BatchGame(256, seed=100 + k, single_hand=True)
    o = make_batched_agent(opp, seed=k)
    for _ in range(40):
        obs, masks = b.observations().copy(), b.legal_action_masks().copy()
        obs_all.append(obs)
        m_all.append(masks)
        b.step(np.where(b.current_player == 0, comp.act(obs, masks), o.act(obs, masks)))
obs, masks = np.concatenate(obs_all), np.concatenate(m_all)
choice = masks.sum(axis=1) > 1
a, c = ref.act(obs, masks), comp.act(obs, masks)
print("states", len(a), "with a choice", choice.sum(), "compiled != reference", (a != c).sum())
idx = np.random.default_rng(0).choice(np.flatnonzero(choice), 5000, replace=False)
live = RowByRow(OpenSpielBotAgent()).act(obs[idx], masks[idx])
print("pyspiel checked", len(idx), "differ", (live != c[idx]).sum())
