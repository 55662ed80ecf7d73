"""Match files for the web table: the formats ``hgin play --save`` writes and ``hgin replay``
reads (``hgin-match`` for a duel, ``hgin-format-match`` for three-hand and partnership),
through :mod:`arena.records`, as the CLI does, and matches of a tournament folder
(``tournament.json`` + ``matches.csv`` of ``eval.tournament``), played again from their
seed with the same agents.

Every path the server opens for a replay goes through :func:`resolve_inside`: a relative
path under the configured folder, with no way out of it (``..``, absolute paths and
symbolic links that lead outside are refused).
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.records import (
    FORMAT_MATCH,
    MATCH_FORMAT,
    MatchFileError,
    load_format_match,
    load_match,
    save_format_match,
    save_match,
)
from hgin_env.match import Match
from hgin_env.rules import Rules, get_rules


class FileRefused(ValueError):
    """A replay request naming a file outside the folder, a missing file, or a corrupt one."""


@dataclass(frozen=True)
class Recording:
    """A match to replay: how to deal it again and every action in order."""

    rules: Rules
    seed: int | None
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
    """Save ``match`` (finished or not) as the CLI does: a duel as ``hgin-match`` (so
    ``hgin play --resume`` can play it on), a format match as ``hgin-format-match``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")  # a reader never sees a half-written file
    if match.duel_game is not None:
        save_match(match.duel_game, tmp, players)
    else:
        save_format_match(match, tmp, players)
    os.replace(tmp, path)
    return path


# --------------------------------------------------------------------------- loading
def resolve_inside(root: Path, relative: str) -> Path:
    """``root / relative`` when it stays inside ``root`` after resolving ``..`` and links."""
    if not isinstance(relative, str) or not relative or "\x00" in relative:
        raise FileRefused("'path' must be a non-empty relative path")
    if Path(relative).is_absolute() or relative.startswith(("/", "\\")):
        raise FileRefused(f"{relative!r}: only paths relative to the replay folder are served")
    base = root.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise FileRefused(f"{relative!r} is outside the replay folder")
    return path


def _recording(data: dict, match_or_game: Any, name: str) -> Recording:
    players = data.get("players")
    rules = get_rules(match_or_game.rules)
    if not (isinstance(players, list) and len(players) == rules.num_players
            and all(isinstance(p, str) for p in players)):
        players = [f"player_{i}" for i in range(rules.num_players)]
    return Recording(rules=rules, seed=data["seed"], first_dealer=data["first_dealer"],
                     single_hand=bool(data.get("single_hand", False)), actions=tuple(data["actions"]),
                     players=tuple(players), name=name, complete=bool(match_or_game.is_over))


def load_path(path: Path, name: str) -> Recording:
    """A saved match file, checked move by move by the CLI's loaders."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None  # load_match says why, in its words
    try:
        if isinstance(data, dict) and data.get("format") == FORMAT_MATCH:
            match = load_format_match(path, data)
            return _recording(data, match, name)
        data, game = load_match(path)
    except MatchFileError as exc:
        raise FileRefused(str(exc).replace(str(path), name)) from None
    return _recording(data, game, name)


def load_bytes(raw: bytes, name: str) -> Recording:
    """An uploaded match file (its bytes), checked as :func:`load_path` checks a file."""
    with tempfile.TemporaryDirectory(prefix="hgin_web_") as tmp:
        path = Path(tmp) / "upload.json"
        path.write_bytes(raw)
        return load_path(path, name)


def list_files(root: Path, limit: int = 500) -> dict[str, list[dict[str, Any]]]:
    """Match files (``*.json`` of either format) and tournament folders under ``root``,
    as paths relative to it, newest first."""
    base = root.resolve()
    found: list[tuple[float, dict[str, Any]]] = []
    tournaments: list[dict[str, Any]] = []
    if not base.is_dir():
        return {"matches": [], "tournaments": []}
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(dirpath)
        if "tournament.json" in filenames and "matches.csv" in filenames:
            tournaments.append({"path": here.relative_to(base).as_posix() or "."})
        for f in filenames:
            if not f.endswith(".json") or f.startswith(".") or f in ("tournament.json", "summary.json"):
                continue
            p = here / f
            if not p.resolve().is_relative_to(base):  # a link out of the folder: never served
                continue
            try:
                with p.open("rb") as fh:
                    head = fh.read(200)
                mtime = p.stat().st_mtime
            except OSError:
                continue
            if MATCH_FORMAT.encode() in head or FORMAT_MATCH.encode() in head:
                found.append((mtime, {"path": p.relative_to(base).as_posix()}))
        if len(found) >= limit:
            break
    found.sort(key=lambda x: -x[0])
    return {"matches": [f for _, f in found[:limit]], "tournaments": tournaments[:limit]}


# --------------------------------------------------------------------------- tournaments
class _Recorder:
    """An agent that notes each action it takes in a log shared by every seat (``Match.play``
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


def _tournament(folder: Path) -> tuple[dict, list[dict[str, str]]]:
    try:
        config = json.loads((folder / "tournament.json").read_text(encoding="utf-8"))
        with (folder / "matches.csv").open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, ValueError) as exc:
        raise FileRefused(f"{folder.name}: not a readable tournament folder ({exc})") from None
    if not isinstance(config, dict) or "agents" not in config or "rules" not in config:
        raise FileRefused(f"{folder.name}: tournament.json has no agents and rules")
    return config, rows


def tournament_matches(folder: Path, limit: int = 1000) -> list[dict[str, Any]]:
    """The matches of a tournament folder: seed, seating, agents, winner, hands."""
    _, rows = _tournament(folder)
    keys = ("seed", "a_seat", "agent_a", "agent_b", "winner", "hands")
    return [{k: r.get(k) for k in keys} for r in rows[:limit]]


def load_tournament_match(folder: Path, name: str, seed: int, a_seat: int, agent_a: str, agent_b: str) -> Recording:
    """One match of a tournament folder, played again by ``eval.tournament.play_match`` with
    the folder's agents and rules; the result must agree with its ``matches.csv`` row (the
    agents' randomness comes from the seed), or the replay is refused."""
    from arena.matches import AgentSpec, play_match

    config, rows = _tournament(folder)
    row = next((r for r in rows if r.get("seed") == str(seed) and r.get("a_seat") == str(a_seat)
                and r.get("agent_a") == agent_a and r.get("agent_b") == agent_b), None)
    if row is None:
        raise FileRefused(f"{name}: no match seed {seed}, seating {a_seat}, {agent_a} v {agent_b} in matches.csv")
    try:
        rules = Rules.from_dict(config["rules"])
        specs = {label: AgentSpec(spec, tuple(tuple(kv) for kv in kwargs), label)
                 for spec, kwargs, label in config["agents"]}
        log: list[int] = []
        again = play_match(_Recorder(specs[agent_a].build(rules), log), _Recorder(specs[agent_b].build(rules), log),
                           seed, a_seat, rules, agent_a, agent_b)
    except (KeyError, TypeError, ValueError, ImportError) as exc:
        raise FileRefused(f"{name}: cannot play the match again: {exc}") from None
    if (str(again["winner"]), str(again["hands"])) != (row.get("winner"), row.get("hands")):
        raise FileRefused(f"{name}: playing seed {seed} again gives {again['winner']} in {again['hands']} hands, "
                          f"matches.csv says {row.get('winner')} in {row.get('hands')}: the agents have changed")
    players = tuple(str(again[f"player_{s}"]) for s in range(rules.num_players))
    return Recording(rules=rules, seed=seed, first_dealer=None, single_hand=False, actions=tuple(log),
                     players=players, name=f"{name} seed {seed} seating {a_seat}", complete=True)
