"""The web table as a real ``hgin web`` server (a subprocess on a loopback port): what only a
real server can show (issue 32's rows about restarts, slow connections and load)."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

from hgin_web.games import MAX_STEP_MOVES

try:
    from tests.web_helpers import Server, bearer, greedy_choice, serving
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    from web_helpers import Server, bearer, greedy_choice, serving


def _play(server: Server, view: dict, auth: dict, human_moves: int) -> dict:
    made = 0
    while made < human_moves and not view["over"]:
        if view["your_turn"]:
            move = {"action": greedy_choice(view)}
            status, view = server.call("POST", f"/api/games/{view['id']}/actions", move, auth)
            made += 1
        else:
            status, view = server.call("POST", f"/api/games/{view['id']}/step", {"moves": MAX_STEP_MOVES}, auth)
        assert status == 200, view
    return view


def test_sigkill_mid_game_then_resume_with_the_seat_token(tmp_path: Path) -> None:
    """A server killed with SIGKILL in the middle of a game: started again on the same save
    folder, it holds the game with the same id, and its player goes on with the same seat
    token from the same position; others still see only the public view."""
    save = tmp_path / "games"
    with Server(save) as server:
        status, view = server.call("POST", "/api/games", {"rules": "hollywood", "seat": 0, "opponents": "simple"})
        assert status == 201
        token, gid = view["seat_token"], view["id"]
        auth = bearer(token)
        view = _play(server, view, auth, 15)
        status, before = server.call("GET", f"/api/games/{gid}", headers=auth)
        server.kill(9)
    files = list(save.glob("web_*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["complete"] is False
    played = len(json.loads(files[0].read_text())["actions"])
    with Server(save) as server:
        status, after = server.call("GET", f"/api/games/{gid}", headers=auth)
        assert status == 200 and after["view"] == "seat"
        assert after["table"] == before["table"] and after["sheet"] == before["sheet"]
        assert after["legal_actions"] == before["legal_actions"] and after["seed"] is None
        assert server.call("GET", f"/api/games/{gid}")[1]["view"] == "public"
        assert server.call("POST", f"/api/games/{gid}/step", {"moves": 1})[0] == 401
        view = _play(server, after, auth, 5)
        assert view["id"] == gid and not view.get("error")
        assert len(json.loads(files[0].read_text())["actions"]) > played


def test_slow_header_connection_is_cut(tmp_path: Path) -> None:
    """A connection that sends its header one byte every 0.4 s, or nothing at all, is closed
    once --header-timeout passes; a normal request on the same server is answered."""
    with Server(tmp_path / "games", "--header-timeout", "1.5") as server:
        def held_open(trickle: bool) -> float:
            start = time.monotonic()
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
                s.settimeout(0.4)
                request = b"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100
                for i in range(100):
                    if trickle:
                        try:
                            s.send(request[i:i + 1])
                        except OSError:
                            return time.monotonic() - start
                    try:
                        if s.recv(1024) == b"":
                            return time.monotonic() - start
                    except TimeoutError:
                        continue
                    except OSError:
                        return time.monotonic() - start
            raise AssertionError("the connection was held open for 40 s")

        for trickle in (True, False):
            held = held_open(trickle)
            assert 1.0 <= held < 5, (trickle, held)
        assert server.call("GET", "/api/meta")[0] == 200


def test_meta_answers_while_steps_run(tmp_path: Path) -> None:
    """Twelve clients asking ``step`` with the largest ``moves`` of watched games (expert v
    expert, and search) keep the agents' threads busy; ``/api/meta`` stays prompt, and each
    step stops at its move cap and time budget."""
    with Server(tmp_path / "games", "--agent-threads", "2", "--step-seconds", "0.25") as server:
        games = []
        for i in range(12):
            agents = "search" if i == 0 else "expert"
            status, view = server.call("POST", "/api/games", {"rules": "hollywood", "seat": None, "opponents": agents})
            assert status == 201, view
            games.append((view["id"], bearer(view["seat_token"])))
        stop = time.monotonic() + 4
        made: list[int] = []
        errors: list[str] = []

        def client(gid: str, auth: dict) -> None:
            while time.monotonic() < stop:
                status, out = server.call("POST", f"/api/games/{gid}/step", {"moves": MAX_STEP_MOVES}, auth)
                if status != 200:
                    if status == 409:  # the match is over
                        return
                    errors.append(f"{status} {out}")
                    return
                made.append(out["moves_made"])

        threads = [threading.Thread(target=client, args=g) for g in games]
        for t in threads:
            t.start()
        time.sleep(0.5)
        latencies = []
        while time.monotonic() < stop:
            start = time.monotonic()
            assert server.call("GET", "/api/meta")[0] == 200
            latencies.append(time.monotonic() - start)
            time.sleep(0.05)
        for t in threads:
            t.join(60)
    assert not errors, errors
    assert made and max(made) < MAX_STEP_MOVES  # the time budget stopped every step first
    latencies.sort()
    assert latencies[-1] < 1.5 and latencies[int(0.95 * len(latencies))] < 0.5, latencies[-5:]


def test_slow_body_is_refused(tmp_path: Path) -> None:
    """A body that does not arrive within body_seconds is answered 408 and the request goes."""
    from hgin_web.app import WebConfig, create_app

    app = create_app(WebConfig(save_dir=tmp_path / "games", body_seconds=1.0))
    with serving(app) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            c.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100\r\n\r\n{")
            start = time.monotonic()
            answer = b""
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                chunk = c.recv(4096)
                if not chunk:
                    break
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive" in answer, answer
            assert time.monotonic() - start < 5
        assert app.state.store.games == {}


def _raw_request(port: int, path: str = "/api/meta") -> tuple[int, dict[str, str], bytes]:
    """One GET on a fresh connection: status, headers (lower-case), body."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        res = conn.getresponse()
        return res.status, {k.lower(): v for k, v in res.getheaders()}, res.read()
    finally:
        conn.close()


def test_idle_connections_of_one_address_make_room_and_busy_ones_get_a_json_503(tmp_path: Path) -> None:
    """A server whose clients may hold 8 connections each: 30 idle connections from the
    loopback (one client) never shut out a new request, which closes an idle one to get
    in; with 8 connections busy (each mid-header), a ninth is answered 503 with
    ``{"error": ...}`` and Retry-After; once they are gone, requests succeed again."""
    from hgin_web.server import IDLE_SECONDS

    with Server(tmp_path / "games", "--connections-per-client", "8", "--header-timeout", "30") as server:
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(30)]
        time.sleep(IDLE_SECONDS + 0.3)
        answers = [_raw_request(server.port) for _ in range(12)]
        assert [status for status, _, _ in answers] == [200] * 12
        closed = 0
        for s in idle:  # the server closed idle ones to make room (reading gives EOF)
            s.settimeout(0.2)
            try:
                closed += s.recv(1) == b""
            except (TimeoutError, OSError):
                pass
            s.close()
        assert closed >= 12
        time.sleep(IDLE_SECONDS + 0.3)
        busy = []
        for _ in range(8):  # each sends half a header: not idle, so nothing makes room
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            s.sendall(b"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            busy.append(s)
        time.sleep(0.3)
        status, headers, body = _raw_request(server.port)
        assert status == 503 and headers["content-type"] == "application/json" and headers["retry-after"] == "1"
        assert "limit of connections" in json.loads(body)["error"]
        for s in busy:
            s.close()
        time.sleep(0.3)
        assert _raw_request(server.port)[0] == 200


def test_server_drawn_seeds_are_63_bit_and_hidden_until_the_end(tmp_path: Path) -> None:
    """A game whose seed the player leaves empty gets one from draw_seed (never below 2**32);
    the view shows no seed until the match is over."""
    from hgin_env.game import MIN_DRAWN_SEED, draw_seed

    assert min(draw_seed() for _ in range(10_000)) >= MIN_DRAWN_SEED == 2**32
    with Server(tmp_path / "games") as server:
        status, view = server.call("POST", "/api/games", {"rules": "gin_us_uk", "seat": 0, "opponents": "random"})
        assert status == 201 and view["seed"] is None and view["settings"]["seed"] is None
        auth = bearer(view["seat_token"])
        view = _play(server, view, auth, 10_000)
        assert view["over"] and view["seed"] >= 2**32
