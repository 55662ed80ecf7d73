# Issue 53: learning per step of the default recipe with the lean update step, 1M steps
# against Simple, the flags of docs/runs/rollout53/learning.sh (whose parts_s* are the code
# before this change: 6508919 trains to their bits). Run from the repository root:
#   bash docs/runs/step53/learning.sh "21 22 23 24 25 26 27 28"
#   python docs/runs/step53/plot.py
seeds=$1 code=${2:-lean}
common="--total-timesteps 1000000 --opponents simple --eval-every 250000 --eval-matches 100 \
  --eval-opponents simple --checkpoint-every 0 --no-progress-bar"
mkdir -p runs/step53
for seed in $seeds; do
  name=${code}_s$seed
  /usr/bin/time -f "%U user %S sys %e wall" .venv/bin/python -m train.ppo $common \
    --seed $seed --out-dir runs/step53 --run-name $name > runs/step53/$name.log 2>&1
  out=docs/runs/step53/$name
  mkdir -p $out
  cp runs/step53/$name/args.json runs/step53/$name/eval.csv $out/
  cut -d, -f1-4 runs/step53/$name/episodes.csv > $out/episodes_won.csv
  (grep "^run " runs/step53/$name.log; tail -n 1 runs/step53/$name.log) > $out/summary.txt
done
