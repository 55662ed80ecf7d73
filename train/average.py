"""Checkpoint weight averaging: the mean of several checkpoints' network weights, as one
checkpoint (stochastic weight averaging, Izmailov et al. 2018, applied after the run).

Why: late in a run at a constant learning rate, successive checkpoints scatter around a
good region of weight space, and the noise of each update decides where a single one
lands. Their mean often plays better than any one of them: in ``docs/runs/league_scratch``
the mean of the 30M-36M checkpoints beat each checkpoint measured beside it on the same
1,000 selection matches.
Average checkpoints of one run, from its late, low-learning-rate part (or of runs
fine-tuned from one parent): the weights of unrelated runs, or of points far apart in one
run, are not close enough for their mean to be a policy at all.

    python -m train.average runs/my_run/checkpoints/ppo_3*_steps.zip --out runs/my_run/averaged.zip

The output is an ordinary checkpoint (loadable as ``ppo:PATH``, resumable with
``train.ppo --resume``): the newest input's optimizer state, settings and metadata, the
averaged weights, and ``averaged_from`` in its metadata (each input's run, file name, steps
and digest); with ``--lineage stages.json``, the training stages that led to the inputs and
whether any of them imitated a teacher (``imitation``). Inputs with another network (other
parameter names or shapes), rules or observation layout are refused. :func:`ship` makes a
checkpoint the shipped policy with its whole lineage (the run folders' ``ship.py`` call it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.ppo import CheckpointError, file_digest, read_meta

#: Metadata that must be equal in every averaged checkpoint (the network's input and rules).
SAME_META = ("format", "observation_size", "rules", "privileged_size")


def check_lineage(lineage: object) -> None:
    """Refuse a lineage that is not a list of stages, each a dict with an integer
    ``imitation_matches``."""
    if not (isinstance(lineage, list) and all(
            isinstance(stage, dict) and type(stage.get("imitation_matches")) is int for stage in lineage)):
        raise ValueError("a lineage is a list of stages, each a JSON object with an integer imitation_matches")


def add_lineage(meta: dict, lineage: list[dict]) -> None:
    """Put ``lineage`` into checkpoint metadata ``meta``, with ``imitation``: whether any
    stage imitated a teacher (what tests/test_scratch_policy.py reads of the shipped policy)."""
    check_lineage(lineage)
    meta["lineage"] = lineage
    meta["imitation"] = any(stage["imitation_matches"] > 0 for stage in lineage)


def ship(average: str | Path, lineage: list[dict], to: str | Path | None = None) -> dict:
    """Copy checkpoint ``average`` to ``to`` (the shipped policy file,
    ``agents.ppo.SHIPPED_POLICY``, by default) with ``lineage``, the whole of its training, in
    the metadata (:func:`add_lineage`); the weights are copied as they are. Returns the
    metadata written. The lineage is checked before anything is written."""
    import shutil

    from agents.ppo import SHIPPED_POLICY, write_meta

    check_lineage(lineage)
    to = Path(to or SHIPPED_POLICY)
    shutil.copyfile(average, to)
    meta = read_meta(to)
    add_lineage(meta, lineage)
    write_meta(to, meta)
    return meta


def ship_successor(average: str | Path, stages: list[dict], to: str | Path | None = None) -> dict:
    """:func:`ship` ``average`` in place of the file ``to`` (the shipped policy by default) with
    that file's lineage followed by ``stages``, the training since it. Refused, with nothing
    written, where that lineage already holds a run of ``stages`` (the file is this one already)."""
    from agents.ppo import SHIPPED_POLICY

    to = Path(to or SHIPPED_POLICY)
    previous = read_meta(to).get("lineage", [])
    again = ({stage.get("run") for stage in stages} & {stage.get("run") for stage in previous}) - {None}
    if again:
        raise ValueError(f"{to}: its lineage holds runs {sorted(again)} already (it is this policy or a later one)")
    return ship(average, previous + list(stages), to)


def average_checkpoints(paths: Sequence[str | Path], out: str | Path, lineage: list[dict] | None = None) -> Path:
    """Write the mean of the checkpoints' network weights to ``out``; returns ``out``.

    ``lineage`` (each stage of the training that led to the inputs, a dict with at least
    ``imitation_matches``) goes into the metadata with ``imitation``: whether any stage
    imitated a teacher."""
    import torch
    from stable_baselines3.common.save_util import load_from_zip_file

    from agents.nets.policy import load_model
    from agents.ppo import save_checkpoint

    paths = [Path(p) for p in paths]
    if lineage is not None:
        check_lineage(lineage)
    if len(paths) < 2:
        raise ValueError(f"averaging needs at least 2 checkpoints, got {len(paths)}")
    if Path(out).resolve() in {p.resolve() for p in paths}:
        raise ValueError(f"--out {out} is one of the inputs; write the average to a new file")
    metas = [read_meta(p) for p in paths]
    steps = [int(m.get("timesteps", -1)) for m in metas]
    order = sorted(range(len(paths)), key=lambda i: steps[i])
    newest = order[-1]
    for path, meta in zip(paths, metas, strict=True):
        for key in SAME_META:
            if meta.get(key) != metas[newest].get(key):
                raise CheckpointError(f"{path}: its {key} differs from {paths[newest]}'s; "
                                      "only checkpoints of one run can be averaged")
    states = []
    for path in paths:
        _, params, _ = load_from_zip_file(path, device="cpu", print_system_info=False)
        states.append(params["policy"])
    reference = states[newest]
    reference_shapes = {k: v.shape for k, v in reference.items()}
    for path, state in zip(paths, states, strict=True):
        if {k: v.shape for k, v in state.items()} != reference_shapes:
            raise CheckpointError(f"{path}: its network differs from {paths[newest]}'s "
                                  "(other parameter names or shapes); only checkpoints of one run can be averaged")
    mean = {}
    for key, value in reference.items():  # integer buffers (none today) are the newest's
        mean[key] = (torch.stack([s[key] for s in states]).mean(dim=0) if torch.is_floating_point(value)
                     else value)
    model = load_model(paths[newest], device="cpu")
    model.policy.load_state_dict(mean)
    meta = dict(metas[newest])
    meta.pop("timesteps", None)
    meta["averaged_from"] = [{"run": metas[i].get("run", ""), "checkpoint": paths[i].name, "timesteps": steps[i],
                              "sha256": file_digest(paths[i])} for i in order]
    if lineage is not None:
        add_lineage(meta, lineage)
    return save_checkpoint(model, out, meta)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.average", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoints of one run (ppo_<steps>_steps.zip)")
    parser.add_argument("--out", required=True, help="the averaged checkpoint to write")
    parser.add_argument("--lineage", default="", help="JSON file: the list of training stages that led to "
                        "the inputs (each with imitation_matches), kept in the metadata with 'imitation'")
    args = parser.parse_args(argv)
    try:
        lineage = json.loads(Path(args.lineage).read_text()) if args.lineage else None
        path = average_checkpoints(args.checkpoints, args.out, lineage)
    except (CheckpointError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: the mean of {len(args.checkpoints)} checkpoints")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
