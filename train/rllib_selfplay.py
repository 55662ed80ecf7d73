"""Superseded by :mod:`train.rllib_ppo` (RLlib on the batched engine); kept so that
``python -m train.rllib_selfplay`` still starts a run: it forwards its flags there.

The former trainer stepped the PettingZoo AEC env through RLlib's ``PettingZooEnv`` one
move at a time (353 env steps/s on 2 cores, ``docs/runs/rllib_2core``); its flags
(``--iterations``, ``--episode hand``, ``--snapshot-pool``...) are gone: see
``python -m train.rllib_ppo --help`` and docs/training.md.
"""

from __future__ import annotations

import sys

from train.rllib_ppo import main

if __name__ == "__main__":
    sys.exit(main())
