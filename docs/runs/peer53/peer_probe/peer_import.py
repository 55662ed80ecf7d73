"""Import the peer's code from $PEER_REPO (default /tmp/peer) without orbax (stubbed; only used for checkpoints)."""

import os
import pickle
import sys
import types

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", "/tmp/jax_cache_peer")
sys.path.insert(0, os.environ.get("PEER_REPO", "/tmp/peer"))
for name in ["orbax", "orbax.checkpoint"]:
    sys.modules.setdefault(name, types.ModuleType(name))
sys.modules["orbax"].checkpoint = sys.modules["orbax.checkpoint"]
import flax.training as _ft  # noqa: E402  (after the orbax stubs)

if "flax.training.orbax_utils" not in sys.modules:
    m = types.ModuleType("flax.training.orbax_utils")
    sys.modules["flax.training.orbax_utils"] = m
    _ft.orbax_utils = m
import gin_rummy_jax as gin  # noqa: E402
import ppo_gin_rummy_v3_fused as ppo  # noqa: E402

__all__ = ["gin", "ppo", "load_params"]


def load_params():
    """The peer's final checkpoint (update 9535) as restore_checkpoint.py wrote it ($PEER_PARAMS)."""
    with open(os.environ.get("PEER_PARAMS", "/tmp/peer_ckpt/params_9535.pkl"), "rb") as handle:
        return pickle.load(handle)
