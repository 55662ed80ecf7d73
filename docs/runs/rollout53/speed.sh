# Issue 53: the default recipe's steps/s with the rollout sampled in two parts at once
# (train/split_rollout.py) beside the split update, against 7542a53 and the code before
# (8b21fe9), 262,144 steps each (or $1), alternating, ROUNDS rounds (default 1 2 3).
# main_up1: this code with --update-processes 1 (SB3's update, one process). Run from
# /work: base7542 and base8b2 are checkouts of 7542a53 and 8b21fe9 with their numba
# caches warm; main is this checkout. The run summary's steps/s counts `learn` alone;
# /usr/bin/time gives the whole process.
steps=${1:-262144} variants=${2:-"base7542 base8b2 main"}
common="--total-timesteps $steps --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
for round in ${ROUNDS:-1 2 3}; do
  for variant in $variants; do
    extra="--torch-threads 1"
    case $variant in
      base7542) tree=base7542; extra="" ;;
      base8b2) tree=base8b2 ;;
      main) tree=main ;;
      main_up1) tree=main; extra="--torch-threads 1 --update-processes 1" ;;
    esac
    cd /work/$tree
    env -u OMP_WAIT_POLICY PYTHONPATH=. /usr/bin/time -f "$variant round $round: %U user %S sys %e wall" \
      /work/main/.venv/bin/python -m train.ppo $common $extra --run-name ${variant}_$round 2>&1 \
      | grep -E "^run |steps/s|user .* sys" | tail -2
  done
done
