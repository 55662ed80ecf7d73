"""Load on the web table (a script, not a test): N concurrent games played through the JSON
API of a real ``hgin web`` server on 127.0.0.1, each by a client thread that plays the human
seat (knock when it may, draw, discard the card leaving the least deadwood) with its seat
token while the server's agents play the others. Bounded in games, requests and seconds; it
stops by itself.

    nice -n 10 python -m eval.web_load --games 50 --rules hollywood --opponent random

Reports the moves applied per second (the human's and the agents') and the response time
of the API's requests (median, 95th percentile, max). Then (``--step-clients``, default 40)
as many clients watch agents-only games, each asking ``step`` with the largest ``moves``
the server allows, as fast as it answers, while one more client asks ``GET /api/meta``
every 50 ms: the response time of ``/api/meta`` under that load (the agents' moves run on
their own threads, so the server's other answers stay prompt).
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


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return 1000 * values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main(argv: Sequence[str] | None = None) -> int:
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
    p.add_argument("--step-opponent", default="expert", help="the agents of those games (default expert)")
    p.add_argument("--step-seconds", type=float, default=20, help="how long that part runs (default 20)")
    args = p.parse_args(argv)
    if not 1 <= args.games <= 500:
        p.error("--games must be in 1..500")
    if not 0 <= args.step_clients <= 60:
        p.error("--step-clients must be in 0..60 (the server holds 64 games per client)")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="hgin_web_load_") as tmp:
        server = subprocess.Popen([sys.executable, "-m", "hgin_cli", "web", "--host", HOST, "--port", str(port),
                                   "--save-dir", str(Path(tmp) / "games")], stdout=subprocess.DEVNULL)
        steppers: list[Player] = []
        probe = None
        try:
            _wait_up(port, server)
            conn = http.client.HTTPConnection(HOST, port, timeout=60)
            conn.request("GET", "/api/meta")
            max_moves = int(json.loads(conn.getresponse().read())["max_step_moves"])
            conn.close()
            budget, lock = [args.max_requests], threading.Lock()
            start = time.monotonic()
            players = [Player(port, {"rules": args.rules, "seat": 0, "opponents": args.opponent,
                                     "seed": args.seed + i}, start + args.max_seconds, budget, lock, max_moves)
                       for i in range(args.games)]
            for t in players:
                t.start()
            for t in players:
                t.join(args.max_seconds + 120)
            wall = time.monotonic() - start
            if args.step_clients:
                stop = threading.Event()
                probe = MetaProbe(port, stop)
                until = time.monotonic() + args.step_seconds
                steppers = [Player(port, {"rules": args.rules, "seat": None, "opponents": args.step_opponent,
                                          "seed": None}, until, budget, lock, max_moves, repeat=True)
                            for i in range(args.step_clients)]
                for t in steppers:
                    t.start()
                time.sleep(1)  # every client is stepping
                probe.start()
                for t in steppers:
                    t.join(args.step_seconds + 120)
                stop.set()
                probe.join(30)
        finally:
            server.terminate()
            server.wait(timeout=30)
    lat = sorted(x for t in players for x in t.latencies)
    moves = sum(t.moves for t in players)
    errors = [t.error for t in players + steppers if t.error] + ([probe.error] if probe and probe.error else [])

    print(f"{args.games} concurrent games ({args.rules}, human seat vs {args.opponent}, seat tokens) on {HOST}: "
          f"{sum(t.finished for t in players)} finished in {wall:.1f} s")
    print(f"moves applied: {moves} ({moves / wall:.0f} moves/s); requests: {len(lat)} ({len(lat) / wall:.0f}/s)")
    print(f"response time: median {_pct(lat, 0.5):.1f} ms, p95 {_pct(lat, 0.95):.1f} ms, "
          f"max {1000 * lat[-1] if lat else 0:.1f} ms")
    if probe is not None:
        step_moves = sum(t.moves for t in steppers)
        steps = sum(len(t.latencies) for t in steppers)
        print(f"{args.step_clients} clients stepping watched games ({args.step_opponent}) with moves="
              f"{max_moves} for {args.step_seconds:g} s: {steps} steps, {step_moves} moves; "
              f"step p95 {_pct([x for t in steppers for x in t.latencies], 0.95):.0f} ms")
        m = probe.latencies
        print(f"/api/meta meanwhile: {len(m)} requests, median {_pct(m, 0.5):.1f} ms, p95 {_pct(m, 0.95):.1f} ms, "
              f"max {1000 * max(m) if m else 0:.1f} ms")
    for e in errors[:5]:
        print("error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
