# Issue 54, item 2 at the issue's scale: one soft-target round of >= 100k searched decisions.
# Run from the repository root; every folder goes under runs/soft54 (not committed: the
# chunks replay exactly from the command, the models are ~1 MB each). The session ran these
# commands two at a time, by hand; this script runs them one after another.
set -e
CRITIC="search:value=critic,rollouts=32,prior_k=2,width=1,until=hand,policy_plies=80,confidence=2,gumbel_k=4"
# 1. the search games, both cores (resumable: the same command plays only the missing chunks)
python -m train.search_games --out runs/soft54/games --search "$CRITIC" --matches 660 --workers 2 \
    --seed 31000000 --chunk 2 --no-progress-bar
# 2. 1M-step runs from the shipped policy with its recipe (flags.txt): each run's name and the
#    flags it adds (the README's tables, in their order)
SOFT="--distill runs/soft54/games --distill-target soft --distill-holdout 0.05"
LR="--learning-rate 3e-4"  # given after flags.txt's 3e-5, so it wins
while read -r name extra; do
  python -m train.ppo --run-name "$name" $(cat docs/runs/soft54/flags.txt) $extra > "runs/soft54/$name.log" 2>&1
  # 3. held-out matches against the Expert on the seeds of the shipped policy's stored 1,000
  #    (docs/runs/distill/eval/ppo_vs_expert)
  python -m eval.tournament --vs-first --workers 1 --no-plot --agents "d=ppo:runs/soft54/$name/model.zip" expert \
      --matches 1000 --seed 8100000 --out "runs/soft54/eval/${name}_vs_expert" > "runs/soft54/eval_$name.log" 2>&1
done <<RUNS
soft_coef1 $SOFT --distill-c 10 --distill-coef 1
soft_coef5 $SOFT --distill-c 10 --distill-coef 5
soft_coef50 $SOFT --distill-c 10 --distill-coef 50
soft_c30_coef5 $SOFT --distill-c 30 --distill-coef 5
soft_c30_coef5_lr3e4 $SOFT --distill-c 30 --distill-coef 5 $LR
soft_coef50_lr3e4 $SOFT --distill-c 10 --distill-coef 50 $LR
soft_c30_coef50_lr3e4 $SOFT --distill-c 30 --distill-coef 50 $LR
control
control_lr3e4 $LR
RUNS
python docs/runs/soft54/plot.py
