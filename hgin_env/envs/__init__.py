"""The environments on the engine, each a thin front that maps agents to seats:

- :mod:`hgin_env.envs.aec`: the PettingZoo AEC environment (``raw_env``/``env``; its
  docstring is the spec, published as ``hgin_env.hollywood_gin_v0``);
- :mod:`hgin_env.envs.single_agent`: the single-agent Gymnasium view (one learner seat,
  opponents inside ``step``), for Stable-Baselines3;
- :mod:`hgin_env.envs.rllib`: the AEC environment as Ray RLlib's multi-agent PPO expects it.

The batched vector env is :mod:`hgin_env.batch.vector`.
"""
