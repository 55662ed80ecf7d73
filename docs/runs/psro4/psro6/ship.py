"""Ship round 6's average: a copy of ``psro6_avg66_82.zip`` whose metadata carries the whole
lineage (round 5's shipped stages, then ``lineage.json``'s two), written as the shipped
policy: ``python docs/runs/psro4/psro6/ship.py``. The weights are the average's, bit for bit."""

import json
from pathlib import Path

from agents.ppo import SHIPPED_POLICY, read_meta
from train.average import ship

HERE = Path(__file__).resolve().parent
previous = read_meta(SHIPPED_POLICY)["lineage"]  # round 5's 16 stages
if any(stage["run"] == "psro6" for stage in previous):
    raise SystemExit(f"{SHIPPED_POLICY} is round 6's already")
meta = ship(HERE / "psro6_avg66_82.zip", previous + json.loads((HERE / "lineage.json").read_text()))
print(f"{SHIPPED_POLICY}: {len(meta['lineage'])} stages, imitation {meta['imitation']}")
