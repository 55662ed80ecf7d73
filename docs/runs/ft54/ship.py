"""Ship the average: a copy of ``ft54_avg10_30.zip`` whose metadata carries the whole lineage
(the PSRO round 3 policy's stages, then ``lineage.json``'s last two), written as the shipped
policy: ``python docs/runs/ft54/ship.py``. The weights are the average's, bit for bit."""

import json
from pathlib import Path

from agents.ppo import SHIPPED_POLICY
from train.average import ship

HERE = Path(__file__).resolve().parent
meta = ship(HERE / "ft54_avg10_30.zip", json.loads((HERE / "lineage.json").read_text()))
print(f"{SHIPPED_POLICY}: {len(meta['lineage'])} stages, imitation {meta['imitation']}")
