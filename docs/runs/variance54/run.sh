#!/usr/bin/env bash
# The luck-adjusted estimate measured beside the plain one (docs/evaluation.md): one process
# at a time, on the shared 2-core machine. Run from the repository root.
set -euo pipefail
out=${1:-runs/variance54}
mkdir -p "$out"
for pair in "expert simple 540000" "ppo: expert 541000"; do
    set -- $pair
    name=${1%:}_$2
    /usr/bin/time -f "%e s wall, %U s user" .venv/bin/python -m eval.tournament --agents "$1" "$2" \
        --matches 200 --seed "$3" --workers 1 --reduce-variance --out "$out/$name" --no-plot --quiet \
        2>&1 | tee "$out/$name.log"
done
for pair in "expert simple 542000" "ppo: expert 543000"; do
    set -- $pair
    name=hands_${1%:}_$2
    /usr/bin/time -f "%e s wall, %U s user" .venv/bin/python -m eval.hands --agents "$1" "$2" \
        --deals 300 --seed "$3" --reduce-variance 2>&1 | tee "$out/$name.out"
done
# three-hand (6 seatings per seed) and partnership (2): the format policies' critics
/usr/bin/time -f "%e s wall, %U s user" .venv/bin/python -m eval.tournament --rules hollywood_three_hand \
    --agents ppo: expert --matches 180 --seed 544000 --workers 1 --reduce-variance --out "$out/three_hand" \
    --no-plot --quiet 2>&1 | tee "$out/three_hand.log"
/usr/bin/time -f "%e s wall, %U s user" .venv/bin/python -m eval.tournament --rules hollywood_partnership \
    --agents ppo: expert --matches 120 --seed 545000 --workers 1 --reduce-variance --out "$out/partnership" \
    --no-plot --quiet 2>&1 | tee "$out/partnership.log"
