"""``python -m eval.bench`` (``make bench``): the speed benchmark, see :mod:`eval.bench.run`."""

from eval.bench.run import main

raise SystemExit(main())
