"""hgin_env: Hollywood Gin (gin rummy with three-column Hollywood scoring) for RL.

The engine (``cards``, ``melds``, ``rules``, ``scoring``, ``game``, ``observation``)
imports no RL framework; ``hollywood_gin_v0`` is the PettingZoo AEC environment on top
and ``adapters`` the single-agent Gymnasium view for Stable-Baselines3. Importing
``hgin_env.hollywood_gin_v0`` also registers ``hgin/HollywoodGin-v0`` with PettingZoo's
registry, so ``pettingzoo.make("aec", "hgin/HollywoodGin-v0")`` works after it.
"""

__version__ = "0.1.0"
