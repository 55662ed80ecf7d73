"""Deprecated path: the module is :mod:`hgin_env.envs.aec` (this shim goes in release 0.3)."""

import warnings

from .envs import aec as _module

warnings.warn("hgin_env.env is deprecated; import hgin_env.envs.aec", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):  # every name of the new module, public or not
    return getattr(_module, name)
