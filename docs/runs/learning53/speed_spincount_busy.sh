# The same variants as speed_spincount.sh with both cores already held by another job (two
# train.ppo distillation runs of docs/runs/soft54), 32,768 steps each, two rounds.
common="--total-timesteps 32768 --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns --seed 5"
for round in 1 2; do
  for variant in 1thread spin_default spin_30000 passive; do
    case $variant in
      1thread) threads=1; wait="env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT" ;;
      spin_default) threads=2; wait="env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT" ;;
      spin_30000) threads=2; wait="env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=30000" ;;
      passive) threads=2; wait="env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=PASSIVE" ;;
    esac
    $wait /usr/bin/time -f "$variant round $round: %U user %S sys %e wall" \
      .venv/bin/python -m train.ppo $common --torch-threads $threads --run-name busy_${variant}_$round 2>&1 \
      | grep -E "^run |steps/s|user .* sys" | tail -2
    uptime
  done
done
