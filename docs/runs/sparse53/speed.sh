# Issue 53: the default recipe's steps/s with the trunks' first layers computed sparsely
# (agents/nets/sparse_input.py) and the update split in two processes
# (train/split_update.py), against 7542a53 and the code before (114b508), 262,144 steps each
# (or $1), alternating, two rounds (ROUNDS="1 2 3" for three). main_up1: the sparse layers
# alone (--update-processes 1). Run from /work: base7542 and base114 are git
# archives of 7542a53 and 114b508 with their numba caches warm; main is this checkout. The
# run summary's steps/s counts `learn` alone; /usr/bin/time gives the whole process.
steps=${1:-262144} variants=${2:-"base7542 base114 main main_up1"}
common="--total-timesteps $steps --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
for round in ${ROUNDS:-1 2}; do
  for variant in $variants; do
    extra="--torch-threads 1"
    case $variant in
      base7542) tree=base7542; extra="" ;;
      base114) tree=base114 ;;
      main) tree=main ;;
      main_up1) tree=main; extra="--torch-threads 1 --update-processes 1" ;;
      main_threads2) tree=main; extra="--torch-threads 2" ;;
      main_pipeline) tree=main; extra="--pipeline on" ;;
    esac
    cd /work/$tree
    env -u OMP_WAIT_POLICY PYTHONPATH=. /usr/bin/time -f "$variant round $round: %U user %S sys %e wall" \
      /work/main/.venv/bin/python -m train.ppo $common $extra --run-name ${variant}_$round 2>&1 \
      | grep -E "^run |steps/s|user .* sys" | tail -2
  done
done
