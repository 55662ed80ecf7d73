"""PPO with Ray RLlib on the batched engine: ``python -m train.rllib.ppo`` (before this
package, ``python -m train.rllib_ppo``). One module per job:

- :mod:`train.rllib.ppo`: the trainer: its command line, the start (new, resumed, or from an
  SB3 checkpoint), the league on the driver, the training loop, the final evaluation;
- :mod:`train.rllib.config`: its flags (``Args``) and RLlib's ``PPOConfig``;
- :mod:`train.rllib.ray_setup`: Ray started or joined, and the driver's traffic with the
  env runners (weights, the league);
- :mod:`train.rllib.checkpoints`: checkpoints, the resume's checkpoint and cut-back, league
  snapshots, ``--init-from``'s SB3 weights;
- :mod:`train.rllib.run_log`: ``progress.csv``, ``episodes.csv`` and TensorBoard;
- :mod:`train.rllib.env`, :mod:`train.rllib.runner`: the batched engine as RLlib's vector env
  and the env runner that steps it in whole batches;
- :mod:`train.rllib.learner`: the learner (SB3's PPO loss; decoupled PPO when pipelined);
- :mod:`train.rllib.pipeline`: ``--pipelined`` sampling during the update;
- :mod:`train.rllib.export`: an RLlib checkpoint exported as an SB3 ``ppo:`` zip.

What a run is apart from RLlib (its flags' parsing, the resume rules, the league's set-up,
the run folder and its metadata, the logs' cut-back, the evaluations) is :mod:`train.run`'s,
shared with ``train.ppo``. Nothing here is imported by ``import train``: Ray loads only when
the RLlib trainer does.
"""
