common="--total-timesteps 1000000 --eval-every 0 --checkpoint-every 0 --no-progress-bar --out-dir /tmp/speedruns"
for round in 1 2; do
for tree in base7542 after53; do
  cd /work/$tree
  PYTHONPATH=. /usr/bin/time -f "$tree round $round: %U user %S sys %e wall" /work/main/.venv/bin/python -m train.ppo $common --seed 5 --run-name ${tree}_$round 2>&1 | grep -E "^run |user .* sys" 
done; done
