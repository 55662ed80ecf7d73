"""The games and replays a web table holds: one :class:`~hgin_env.match.Match` per game,
moved on by :meth:`Match.apply` (the human's moves) and by the agents of the other seats,
one move at a time, so a page can show each move at its own speed.

The server is authoritative: :meth:`WebGame.act` checks a move against the acting seat's
legal actions before anything changes, and refuses (:class:`Refused`, an HTTP status and a
reason) a move for another seat, out of turn, not in the mask, or after the match. Every
change is saved at once as a match file that ``hgin replay`` reads.

Each game has a secret seat token, given once to whoever creates it (as lichess gives each
player a secret beside the public game id): the server keeps only its SHA-256. Moves,
``step`` and the seat's own view need it; without it a game a person plays shows only its
public view (:func:`hgin_web.views.public_view`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.spec import known_agents, make_agent, parse_options, split_kind
from arena.records import describe_move
from hgin_env import actions as A
from hgin_env.cards import format_card
from hgin_env.game import MAX_SEED
from hgin_env.match import Match, RoundResult, SeatHand
from hgin_env.observation import ObservationLayout, observe
from hgin_env.rules import PROFILES, get_rules

from . import files, views

#: The longest list of checkpoints ``/api/meta`` offers (the policy folders' first, by path).
MAX_LISTED_CHECKPOINTS = 200
#: The options of ``search:KEY=VALUE,...`` a seat may set here (the search agent's keywords,
#: docs/agents.md), each with the values allowed: a range of numbers or a list of choices.
#: Bounded because one search move runs on the server's threads (a move of 256 worlds takes
#: about a second); ``policy`` is left out: it would load a checkpoint by any path.
SEARCH_OPTIONS: dict[str, dict[str, Any]] = {
    "value": {"choices": ["critic", "rollout"]},
    "rollouts": {"min": 1, "max": 256},
    "width": {"min": 1, "max": 8},
    "prior_k": {"min": 0, "max": 8},
    "until": {"choices": ["turn", "hand"]},
    "budget_ms": {"min": 1, "max": 5000},
}
#: Agents whose one move can take long (a search: tens of milliseconds to seconds): their
#: games' moves run in threads of their own (:mod:`hgin_web.scheduler`).
SLOW_AGENTS = ("search",)
#: Agent moves one ``step`` request may ask for.
MAX_STEP_MOVES = 500
#: Moves kept in a game's log for the page.
EVENTS_SENT = 60
#: The longest agent spec a seat may be given.
MAX_SPEC_LENGTH = 300


class Refused(Exception):
    """A request the server refuses, with its HTTP status and a one-line reason."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


# --------------------------------------------------------------------------- seat tokens
def new_token() -> tuple[str, str]:
    """A fresh seat token and the SHA-256 the server keeps of it."""
    token = secrets.token_urlsafe(24)
    return token, token_hash(token)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- agents
def builtin_agents() -> list[str]:
    """The agents a seat may be given by name: the plain names of the project's one registry
    of agent specs (:func:`agents.spec.known_agents`: random, simple, expert, search)."""
    return [name for name in known_agents() if ":" not in name]


def agent_choices(policy_dirs: Sequence[Path]) -> list[dict[str, Any]]:
    """What the page offers for a seat (``/api/meta``'s ``agents``): the registry's names,
    ``ppo`` (the shipped policy for the rules' format) and ``ppo:PATH`` for every ``.zip``
    checkpoint in the policy folders (PATH relative to its folder, as a seat names it)."""
    out: list[dict[str, Any]] = [{"spec": name, "kind": name} for name in builtin_agents()]
    for entry in out:
        if entry["kind"] == "search":
            entry["options"] = SEARCH_OPTIONS
    out.append({"spec": "ppo", "kind": "ppo"})
    seen: set[str] = set()
    for root in policy_dirs:
        try:
            found = sorted(p.relative_to(root).as_posix() for p in Path(root).rglob("*.zip") if files.is_file(p))
        except OSError:
            continue
        for rel in found:
            if len(seen) >= MAX_LISTED_CHECKPOINTS:
                break
            if rel not in seen and not any(part.startswith(".") for part in rel.split("/")):
                seen.add(rel)
                out.append({"spec": f"ppo:{rel}", "kind": "ppo"})
    return out


@dataclass(frozen=True)
class SeatAgent:
    """A checked agent spec: ``label`` as the page named it (``expert``, ``ppo``,
    ``ppo:runs/a/model.zip``: never an absolute path), ``spec`` as ``make_agent`` takes it
    (the checkpoint's resolved path) and ``root``, the policy folder it was found in."""

    label: str
    spec: str
    root: Path | None = None

    def hide_paths(self, text: str) -> str:
        """``text`` with the policy folder's absolute path taken out (errors name paths
        relative to the folder)."""
        if self.root is not None:
            text = text.replace(str(self.root.resolve()) + "/", "").replace(str(self.root.resolve()), ".")
        return text


def check_agent_spec(spec: Any, policy_dirs: Sequence[Path]) -> SeatAgent:
    """A seat's agent spec, checked: a name of the registry, ``search:KEY=VALUE,...`` with
    the options of :data:`SEARCH_OPTIONS`, ``ppo`` / ``ppo:`` (the shipped policy), or
    ``ppo:PATH`` (a ``.zip``) / ``rllib:PATH`` (a folder) with PATH inside one of
    ``policy_dirs`` (a page must not make the server unpickle a file anywhere on the disk)."""
    if not isinstance(spec, str) or not spec:
        raise Refused(400, f"an agent must be a name such as 'expert', got {spec!r}")
    if len(spec) > MAX_SPEC_LENGTH:
        raise Refused(400, f"an agent spec is at most {MAX_SPEC_LENGTH} characters, got {len(spec)}")
    if any(ord(c) < 32 or c == "\x7f" for c in spec):
        raise Refused(400, f"agent {spec!r} holds a control character")
    if spec in builtin_agents():
        return SeatAgent(spec, spec)
    if spec in ("ppo", "ppo:"):
        return SeatAgent("ppo", "ppo:")
    prefix, arg = split_kind(spec)
    if prefix == "search" and arg:
        check_search_options(arg)
        return SeatAgent(spec, spec)
    if prefix not in ("ppo", "rllib") or not arg:
        raise Refused(400, f"unknown agent {spec!r}; known: {', '.join(builtin_agents())}, "
                           "search:KEY=VALUE,..., ppo, ppo:PATH, rllib:PATH")
    what = ".zip checkpoint" if prefix == "ppo" else "checkpoint folder"
    try:
        files.check_relative(arg, "PATH", "the policy folders")
    except files.FileRefused as exc:
        raise Refused(400, f"{spec!r}: {exc}") from None
    for root in policy_dirs:
        try:
            path = files.resolve_inside(root, arg, "PATH", "the policy folders")
        except files.FileRefused:
            continue
        if (prefix == "ppo" and path.suffix == ".zip" and files.is_file(path)) or (
                prefix == "rllib" and files.is_dir(path)):
            return SeatAgent(spec, f"{prefix}:{path}", root)
    raise Refused(400, f"{spec!r}: no {what} {arg!r} inside the policy folders (hgin web --policy-dir)")


def check_search_options(arg: str) -> None:
    """``search:ARG``'s options, each one of :data:`SEARCH_OPTIONS` with an allowed value."""
    try:
        options = parse_options(arg, "search")
    except ValueError as exc:
        raise Refused(400, str(exc)) from None
    offered = ", ".join(SEARCH_OPTIONS)
    for key, value in options.items():
        allowed = SEARCH_OPTIONS.get(key)
        if allowed is None:
            raise Refused(400, f"search option {key!r} is not offered here; offered: {offered}")
        if "choices" in allowed:
            if value not in allowed["choices"]:
                raise Refused(400, f"search option {key}={value!r}: one of {', '.join(allowed['choices'])}")
        elif not (isinstance(value, int | float) and not isinstance(value, bool)
                  and allowed["min"] <= value <= allowed["max"]):
            raise Refused(400, f"search option {key}={value!r}: a number in {allowed['min']}..{allowed['max']}")


def build_agent(seat: SeatAgent, seed: int, rules: Any) -> Any:
    """The agent of a checked spec, seeded like ``hgin play`` seeds its opponents."""
    try:
        agent = make_agent(seat.spec, seed=seed, layout=ObservationLayout.for_rules(rules))
    except Exception as exc:  # a damaged or foreign checkpoint: SB3 raises many kinds
        reason = seat.hide_paths(" ".join(str(exc).split()))[:300]
        raise Refused(400, f"cannot load agent {seat.label!r}: {reason}") from None
    reset = getattr(agent, "reset", None)
    if reset is not None:
        reset(seed=seed)
    return agent


# --------------------------------------------------------------------------- moves said
def _describe(match: Match, action: int, names: Sequence[str]) -> dict[str, Any]:
    """One move, said before it is applied (``describe_move``: a draw from the stock or a
    knock never names the hidden card)."""
    seat = match.current_seat
    assert seat is not None
    table = match.tables[match.current_table]
    return {"seat": seat, "table": table.index, "hand": views.hand_number(match), "action": int(action),
            "text": describe_move(table.game, action, names[seat], symbols=False)}


def _finished_events(match: Match, finished: list[SeatHand | RoundResult]) -> list[dict[str, Any]]:
    out = []
    for item in finished:
        if isinstance(item, SeatHand):
            who = "dead hand" if item.winner is None else f"player_{item.winner} scores {item.points}"
            out.append({"seat": None, "table": item.table, "hand": (item.round or 0) + 1
                        if match.format == "partnership" else item.number,
                        "text": f"{views.hand_label(match, item)} over ({item.kind}): {who}"})
        else:
            who = "nobody (net 0)" if item.winner is None else f"team_{item.winner} scores {item.points}"
            out.append({"seat": None, "table": None, "hand": item.number + 1,
                        "text": f"Round {item.number + 1}: {who}"})
    return out


def _said_to(event: dict[str, Any], seat: int | None, names: Sequence[str]) -> dict[str, Any]:
    """``event`` as ``seat``'s own view shows it: its own draw from the stock names the card."""
    if event["seat"] == seat and event.get("action") == A.DRAW_STOCK and "drawn" in event:
        return dict(event, text=f"{names[seat]} draws {event['drawn']} from the stock")
    return event


# --------------------------------------------------------------------------- games
@dataclass
class WebGame:
    """A match on the table: ``human`` plays one seat (None: agents only, for watching).

    ``seats[s]`` is the checked agent of seat ``s`` (None at the human's); its agent is
    built when first asked to move. ``seed_visible``: the player chose the seed, so the
    views of the seat token's holder may show it before the end (no other view does: with
    the seed anyone deals every hidden card). ``client`` is the address that holds the game."""

    id: str
    match: Match
    human: int | None
    seats: list[SeatAgent | None]
    token_hash: str
    client: str
    seed_visible: bool = False
    path: Path | None = None
    agents: list[Any] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    #: Hands finished -> what the last of them added to the sheet's columns, row by row.
    columns_added: dict[int, list[list[int]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    touched: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if not self.agents:
            self.agents = [None] * self.match.num_players

    @property
    def labels(self) -> list[str]:
        return ["human" if a is None else a.label for a in self.seats]

    @property
    def names(self) -> list[str]:
        return [views.seat_name(s, self.labels) for s in range(self.match.num_players)]

    @property
    def over(self) -> bool:
        return self.match.is_over

    @property
    def slow(self) -> bool:
        """Whether a seat's agent is one of :data:`SLOW_AGENTS` (its moves run apart)."""
        return any(s is not None and split_kind(s.spec)[0] in SLOW_AGENTS for s in self.seats)

    def holds(self, token: str | None) -> bool:
        """Whether ``token`` is this game's seat token."""
        return token is not None and hmac.compare_digest(token_hash(token), self.token_hash)

    def agent(self, seat: int) -> Any:
        if self.agents[seat] is None:
            spec = self.seats[seat]
            assert spec is not None
            self.agents[seat] = build_agent(spec, int(self.match.seed or 0) + seat, self.match.rules)
        return self.agents[seat]

    def _apply(self, action: int) -> None:
        m = self.match
        event = _describe(m, action, self.names)
        table = m.tables[m.current_table]
        player = list(table.seats).index(event["seat"])
        held, top = table.game.hands[player], table.game.discard_top
        columns = np.array(m.sheet.columns, copy=True)
        finished = m.apply(action)
        if action == A.DRAW_STOCK:  # the card drawn: for the drawing seat's own view only
            event["drawn"] = format_card((table.game.hands[player] & ~held).bit_length() - 1)
        elif action == A.TAKE_DISCARD:
            event["drawn"] = format_card(top)
        event["n"] = len(m.action_history)
        self.events.append(event)
        self.events.extend(_finished_events(m, finished))
        if finished:  # what the hand (a partnership: the round) added to each row's columns
            self.columns_added[len(m.hand_history)] = (np.array(m.sheet.columns) - columns).tolist()

    def save(self) -> None:
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
        self.save()

    def step(self, moves: int, seconds: float) -> int:
        """Up to ``moves`` agent moves, stopping at the human's turn, the match's end, or
        once ``seconds`` have passed (after the move in progress); returns how many were made."""
        if self.match.is_over:
            raise Refused(409, "the match is over")
        if self.match.current_seat == self.human:
            raise Refused(409, f"it is your turn (seat {self.human}): send an action")
        made = 0
        deadline = time.monotonic() + seconds
        while made < moves and not self.match.is_over and self.match.current_seat != self.human:
            seat = self.match.current_seat
            action = int(self.agent(seat)(observe(self.match, seat)))
            if action not in self.match.legal_actions():
                raise Refused(500, f"the agent at seat {seat} ({self.labels[seat]}) chose an illegal action "
                                   f"{action}; this is a bug in the agent")
            self._apply(action)
            made += 1
            if time.monotonic() >= deadline:
                break
        self.save()
        return made

    def view(self, own: bool, seat: Any = None) -> dict[str, Any]:
        """The page: the human seat's view for its token holder (``own``), every hand open
        for a watched game, and the public view for anyone else; with the recent moves the
        page may see."""
        if seat is not None and (not own or seat != self.human):
            raise Refused(403, f"seat {seat!r} is not yours" + (f": you play seat {self.human}"
                                                                if own and self.human is not None else ""))
        m = self.match
        seed_visible = own and self.seed_visible  # a live game's seed: its token holder's only
        if self.human is None:
            out = views.spectator_view(m, self.labels, seed_visible)
            acting = m.current_seat
            out["policy"] = None if acting is None else views.policy_view(self.agent(acting), m)
            seen = self.events
        elif own:
            out = views.seat_view(m, self.human, self.labels, seed_visible)
            mine = m.table_of(self.human)
            # Moves at the seat's own table (three-hand: the one table, also while sitting
            # out) and the announced results; never the moves at another table.
            seen = [e for e in self.events
                    if e["seat"] is None or m.format != "partnership" or e["table"] == mine]
            seen = [_said_to(e, self.human, self.names) for e in seen]
            out["table"]["drawn"] = self._just_drawn()
        else:
            out = views.public_view(m, self.labels)
            seen = [e for e in self.events if e["seat"] is None]  # only the results
        seen = [{k: v for k, v in e.items() if k != "drawn"} for e in seen[-EVENTS_SENT:]]
        for r in out["results"]:
            r["columns_added"] = self.columns_added.get(r["index"] + 1)
        out.update({"id": self.id, "mode": "watch" if self.human is None else "play",
                    "events": seen, "event_count": len(seen), "yours": own,
                    "file": None if self.path is None or not m.is_over else self.path.name,
                    "settings": self.settings(out["seed"])})
        return out

    def _just_drawn(self) -> str | None:
        """The card the human just drew or took, while it is theirs to discard (else None)."""
        last = self.events[-1] if self.events else None
        m = self.match
        if last is None or last["seat"] != self.human or "drawn" not in last or m.current_seat != self.human:
            return None
        return last["drawn"]

    def settings(self, seed: int | None) -> dict[str, Any]:
        """What the page's settings bar shows for this game: rules, seat, agents, and the
        seed as the view shows it (None while it is hidden from that view)."""
        return {"rules": self.match.rules.name, "seat": self.human, "opponents": self.labels, "seed": seed}


# --------------------------------------------------------------------------- replays
class Replay:
    """A saved match, stepped through: the state after any number of its actions. The whole
    recording is played once when the replay is opened (an action that is illegal where it
    occurs is refused then, with its number); each view plays it again to the step asked."""

    #: A replay can always be opened again: when room is needed it goes first.
    over = True

    def __init__(self, id: str, recording: files.Recording, client: str = ""):
        self.id = id
        self.rec = recording
        self.client = client
        self.touched = time.monotonic()
        self.lock = threading.Lock()
        # Where each deal starts (a hand; a round of two hands in a partnership), and how
        # many events (moves and results) the log holds after each action.
        self.marks: list[dict[str, Any]] = []
        self.event_counts: list[int] = [0]
        m = recording.new_match()
        self.marks.append(self._mark(m, 0))
        for i, action in enumerate(recording.actions):
            if m.is_over or action not in m.legal_actions():
                name = A.describe_action(action) if 0 <= action < A.NUM_ACTIONS else "not an action id"
                raise Refused(400, f"{recording.name}: action #{i + 1} ({action}: {name}) is illegal where it "
                                   "occurs; the file is corrupt")
            finished = m.apply(action)
            self.event_counts.append(self.event_counts[-1] + 1 + len(finished))
            if m.dealt_anew(finished):
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
        said = max(0, step - EVENTS_SENT)  # only the last moves are described
        for action in self.rec.actions[:said]:
            m.apply(action)
        events: list[dict[str, Any]] = []
        for action in self.rec.actions[said:step]:
            event = _describe(m, action, names)
            finished = m.apply(action)
            events.append(event)
            events.extend(_finished_events(m, finished))
        out = views.spectator_view(m, labels, seed_visible=True)  # a replay's file holds it anyway
        out.update({"id": self.id, "mode": "replay", "name": self.rec.name, "step": step, "steps": n,
                    "marks": self.marks, "complete": self.rec.complete,
                    "events": events[-EVENTS_SENT:], "event_count": self.event_counts[step],
                    "settings": {"rules": self.rec.rules.name, "seat": None, "opponents": labels,
                                 "seed": self.rec.seed}})
        return out


# --------------------------------------------------------------------------- new games
@dataclass(frozen=True)
class NewGame:
    """``POST /api/games``'s body, checked."""

    rules: Any
    seat: int | None
    seats: list[SeatAgent | None]
    seed: int
    seed_chosen: bool


def parse_new_game(body: dict[str, Any], policy_dirs: Sequence[Path], seed_source: Callable[[], int]) -> NewGame:
    """``POST /api/games``'s body, checked: ``rules`` (a profile), ``seat`` (an int, "random",
    or null to watch agents), ``opponents`` (one agent for every other seat, or a list per
    seat, null at the human's) and ``seed`` (null: the server draws one and keeps it hidden
    until the match ends)."""
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
    chosen = seed is not None
    if seed is None:
        seed = seed_source()
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
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
        shown = repr(opponents)
        raise Refused(400, f"'opponents' must be one agent name or a list of {n} (one per seat), got "
                           f"{shown[:80] + '...' if len(shown) > 80 else shown}")
    checked = [None if s == seat else check_agent_spec(specs[s], policy_dirs) for s in range(n)]
    return NewGame(rules, seat, checked, seed, chosen)
