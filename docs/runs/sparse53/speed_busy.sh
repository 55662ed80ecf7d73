# Issue 53: the split update on a busy machine. Two other training runs (114b508's default,
# one thread each) hold both cores while this code's default (the update split in two
# processes), --update-processes 1 and --torch-threads 2 alternate, 65,536 steps each, two
# rounds. Run from /work (base114: a git archive of 114b508, its numba cache warm).
load="--total-timesteps 100000000 --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/loadruns"
(cd /work/base114; PYTHONPATH=. /work/main/.venv/bin/python -m train.ppo $load --run-name load_a --seed 1 \
  > /dev/null 2>&1 & echo $! > /tmp/load_a.pid)
(cd /work/base114; PYTHONPATH=. /work/main/.venv/bin/python -m train.ppo $load --run-name load_b --seed 2 \
  > /dev/null 2>&1 & echo $! > /tmp/load_b.pid)
sleep 20  # both loads past their start-up
common="--total-timesteps 65536 --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
cd /work/main
for round in 1 2; do
  for variant in split up1 threads2; do
    case $variant in
      split) extra="--torch-threads 1" ;;
      up1) extra="--torch-threads 1 --update-processes 1" ;;
      threads2) extra="--torch-threads 2 --update-processes 1" ;;
    esac
    env -u OMP_WAIT_POLICY /usr/bin/time -f "$variant round $round: %U user %S sys %e wall" \
      .venv/bin/python -m train.ppo $common $extra --run-name busy_${variant}_$round 2>&1 \
      | grep -E "^run |steps/s|user .* sys" | tail -2
    uptime
  done
done
kill "$(cat /tmp/load_a.pid)" "$(cat /tmp/load_b.pid)"
