# Issue 53: the formats' training speed against the duel's with this code's default (the rollout in two parts,
# sparse first layers and the split update), 131,072 steps each, alternating, ROUNDS rounds (default three)
# (the run summary's steps/s: wall time of `learn`). Run from the repository root.
common="--total-timesteps 131072 --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
for round in ${ROUNDS:-1 2 3}; do
  for rules in hollywood hollywood_three_hand hollywood_partnership; do
    .venv/bin/python -m train.ppo $common --rules $rules --run-name formats_${rules}_$round 2>&1 | grep -E "^run "
  done
done
