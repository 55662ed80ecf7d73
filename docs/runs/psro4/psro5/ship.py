"""Ship round 5's average: a copy of ``psro5_avg36_58.zip`` whose metadata carries the whole
lineage (the ft54 policy's stages, then ``lineage.json``'s three), written as the shipped
policy: ``python docs/runs/psro4/psro5/ship.py``. The weights are the average's, bit for bit."""

import json
from pathlib import Path

from agents.ppo import SHIPPED_POLICY
from train.average import ship_successor

HERE = Path(__file__).resolve().parent
try:  # after the ft54 policy's 13 stages; refused where the shipped file holds these runs already
    meta = ship_successor(HERE / "psro5_avg36_58.zip", json.loads((HERE / "lineage.json").read_text()))
except ValueError as exc:
    raise SystemExit(str(exc)) from None
print(f"{SHIPPED_POLICY}: {len(meta['lineage'])} stages, imitation {meta['imitation']}")
