"""Deprecated path: the module is :mod:`hgin_env.envs.single_agent` (this shim goes in release 0.3)."""

import warnings

from .envs import single_agent as _module

warnings.warn("hgin_env.adapters is deprecated; import hgin_env.envs.single_agent", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):  # every name of the new module, public or not
    return getattr(_module, name)
