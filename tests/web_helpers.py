"""Shared by the web table's tests: a test client on a loopback address, a player that plays
through the API with its seat token, and the leak check."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from eval.web_load import choose  # one quick player for the tests and the load script
from hgin_env.cards import format_card, mask_to_cards
from hgin_env.match import Match
from hgin_web.games import MAX_STEP_MOVES

CARD = re.compile(r"(?<![A-Za-z0-9])([A2-9TJQK][CDHS])(?![A-Za-z0-9])")


def greedy_choice(view: dict[str, Any]) -> int:
    """A quick player on the page's view alone (the load script's): knock when it may, pass
    the upcard and draw, discard the card that leaves the least deadwood."""
    return choose(view)


def _seat_table(match: Match, seat: int):
    """The table whose cards the seat may see: its own, or (sitting out) the one table."""
    index = match.table_of(seat)
    return match.tables[0 if index is None else index]


def hidden_cards(match: Match, seat: int) -> set[str]:
    """Cards of the seat's table it must not see now: the other player's cards it did not
    see picked up from the discard pile, and the stock."""
    table = _seat_table(match, seat)
    game = table.game
    if not table.running:
        return set()
    out = {format_card(c) for c in game.stock}
    for p, other in enumerate(table.seats):
        if other != seat:
            out.update(format_card(c) for c in mask_to_cards(game.hands[p] & ~game.known_cards[p]))
    return out


def visible_cards(match: Match, seat: int) -> set[str]:
    """Every card the seat may see at its table: its own hand, the discard pile, the cards
    picked up from it and the discards. Another table's deck (a partnership plays two) is
    never visible, so a card name in a view must name one of these."""
    table = _seat_table(match, seat)
    game = table.game
    out = {format_card(c) for c in game.discard_pile}
    for p, other in enumerate(table.seats):
        mask = game.known_cards[p] | game.discarded[p] | (game.hands[p] if other == seat else 0)
        out.update(format_card(c) for c in mask_to_cards(mask))
    return out


def live_part(view: dict[str, Any]) -> dict[str, Any]:
    """The parts of a view about the hands still running: everything but the results of
    finished hands (shown at their showdown) and the moves before the last announced result
    (cards discarded in an earlier deal may now be in someone's hand)."""
    live = {k: v for k, v in view.items() if k not in ("results", "rounds", "events")}
    events = view["events"]
    last = max((i for i, e in enumerate(events) if e["seat"] is None), default=-1)
    live["events"] = events[last + 1:]
    return live


def check_no_leak(view: dict[str, Any], match: Match, seat: int) -> None:
    seen = set(CARD.findall(json.dumps(live_part(view))))
    hidden, visible = hidden_cards(match, seat), visible_cards(match, seat)
    assert not hidden & visible
    leaked = seen - visible
    assert not leaked, (f"seat {seat} was sent cards it cannot see {sorted(leaked)} in hand {match.hand_number}"
                        f" (of them hidden at its table: {sorted(leaked & hidden)})")
    own = match.seat_view(seat)
    if own is not None and own[0].hands[own[1]] and not match.is_over:  # the check is not vacuous
        assert set(view["table"]["hand"]["loose"] + sum(view["table"]["hand"]["melds"], [])) <= seen


#: The address the tests' client sends as Host (the server answers loopback names only).
BASE_URL = "http://127.0.0.1:8000"


def bearer(token: str) -> dict[str, str]:
    """The header that carries a game's seat token."""
    return {"Authorization": f"Bearer {token}"}


def new_game(client: Any, **body: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """A new game (201 expected): its view and the header with its seat token."""
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    view = r.json()
    return view, bearer(view["seat_token"])


def play_through(client: Any, rules: str, seed: int | None, opponents: Any = "random", seat: int = 0,
                 on_view: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """A whole match through the API: the human plays :func:`greedy_choice`, the agents move
    by ``step``; ``on_view`` sees every answer. Returns the last view (with ``seat_token``)."""
    view, auth = new_game(client, rules=rules, seat=seat, opponents=opponents, seed=seed)
    token = view["seat_token"]
    for _ in range(20_000):
        if on_view is not None:
            on_view(view)
        if view["over"]:
            return dict(view, seat_token=token)
        if view["your_turn"]:
            r = client.post(f"/api/games/{view['id']}/actions", json={"action": greedy_choice(view)}, headers=auth)
        else:
            r = client.post(f"/api/games/{view['id']}/step", json={"moves": MAX_STEP_MOVES}, headers=auth)
        assert r.status_code == 200, r.text
        view = r.json()
    raise AssertionError("the match did not end")


# --------------------------------------------------------------------------- a real server
class Server:
    """``hgin web`` in a subprocess on a free loopback port (``python -m hgin_cli web``), for
    the tests that need a real server: SIGKILL, slow connections, load."""

    def __init__(self, save_dir: Any, *args: str):
        self.save_dir = save_dir
        self.args = args
        self.proc: Any = None
        self.port = 0

    def start(self) -> Server:
        import os
        import socket
        import subprocess
        import sys
        import time

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen([sys.executable, "-m", "hgin_cli", "web", "--port", str(self.port),
                                      "--save-dir", str(self.save_dir), *self.args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the server exited: {self.proc.stdout.read().decode()}"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the server did not start")

    def kill(self, sig: int = 9) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
             timeout: float = 60) -> tuple[int, Any]:
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            sent = dict(headers or {})
            if data is not None:
                sent["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=sent)
            res = conn.getresponse()
            return res.status, json.loads(res.read() or b"null")
        finally:
            conn.close()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


@contextlib.contextmanager
def serving(app: Any) -> Iterator[int]:
    """``app`` served by uvicorn with the server's configuration (hgin_web.server) on a free
    loopback port, in a thread of this process (its state stays inspectable), trusting the
    proxies the app's config trusts; yields the port."""
    import socket
    import threading
    import time

    import uvicorn

    from hgin_web.server import server_config

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, proxies=app.state.config.proxies))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def web_starter(tmp_path: Any, monkeypatch: Any, capsys: Any) -> Callable[..., tuple[Any, str]]:
    """``start(*argv)`` runs ``hgin web ARGV`` without serving (uvicorn's ``Server.run`` only
    records its config) and returns (uvicorn's config, what the command printed)."""
    import uvicorn

    from hgin_cli.cli import build_parser
    from hgin_web import cli as web_cli

    started: list = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: started.append(self.config))
    # uvicorn's Config sets up logging on sys.stderr, here capsys's stream (closed after the test).
    monkeypatch.setattr(uvicorn.Config, "configure_logging", lambda self: None)
    monkeypatch.delenv(web_cli.TOKEN_VARIABLE, raising=False)

    def start(*argv: str) -> tuple[Any, str]:
        capsys.readouterr()
        assert web_cli.run(build_parser().parse_args(["web", "--save-dir", str(tmp_path / "g"), *argv])) == 0
        return started[-1], capsys.readouterr().out

    return start
