# Issue 53: learning per step of the default recipe with the rollout sampled in two parts
# at once (train/split_rollout.py), 1M steps against Simple, seeds 21 to 24, the flags of
# docs/runs/sparse53/learning.sh (whose split_s* are the code before this change, 8b21fe9's
# equal, and whose before_s* with docs/runs/learning53's are 7542a53's). Run from the
# repository root (code "base8b2": the same flags in /work/base8b2, a checkout of 8b21fe9,
# for seeds 25 to 28 beside this code's):
#   bash docs/runs/rollout53/learning.sh "21 22 23 24 25 26 27 28"
#   bash docs/runs/rollout53/learning.sh "25 26 27 28" base8b2
#   python docs/runs/rollout53/plot.py
seeds=$1 code=${2:-parts}
root=$PWD
common="--total-timesteps 1000000 --opponents simple --eval-every 250000 --eval-matches 100 \
  --eval-opponents simple --checkpoint-every 0 --no-progress-bar"
mkdir -p runs/rollout53
for seed in $seeds; do
  name=${code}_s$seed
  tree=$root
  [ "$code" = base8b2 ] && tree=/work/base8b2
  (cd $tree && PYTHONPATH=. /usr/bin/time -f "%U user %S sys %e wall" $root/.venv/bin/python -m train.ppo $common \
    --seed $seed --out-dir $root/runs/rollout53 --run-name $name > $root/runs/rollout53/$name.log 2>&1)
  out=docs/runs/rollout53/$name
  mkdir -p $out
  cp runs/rollout53/$name/args.json runs/rollout53/$name/eval.csv $out/
  cut -d, -f1-4 runs/rollout53/$name/episodes.csv > $out/episodes_won.csv
  (grep "^run " runs/rollout53/$name.log; tail -n 1 runs/rollout53/$name.log) > $out/summary.txt
done
