"""The versioned environment module users import: ``from hgin_env import hollywood_gin_v0``.

Its documentation page is :mod:`hgin_env.envs.aec`'s docstring (copied here).
"""

from .envs import aec as _env_module
from .envs.aec import ENV_ID, env, raw_env

__all__ = ["ENV_ID", "env", "raw_env"]
__doc__ = _env_module.__doc__
