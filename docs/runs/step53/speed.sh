# Issue 53: the default recipe's steps/s with the lean update step (flat gradients, one
# clip, Adam fused) and the helper's rollout part through shared memory, against 7542a53
# and the code before (6508919), 262,144 steps each (or $1), alternating, ROUNDS rounds
# (default 1 2 3 4 5). Run from /work: base7542 and base650 are checkouts of 7542a53 and
# 6508919 with their numba caches warm; main is this checkout. The run summary's steps/s
# counts `learn` alone; /usr/bin/time gives the whole process.
steps=${1:-262144} variants=${2:-"base7542 base650 main"}
common="--total-timesteps $steps --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
for round in ${ROUNDS:-1 2 3 4 5}; do
  for variant in $variants; do
    cd /work/$variant
    env -u OMP_WAIT_POLICY PYTHONPATH=. /usr/bin/time -f "$variant round $round: %U user %S sys %e wall" \
      /work/main/.venv/bin/python -m train.ppo $common --run-name ${variant}_$round 2>&1 \
      | grep -E "^run |steps/s|user .* sys" | tail -2
  done
done
