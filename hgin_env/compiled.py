"""Which implementation runs the engine's fast paths: the compiled kernels (Numba:
:mod:`hgin_env.card_kernels`, :mod:`hgin_env.batch.kernels`) or the numpy and Python
references (:mod:`hgin_env.batch.tables`, :func:`hgin_env.observation.encode`'s Python body).

The compiled engine is the default wherever numba imports (the package's ``fast`` extra);
``HGIN_ENGINE=numpy`` selects the references everywhere (``BatchGame(..., engine="numpy")``
for one batch). The references stay: the differential checks the compiled batched engine
against the scalar ``Match`` with the Python observer, and tests/test_compiled_engine.py the
card kernels against ``melds`` and ``scoring``. This module imports no numba.
"""

from __future__ import annotations

import importlib.util
import os

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
        engine = os.environ.get(ENGINE_VARIABLE)
        source = ENGINE_VARIABLE
    if engine is None:
        return "numba" if compiled_available() else "numpy"
    if engine not in ENGINES:
        raise ValueError(f"{source}={engine!r} is not an engine; known: {ENGINES}")
    if engine == "numba" and not compiled_available():
        raise ValueError(f"{source}='numba' needs numba (pip install numba, or the package's 'fast' extra); "
                         f"'numpy' runs without it")
    return engine
