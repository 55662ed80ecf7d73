"""Match files for the web table: the one format ``hgin play --save`` writes and ``hgin
replay`` reads (``hgin-match``, every match format), through :mod:`arena.records`, as the
CLI does; the listing of the replay folder; and matches
of a tournament folder (``tournament.json`` + ``matches.csv`` of ``eval.tournament``),
played again from their seed with the same agents.

Every path a request names goes through :func:`resolve_inside`: a relative path under the
configured folder, with no way out of it (``..``, absolute paths, hidden names and symbolic
links that lead outside are refused, as are over-long paths and link loops).
"""

from __future__ import annotations

import csv
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from arena.records import SAVED_MATCH_FORMATS, MatchFileError, load_match, parse_json, read_json, save_match
from hgin_env.match import Match
from hgin_env.rules import Rules

#: The longest path text a request may name (a file name is at most 255 bytes on most disks).
MAX_PATH_TEXT = 1024
#: The most actions a replayed match may hold (a real match has a few thousand at most):
#: every step of a replay plays the match again from its start.
MAX_REPLAY_ACTIONS = 50_000
#: A web game's seat record beside its match file: ``.NAME.seat`` (hidden, never listed
#: or served). While it exists the game is being played.
SIDECAR = ".{}.seat"


class FileRefused(ValueError):
    """A replay request naming a file outside the folder, a missing file, or a corrupt one;
    ``status`` is the HTTP status to answer."""

    def __init__(self, reason: str, status: int = 400):
        super().__init__(reason)
        self.status = status


def sidecar_of(path: Path) -> Path:
    return path.with_name(SIDECAR.format(path.name))


@dataclass(frozen=True)
class Recording:
    """A match to replay: how to deal it again and every action in order."""

    rules: Rules
    seed: int
    first_dealer: int | None
    single_hand: bool
    actions: tuple[int, ...]
    players: tuple[str, ...]
    name: str
    complete: bool

    def new_match(self) -> Match:
        return Match(self.rules, seed=self.seed, first_dealer=self.first_dealer, single_hand=self.single_hand)


# --------------------------------------------------------------------------- saving
def save(match: Match, path: str | Path, players: list[str]) -> Path:
    """Save ``match`` (finished or not) as the CLI does (so ``hgin replay`` and ``hgin play
    --resume`` read it)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")  # a reader never sees a half-written file
    save_match(match, tmp, players)
    os.replace(tmp, path)
    return path


# --------------------------------------------------------------------------- paths
def check_relative(relative: Any, what: str = "path", folder: str = "the replay folder") -> PurePosixPath:
    """``relative`` as a path inside a folder, checked as text: non-empty, at most
    :data:`MAX_PATH_TEXT` characters, no control characters, not absolute, no ``..`` and no
    hidden (``.name``) part."""
    if not isinstance(relative, str) or not relative:
        raise FileRefused(f"{what!r} must be a non-empty relative path")
    if len(relative) > MAX_PATH_TEXT:
        raise FileRefused(f"{what!r} is {len(relative)} characters long; at most {MAX_PATH_TEXT}")
    if any(ord(c) < 32 or c == "\x7f" for c in relative):
        raise FileRefused(f"{what!r} holds a control character")
    if relative.startswith(("/", "\\")) or "\\" in relative or Path(relative).is_absolute():
        raise FileRefused(f"{relative!r}: only paths relative to {folder} are served")
    parts = PurePosixPath(relative).parts
    if any(p == ".." for p in parts):
        raise FileRefused(f"{relative!r} is outside {folder}")
    if any(p.startswith(".") and p != "." for p in parts):
        raise FileRefused(f"{relative!r}: hidden files are not served")
    if any(len(p.encode("utf-8")) > 255 for p in parts):
        raise FileRefused(f"{relative!r}: a part of the path is over 255 bytes")
    return PurePosixPath(relative)


def resolve_inside(root: Path, relative: Any, what: str = "path", folder: str = "the replay folder") -> Path:
    """``root / relative`` when it stays inside ``root`` after resolving links (see
    :func:`check_relative`); a link loop or an unreadable path is refused, never raised."""
    rel = check_relative(relative, what, folder)
    try:
        base = root.resolve()
        path = (base / rel).resolve()
    except (OSError, RuntimeError, ValueError):  # a link loop, a name the disk refuses
        raise FileRefused(f"{relative!r} cannot be resolved inside {folder} (a link loop?)") from None
    if not path.is_relative_to(base):
        raise FileRefused(f"{relative!r} is outside {folder}")
    return path


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


# --------------------------------------------------------------------------- loading
def load_data(data: Any, where: str, name: str) -> Recording:
    """A parsed match file (``where`` names it in the loader's errors, replaced by ``name``),
    checked to its last action by :func:`arena.records.load_match`."""
    try:
        data, match = load_match(where, data)
    except MatchFileError as exc:
        raise FileRefused(str(exc).replace(where, name)) from None
    recording = Recording(rules=match.rules, seed=data["seed"], first_dealer=data["first_dealer"],
                          single_hand=match.single_hand, actions=tuple(data["actions"]),
                          players=tuple(data["players"]), name=name, complete=match.is_over)
    if len(recording.actions) > MAX_REPLAY_ACTIONS:
        raise FileRefused(f"{name}: {len(recording.actions)} actions; a replay holds at most {MAX_REPLAY_ACTIONS}")
    return recording


def load_path(path: Path, name: str) -> Recording:
    """A saved match file, checked move by move by the loaders of :mod:`arena.records`."""
    try:
        data = read_json(path)
    except MatchFileError as exc:
        raise FileRefused(str(exc).replace(str(path), name)) from None
    return load_data(data, str(path), name)


def load_upload(raw: bytes, name: str) -> Recording:
    """An uploaded match file (its bytes), checked as :func:`load_path` checks a file."""
    try:
        data = parse_json(raw, name)
    except MatchFileError as exc:
        raise FileRefused(str(exc)) from None
    return load_data(data, name, name)


# --------------------------------------------------------------------------- listing
class Listing:
    """The match files and tournament folders of a replay folder, newest first.

    A file is read once to learn whether it is a match file (the first 200 bytes name the
    format); that answer is kept under its modification time and size, so a listing of
    thousands of files stats them and reads only the new or changed ones. Files of games
    still being played (a ``.NAME.seat`` beside them) are left out."""

    HEAD = 200

    def __init__(self, root: Path, limit: int = 500):
        self.root = root
        self.limit = limit
        self._known: dict[str, tuple[int, int, bool]] = {}
        self._lock = threading.Lock()
        #: Files whose heads were read (the test of the cache counts them).
        self.reads = 0

    def _is_match(self, path: Path, key: str, mtime: int, size: int) -> bool:
        known = self._known.get(key)
        if known is not None and known[:2] == (mtime, size):
            return known[2]
        try:
            with path.open("rb") as fh:
                head = fh.read(self.HEAD)
        except OSError:
            return False
        self.reads += 1
        found = any(name.encode() in head for name in SAVED_MATCH_FORMATS)
        self._known[key] = (mtime, size, found)
        return found

    def __call__(self) -> dict[str, list[dict[str, Any]]]:
        base = self.root.resolve()
        found: list[tuple[float, str]] = []
        tournaments: list[dict[str, Any]] = []
        if not is_dir(base):
            return {"matches": [], "tournaments": []}
        seen: set[str] = set()
        with self._lock:
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                here = Path(dirpath)
                names = set(filenames)
                if "tournament.json" in names and "matches.csv" in names:
                    tournaments.append({"path": here.relative_to(base).as_posix() or "."})
                for f in filenames:
                    if (not f.endswith(".json") or f.startswith(".") or f in ("tournament.json", "summary.json")
                            or SIDECAR.format(f) in names):
                        continue
                    p = here / f
                    try:
                        st = p.stat()
                        if p.is_symlink() and not p.resolve().is_relative_to(base):
                            continue  # a link out of the folder: never served
                    except (OSError, RuntimeError):
                        continue
                    key = p.relative_to(base).as_posix()
                    seen.add(key)
                    if self._is_match(p, key, st.st_mtime_ns, st.st_size):
                        found.append((st.st_mtime, key))
            for gone in set(self._known) - seen:  # the cache holds only what is there
                del self._known[gone]
        found.sort(key=lambda x: (-x[0], x[1]))
        return {"matches": [{"path": k} for _, k in found[:self.limit]], "tournaments": tournaments[:self.limit]}


# --------------------------------------------------------------------------- tournaments
class _Recorder:
    """An agent that notes each action it takes in a log shared by every seat (``run_match``
    asks one seat at a time, so the log is the match's action history)."""

    def __init__(self, agent: Any, log: list[int]):
        self._agent = agent
        self._log = log

    def __call__(self, observation: dict) -> int:
        action = int(self._agent(observation))
        self._log.append(action)
        return action

    def __getattr__(self, name: str) -> Any:  # reset and the rest: the agent's own
        return getattr(self._agent, name)


def _tournament(folder: Path, name: str) -> tuple[dict, list[dict[str, str]]]:
    try:
        config = json.loads((folder / "tournament.json").read_text(encoding="utf-8"))
        with (folder / "matches.csv").open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, ValueError, RecursionError, csv.Error) as exc:
        raise FileRefused(f"{name}: not a readable tournament folder ({type(exc).__name__})") from None
    if not isinstance(config, dict) or "agents" not in config or "rules" not in config:
        raise FileRefused(f"{name}: tournament.json has no agents and rules")
    return config, rows


def tournament_matches(folder: Path, name: str, limit: int = 1000) -> list[dict[str, Any]]:
    """The matches of a tournament folder: seed, seating, agents, winner, hands."""
    _, rows = _tournament(folder, name)
    keys = ("seed", "a_seat", "agent_a", "agent_b", "winner", "hands")
    return [{k: r.get(k) for k in keys} for r in rows[:limit]]


def tournament_seed(folder: Path, name: str, seed: int, a_seat: int, agent_a: str, agent_b: str) -> dict[str, str]:
    """The ``matches.csv`` row of one match (refused when there is none)."""
    _, rows = _tournament(folder, name)
    row = next((r for r in rows if r.get("seed") == str(seed) and r.get("a_seat") == str(a_seat)
                and r.get("agent_a") == agent_a and r.get("agent_b") == agent_b), None)
    if row is None:
        raise FileRefused(f"{name}: no match seed {seed}, seating {a_seat}, {agent_a} v {agent_b} in matches.csv",
                          404)
    return row


def load_tournament_match(folder: Path, name: str, seed: int, a_seat: int, agent_a: str, agent_b: str) -> Recording:
    """One match of a tournament folder, played again by ``arena.matches.play_match`` with
    the folder's agents and rules; the result must agree with its ``matches.csv`` row (the
    agents' randomness comes from the seed), or the replay is refused."""
    from arena.matches import AgentSpec, play_match

    config, _ = _tournament(folder, name)
    row = tournament_seed(folder, name, seed, a_seat, agent_a, agent_b)
    try:
        rules = Rules.from_dict(config["rules"])
        specs = {label: AgentSpec(spec, tuple(tuple(kv) for kv in kwargs), label)
                 for spec, kwargs, label in config["agents"]}
        log: list[int] = []
        again = play_match(_Recorder(specs[agent_a].build(rules), log), _Recorder(specs[agent_b].build(rules), log),
                           seed, a_seat, rules, agent_a, agent_b)
    except Exception as exc:  # a damaged config or an agent that no longer loads
        raise FileRefused(f"{name}: cannot play the match again ({type(exc).__name__}: "
                          f"{' '.join(str(exc).split())[:200]})") from None
    if (str(again["winner"]), str(again["hands"])) != (row.get("winner"), row.get("hands")):
        raise FileRefused(f"{name}: playing seed {seed} again gives {again['winner']} in {again['hands']} hands, "
                          f"matches.csv says {row.get('winner')} in {row.get('hands')}: the agents have changed")
    players = tuple(str(again[f"player_{s}"]) for s in range(rules.num_players))
    return Recording(rules=rules, seed=seed, first_dealer=None, single_hand=False, actions=tuple(log),
                     players=players, name=f"{name} seed {seed} seating {a_seat}", complete=True)
