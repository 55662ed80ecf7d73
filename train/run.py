"""What a training run is, for both trainers (``train.ppo`` with SB3, ``train.rllib_ppo``
with RLlib): its flags, where its folder is, the logs it keeps, how a resume takes over the
run's arguments and cuts its logs back, and its evaluation rows. One module, so a run
folder reads the same whichever trainer wrote it and a flag means one thing in both.

- Arguments: each trainer's ``Args`` dataclass (a :class:`train.recipe.Recipe`) becomes
  the command line (:func:`parse_args`); ``--n-envs 0`` / ``--n-steps 0`` take the batched
  engine's :data:`BATCHED_DEFAULTS` (:func:`resolved`).
- Resuming: the run's saved arguments, less :data:`NOT_RESUMED` (and a trainer's own
  additions), under the flags given again (:func:`resume_args`); the run continues in the
  folder its checkpoint sits in (:func:`run_folder_of`, :func:`run_folder`), its CSV logs
  cut back to the checkpoint's step (:func:`cut_logs`).
- Logs: CSV files appended row by row, flushed at each (:class:`CsvWriter`), so a kill
  leaves at most one short line, which :func:`rows_up_to` drops.
- Evaluations: duplicate matches on the seeds from :data:`EVAL_SEED`, one ``eval.csv`` row
  per opponent (:func:`evaluation_row`).

Stdlib only at import (``--help`` stays quick); the engine and the arena load on use.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import time
from pathlib import Path
from typing import Any, TypeVar

ArgsT = TypeVar("ArgsT")

# ---------------------------------------------------------------------- arguments
def parse_args(argv: list[str] | None, defaults: dict | None, cls: type[ArgsT],
               description: str | None = None) -> ArgsT:
    """Command-line flags from the fields of the dataclass ``cls`` (``--run-name`` for
    ``run_name``; booleans as ``--x`` / ``--no-x``), over ``defaults`` (by default the
    fields' defaults)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default,
                                help=f.metadata["help"])
        else:
            kind = {"int": int, "float": float, "str": str}[str(f.type)]
            text = f.metadata["help"]
            if "(default" not in text:
                text += f" (default: {f.default!r})" if kind is str else f" (default: {f.default})"
            parser.add_argument(flag, type=kind, default=f.default, help=text)
    if defaults:
        parser.set_defaults(**defaults)
    return cls(**vars(parser.parse_args(argv)))


#: Arguments a resumed run never takes over from the run it continues: where it is written
#: and what it starts from are this invocation's. Each trainer adds its own
#: (``train.ppo``: the imitation warm start, which a resumed run does not redo).
NOT_RESUMED = ("run_name", "out_dir", "resume", "init_from")


def resume_args(argv: list[str], saved: Any, cls: type[ArgsT], not_resumed: tuple[str, ...] = NOT_RESUMED,
                description: str | None = None) -> ArgsT:
    """The arguments of a resumed run: ``saved`` (those the run was started with, a dict;
    anything else counts as none), less ``not_resumed``, overridden by the flags given
    again in ``argv``."""
    names = {f.name for f in dataclasses.fields(cls)} - set(not_resumed)  # type: ignore[arg-type]
    saved = saved if isinstance(saved, dict) else {}
    return parse_args(argv, {k: v for k, v in saved.items() if k in names}, cls, description)


#: The batched engine's default (matches, rollout steps per match) per format. A
#: three-hand learner sits out every hand it lost: its match then waits a whole hand (about
#: 60 opponent decisions, one engine step each) before the learner acts again, so every
#: learner step carries a tail of small engine steps; twice the matches share that tail
#: (and half the rollout steps keep 4,096 decisions per update): 2,146 against 1,583
#: env steps/s of training on 2 cores (docs/training.md, Formats).
BATCHED_DEFAULTS = {"duel": (128, 32), "three_hand": (256, 16), "partnership": (128, 32)}
#: ``train.ppo``'s per-process environments (``--vec-env subproc`` / ``dummy``).
PROCESS_DEFAULTS = (4, 1024)


def resolved(args: ArgsT) -> ArgsT:
    """``args`` with ``--n-envs 0`` / ``--n-steps 0`` filled in: the batched engine's
    defaults for the rules' format (RLlib's runs are always batched; ``train.ppo``'s unless
    ``--vec-env`` says otherwise)."""
    if getattr(args, "vec_env", "batched") == "batched":
        from hgin_env.rules import get_rules

        n_envs, n_steps = BATCHED_DEFAULTS[get_rules(args.rules).format]  # type: ignore[attr-defined]
    else:
        n_envs, n_steps = PROCESS_DEFAULTS
    return dataclasses.replace(args, n_envs=args.n_envs or n_envs,  # type: ignore[type-var, attr-defined]
                               n_steps=args.n_steps or n_steps)  # type: ignore[attr-defined]


def configure_torch(threads: int) -> None:
    """torch for a training process: ``threads`` CPU threads, and no argument checks on the
    distributions (the opponents' and evaluations' policies build one per call; the checks
    cost time and check nothing the masks do not already guarantee)."""
    import torch

    torch.set_num_threads(threads)
    torch.distributions.Distribution.set_default_validate_args(False)


# ---------------------------------------------------------------------- the run folder
def default_run_name(prefix: str, seed: int) -> str:
    """``<prefix>_<seed>_<date>_<time>``: a run started without ``--run-name``."""
    return f"{prefix}_{seed}_{time.strftime('%Y%m%d_%H%M%S')}"


def run_folder_of(checkpoint: str | Path) -> Path | None:
    """The run folder a checkpoint belongs to: the folder holding ``args.json`` among its
    parent (``<run>/model.zip``, ``<run>/checkpoint/``) or, in a ``checkpoints`` folder,
    its grandparent (``<run>/checkpoints/x``); None when neither is a run folder (a
    checkpoint copied out of its run)."""
    parent = Path(checkpoint).resolve().parent
    for folder in ((parent.parent, parent) if parent.name == "checkpoints" else (parent,)):
        if (folder / "args.json").is_file():
            return folder
    return None


def run_folder(args: Any, prefix: str, resumed: str | Path | None = None) -> Path:
    """Where the run writes: ``--out-dir/--run-name``; without ``--run-name``, the folder of
    the ``resumed`` checkpoint's run (it continues there), else a new ``--out-dir`` folder
    named by :func:`default_run_name`."""
    if resumed and not args.run_name:
        found = run_folder_of(resumed)
        if found is not None:
            return found
    return Path(args.out_dir) / (args.run_name or default_run_name(prefix, args.seed))


# ---------------------------------------------------------------------- logs
class CsvWriter:
    """One CSV log of a run folder, appended to (a resumed run's file keeps its rows): the
    header once, then each row flushed as it is written, so a kill loses at most the row
    being written. Keys outside ``fields`` are ignored."""

    def __init__(self, path: Path, fields: list[str]):
        self.path = path
        self.fields = fields
        new = not path.exists()
        self.file = path.open("a", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=fields, extrasaction="ignore")
        if new:
            self.writer.writeheader()
            self.file.flush()

    def write(self, row: dict) -> None:
        self.writer.writerow(row)
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def rows_up_to(path: Path, column: str, step: int) -> list[str]:
    """The lines of a CSV log to keep when the run goes back to ``step``: the header and the
    rows in order up to the first one past ``step`` (its ``column``). A line cut short by a
    kill (no newline, wrong number of fields, no step) and everything after it is dropped."""
    lines = path.read_text().splitlines(keepends=True)
    if not lines or not lines[0].endswith("\n"):
        return []
    header = next(csv.reader([lines[0]]))
    if column not in header:
        return []
    at = header.index(column)
    kept = [lines[0]]
    for line in lines[1:]:
        fields = next(csv.reader([line]), [])
        if not line.endswith("\n") or len(fields) != len(header):
            break
        try:
            row_step = float(fields[at])
        except ValueError:
            break
        if row_step > step:
            break
        kept.append(line)
    return kept


def cut_logs(run_dir: Path, logs: dict[str, str], step: int) -> dict[str, int]:
    """Cut each CSV log of ``run_dir`` (``logs``: file name -> its step column) back to
    ``step`` (:func:`rows_up_to`), each rewritten whole in one rename; returns how many
    lines each dropped. The checkpoint a run resumes from does not contain what the later
    rows describe: the resumed run trains and logs those steps again."""
    dropped = {}
    for name, column in logs.items():
        path = Path(run_dir) / name
        if not path.exists():
            continue
        kept = rows_up_to(path, column, step)
        dropped[name] = max(0, len(path.read_text().splitlines()) - len(kept))
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_text("".join(kept))
        tmp.replace(path)
    return dropped


# ---------------------------------------------------------------------- evaluations
#: First seed of the evaluations (duplicate matches on seeds EVAL_SEED, EVAL_SEED+1...):
#: training deals from 63-bit seeds drawn by the batched engine, so these are held out from
#: it, and every evaluation of every run (both trainers') plays the same deals.
EVAL_SEED = 10_000
#: ``eval.csv``'s columns: one row per opponent per evaluation.
EVAL_FIELDS = ["timesteps", "opponent", "matches", "win_rate", "ci_low", "ci_high", "columns_won",
               "hands_per_match"]


def eval_log(run_dir: Path) -> CsvWriter:
    """The run's ``eval.csv``, appended to."""
    return CsvWriter(Path(run_dir) / "eval.csv", EVAL_FIELDS)


def evaluation_row(agent: Any, opponent: str, matches: int, rules: Any, steps: int,
                   seed: int = EVAL_SEED) -> dict:
    """``matches`` duplicate matches of ``agent`` against the agent spec ``opponent`` (the
    tournament harness, :func:`arena.evaluate.evaluate_against`) as an ``eval.csv`` row at
    ``steps``."""
    from arena.evaluate import evaluate_against

    s = evaluate_against(agent, opponent, matches=matches, seed=seed, rules=rules)
    return {"timesteps": steps, "opponent": opponent, "matches": s["matches"], "win_rate": s["a_win_rate"],
            "ci_low": s["ci_low"], "ci_high": s["ci_high"], "columns_won": s["a_columns_won"],
            "hands_per_match": s["hands_per_match"]}
