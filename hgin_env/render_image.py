"""Deprecated path: the module is :mod:`hgin_env.render.image` (this shim goes in release 0.3)."""

import warnings

from .render import image as _module

warnings.warn("hgin_env.render_image is deprecated; import hgin_env.render.image", DeprecationWarning, stacklevel=2)


def __getattr__(name: str):  # every name of the new module, public or not
    return getattr(_module, name)
