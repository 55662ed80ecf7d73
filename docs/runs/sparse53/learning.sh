# Issue 53: learning per step of the default recipe with the sparse first layers and the
# split update, 1M steps against Simple, the flags of docs/runs/learning53 (whose
# before_s21/before_s22 are 7542a53's runs of seeds 21 and 22). Seeds 23 and 24 ran in
# 7542a53's tree here too, and all four in 114b508's (the code just before this change).
# Run from the repository root, /work/base7542 and /work/base114 git archives of the two:
#   bash docs/runs/sparse53/learning.sh "21 22 23 24" split
#   bash docs/runs/sparse53/learning.sh "23 24" before
#   bash docs/runs/sparse53/learning.sh "21 22 23 24" base114
#   python docs/runs/sparse53/plot.py
seeds=$1 code=$2
common="--total-timesteps 1000000 --opponents simple --eval-every 250000 --eval-matches 100 \
  --eval-opponents simple --checkpoint-every 0 --no-progress-bar"
root=$PWD
mkdir -p runs/sparse53
for seed in $seeds; do
  name=${code}_s$seed
  case $code in
    before) tree=/work/base7542 ;;
    base114) tree=/work/base114 ;;
    *) tree=$root ;;
  esac
  (cd $tree && PYTHONPATH=. /usr/bin/time -f "%U user %S sys %e wall" $root/.venv/bin/python -m train.ppo $common \
    --seed $seed --out-dir $root/runs/sparse53 --run-name $name > $root/runs/sparse53/$name.log 2>&1)
  out=docs/runs/sparse53/$name
  mkdir -p $out
  cp runs/sparse53/$name/args.json runs/sparse53/$name/eval.csv $out/
  cut -d, -f1-4 runs/sparse53/$name/episodes.csv > $out/episodes_won.csv
  (grep "^run " runs/sparse53/$name.log; tail -n 1 runs/sparse53/$name.log) > $out/summary.txt
done
