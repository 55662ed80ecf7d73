# Issue 53: the lean step on a busy machine. Two other training runs (114b508's default, one
# thread each) hold both cores while this code's default, 6508919's default, and this code
# with --rollout-parts 1 and with --update-processes 1 alternate, 65,536 steps each, two
# rounds. Run from /work (base114 and base650: checkouts of 114b508 and 6508919, their numba
# caches warm).
load="--total-timesteps 100000000 --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/loadruns"
(cd /work/base114; PYTHONPATH=. /work/main/.venv/bin/python -m train.ppo $load --run-name load_a --seed 1 \
  > /dev/null 2>&1 & echo $! > /tmp/load_a.pid)
(cd /work/base114; PYTHONPATH=. /work/main/.venv/bin/python -m train.ppo $load --run-name load_b --seed 2 \
  > /dev/null 2>&1 & echo $! > /tmp/load_b.pid)
sleep 20  # both loads past their start-up
common="--total-timesteps 65536 --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
for round in 1 2; do
  for variant in main base650 parts1 up1; do
    tree=main extra=""
    case $variant in
      base650) tree=base650 ;;
      parts1) extra="--rollout-parts 1" ;;
      up1) extra="--update-processes 1" ;;
    esac
    cd /work/$tree
    env -u OMP_WAIT_POLICY PYTHONPATH=. /usr/bin/time -f "$variant round $round: %U user %S sys %e wall" \
      /work/main/.venv/bin/python -m train.ppo $common $extra --run-name busy_${variant}_$round 2>&1 \
      | grep -E "^run |steps/s|user .* sys" | tail -2
    uptime
  done
done
kill "$(cat /tmp/load_a.pid)" "$(cat /tmp/load_b.pid)"
