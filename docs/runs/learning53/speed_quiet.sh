# Issue 53 on a quiet 2-core machine: the default recipe against 7542a53, and this code's
# two ways of using the second core (--pipeline on; --torch-threads 2), 524,288 steps each,
# alternating, two rounds. Run from /work (base7542: a git archive of 7542a53 with its numba
# cache warm; main: this checkout). The run summary's steps/s counts `learn` alone; /usr/bin/time
# gives the wall time and CPU of the whole process.
common="--total-timesteps 524288 --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
for round in 1 2; do
  for variant in base main main_pipeline main_threads2; do
    case $variant in
      base) tree=base7542; extra="" ;;
      main) tree=main; extra="" ;;
      main_pipeline) tree=main; extra="--pipeline on" ;;
      main_threads2) tree=main; extra="--torch-threads 2" ;;
    esac
    cd /work/$tree
    PYTHONPATH=. /usr/bin/time -f "$variant round $round: %U user %S sys %e wall" \
      /work/main/.venv/bin/python -m train.ppo $common $extra --run-name ${variant}_$round 2>&1 \
      | grep -E "^run |steps/s|user .* sys" | tail -2
  done
done
