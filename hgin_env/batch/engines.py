"""Compiling the kernels before anything is timed (:func:`warm_kernels`); which engine runs
is :mod:`hgin_env.compiled`'s choice."""

from __future__ import annotations

import time

import numpy as np

from ..compiled import compiled_available


def warm_kernels() -> float:
    """Compile the kernels (or load them from numba's cache) by running each once on a tiny
    batch and a scalar game; returns the seconds it took: the compile time on a fresh
    machine, a fraction of a second once cached. 0.0 where numba is not installed. Call it
    before timing anything."""
    if not compiled_available():
        return 0.0
    t0 = time.perf_counter()
    from ..match import Match
    from ..observation import encode
    from .core import BatchGame

    # Every top-level kernel runs here with the argument types the engine passes, so no
    # later call compiles; the callees (deadwood, the showdown) compile with their callers.
    batch = BatchGame(2, seed=0, engine="numba")
    for _ in range(3):
        batch.observations()
        masks = batch.legal_action_masks()
        batch.step(np.argmax(masks, axis=1))
    batch.observations_of(np.array([0]))
    # Observations and masks come from one kernel (``table_views``) when both are stale;
    # each alone too, when the other is fresh.
    batch._mask_fresh = False
    batch.legal_action_masks()
    batch._obs_fresh = False
    batch.observations()
    encode(Match(seed=0).current_game, 0, engine="numba")
    return time.perf_counter() - t0
