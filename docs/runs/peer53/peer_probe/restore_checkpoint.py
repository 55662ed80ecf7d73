"""Convert the peer's orbax checkpoint into a pickle of its parameters (numpy arrays).

usage: python restore_checkpoint.py PEER_REPO/checkpoints/ppo_gin_rummy_v3/9535/default OUT.pkl
(the peer's final checkpoint, update 9535, the commit whose notes report a 91% win rate)
"""

import pickle
import sys

import jax
import numpy as np
import orbax.checkpoint as ocp

source, target = sys.argv[1], sys.argv[2]
checkpointer = ocp.PyTreeCheckpointer()
metadata = checkpointer.metadata(source)
tree = metadata.item_metadata if hasattr(metadata, "item_metadata") else metadata
cpu = jax.sharding.SingleDeviceSharding(jax.devices("cpu")[0])
restore_args = jax.tree.map(lambda _: ocp.ArrayRestoreArgs(sharding=cpu), tree)
restored = checkpointer.restore(source, restore_args=restore_args)
params = jax.tree.map(np.asarray, restored["params"])
with open(target, "wb") as handle:
    pickle.dump(params, handle)
print("wrote", target, sum(np.asarray(x).size for x in jax.tree.leaves(params)), "parameters")
