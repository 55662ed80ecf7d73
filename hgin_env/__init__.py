"""hgin_env: Hollywood Gin (gin rummy with three-column Hollywood scoring) for RL.

Layers, bottom up (docs/architecture.md): the engine (``cards``, ``rules``, ``actions``,
``melds``, ``scoring``, ``sheets``, ``game``, ``match``) imports nothing above it and no RL
framework; ``observation``, ``rewards`` and ``loop`` (the match loop) sit on it; then
``batch/`` (the batched engine and its vector env), ``envs/`` (the PettingZoo AEC env, the
single-agent Gymnasium view, the RLlib view) and ``render/`` (text and pictures).
``hollywood_gin_v0`` is the PettingZoo environment users import. Importing
``hgin_env.hollywood_gin_v0`` also registers ``hgin/HollywoodGin-v0`` with PettingZoo's
registry, so ``pettingzoo.make("aec", "hgin/HollywoodGin-v0")`` works after it.
"""

__version__ = "0.1.0"

# The render layer installs the notebook display of a Match (the engine draws nothing).
from . import render as _render  # noqa: E402, F401
