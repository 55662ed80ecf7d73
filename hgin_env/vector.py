"""Deprecated path: the module is :mod:`hgin_env.batch.vector` (this shim goes in release 0.3)."""

import warnings

from .batch import vector as _module

warnings.warn("hgin_env.vector is deprecated; import hgin_env.batch.vector", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):  # every name of the new module, public or not
    return getattr(_module, name)
