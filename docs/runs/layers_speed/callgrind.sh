#!/bin/bash
# instructions per decision = (I(big) - I(small)) / (big - small), per checkout and contender
out=/work/main/docs/runs/layers_speed/callgrind.txt; : > $out
for kind in env raw_env batch; do
  if [ $kind = batch ]; then small=2560; big=10240; else small=1000; big=4000; fi
  for side in /work/main /work/wt/base; do
    for n in $small $big; do
      cd $side
      PYTHONHASHSEED=0 PYTHONPATH=$side PYTHONWARNINGS=ignore valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$$.out /work/main/.venv/bin/python docs/runs/layers_speed/callgrind_step.py $kind $n 2>/tmp/cg.err >/dev/null
      ir=$(grep -m1 "^summary:" /tmp/cg.$$.out | awk '{print $2}')
      echo "$kind $side $n $ir" >> $out
    done
  done
done
