# Issue 53 on a quiet 2-core machine: torch's second thread with OpenMP's waits passive
# (OMP_WAIT_POLICY=PASSIVE: an idle thread sleeps instead of spinning, so it takes no core
# from the engine or from another job) against the default and 7542a53, 524,288 steps each,
# alternating, two rounds. Run from /work (base7542: a git archive of 7542a53 with its numba
# cache warm; main: this checkout). The run summary's steps/s counts `learn` alone;
# /usr/bin/time gives the wall time and CPU of the whole process.
common="--total-timesteps 524288 --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
for round in 1 2; do
  for variant in base main_1thread main_threads2_spin main_threads2_passive main_pipeline_passive; do
    wait="env -u OMP_WAIT_POLICY"  # libgomp's default: spin a while, then sleep
    case $variant in
      base) tree=base7542; extra="" ;;
      main_1thread) tree=main; extra="--torch-threads 1" ;;
      main_threads2_spin) tree=main; extra="--torch-threads 2" ;;
      main_threads2_passive) tree=main; extra="--torch-threads 2"; wait="env OMP_WAIT_POLICY=PASSIVE" ;;
      main_pipeline_passive) tree=main; extra="--pipeline on --torch-threads 2"; wait="env OMP_WAIT_POLICY=PASSIVE" ;;
    esac
    cd /work/$tree
    $wait PYTHONPATH=. /usr/bin/time -f "$variant round $round: %U user %S sys %e wall" \
      /work/main/.venv/bin/python -m train.ppo $common $extra --run-name ${variant}_$round 2>&1 \
      | grep -E "^run |steps/s|user .* sys" | tail -2
  done
done
