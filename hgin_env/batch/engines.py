"""Which implementation steps the batched engine's tables: the compiled kernels
(:mod:`hgin_env.batch.kernels`, Numba) or the numpy reference (:mod:`hgin_env.batch.tables`).

The compiled engine is the default wherever numba imports; ``HGIN_ENGINE=numpy`` (or
``BatchGame(..., engine="numpy")``) selects the numpy path, which stays the reference the
differential compares both against the scalar ``Match`` with. Both produce the same
masks, observations, rewards and sheets for the same seeds and actions.
"""

from __future__ import annotations

import importlib.util
import os
import time

import numpy as np

#: The engines, compiled first.
ENGINES = ("numba", "numpy")
#: The environment variable that picks the engine when no argument does.
ENGINE_VARIABLE = "HGIN_ENGINE"


def compiled_available() -> bool:
    """Whether numba is installed (the compiled engine can run)."""
    return importlib.util.find_spec("numba") is not None


def resolve_engine(engine: str | None = None) -> str:
    """The engine to use: ``engine`` if given, else ``$HGIN_ENGINE``, else "numba" where
    numba is installed and "numpy" elsewhere. An unknown name, or "numba" without numba,
    raises ``ValueError`` naming the problem."""
    source = "engine"
    if engine is None:
        engine = os.environ.get(ENGINE_VARIABLE) or None
        source = ENGINE_VARIABLE
    if engine is None:
        return "numba" if compiled_available() else "numpy"
    if engine not in ENGINES:
        raise ValueError(f"{source}={engine!r} is not an engine; known: {ENGINES}")
    if engine == "numba" and not compiled_available():
        raise ValueError(f"{source}='numba' needs numba (pip install numba, or the package's 'fast' extra); "
                         f"'numpy' runs without it")
    return engine


def warm_kernels() -> float:
    """Compile the kernels (or load them from numba's cache) by running each once on a tiny
    batch; returns the seconds it took: the compile time on a fresh machine, a fraction of
    a second once cached. 0.0 where numba is not installed. Call it before timing anything."""
    if not compiled_available():
        return 0.0
    t0 = time.perf_counter()
    from .core import BatchGame

    # Every top-level kernel runs here with the argument types the engine passes, so no
    # later call compiles; the callees (deadwood, the showdown) compile with their callers.
    batch = BatchGame(2, seed=0, engine="numba")
    for _ in range(3):
        batch.observations()
        masks = batch.legal_action_masks()
        batch.step(np.argmax(masks, axis=1))
    batch.observations_of(np.array([0]))
    return time.perf_counter() - t0
