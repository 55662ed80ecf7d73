"""``python -m train.ppo`` with this code's rollouts in one part (SB3's collect_rollouts; the
update still split): the control of the learning-per-step runs. With the flags of
learning.sh it trains bit for bit as 8b21fe9 (seeds 21 to 28: the same episodes files as
docs/runs/sparse53's split_s* and this folder's base8b2_s*). Run from the repository root:

    python docs/runs/rollout53/one_part.py --total-timesteps 1000000 --opponents simple ... --seed 21
"""

import os
import sys

sys.path.insert(0, os.getcwd())
from train import ppo  # noqa: E402

ppo.rollout_parts = lambda args: 1
sys.exit(ppo.main(sys.argv[1:]))
