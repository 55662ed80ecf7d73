#!/usr/bin/env bash
# Create the ANCHOR virtual environment for the speed benchmark: OpenSpiel (pyspiel), RLCard and
# PettingZoo's gin_rummy_v4, in their own venv (default <repo>/bench_venv, git-ignored) so that
# none of them ever becomes a dependency of hgin_env. The harness talks to them through
# eval/bench/anchor_worker.py (see eval/bench/anchors.py).
#
# Idempotent: a stamp file records the pinned package list; a rerun with the same pins is a
# no-op, a change of pins (or a missing/broken venv) rebuilds it.
#
#   bash eval/bench/setup_anchors.sh            # create or reuse bench_venv
#   BENCH_VENV=/some/dir bash eval/bench/setup_anchors.sh
#   FORCE=1 bash eval/bench/setup_anchors.sh    # rebuild from scratch
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${BENCH_VENV:-$ROOT/bench_venv}"
PYTHON="${PYTHON:-python3}"
STAMP="$VENV/.anchors_installed"

# Versions checked to install and run together on CPython 3.11 (manylinux x86_64).
# pygame is imported unconditionally by pettingzoo's gin_rummy module (rendering only).
PACKAGES=(
    "open-spiel==2.0.2"
    "rlcard==1.2.0"
    "pettingzoo==1.26.1"
    "gymnasium==1.4.0"
    "pygame==2.6.1"
    "numpy==2.4.6"
)
WANT="$("$PYTHON" -c 'import sys; print("py%d.%d" % sys.version_info[:2])') ${PACKAGES[*]}"

if [[ "${FORCE:-0}" != "1" && -f "$STAMP" && -x "$VENV/bin/python" ]] \
        && [[ "$(cat "$STAMP")" == "$WANT" ]] \
        && "$VENV/bin/python" -c "import pyspiel, rlcard, pettingzoo" 2>/dev/null; then
    echo "anchors: $VENV is up to date"
    exit 0
fi

echo "anchors: building $VENV ($WANT)"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PACKAGES[@]}"

# Smoke test: every anchor imports and the worker's self-check passes on a few hands.
PYGAME_HIDE_SUPPORT_PROMPT=1 "$VENV/bin/python" - <<'EOF'
import pyspiel
import rlcard.games.gin_rummy.utils.melding  # noqa: F401
from pettingzoo.classic import gin_rummy_v4

pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
pyspiel.load_game("gin_rummy")
gin_rummy_v4.env().reset(seed=0)
print("anchors: imports ok")
EOF
echo '{"cmd": "selfcheck", "n": 50, "seed": 1}
{"cmd": "quit"}' | "$VENV/bin/python" "$ROOT/eval/bench/anchor_worker.py"

echo "$WANT" > "$STAMP"
echo "anchors: ready ($VENV)"
