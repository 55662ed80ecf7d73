"""Ship round 5's average: a copy of ``psro5_avg36_58.zip`` whose metadata carries the whole
lineage (the ft54 policy's stages, then ``lineage.json``'s three), written as the shipped
policy: ``python docs/runs/psro4/psro5/ship.py``. The weights are the average's, bit for bit."""

import json
from pathlib import Path

from agents.ppo import SHIPPED_POLICY, read_meta
from train.average import ship

HERE = Path(__file__).resolve().parent
previous = read_meta(SHIPPED_POLICY)["lineage"]  # the ft54 policy's 13 stages
if any(stage["run"] == "psro5" for stage in previous):
    raise SystemExit(f"{SHIPPED_POLICY} is round 5's already")
meta = ship(HERE / "psro5_avg36_58.zip", previous + json.loads((HERE / "lineage.json").read_text()))
print(f"{SHIPPED_POLICY}: {len(meta['lineage'])} stages, imitation {meta['imitation']}")
