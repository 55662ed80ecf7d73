"""Post-hoc analysis of /tmp/peer_probe_<policy>_<seed>.npz written by fused_env_probe.py:
reward distribution of hands with / without an overflow of the 10-step auto-play scan."""

import sys
from collections import Counter

import numpy as np

a = np.load(sys.argv[1])
T, B = a["done"].shape
acc = np.zeros(B, bool)
rows = []
for t in range(T):
    acc |= a["ovf_agent_endgame"][t] | a["overflow"][t]
    for b in np.nonzero(a["done"][t])[0]:
        rows.append((acc[b], round(float(a["reward"][t, b]) * 100)))
    acc[a["done"][t]] = False
rows = np.array(rows)
for flag in (1, 0):
    r = rows[rows[:, 0] == flag][:, 1]
    print(
        "overflow" if flag else "no-overflow",
        len(r),
        "win",
        (r > 0).mean().round(3),
        "zero",
        (r == 0).mean().round(4),
        "mean pts",
        r.mean().round(2),
        "top rewards",
        Counter(r.tolist()).most_common(8),
    )
