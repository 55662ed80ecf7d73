"""Ship the average: a copy of ``ft54_avg10_30.zip`` whose metadata carries the whole lineage
(the PSRO round 3 policy's stages, then ``lineage.json``'s last two), written as the shipped
policy: ``python docs/runs/ft54/ship.py``. The weights are the average's, bit for bit."""

import json
import shutil
from pathlib import Path

from agents.ppo import SHIPPED_POLICY, read_meta, write_meta
from train.average import add_lineage

HERE = Path(__file__).resolve().parent
shutil.copyfile(HERE / "ft54_avg10_30.zip", SHIPPED_POLICY)
meta = read_meta(SHIPPED_POLICY)
add_lineage(meta, json.loads((HERE / "lineage.json").read_text()))
write_meta(SHIPPED_POLICY, meta)
print(f"{SHIPPED_POLICY}: {len(meta['lineage'])} stages, imitation {meta['imitation']}")
