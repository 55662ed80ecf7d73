"""Post-hoc analysis of /tmp/peer_probe_<policy>_<seed>.npz written by fused_env_probe.py:
reward distribution of hands with / without an overflow of the 10-step auto-play scan."""

import sys
from collections import Counter

import numpy as np
from probe_stats import per_hand_sums

sums, rewards = per_hand_sums(np.load(sys.argv[1]), ("ovf_agent_endgame", "overflow"))
flags = (sums["ovf_agent_endgame"] > 0) | (sums["overflow"] > 0)
rows = np.array([(flag, round(float(r) * 100)) for flag, r in zip(flags, rewards, strict=True)])
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
