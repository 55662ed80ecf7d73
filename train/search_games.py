"""Search games: the critic-valued search plays whole matches and every decision it searched
is recorded as a distillation target (``train.ppo --distill DIR``; docs/search.md,
"Distilled back into the policy").

    python -m train.search_games --out runs/search_games --matches 400 --workers 2

A decision is recorded when the search weighed more than one candidate
(:attr:`agents.search.SearchAgent.last_search`): the seat's observation and action mask,
the move the search chose, the baseline it had to beat (the policy's own move), the
candidates with their mean values and visit counts (worlds each was valued on: all of them
unless the search halves, ``gumbel_k``), the worlds played, and the policy's log-probabilities
at the decision (what ``train.ppo --distill-target soft`` improves on). Trivial decisions (one legal
move, or gin) teach nothing the policy does not do already and are left out.

How the games are played: match ``s`` of the run (``seed``, ``seed + 1``, ...) seats the
search at seat ``s % n`` of the ``n`` seats and ``opponents[(s // n) % len(opponents)]`` at
every other seat (the rest of the league: the shipped policy and the Expert by default; in
a partnership the search's partner too), so every opponent meets the search from every
seat. Any format: ``--rules hollywood_three_hand`` records three-hand decisions (the
search of a format is the critic's, :mod:`hgin_env.format_worlds`), and ``train.ppo
--distill`` takes games of its own rules only. Every random choice flows from the match
seed.

Where it runs: ``workers`` processes on this machine (default: every core), or Ray tasks
when ``RAY_ADDRESS`` names a cluster (the driver writes the files, so the cluster needs no
shared disk). Matches go in chunks of ``chunk``; each finished chunk is one file
``chunks/<first seed>.npz``, so a stopped run keeps what it finished and the same command
(or one with a larger ``--matches``) plays only the missing chunks. ``args.json`` holds
the settings that decide the games; a rerun with different ones is refused.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from train import run

#: The critic-valued search the duel plays with (docs/runs/search_critic: 63% of 400 held-out
#: matches against the Expert, 56.5% against the shipped policy).
CRITIC_SEARCH = ("search:value=critic,rollouts=32,prior_k=2,width=1,until=hand,policy_plies=80,"
                 "confidence=2")
#: Padding of the candidate arrays (a searched decision weighs at most a handful).
MAX_CANDIDATES = 12


@dataclass
class Args:
    out: str = field(default="runs/search_games", metadata={"help": "folder of the recorded games"})
    search: str = field(default=CRITIC_SEARCH, metadata={"help": "the search agent's spec"})
    opponents: str = field(default="ppo:,expert", metadata={
        "help": "comma-separated opponent specs, taken in turn (each from both seats)"})
    rules: str = field(default="hollywood", metadata={"help": "rules profile name"})
    matches: int = field(default=100, metadata={"help": "matches to record (a rerun plays only the missing)"})
    seed: int = field(default=30_000_000, metadata={"help": "seed of the first match"})
    chunk: int = field(default=2, metadata={"help": "matches per task and per file"})
    workers: int = field(default=0, metadata={"help": "worker processes (0 = every core; Ray when RAY_ADDRESS)"})
    working_dir: str = field(default="", metadata={
        "help": "with RAY_ADDRESS: folder shipped to the cluster's nodes as their working dir (e.g. .)"})
    progress_bar: bool = field(default=True, metadata={"help": "show a progress bar"})


#: The settings that decide the games: a rerun into the folder must give the same.
GAME_SETTINGS = ("search", "opponents", "rules", "seed", "chunk")


@dataclass
class SearchTargets:
    """Recorded searched decisions (one row each)."""

    observations: np.ndarray  # float32 [N, obs]
    masks: np.ndarray  # bool [N, 108]
    actions: np.ndarray  # int64 [N]: the search's move
    baselines: np.ndarray  # int64 [N]: the move it had to beat (the policy's)
    candidates: np.ndarray  # int64 [N, MAX_CANDIDATES], -1 padded
    means: np.ndarray  # float32 [N, MAX_CANDIDATES], mean value of each candidate
    worlds: np.ndarray  # int32 [N]
    seeds: np.ndarray  # int64 [N]: the match each came from
    visits: np.ndarray  # int32 [N, MAX_CANDIDATES]: worlds each candidate was valued on, 0 padded
    #: float32 [N, 108]: the policy's log-probabilities (floored at log 1e-30), 0 on illegal
    #: moves; NaN rows where the search had no policy or the games predate the field.
    logits: np.ndarray

    FIELDS = ("observations", "masks", "actions", "baselines", "candidates", "means", "worlds", "seeds",
              "visits", "logits")

    def __len__(self) -> int:
        return len(self.actions)

    @classmethod
    def concat(cls, parts: list[SearchTargets]) -> SearchTargets:
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in cls.FIELDS))

    def subset(self, rows: np.ndarray) -> SearchTargets:
        return SearchTargets(*(getattr(self, f)[rows] for f in self.FIELDS))

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, **{f: getattr(self, f) for f in self.FIELDS})
        os.replace(tmp, path)  # a kill leaves no half-written chunk

    @classmethod
    def load(cls, path: Path) -> SearchTargets:
        with np.load(path) as data:
            fields = {f: data[f] for f in cls.FIELDS if f in data}
        if "visits" not in fields:  # games recorded before the field: every candidate valued on every world
            fields["visits"] = np.where(fields["candidates"] >= 0, fields["worlds"][:, None], 0).astype(np.int32)
        if "logits" not in fields:
            fields["logits"] = np.full((len(fields["actions"]), 108), np.nan, dtype=np.float32)
        return cls(**fields)

    @property
    def has_logits(self) -> bool:
        """Whether every decision carries the policy's log-probabilities (a soft target's prior)."""
        return bool(len(self)) and not np.isnan(self.logits[:, 0]).any()

    @property
    def deviations(self) -> float:
        """Share of the decisions where the search left the baseline."""
        return float((self.actions != self.baselines).mean()) if len(self) else 0.0


def play_chunk(search: str, opponents: list[str], seeds: list[int], rules_dict: dict) -> SearchTargets:
    """Play the matches ``seeds`` with the search at seat ``s % n``; its searched decisions."""
    from agents.search import SearchAgent
    from arena.matches import AgentSpec, derive_seed, reset_agent
    from hgin_env.loop import run_match
    from hgin_env.match import Match
    from hgin_env.rules import Rules

    rules = Rules.from_dict(rules_dict)
    rows: dict[str, list] = {f: [] for f in SearchTargets.FIELDS}
    searcher = AgentSpec(search).build(rules)  # built once per chunk, reset per match
    if not isinstance(searcher, SearchAgent):
        raise ValueError(f"{search!r} is not a search agent")
    built = {name: AgentSpec(name).build(rules) for name in dict.fromkeys(opponents)}
    n = rules.num_players
    for s in seeds:
        seat = s % n
        opponent = built[opponents[(s // n) % len(opponents)]]
        reset_agent(searcher, derive_seed(s, 1))
        reset_agent(opponent, derive_seed(s, 2))
        policies = [opponent] * n
        policies[seat] = searcher

        def record(p: int, obs: dict, action: int, finished: list, seat: int = seat, searcher=searcher,
                   s: int = s) -> None:
            found = searcher.last_search if p == seat else None
            if found is None:
                return
            k = len(found.candidates)
            if k > MAX_CANDIDATES:
                raise ValueError(f"a decision weighed {k} candidates; MAX_CANDIDATES is {MAX_CANDIDATES}")
            rows["observations"].append(np.asarray(obs["observation"], dtype=np.float32))
            rows["masks"].append(np.asarray(obs["action_mask"], dtype=bool))
            rows["actions"].append(action)
            rows["baselines"].append(found.candidates[0])
            rows["candidates"].append(list(found.candidates) + [-1] * (MAX_CANDIDATES - k))
            rows["means"].append(list(found.means) + [0.0] * (MAX_CANDIDATES - k))
            rows["worlds"].append(found.worlds)
            rows["seeds"].append(s)
            rows["visits"].append(list(found.visits) + [0] * (MAX_CANDIDATES - k))
            mask = np.asarray(obs["action_mask"], dtype=bool)
            rows["logits"].append(np.full(108, np.nan) if found.prior is None else
                                  np.where(mask, np.log(np.maximum(found.prior, 1e-30)), 0.0))

        run_match(Match(rules, seed=s), policies, on_move=record)
    size = _observation_size(rules)
    return SearchTargets(
        np.asarray(rows["observations"], dtype=np.float32).reshape(-1, size),
        np.asarray(rows["masks"], dtype=bool).reshape(-1, 108),
        np.asarray(rows["actions"], dtype=np.int64), np.asarray(rows["baselines"], dtype=np.int64),
        np.asarray(rows["candidates"], dtype=np.int64).reshape(-1, MAX_CANDIDATES),
        np.asarray(rows["means"], dtype=np.float32).reshape(-1, MAX_CANDIDATES),
        np.asarray(rows["worlds"], dtype=np.int32), np.asarray(rows["seeds"], dtype=np.int64),
        np.asarray(rows["visits"], dtype=np.int32).reshape(-1, MAX_CANDIDATES),
        np.asarray(rows["logits"], dtype=np.float32).reshape(-1, 108))


def _observation_size(rules) -> int:
    from hgin_env.observation import ObservationLayout

    return ObservationLayout.for_rules(rules).size


def _play_task(task: tuple) -> tuple[int, SearchTargets]:
    search, opponents, seeds, rules_dict = task
    return seeds[0], play_chunk(search, opponents, seeds, rules_dict)


def load_targets(folder: str | Path) -> SearchTargets:
    """Every recorded decision in ``folder`` (its chunks in seed order)."""
    chunks = sorted(Path(folder, "chunks").glob("*.npz"), key=lambda p: int(p.stem))
    chunks = [c for c in chunks if not c.name.endswith(".tmp.npz")]
    if not chunks:
        raise ValueError(f"{folder} holds no recorded search games (chunks/*.npz)")
    return SearchTargets.concat([SearchTargets.load(c) for c in chunks])


def _check_settings(out: Path, args: Args) -> None:
    saved_path = out / "args.json"
    settings = {k: getattr(args, k) for k in GAME_SETTINGS}
    if saved_path.is_file():
        saved = json.loads(saved_path.read_text())
        differ = {k: (saved.get(k), v) for k, v in settings.items() if saved.get(k) != v}
        if differ:
            raise ValueError(f"{out} holds games played with other settings ({differ}); "
                             f"give another --out or the same settings")
    out.mkdir(parents=True, exist_ok=True)
    saved_path.write_text(json.dumps({**dataclasses.asdict(args), **settings}, indent=2) + "\n")


def record(args: Args) -> SearchTargets:
    """Play the missing chunks of the run in ``args.out`` (module docstring); every recorded
    decision of the folder."""
    from tqdm import tqdm

    from arena.matches import AgentSpec
    from hgin_env.rules import get_rules

    if args.matches < 1 or args.chunk < 1 or args.workers < 0:
        raise ValueError("--matches and --chunk must be >= 1, --workers >= 0")
    rules = get_rules(args.rules)
    opponents = [o for o in args.opponents.split(",") if o]
    if not opponents:
        raise ValueError("--opponents names no agent")
    for spec in [args.search, *opponents]:  # refuse bad specs here, not in the workers
        AgentSpec(spec).build(rules)
    out = Path(args.out)
    _check_settings(out, args)
    (out / "chunks").mkdir(exist_ok=True)
    starts = range(args.seed, args.seed + args.matches, args.chunk)
    tasks = [(args.search, opponents, list(range(s, min(s + args.chunk, args.seed + args.matches))),
              rules.to_dict()) for s in starts if not (out / "chunks" / f"{s}.npz").is_file()]
    done = args.matches - sum(len(t[2]) for t in tasks)
    bar = tqdm(total=args.matches, initial=done, desc="search games", unit="match",
               disable=not args.progress_bar)
    began = time.perf_counter()
    sizes = {task[2][0]: len(task[2]) for task in tasks}
    for first, targets in _run_tasks(tasks, args.workers, args.working_dir):
        targets.save(out / "chunks" / f"{first}.npz")
        bar.update(sizes[first])
    bar.close()
    targets = load_targets(out)
    summary = {"matches": args.matches, "decisions": len(targets), "deviations": targets.deviations,
               "mean_worlds": float(targets.worlds.mean()) if len(targets) else 0.0,
               "seconds_this_run": round(time.perf_counter() - began, 1)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return targets


def _run_tasks(tasks: list[tuple], workers: int, working_dir: str = ""):
    """Each task's (first seed, targets) as it finishes: Ray tasks when ``RAY_ADDRESS`` is
    set, else ``workers`` processes (1: in this process)."""
    if not tasks:
        return
    if os.environ.get("RAY_ADDRESS"):
        import ray

        runtime_env: dict = {"env_vars": {"OMP_NUM_THREADS": "1"}}
        if working_dir:
            runtime_env["working_dir"] = working_dir
        ray.init(address=os.environ["RAY_ADDRESS"], runtime_env=runtime_env, ignore_reinit_error=True,
                 log_to_driver=False)
        remote = ray.remote(num_cpus=1)(_play_task)
        pending = [remote.remote(task) for task in tasks]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])
        return
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        for task in tasks:
            yield _play_task(task)
        return
    import multiprocessing as mp

    # spawn: the search holds torch and numba state that a forked child should not inherit.
    with mp.get_context("spawn").Pool(min(workers, len(tasks))) as pool:
        yield from pool.imap_unordered(_play_task, tasks)


def main(argv: list[str] | None = None) -> int:
    args = run.parse_args(argv, None, Args, description=__doc__)
    try:
        targets = record(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted: the finished chunks are in {Path(args.out) / 'chunks'}; run the same command "
              "again to play the rest", file=sys.stderr)
        return 130
    print(f"{len(targets)} searched decisions in {args.out} ({targets.deviations:.1%} leave the baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
