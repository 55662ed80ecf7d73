"""Ship round 6's average: a copy of ``psro6_avg66_82.zip`` whose metadata carries the whole
lineage (round 5's shipped stages, then ``lineage.json``'s two), written as the shipped
policy: ``python docs/runs/psro4/psro6/ship.py``. The weights are the average's, bit for bit."""

import json
from pathlib import Path

from agents.ppo import SHIPPED_POLICY
from train.average import ship_successor

HERE = Path(__file__).resolve().parent
try:  # after round 5's 16 stages; refused where the shipped file holds these runs already
    meta = ship_successor(HERE / "psro6_avg66_82.zip", json.loads((HERE / "lineage.json").read_text()))
except ValueError as exc:
    raise SystemExit(str(exc)) from None
print(f"{SHIPPED_POLICY}: {len(meta['lineage'])} stages, imitation {meta['imitation']}")
