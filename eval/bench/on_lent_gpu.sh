#!/usr/bin/env bash
# Issue 53's GPU figures on a lent machine, in one call (about 6 minutes on an H200 with 16
# cores): run from the repository root there, with the wheels of the packages the machine's
# image lacks (gymnasium, pettingzoo, stable-baselines3, sb3-contrib) in .whl/ (made here
# with `pip download`, docs/learning.md "The GPU where there is one"). The table and its
# JSON go to $OUT (the device tool's folder that comes back), else runs/learner_device.
set -euo pipefail
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
echo "cores: $(nproc)"
PYTHONUNBUFFERED=1 python3 -m eval.bench.learner_device --workers 1 4 8 16 --out "${OUT:-runs/learner_device}" "$@"
