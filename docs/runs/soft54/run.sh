# Issue 54, item 2 at the scale: one soft-target round of >= 100k searched decisions.
# Run from the repository root; every folder goes under runs/soft54 (not committed: the
# chunks replay exactly from the command, the models are ~1 MB each).
set -e
CRITIC="search:value=critic,rollouts=32,prior_k=2,width=1,until=hand,policy_plies=80,confidence=2,gumbel_k=4"
# 1. the search games, both cores (resumable: the same command plays only the missing chunks)
python -m train.search_games --out runs/soft54/games --search "$CRITIC" --matches 660 --workers 2 \
    --seed 31000000 --chunk 2 --no-progress-bar
# 2. three 1M-step runs from the shipped policy, its recipe (flags.txt): the soft target at
#    two weights, and PPO alone as the control; two at a time, one torch thread each
FLAGS="$(cat docs/runs/soft54/flags.txt)"
python -m train.ppo --run-name soft_coef1 $FLAGS --distill runs/soft54/games --distill-target soft \
    --distill-c 10 --distill-holdout 0.05 --distill-coef 1 > runs/soft54/soft_coef1.log 2>&1 &
python -m train.ppo --run-name soft_coef5 $FLAGS --distill runs/soft54/games --distill-target soft \
    --distill-c 10 --distill-holdout 0.05 --distill-coef 5 > runs/soft54/soft_coef5.log 2>&1
wait
python -m train.ppo --run-name control $FLAGS > runs/soft54/control.log 2>&1
# 3. held-out matches against the Expert on the seeds of the shipped policy's stored 1,000
#    (docs/runs/distill/eval/ppo_vs_expert), two at a time
T="python -m eval.tournament --vs-first --workers 1 --no-plot"
for run in soft_coef1 soft_coef5 control; do
  $T --agents "d=ppo:runs/soft54/$run/model.zip" expert --matches 1000 --seed 8100000 \
      --out runs/soft54/eval/${run}_vs_expert > runs/soft54/eval_$run.log 2>&1 &
  [ "$run" = soft_coef5 ] && wait
done
wait
