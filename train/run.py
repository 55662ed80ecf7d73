"""What a training run is, for both trainers (``train.ppo`` with SB3, ``train.rllib.ppo``
with RLlib): its flags, where its folder is, how it starts (new or resumed) and with which
league, the metadata its checkpoints carry, the logs it keeps, how a resume takes over the
run's arguments and cuts its logs back, its evaluation rows, and ``main``. One module, so a
run folder reads the same whichever trainer wrote it, a flag means one thing in both, and
a resume follows one set of rules.

- Arguments: each trainer's ``Args`` dataclass (a :class:`train.recipe.Recipe`) becomes
  the command line (:func:`parse_args`); ``--n-envs 0`` / ``--n-steps 0`` take the batched
  engine's :data:`BATCHED_DEFAULTS` (:func:`resolved`).
- Resuming: the run's saved arguments, less :data:`NOT_RESUMED` (and a trainer's own
  additions), under the flags given again (:func:`resume_args`); the run continues in the
  folder its checkpoint sits in (:func:`run_folder_of`, :func:`run_folder`), its CSV logs
  cut back to the checkpoint's step (:func:`cut_logs`).
- Logs: CSV files appended row by row, flushed at each (:class:`CsvWriter`), so a kill
  leaves at most one short line, which :func:`rows_up_to` drops.
- The start: each trainer's ``find_start`` reads its checkpoints into a :class:`Start`
  (the run folder, the resumed checkpoint, its step, the league saved with it); the league
  is built from it by :func:`make_league`, the same for both trainers (the resume rules
  there); :func:`run_meta` is what every checkpoint of the run carries, and
  :func:`open_run_folder` writes ``args.json`` and cuts a resumed run back.
- Evaluations: duplicate matches on the seeds from :data:`EVAL_SEED`, one ``eval.csv`` row
  per opponent (:func:`evaluation_row`).
- ``main``: a :class:`Trainer` (its ``Args``, how it reads a resumed run's arguments, its
  ``train``) run from the command line (:func:`main`): parse, merge a resume, train, report.

Stdlib only at import (``--help`` stays quick); the engine and the arena load on use.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from train.league import League

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


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity, else the machine's count)."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def torch_threads(requested: int, processes: int = 1) -> int:
    """torch's CPU threads per process: ``requested`` when > 0 (``--torch-threads``), else
    (0 = auto) ``OMP_NUM_THREADS`` when set (the usual way to pin a job's threads), else half
    the available cores shared evenly by the ``processes`` that run torch at the same time (a
    pipelined ``train.ppo``: the learner and its rollout worker), at least one. Half: the
    engine and the opponents need cores too, and torch's threads spin while they wait, so
    more threads than free cores collapse (on the shared 2-core machine, a synchronous
    ``train.ppo`` with 2 threads ran 605 steps/s against 8,734 with one, side by side)."""
    import os

    if requested < 0:
        raise ValueError(f"--torch-threads must be >= 0 (0 = auto), not {requested}")
    if requested:
        return requested
    pinned = os.environ.get("OMP_NUM_THREADS", "")
    if pinned.isdigit() and int(pinned) > 0:
        return int(pinned)
    return max(1, available_cores() // (2 * max(1, processes)))


#: ``--device`` values: where the learner runs.
DEVICES = ("auto", "cpu", "cuda")


class DeviceError(ValueError):
    """A ``--device`` that this machine cannot give (printed as one line by :func:`main`)."""


def torch_device(name: str) -> str:
    """The torch device of ``--device``: ``cpu``, ``cuda``, or ``auto`` (``cuda`` when
    torch sees a CUDA device, else ``cpu``). ``cuda`` on a machine where torch sees none is
    refused with the reason (:class:`DeviceError`)."""
    if name not in DEVICES:
        raise DeviceError(f"--device must be one of {', '.join(DEVICES)}, not {name!r}")
    if name == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if name == "cuda":
        built = "without CUDA" if torch.version.cuda is None else f"with CUDA {torch.version.cuda}, but sees no GPU"
        raise DeviceError(f"--device cuda: torch {torch.__version__} was built {built}; use --device cpu or auto")
    return "cpu"


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


# ---------------------------------------------------------------------- the start
@dataclass
class Start:
    """Where a run starts, found by the trainer's ``find_start`` before anything is written:
    its folder and, with ``--resume``, the checkpoint, its step, what the trainer saved with
    it and the league as it was then."""

    run_dir: Path
    #: The ``--resume`` checkpoint (None for a new run).
    checkpoint: Path | None = None
    #: The checkpoint's step (0 for a new run).
    step: int = 0
    #: What the trainer saved with the checkpoint (SB3: its ``hgin_meta.json``; RLlib: its
    #: ``hgin_state.json``).
    saved: dict = field(default_factory=dict)
    #: The league saved with the checkpoint (None: a new run, or none was saved).
    league: League | None = None
    #: The weights a new model starts from, or the checkpoint loaded whole to refuse a
    #: damaged file up front (each trainer's own kind; None when there are none).
    weights: Any = None


class ResumeError(ValueError):
    """A resume that cannot go ahead, with the reason (printed as one line by :func:`main`)."""


def warn(text: str) -> None:
    """One line on stderr: what a run does differently from what was asked, and why."""
    print(f"warning: {text}", file=sys.stderr)


def make_league(args: Any, start: Start) -> League | None:
    """``--league``: the PFSP league of the ``--opponents`` (train/league.py); None without it.

    Resumed, the league is the one saved with the checkpoint, the same rules for both
    trainers: its snapshots whose files are gone are dropped, each named in a warning (a
    run folder copied without them); every opponent ``--opponents`` names joins it at the
    checkpoint's step (the run's own opponents are members already, so only an opponent
    named again with ``--resume`` is new: a flag given means what it says, as for every
    other flag). With no league saved with the checkpoint, the league starts again from
    ``--opponents``, said in a warning."""
    if not args.league:
        return None
    from agents.spec import parse_mixture
    from train.league import League

    specs, _ = parse_mixture(args.opponents)
    if start.checkpoint is None or start.league is None:
        if start.checkpoint is not None:
            warn(f"no league state saved with {start.checkpoint}; the league starts again from --opponents")
        return League(specs, mode=args.pfsp, exponent=args.pfsp_exponent, pool_size=args.self_play_pool,
                      memory=args.league_memory)
    league = start.league
    for spec in league.drop_missing():
        warn(f"league snapshot {spec} is missing; the league goes on without it")
    for spec in specs:  # an opponent named in --opponents joins a resumed league
        league.add_member(spec, start.step)
    return league


def run_meta(args: Any, rules: Any, run_dir: Path, trainer_meta: dict | None = None) -> dict:
    """The metadata every checkpoint of the run carries (``hgin_meta.json``): the rules and
    observation layout (:func:`agents.ppo.checkpoint_meta`), the trainer's own keys
    (``trainer_meta``), the run's name and arguments, and the privileged critic's input size."""
    from agents.ppo import checkpoint_meta
    from hgin_env.batch import privileged_size

    meta = checkpoint_meta(rules, {**(trainer_meta or {}), "run": run_dir.name, "args": dataclasses.asdict(args)})
    if args.privileged_critic:  # the network's extra input columns, read by its critic only
        meta["privileged_size"] = privileged_size(rules.format)
    return meta


def open_run_folder(args: Any, start: Start, rewind: Callable[[Path, int], Any]) -> None:
    """Write ``args.json``; a resumed run first cuts its folder back to the checkpoint's step
    (``rewind``: the trainer's, which cuts its logs with :func:`cut_logs` and deletes what
    it saved after that step)."""
    start.run_dir.mkdir(parents=True, exist_ok=True)
    (start.run_dir / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    if start.checkpoint is not None:
        rewind(start.run_dir, start.step)


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


# ---------------------------------------------------------------------- the command line
@dataclass(frozen=True)
class Trainer:
    """What :func:`main` needs of a trainer."""

    #: The trainer's arguments (a :class:`train.recipe.Recipe` dataclass).
    args: type
    #: Its ``--help`` text (the trainer module's docstring).
    description: str | None
    #: Arguments a resumed run does not take over (:data:`NOT_RESUMED` and the trainer's own).
    not_resumed: tuple[str, ...]
    #: The arguments the resumed run was started with, from the ``--resume`` argument.
    saved_args: Callable[[str], Any]
    #: Runs the training; returns the final checkpoint.
    train: Callable[[Any], Path]
    #: Refusals printed as one ``error:`` line (exit status 2) rather than a traceback.
    refusals: tuple[type[Exception], ...]
    #: The last line printed, naming the final checkpoint.
    saved: Callable[[Path], str] = "saved {}".format


def main(trainer: Trainer, argv: list[str] | None = None) -> int:
    """The trainers' command line: the flags; with ``--resume``, the run's own arguments
    overridden by the flags given again (:func:`resume_args`); then the training. A refusal
    (a checkpoint that cannot be resumed or started from, a ``--device`` the machine lacks)
    is one line and exit status 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse_args(argv, None, trainer.args, trainer.description)
        if args.resume:
            args = resume_args(argv, trainer.saved_args(args.resume), trainer.args, trainer.not_resumed,
                               trainer.description)
        path = trainer.train(args)
    except (DeviceError, *trainer.refusals) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(trainer.saved(path))
    return 0
