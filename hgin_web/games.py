"""The games and replays a web table holds: one :class:`~hgin_env.match.Match` per game,
moved on by :meth:`Match.apply` (the human's moves) and by the agents of the other seats,
one move at a time, so a page can show each move at its own speed.

The server is authoritative: :meth:`WebGame.act` checks a move against the acting seat's
legal actions before anything changes, and refuses (:class:`Refused`, an HTTP status and a
reason) a move for another seat, out of turn, not in the mask, or after the match. Every
change is saved at once as a match file that ``hgin replay`` reads.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.base import make_agent
from arena.records import describe_move
from hgin_env import actions as A
from hgin_env.match import Match, RoundResult, SeatHand
from hgin_env.observation import ObservationLayout
from hgin_env.rules import PROFILES, get_rules

from . import files, views

#: Agents a seat may be given; ``ppo:PATH`` and ``rllib:PATH`` load a checkpoint.
BUILTIN_AGENTS = ("random", "simple", "expert", "search")
#: Agent moves one ``step`` request may run.
MAX_STEP_MOVES = 10_000
#: Moves kept in a game's log for the page.
EVENTS_SENT = 60


class Refused(Exception):
    """A request the server refuses, with its HTTP status and a one-line reason."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def check_agent_spec(spec: Any, policy_dirs: Sequence[Path]) -> str:
    """A seat's agent spec, checked: a built-in name, ``ppo`` / ``ppo:`` (the shipped policy),
    or ``ppo:PATH`` / ``rllib:PATH`` with PATH inside one of ``policy_dirs`` (a page must not
    make the server unpickle a file anywhere on the disk)."""
    if not isinstance(spec, str) or not spec:
        raise Refused(400, f"an agent must be a name such as 'expert', got {spec!r}")
    if spec in BUILTIN_AGENTS or spec in ("ppo", "ppo:"):
        return "ppo:" if spec == "ppo" else spec
    prefix, sep, arg = spec.partition(":")
    if not sep or prefix not in ("ppo", "rllib") or not arg:
        raise Refused(400, f"unknown agent {spec!r}; known: {', '.join(BUILTIN_AGENTS)}, ppo, ppo:PATH, rllib:PATH")
    for root in policy_dirs:
        base = root.resolve()
        path = (base / arg).resolve()
        if path.is_relative_to(base) and path.exists():
            return f"{prefix}:{path}"
    raise Refused(400, f"{spec!r}: no such checkpoint inside the policy folders "
                       f"({', '.join(str(d) for d in policy_dirs)})")


def build_agent(spec: str, seed: int, rules: Any) -> Any:
    """The agent of a checked spec, seeded like ``hgin play`` seeds its opponents."""
    try:
        agent = make_agent(spec, seed=seed, layout=ObservationLayout.for_rules(rules))
    except (ValueError, ImportError, OSError) as exc:
        raise Refused(400, f"cannot load agent {spec!r}: {' '.join(str(exc).split())}") from None
    reset = getattr(agent, "reset", None)
    if reset is not None:
        reset(seed=seed)
    return agent


def _describe(match: Match, action: int, names: Sequence[str]) -> dict[str, Any]:
    """One move, said before it is applied (``describe_move``: a draw from the stock or a
    knock never names the hidden card)."""
    seat = match.current_seat
    assert seat is not None
    table = match.tables[match.current_table]
    return {"seat": seat, "table": table.index, "hand": match.hand_number, "action": int(action),
            "text": describe_move(table.game, action, names[seat], symbols=False)}


def _finished_events(finished: list[SeatHand | RoundResult]) -> list[dict[str, Any]]:
    out = []
    for item in finished:
        if isinstance(item, SeatHand):
            who = "dead hand" if item.winner is None else f"player_{item.winner} scores {item.points}"
            out.append({"seat": None, "table": item.table, "hand": item.number,
                        "text": f"Hand {item.number} over ({item.kind}): {who}"})
        else:
            who = "nobody (net 0)" if item.winner is None else f"team_{item.winner} scores {item.points}"
            out.append({"seat": None, "table": None, "hand": None, "text": f"Round {item.number + 1}: {who}"})
    return out


@dataclass
class WebGame:
    """A match on the table: ``human`` plays one seat (None: agents only, for watching)."""

    id: str
    match: Match
    human: int | None
    agents: list[Any]
    labels: list[str]
    path: Path | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    touched: float = field(default_factory=time.monotonic)

    @property
    def names(self) -> list[str]:
        return [views.seat_name(s, self.labels) for s in range(self.match.num_players)]

    def _apply(self, action: int) -> None:
        event = _describe(self.match, action, self.names)
        finished = self.match.apply(action)
        event["n"] = len(self.match.action_history)
        self.events.append(event)
        self.events.extend(_finished_events(finished))

    def _save(self) -> None:
        if self.path is not None:
            files.save(self.match, self.path, self.labels)

    def act(self, action: Any, seat: Any = None) -> None:
        """The human's move; refused (nothing changes) unless it is legal for the human now."""
        if self.human is None:
            raise Refused(409, "this game has no human seat (agents only): use step")
        if seat is not None and seat != self.human:
            raise Refused(403, f"seat {seat!r} is not yours: you play seat {self.human}")
        if not isinstance(action, int) or isinstance(action, bool):
            raise Refused(400, f"'action' must be an action id (an integer), got {action!r}")
        if self.match.is_over:
            raise Refused(409, "the match is over; no move is legal")
        acting = self.match.current_seat
        if acting != self.human:
            raise Refused(409, f"not your turn: seat {acting} ({self.labels[acting]}) acts; use step")
        legal = self.match.legal_actions()
        if action not in legal:
            name = A.describe_action(action) if 0 <= action < A.NUM_ACTIONS else "not an action id"
            raise Refused(422, f"action {action} ({name}) is not legal now; legal: "
                               + ", ".join(f"{a} ({A.describe_action(a)})" for a in sorted(legal)))
        self._apply(action)
        self._save()

    def step(self, moves: int) -> int:
        """Up to ``moves`` agent moves, stopping at the human's turn or the match's end;
        returns how many were made."""
        if self.match.is_over:
            raise Refused(409, "the match is over")
        if self.match.current_seat == self.human:
            raise Refused(409, f"it is your turn (seat {self.human}): send an action")
        made = 0
        while made < moves and not self.match.is_over and self.match.current_seat != self.human:
            seat = self.match.current_seat
            action = int(self.agents[seat](self.match.observation(seat)))
            if action not in self.match.legal_actions():
                raise Refused(500, f"the agent at seat {seat} ({self.labels[seat]}) chose an illegal action "
                                   f"{action}; this is a bug in the agent")
            self._apply(action)
            made += 1
        self._save()
        return made

    def view(self, seat: Any = None) -> dict[str, Any]:
        """The human seat's page (a watched game: the spectator's), with the recent moves
        the page may see."""
        if seat is not None and seat != self.human:
            raise Refused(403, f"seat {seat!r} is not yours" + (f": you play seat {self.human}"
                                                                if self.human is not None else ""))
        m = self.match
        if self.human is None:
            out = views.spectator_view(m, self.labels)
            acting = m.current_seat
            out["policy"] = None if acting is None else views.policy_view(self.agents[acting], m)
            seen = self.events
        else:
            out = views.seat_view(m, self.human, self.labels)
            mine = m.table_of(self.human)
            # Moves at the seat's own table (three-hand: the one table, also while sitting
            # out) and the announced results; never the moves at another table.
            seen = [e for e in self.events
                    if e["seat"] is None or m.format != "partnership" or e["table"] == mine]
        out.update({"id": self.id, "mode": "watch" if self.human is None else "play",
                    "events": seen[-EVENTS_SENT:], "event_count": len(seen),
                    "file": None if self.path is None else self.path.name})
        return out


class Replay:
    """A saved match, stepped through: the state after any number of its actions."""

    def __init__(self, id: str, recording: files.Recording):
        self.id = id
        self.rec = recording
        self.touched = time.monotonic()
        self.lock = threading.Lock()
        # Where each deal starts (a hand; a round of two hands in a partnership).
        self.marks: list[dict[str, Any]] = []
        m = recording.new_match()
        self.marks.append(self._mark(m, 0))
        for i, action in enumerate(recording.actions):
            finished = m.apply(action)
            if finished and not m.is_over and (m.format != "partnership"
                                               or any(isinstance(f, RoundResult) for f in finished)):
                self.marks.append(self._mark(m, i + 1))

    @staticmethod
    def _mark(m: Match, step: int) -> dict[str, Any]:
        if m.format == "partnership":
            return {"step": step, "label": f"Round {m.round_number + 1}"}
        return {"step": step, "label": f"Hand {m.hand_number}"}

    def view(self, step: Any) -> dict[str, Any]:
        n = len(self.rec.actions)
        if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step <= n:
            raise Refused(400, f"'step' must be an integer in 0..{n}, got {step!r}")
        m = self.rec.new_match()
        labels = list(self.rec.players)
        names = [views.seat_name(s, labels) for s in range(m.num_players)]
        events: list[dict[str, Any]] = []
        for action in self.rec.actions[:step]:
            event = _describe(m, action, names)
            finished = m.apply(action)
            events.append(event)
            events.extend(_finished_events(finished))
        out = views.spectator_view(m, labels)
        out.update({"id": self.id, "mode": "replay", "name": self.rec.name, "step": step, "steps": n,
                    "marks": self.marks, "complete": self.rec.complete,
                    "events": events[-EVENTS_SENT:], "event_count": len(events)})
        return out


class Store:
    """The server's games and replays, each under a random id; at most ``max_games`` and
    ``max_replays`` (the least recently used goes first: a game is saved, so it lives on
    as a file)."""

    def __init__(self, save_dir: Path | None, max_games: int = 256, max_replays: int = 64):
        self.save_dir = save_dir
        self.max_games = max_games
        self.max_replays = max_replays
        self.games: OrderedDict[str, WebGame] = OrderedDict()
        self.replays: OrderedDict[str, Replay] = OrderedDict()
        self.lock = threading.Lock()

    def _keep(self, table: OrderedDict, key: str, item: Any, limit: int) -> None:
        with self.lock:
            table[key] = item
            while len(table) > limit:
                table.popitem(last=False)

    def new_game(self, rules: Any, human: int | None, agent_specs: list[str], seed: int) -> WebGame:
        """A new match: ``agent_specs[seat]`` (checked specs) plays every seat but ``human``."""
        match = Match(rules, seed=seed)
        agents: list[Any] = [None] * match.num_players
        labels = ["human"] * match.num_players
        for s in range(match.num_players):
            if s != human:
                agents[s] = build_agent(agent_specs[s], seed + s, match.rules)
                labels[s] = agent_specs[s]
        gid = secrets.token_hex(8)
        path = None
        if self.save_dir is not None:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            path = self.save_dir / f"web_{time.strftime('%Y%m%d_%H%M%S')}_{gid}.json"
        game = WebGame(gid, match, human, agents, labels, path)
        game._save()
        self._keep(self.games, gid, game, self.max_games)
        return game

    def new_replay(self, recording: files.Recording) -> Replay:
        replay = Replay(secrets.token_hex(8), recording)
        self._keep(self.replays, replay.id, replay, self.max_replays)
        return replay

    def _get(self, table: OrderedDict, key: str, what: str) -> Any:
        with self.lock:
            item = table.get(key)
            if item is None:
                raise Refused(404, f"no {what} {key!r} on this server (finished long ago, or the server restarted)")
            table.move_to_end(key)
        item.touched = time.monotonic()
        return item

    def game(self, gid: str) -> WebGame:
        return self._get(self.games, gid, "game")

    def replay(self, rid: str) -> Replay:
        return self._get(self.replays, rid, "replay")


def parse_new_game(body: dict[str, Any], policy_dirs: Sequence[Path],
                   seed_source: Callable[[], int]) -> tuple[Any, int | None, list[str], int]:
    """``POST /api/games``'s body, checked: ``rules`` (a profile), ``seat`` (an int, "random",
    or null to watch agents), ``opponents`` (one agent for every other seat, or a list per
    seat, null at the human's) and ``seed``."""
    known = {"rules", "seat", "opponents", "seed"}
    unknown = sorted(set(body) - known)
    if unknown:
        raise Refused(400, f"unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    name = body.get("rules", "hollywood")
    if not isinstance(name, str) or name not in PROFILES:
        raise Refused(400, f"unknown rules profile {name!r}; known: {', '.join(sorted(PROFILES))}")
    rules = get_rules(name)
    n = rules.num_players
    seed = body.get("seed")
    if seed is None:
        seed = seed_source()
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise Refused(400, f"'seed' must be an integer in 0..2**63-1 or null, got {seed!r}")
    seat = body.get("seat", 0)
    if seat == "random":
        import random

        seat = random.Random(seed).randrange(n)  # as hgin play --seat random
    if seat is not None and (not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n):
        raise Refused(400, f"'seat' must be a seat in 0..{n - 1} ({rules.format}), 'random' or null, got {seat!r}")
    opponents = body.get("opponents", "expert")
    if isinstance(opponents, str):
        specs = [opponents] * n
    elif isinstance(opponents, list) and len(opponents) == n:
        specs = list(opponents)
    else:
        raise Refused(400, f"'opponents' must be one agent name or a list of {n} (one per seat), got {opponents!r}")
    checked = [None if s == seat else check_agent_spec(specs[s], policy_dirs) for s in range(n)]
    return rules, seat, checked, seed  # type: ignore[return-value]
