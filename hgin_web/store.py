"""The server's games and replays: how many it holds, which go first, what is saved where,
and what comes back after a restart.

- **Caps.** At most ``max_games`` games in memory, ``max_games_per_client`` of them held by
  one client (its address); replays likewise. When a new one needs room, a finished game
  goes first, then an idle one (no request for ``idle_seconds``), oldest first; a client
  at its own cap makes room among its own games only. An active game of another client is
  never evicted: the request is refused with 429 instead.
- **Files.** Every game is saved after every change as ``web_<time>_<id>.json`` in the
  save folder (the format ``hgin replay`` reads) and, while it is being played, a hidden
  seat record ``.web_<time>_<id>.json.seat`` beside it: the game id, the SHA-256 of its seat
  token, the seats' agents and whether the seed was chosen. The record goes when the match
  ends. The folder holds at most ``max_saved`` game files: past that the oldest finished
  ones are deleted, then the oldest unfinished ones no longer in memory.
- **Restarts.** On start every unfinished game of the save folder is restored from its
  file and seat record (newest first, up to the cap; the rest, and a game evicted while
  idle, come back when first asked for), so its player goes on with the same id and seat
  token. Agents are rebuilt from their specs and seeds, as ``hgin play --resume`` does.
- **Seeds.** A seed that an unfinished game uses is *not* refused for a new game or a
  replay: a refusal would tell anyone which seeds are being played (send seed 7, read
  "in use"), and a seed is all it takes to deal a match's cards, here or offline with
  ``hgin play --seed``. What keeps a live deal secret is that its seed appears in no view
  but its seat token holder's (:meth:`hgin_web.games.WebGame.view`), and that a seed the
  server draws has about 63 bits (:func:`arena.records.draw_seed`); a seed a player
  chooses is as secret as it is hard to guess.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hgin_env.match import Match

from . import files
from .games import NewGame, Refused, Replay, SeatAgent, WebGame, check_agent_spec, new_token

log = logging.getLogger("hgin_web")


@dataclass(frozen=True)
class Limits:
    """How much a server holds (see the module)."""

    max_games: int = 256
    max_games_per_client: int = 64
    max_replays: int = 64
    max_replays_per_client: int = 16
    idle_seconds: float = 600.0
    max_saved: int = 2000


@dataclass
class _Unfinished:
    """A game being played that has a file: held in memory or not."""

    id: str
    path: Path


def _victim(items: Sequence[Any], idle_before: float) -> Any:
    """The item to evict for room: the oldest finished, else the oldest idle; None if all
    are active."""
    done = [x for x in items if getattr(x, "over", True)]
    if done:
        return min(done, key=lambda x: x.touched)
    idle = [x for x in items if x.touched <= idle_before]
    return min(idle, key=lambda x: x.touched) if idle else None


class Store:
    """Games and replays under random ids, with the caps, files and restores of the module."""

    def __init__(self, save_dir: Path | None, limits: Limits | None = None,
                 policy_dirs: Sequence[Path] = (), clock: Callable[[], float] = time.monotonic):
        self.save_dir = save_dir
        self.limits = limits or Limits()
        self.policy_dirs = list(policy_dirs)
        self.clock = clock
        self.games: dict[str, WebGame] = {}
        self.replays: OrderedDict[str, Replay] = OrderedDict()
        self.unfinished: dict[str, _Unfinished] = {}
        #: The game files of the save folder, oldest first: name -> finished.
        self.saved: OrderedDict[str, bool] = OrderedDict()
        self.lock = threading.RLock()
        self._restoring: dict[str, threading.Lock] = {}
        if save_dir is not None:
            self._index()
            self._restore_newest()

    # ------------------------------------------------------------------ caps
    def _room(self, table: dict[str, Any], client: str, per_client: int, total: int, what: str) -> None:
        """Make room for one more item of ``client`` in ``table`` (under the lock) or refuse."""
        idle_before = self.clock() - self.limits.idle_seconds
        mine = [x for x in table.values() if x.client == client]
        if len(mine) >= per_client:
            victim = _victim(mine, idle_before)
            if victim is None:
                raise Refused(429, f"you hold {per_client} active {what}s, this server's limit per client: "
                                   f"finish one, or wait until one has been idle {self.limits.idle_seconds:.0f} s")
            self._evict(table, victim)
        if len(table) >= total:
            victim = _victim(list(table.values()), idle_before)
            if victim is None:
                raise Refused(429, f"the server holds its limit of {total} active {what}s; try again later")
            self._evict(table, victim)

    def _evict(self, table: dict[str, Any], item: Any) -> None:
        del table[item.id]  # a game lives on as its file (an unfinished one comes back when asked for)

    # ------------------------------------------------------------------ games
    def new_game(self, new: NewGame, client: str) -> tuple[WebGame, str]:
        """A new match for ``client``: ``new.seats[seat]`` plays every seat but the human's.
        Returns the game and its seat token (given once: the server keeps only its hash)."""
        match = Match(new.rules, seed=new.seed)
        gid = secrets.token_hex(8)
        token, hashed = new_token()
        game = WebGame(gid, match, new.seat, list(new.seats), hashed, client, seed_visible=new.seed_chosen,
                       touched=self.clock())
        for s, seat in enumerate(new.seats):  # a checkpoint that does not load is refused now
            if seat is not None:
                game.agent(s)
        with self.lock:
            self._room(self.games, client, self.limits.max_games_per_client, self.limits.max_games, "game")
            if self.save_dir is not None:
                self.save_dir.mkdir(parents=True, exist_ok=True)
                game.path = self.save_dir / f"web_{time.strftime('%Y%m%d_%H%M%S')}_{gid}.json"
                self._write_seat_record(game)
                game.save()
                self.saved[game.path.name] = False
                self.unfinished[gid] = _Unfinished(gid, game.path)
            self.games[gid] = game
            self._prune()
        return game, token

    def saved_change(self, game: WebGame) -> None:
        """After a move was saved: a finished game's seat record goes (its file is then listed
        and replayable)."""
        if not game.over or game.path is None:
            return
        with self.lock:
            if self.unfinished.pop(game.id, None) is not None:
                files.sidecar_of(game.path).unlink(missing_ok=True)
                if game.path.name in self.saved:
                    self.saved[game.path.name] = True

    def game(self, gid: str, client: str = "") -> WebGame:
        with self.lock:
            game = self.games.get(gid)
            known = gid in self.unfinished
        if game is None and known:
            game = self._restore(gid, client)
        if game is None:
            raise Refused(404, f"no game {gid!r} on this server (its file may be in the replay list)")
        game.touched = self.clock()
        return game

    # ------------------------------------------------------------------ replays
    def new_replay(self, recording: files.Recording, client: str = "") -> Replay:
        replay = Replay(secrets.token_hex(8), recording, client)
        replay.touched = self.clock()
        with self.lock:
            self._room(self.replays, client, self.limits.max_replays_per_client, self.limits.max_replays, "replay")
            self.replays[replay.id] = replay
        return replay

    def replay(self, rid: str) -> Replay:
        with self.lock:
            item = self.replays.get(rid)
        if item is None:
            raise Refused(404, f"no replay {rid!r} on this server (open it again from the list)")
        item.touched = self.clock()
        return item

    def is_live_file(self, path: Path) -> bool:
        """Whether ``path`` is the file of a game being played (not listed, not replayable)."""
        return files.sidecar_of(path).exists()

    # ------------------------------------------------------------------ the save folder
    def _write_seat_record(self, game: WebGame) -> None:
        assert game.path is not None
        record = {"id": game.id, "token_sha256": game.token_hash, "human": game.human,
                  "seats": [None if a is None else a.label for a in game.seats],
                  "seed": game.match.seed, "seed_chosen": game.seed_visible}
        sidecar = files.sidecar_of(game.path)
        tmp = sidecar.with_name(sidecar.name + ".tmp")
        tmp.write_text(json.dumps(record) + "\n")
        os.replace(tmp, sidecar)

    def _index(self) -> None:
        """The save folder's game files and seat records (names only, and the records)."""
        assert self.save_dir is not None
        try:
            entries = sorted(os.listdir(self.save_dir))
        except OSError:
            return
        names = set(entries)
        for name in entries:
            if name.startswith("web_") and name.endswith(".json"):
                self.saved[name] = files.SIDECAR.format(name) not in names
        for name, finished in self.saved.items():
            if finished:
                continue
            path = self.save_dir / name
            try:
                record = json.loads(files.sidecar_of(path).read_text(encoding="utf-8"))
                gid = record["id"]
                if not isinstance(gid, str):
                    raise ValueError("bad id")
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("hgin web: %s: unreadable seat record (%s); the game cannot be resumed", name, exc)
                continue
            self.unfinished[gid] = _Unfinished(gid, path)

    def _prune(self) -> None:
        """Keep at most ``max_saved`` game files: the oldest finished go first, then the
        oldest unfinished ones not in memory."""
        assert self.save_dir is not None or not self.saved
        excess = len(self.saved) - self.limits.max_saved
        if excess <= 0:
            return
        held = {g.path.name for g in self.games.values() if g.path is not None and not g.over}
        order = [n for n, done in self.saved.items() if done] + [
            n for n, done in self.saved.items() if not done and n not in held]
        for name in order[:excess]:
            path = self.save_dir / name  # type: ignore[operator]
            path.unlink(missing_ok=True)
            files.sidecar_of(path).unlink(missing_ok=True)
            del self.saved[name]
            for gid, u in list(self.unfinished.items()):
                if u.path.name == name:
                    del self.unfinished[gid]

    def _restore_newest(self) -> None:
        newest = sorted(self.unfinished.values(), key=lambda u: u.path.name, reverse=True)
        for u in newest[:self.limits.max_games]:
            try:
                self._restore(u.id, "")
            except Refused as exc:
                log.warning("hgin web: %s: not restored: %s", u.path.name, exc.reason)

    def _restore(self, gid: str, client: str) -> WebGame | None:
        """The unfinished game ``gid`` from its file and seat record (None if gone)."""
        with self.lock:
            lock = self._restoring.setdefault(gid, threading.Lock())
        with lock:
            with self.lock:
                if gid in self.games:
                    return self.games[gid]
                u = self.unfinished.get(gid)
            if u is None:
                return None
            try:
                record = json.loads(files.sidecar_of(u.path).read_text(encoding="utf-8"))
                recording = files.load_path(u.path, u.path.name)
                seats: list[SeatAgent | None] = [
                    None if s == record["human"] else check_agent_spec(spec, self.policy_dirs)
                    for s, spec in enumerate(record["seats"])]
            except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
                raise Refused(410, f"game {gid!r} cannot be restored from {u.path.name}: "
                                   f"{getattr(exc, 'reason', exc)}") from None
            except Refused as exc:
                raise Refused(410, f"game {gid!r} cannot be restored from {u.path.name}: {exc.reason}") from None
            match = recording.new_match()
            game = WebGame(gid, match, record["human"], seats, record["token_sha256"], client,
                           seed_visible=bool(record.get("seed_chosen")), path=u.path)
            for action in recording.actions:
                game._apply(action)
            game.touched = self.clock() - (self.limits.idle_seconds if not client else 0)
            with self.lock:
                self._room(self.games, client, self.limits.max_games_per_client, self.limits.max_games, "game")
                self.games[gid] = game
            if match.is_over:  # finished before the seat record went: drop it now
                self.saved_change(game)
            return game
