"""Speed benchmark of hgin_env against OpenSpiel, RLCard and PettingZoo gin rummy.

    python -m eval.bench.run                 # full run (a few minutes), anchors if installed
    python -m eval.bench.run --quick         # small sizes (a few seconds)
    python -m eval.bench.run --no-anchors    # ours only

One invocation on one machine: every benchmark runs ``--rounds`` rounds and in each round
every contender runs once on the same inputs (the order rotates from round to round), so
slow drifts of a busy machine hit every contender alike. The table reports the median
per-unit time over the rounds and, for each anchor, the median over rounds of the per-round
ratio of its time to ours ("ours x faster").

The anchors (OpenSpiel, RLCard, PettingZoo ``gin_rummy_v4``) run in their own venv behind
:class:`eval.bench.anchors.AnchorWorker`; their timings are taken inside the worker with the
same loop shape as ours (one warm-up pass, then timed passes over the same inputs), so the
JSON-lines transport is never timed. Without ``bench_venv`` only our contenders run.

The pieces, one job each: ``results`` (sizes, rows, groups), ``drivers`` (inputs, timing
helpers and the timed loops), ``runner`` (every bench, round by round), ``report`` (machine
information, targets, the markdown table); this module is the command line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from eval.bench.anchors import AnchorWorker
from eval.bench.report import machine_info, report
from eval.bench.results import DEFAULT_OUT, GROUPS, Sizes
from eval.bench.runner import Runner


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    p.add_argument("--tiny", action="store_true", help="smoke-test sizes (seconds)")
    p.add_argument("--no-anchors", action="store_true", help="run our contenders only")
    p.add_argument("--rounds", type=int, help="rounds (each contender once per round)")
    p.add_argument("--hands", type=int, help="10-card hands per meld benchmark")
    p.add_argument("--hands11", type=int, help="11-card hands per after-discard benchmark")
    p.add_argument("--env-steps", type=int, help="decisions per round per env contender")
    p.add_argument("--only", nargs="+", choices=GROUPS, default=list(GROUPS),
                   help="benchmark groups to run (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for bench.md and bench.json")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)

    sizes = Sizes.tiny() if args.tiny else Sizes.quick() if args.quick else Sizes()
    for attr, val in (("rounds", args.rounds), ("hands", args.hands), ("hands11", args.hands11),
                      ("env_steps", args.env_steps)):
        if val is not None:
            setattr(sizes, attr, val)

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    machine = machine_info()
    worker: AnchorWorker | None = None
    anchors_info = None
    if args.no_anchors:
        note = "not run (--no-anchors): ours only."
    elif not AnchorWorker.available():
        note = "not run: no bench_venv (run `bash eval/bench/setup_anchors.sh`); ours only."
    else:
        worker = AnchorWorker()
        anchors_info = worker.info()
        note = "OpenSpiel, RLCard and PettingZoo timed inside the worker process."
    log(f"machine: {machine}")
    log(f"anchors: {note}")
    t0 = time.perf_counter()
    try:
        runner = Runner(sizes, worker, args.seed, log, args.only)
        runner.run()
    finally:
        if worker is not None:
            worker.close()
    text, data = report(runner, machine, anchors_info, note, sizes, time.perf_counter() - t0)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.md").write_text(text + "\n")
    (args.out / "bench.json").write_text(json.dumps(data, indent=1, default=float) + "\n")
    log(f"wrote {args.out / 'bench.md'} and {args.out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
