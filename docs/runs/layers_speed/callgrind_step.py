import sys

import numpy as np

from hgin_env import hollywood_gin_v0

kind, steps = sys.argv[1], int(sys.argv[2])
if kind == "batch":
    from hgin_env.batch import BatchGame
    batch = BatchGame(256, seed=0); rng = np.random.default_rng(0)
    for _ in range(steps // 256):
        batch.observations(); m = batch.legal_action_masks(); batch.step((rng.random(m.shape) * m).argmax(axis=1))
    sys.exit(0)
env = getattr(hollywood_gin_v0, kind)()
env.reset(seed=0); rng = np.random.default_rng(0); n = 0
while n < steps:
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc: env.step(None); continue
        legal = np.flatnonzero(obs["action_mask"]); env.step(int(legal[rng.integers(len(legal))])); n += 1
        if n >= steps: break
    else: env.reset()
