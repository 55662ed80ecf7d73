# Issue 53: torch's second thread with libgomp's spin before sleeping shortened
# (GOMP_SPINCOUNT; default 300,000, 0 with OMP_WAIT_POLICY=PASSIVE), against one thread and
# libgomp's default, alternating, two rounds. Run from /work/main:
#   bash docs/runs/learning53/speed_spincount.sh 262144 "1thread spin_default spin_30000 spin_3000"
#   bash docs/runs/learning53/speed_spincount.sh 32768 "1thread spin_default spin_30000 passive" busy_
# (the second with both cores already held by another job).
steps=$1 variants=$2 prefix=${3:-}
common="--total-timesteps $steps --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
for round in 1 2; do
  for variant in $variants; do
    case $variant in
      1thread) threads=1; wait="env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT" ;;
      spin_default) threads=2; wait="env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT" ;;
      spin_30000) threads=2; wait="env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=30000" ;;
      spin_3000) threads=2; wait="env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=3000" ;;
      passive) threads=2; wait="env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=PASSIVE" ;;
    esac
    $wait /usr/bin/time -f "$variant round $round: %U user %S sys %e wall" \
      .venv/bin/python -m train.ppo $common --torch-threads $threads --run-name $prefix${variant}_$round 2>&1 \
      | grep -E "^run |steps/s|user .* sys" | tail -2
    [ -n "$prefix" ] && uptime
  done
done
