"""Load on the web table (a script, not a test): N concurrent games played through the JSON
API of a real ``hgin web`` server on 127.0.0.1, each by a client thread that plays the human
seat (knock when it may, draw, discard the card leaving the least deadwood) with its seat
token while the server's agents play the others. Bounded in games, requests and seconds; it
stops by itself.

    nice -n 10 python -m eval.web_load --games 50 --rules hollywood --opponent random

Reports the moves applied per second (the human's and the agents') and the response time
of the API's requests (median, 95th percentile, max). Then two more parts, each bounded:

- **Stepping clients** (``--step-clients``, default 40): as many clients watch agents-only
  games of ``--step-opponent`` (each of ``--step-opponents``, default ``search`` and
  ``expert``), each asking ``step`` with the largest ``moves`` the server allows, as fast as
  it answers, while one more client asks ``GET /api/meta`` every 50 ms and another steps its
  own watched game against ``random`` one move at a time: the response times of both (the
  agents' threads serve the game that used them least first, and search games have threads
  of their own, so the one-move step waits for no long one).
- **Idle connections** (``--idle-connections``, default 1000): one address opens that many
  TCP connections and never sends a byte, opening a new one whenever the server closes one,
  while another client plays a game against ``random`` through the API: its requests'
  response times and failures (the server closes idle connections to make room).
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"  # the load goes to this machine only


def choose(view: dict[str, Any]) -> int:
    """A quick player on the page's view alone: big gin or knock when it may, discard the
    card that leaves the least deadwood, else pass the upcard or draw."""
    legal = view["legal_actions"]
    for kind in ("big_gin", "knock"):
        found = [a for a in legal if a["kind"] == kind]
        if found:
            return found[0]["id"]
    discards = [a for a in legal if a["kind"] == "discard"]
    if discards:
        after = view["table"]["discard_deadwood"]
        return min(discards, key=lambda a: (after[a["card"]], a["id"]))["id"]
    return next(a for a in legal if a["kind"] in ("pass", "draw", "take"))["id"]


class Player(threading.Thread):
    """One client: plays (or, ``repeat``, watches one game after another) until ``deadline``,
    asking ``step`` for ``max_moves`` agent moves at a time."""

    def __init__(self, port: int, body: dict[str, Any], deadline: float, budget: list[int], lock: threading.Lock,
                 max_moves: int, repeat: bool = False):
        super().__init__(daemon=True)
        self.port, self.body, self.deadline, self.budget, self.lock = port, body, deadline, budget, lock
        self.max_moves, self.repeat = max_moves, repeat
        self.latencies: list[float] = []
        self.moves = 0
        self.finished = False
        self.error: str | None = None

    token: str | None = None

    def _call(self, conn: http.client.HTTPConnection, method: str, path: str, body: Any) -> dict[str, Any]:
        with self.lock:
            if self.budget[0] <= 0:
                raise TimeoutError("request budget spent")
            self.budget[0] -= 1
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        start = time.perf_counter()
        conn.request(method, path, body=data, headers=headers)
        res = conn.getresponse()
        raw = res.read()
        self.latencies.append(time.perf_counter() - start)
        if res.status >= 400:
            raise RuntimeError(f"{method} {path}: {res.status} {raw[:200]!r}")
        return json.loads(raw)

    def run(self) -> None:
        conn = http.client.HTTPConnection(HOST, self.port, timeout=60)
        try:
            while True:
                self.token = None
                view = self._call(conn, "POST", "/api/games", self.body)
                gid, self.token = view["id"], view["seat_token"]
                while not view["over"] and time.monotonic() < self.deadline:
                    if view["mode"] == "play" and view["your_turn"]:
                        view = self._call(conn, "POST", f"/api/games/{gid}/actions", {"action": choose(view)})
                        self.moves += 1
                    else:
                        view = self._call(conn, "POST", f"/api/games/{gid}/step", {"moves": self.max_moves})
                        self.moves += view["moves_made"]
                self.finished = bool(view["over"])
                if not self.repeat or time.monotonic() >= self.deadline:
                    break
        except Exception as exc:  # reported, not raised: the other games go on
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            conn.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _wait_up(port: int, proc: subprocess.Popen, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode}")
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the server did not start")


class MetaProbe(threading.Thread):
    """``GET /api/meta`` every ``every`` seconds until ``stop`` is set; its response times."""

    def __init__(self, port: int, stop: threading.Event, every: float = 0.05):
        super().__init__(daemon=True)
        self.port, self.stop, self.every = port, stop, every
        self.latencies: list[float] = []
        self.error: str | None = None

    def run(self) -> None:
        conn = http.client.HTTPConnection(HOST, self.port, timeout=60)
        try:
            while not self.stop.is_set():
                start = time.perf_counter()
                conn.request("GET", "/api/meta")
                res = conn.getresponse()
                res.read()
                self.latencies.append(time.perf_counter() - start)
                if res.status != 200:
                    raise RuntimeError(f"/api/meta answered {res.status}")
                self.stop.wait(self.every)
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            conn.close()


class StepProbe(threading.Thread):
    """Watches games against ``random`` (new ones as they end), asking ``step`` for one move
    every ``every`` seconds until ``stop`` is set; its response times."""

    def __init__(self, port: int, stop: threading.Event, every: float = 0.05, opponent: str = "random"):
        super().__init__(daemon=True)
        self.port, self.stop, self.every, self.opponent = port, stop, every, opponent
        self.latencies: list[float] = []
        self.error: str | None = None

    def _call(self, conn: http.client.HTTPConnection, path: str, body: dict, token: str | None) -> dict:
        headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
        start = time.perf_counter()
        conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
        res = conn.getresponse()
        raw = res.read()
        if res.status >= 400:
            raise RuntimeError(f"POST {path}: {res.status} {raw[:200]!r}")
        if token:
            self.latencies.append(time.perf_counter() - start)
        return json.loads(raw)

    def run(self) -> None:
        conn = http.client.HTTPConnection(HOST, self.port, timeout=60)
        try:
            while not self.stop.is_set():
                view = self._call(conn, "/api/games", {"seat": None, "opponents": self.opponent}, None)
                token = view["seat_token"]
                while not view["over"] and not self.stop.is_set():
                    view = self._call(conn, f"/api/games/{view['id']}/step", {"moves": 1}, token)
                    self.stop.wait(self.every)
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            conn.close()


class IdleFlood(threading.Thread):
    """Holds ``count`` idle connections to the server from one address (never sending a
    byte), opening a new one whenever the server closes one, until ``stop`` is set."""

    def __init__(self, port: int, count: int, stop: threading.Event):
        super().__init__(daemon=True)
        self.port, self.count, self.stop = port, count, stop
        self.opened = 0
        self.held_most = 0

    def run(self) -> None:
        import selectors

        held: dict[socket.socket, None] = {}
        sel = selectors.DefaultSelector()
        try:
            while not self.stop.is_set():
                while len(held) < self.count and not self.stop.is_set():
                    try:
                        s = socket.create_connection((HOST, self.port), timeout=5)
                    except OSError:
                        break
                    s.setblocking(False)
                    held[s] = None
                    sel.register(s, selectors.EVENT_READ)
                    self.opened += 1
                self.held_most = max(self.held_most, len(held))
                for key, _ in sel.select(timeout=0.2):  # readable: the server closed it (or answered)
                    s = key.fileobj
                    sel.unregister(s)
                    s.close()
                    held.pop(s, None)
        finally:
            for s in held:
                s.close()
            sel.close()


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return 1000 * values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=50, help="concurrent games (default 50)")
    p.add_argument("--rules", default="hollywood")
    p.add_argument("--opponent", default="random")
    p.add_argument("--seed", type=int, default=0, help="game i is dealt from seed + i")
    p.add_argument("--max-seconds", type=float, default=300, help="stop the games after this long (default 300)")
    p.add_argument("--max-requests", type=int, default=200_000, help="stop after this many requests in all")
    p.add_argument("--step-clients", type=int, default=40,
                   help="clients stepping watched games with the largest moves while /api/meta is timed "
                        "(default 40; 0 skips it)")
    p.add_argument("--step-opponents", default="search,expert",
                   help="the agents of those games, one run each (default search,expert)")
    p.add_argument("--step-seconds", type=float, default=20, help="how long each stepping run lasts (default 20)")
    p.add_argument("--idle-connections", type=int, default=1000,
                   help="idle connections one address holds open while another client plays (default 1000; 0 skips)")
    p.add_argument("--idle-seconds", type=float, default=20, help="how long that part runs (default 20)")
    args = p.parse_args(argv)
    if not 1 <= args.games <= 500:
        p.error("--games must be in 1..500")
    if not 0 <= args.step_clients <= 60:
        p.error("--step-clients must be in 0..60 (each stepping run holds that many games, of 256)")
    if not 0 <= args.idle_connections <= 5000:
        p.error("--idle-connections must be in 0..5000")
    return args


@dataclass
class LoadRun:
    """What the three parts of a load run leave to report: the concurrent games, the
    stepping runs (opponent, clients, probes) and the idle flood with its players."""

    players: list[Player] = field(default_factory=list)
    wall: float = 0.0
    max_moves: int = 0
    stepping: list[tuple[str, list[Player], tuple[MetaProbe, StepProbe]]] = field(default_factory=list)
    flood: IdleFlood | None = None
    idle_players: list[Player] = field(default_factory=list)


def _join_all(threads: Sequence[threading.Thread], seconds: float) -> None:
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds)


def _play(port: int, args: argparse.Namespace, run: LoadRun) -> None:
    """The three parts, one after the other, against the server on ``port``."""
    conn = http.client.HTTPConnection(HOST, port, timeout=60)
    conn.request("GET", "/api/meta")
    run.max_moves = max_moves = int(json.loads(conn.getresponse().read())["max_step_moves"])
    conn.close()
    budget, lock = [args.max_requests], threading.Lock()
    start = time.monotonic()
    run.players = [Player(port, {"rules": args.rules, "seat": 0, "opponents": args.opponent,
                                 "seed": args.seed + i}, start + args.max_seconds, budget, lock, max_moves)
                   for i in range(args.games)]
    _join_all(run.players, args.max_seconds + 120)
    run.wall = time.monotonic() - start
    for opponent in filter(None, args.step_opponents.split(",") if args.step_clients else []):
        stop = threading.Event()
        probes = (MetaProbe(port, stop), StepProbe(port, stop))
        until = time.monotonic() + args.step_seconds
        clients = [Player(port, {"rules": args.rules, "seat": None, "opponents": opponent, "seed": None},
                          until, budget, lock, max_moves, repeat=True) for _ in range(args.step_clients)]
        for t in clients:
            t.start()
        time.sleep(1)  # every client is stepping
        for probe in probes:
            probe.start()
        for t in clients:
            t.join(args.step_seconds + 120)
        stop.set()
        for probe in probes:
            probe.join(60)
        run.stepping.append((opponent, clients, probes))
    if args.idle_connections:
        stop = threading.Event()
        run.flood = IdleFlood(port, args.idle_connections, stop)
        run.flood.start()
        time.sleep(2)  # the connections are open
        until = time.monotonic() + args.idle_seconds
        run.idle_players = [Player(port, {"rules": args.rules, "seat": 0, "opponents": "random", "seed": None},
                                   until, budget, lock, max_moves, repeat=True)]
        _join_all(run.idle_players, args.idle_seconds + 120)
        stop.set()
        run.flood.join(30)


def _report(args: argparse.Namespace, run: LoadRun) -> list[str]:
    """Prints the run's figures; returns the clients' errors."""
    players, wall, max_moves = run.players, run.wall, run.max_moves
    lat = sorted(x for t in players for x in t.latencies)
    moves = sum(t.moves for t in players)
    errors = [t.error for t in players if t.error]

    print(f"{args.games} concurrent games ({args.rules}, human seat vs {args.opponent}, seat tokens) on {HOST}: "
          f"{sum(t.finished for t in players)} finished in {wall:.1f} s")
    print(f"moves applied: {moves} ({moves / wall:.0f} moves/s); requests: {len(lat)} ({len(lat) / wall:.0f}/s)")
    print(f"response time: median {_pct(lat, 0.5):.1f} ms, p95 {_pct(lat, 0.95):.1f} ms, "
          f"max {1000 * lat[-1] if lat else 0:.1f} ms")
    for opponent, clients, (meta, one) in run.stepping:
        step_moves = sum(t.moves for t in clients)
        steps = sum(len(t.latencies) for t in clients)
        print(f"{args.step_clients} clients stepping watched games ({opponent}) with moves={max_moves} for "
              f"{args.step_seconds:g} s: {steps} steps, {step_moves} moves; their step p95 "
              f"{_pct([x for t in clients for x in t.latencies], 0.95):.0f} ms")
        for name, probe in (("/api/meta", meta), ("another client's one-move step against random", one)):
            m = probe.latencies
            print(f"  {name} meanwhile: {len(m)} requests, median {_pct(m, 0.5):.1f} ms, p95 {_pct(m, 0.95):.1f} ms,"
                  f" max {1000 * max(m) if m else 0:.1f} ms")
        errors += [t.error for t in (*clients, meta, one) if t.error]
    if run.flood is not None:
        flood, idle_players = run.flood, run.idle_players
        m = [x for t in idle_players for x in t.latencies]
        print(f"{args.idle_connections} idle connections from {HOST} for {args.idle_seconds:g} s ({flood.opened} "
              f"opened in all, at most {flood.held_most} open at once): another client's {len(m)} requests, "
              f"median {_pct(m, 0.5):.1f} ms, p95 {_pct(m, 0.95):.1f} ms, max {1000 * max(m) if m else 0:.1f} ms, "
              f"{sum(t.error is not None for t in idle_players)} failed")
        errors += [t.error for t in idle_players if t.error]
    return errors


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    port = _free_port()
    run = LoadRun()
    with tempfile.TemporaryDirectory(prefix="hgin_web_load_") as tmp:
        # Every client here is on the loopback, which the server counts as one client: its
        # share of the games is raised to the whole server's.
        server = subprocess.Popen([sys.executable, "-m", "hgin_cli", "web", "--host", HOST, "--port", str(port),
                                   "--save-dir", str(Path(tmp) / "games"), "--max-games", "256",
                                   "--max-games-per-client", "256"], stdout=subprocess.DEVNULL)
        try:
            _wait_up(port, server)
            _play(port, args, run)
        finally:
            server.terminate()
            server.wait(timeout=30)
    errors = _report(args, run)
    for e in errors[:5]:
        print("error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
