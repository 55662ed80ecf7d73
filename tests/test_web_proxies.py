"""The web table behind a proxy (issue 56): ``hgin web --forwarded-allow-ips`` names the
proxies whose ``X-Forwarded-For`` / ``Forwarded`` are believed; from any other peer those
headers change nothing. Through the test client (its peer address set per test) and a
real uvicorn server on loopback."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from starlette.testclient import TestClient

from hgin_web.app import WebConfig, create_app
from hgin_web.proxies import TrustedProxies, forwarded_for
from hgin_web.server import ConnectionBook
from hgin_web.store import Limits

try:
    from tests.web_helpers import BASE_URL, serving, web_starter
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    from web_helpers import BASE_URL, serving, web_starter

PROXY = "10.0.0.1"
#: A game body that deals at once (no agent to load).
GAME = {"rules": "gin_us_uk", "seat": 0, "opponents": "random"}


def _app(tmp_path: Path, proxies: str = "", per_client: int = 1):
    return create_app(WebConfig(save_dir=tmp_path / "games", policy_dirs=[tmp_path],
                                limits=Limits(max_games_per_client=per_client), proxies=TrustedProxies(proxies)))


def _xff(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


def test_the_client_address_a_trusted_proxy_names() -> None:
    """uvicorn's reading: from the right, the first address that is not a trusted proxy;
    all trusted: the leftmost; ``*``: the leftmost; not an address: the peer."""
    proxies = TrustedProxies("10.0.0.0/8, ::1")
    hdr = lambda name, value: [(name, value.encode())]  # noqa: E731
    xff = b"x-forwarded-for"
    assert proxies.client("10.0.0.1", hdr(xff, "203.0.113.5")) == "203.0.113.5"
    # A client's own header comes first; the proxy appends the address it saw.
    assert proxies.client("10.0.0.1", hdr(xff, "6.6.6.6, 203.0.113.5")) == "203.0.113.5"
    assert proxies.client("10.0.0.1", hdr(xff, "203.0.113.5, 10.0.0.7")) == "203.0.113.5"  # two proxies
    assert proxies.client("10.0.0.1", hdr(xff, "10.0.0.9, 10.0.0.7")) == "10.0.0.9"
    assert proxies.client("10.0.0.1", hdr(xff, "203.0.113.5:4711")) == "203.0.113.5"
    assert proxies.client("10.0.0.1", hdr(xff, "unknown")) == "10.0.0.1"
    assert proxies.client("10.0.0.1", []) == "10.0.0.1"
    assert proxies.client("192.0.2.1", hdr(xff, "203.0.113.5")) == "192.0.2.1"  # not a proxy: ignored
    assert proxies.client("::1", hdr(b"forwarded", 'for="[2001:db8::17]:4711";proto=https')) == "2001:db8::17"
    assert forwarded_for([(b"forwarded", b"for=192.0.2.60;by=10.0.0.1, for=198.51.100.2")]) == [
        "192.0.2.60", "198.51.100.2"]
    # X-Forwarded-For first: the Forwarded a client sent through the proxy is not read.
    assert proxies.client("10.0.0.1", [(b"forwarded", b"for=6.6.6.6"), (xff, b"203.0.113.5")]) == "203.0.113.5"
    assert TrustedProxies("*").client("192.0.2.1", hdr(xff, "198.51.100.9, 10.0.0.7")) == "198.51.100.9"
    assert not TrustedProxies("") and not TrustedProxies("").trusts("127.0.0.1")
    with pytest.raises(ValueError, match="'proxy.example' is not an IP address"):
        TrustedProxies("127.0.0.1,proxy.example")


def test_a_spoofed_header_from_an_untrusted_peer_changes_nothing(tmp_path: Path) -> None:
    """No proxy trusted (the default), or a peer that is not one: every request counts for
    the peer, whatever it names, so a client cannot take another's share by naming it."""
    for proxies in ("", "10.9.9.9"):
        app = _app(tmp_path / (proxies or "none"), proxies)
        with TestClient(app, base_url=BASE_URL, client=("192.0.2.7", 5000)) as c:
            r = c.post("/api/games", json=GAME, headers=_xff("203.0.113.5"))
            assert r.status_code == 201
            assert app.state.store.game(r.json()["id"]).client == "192.0.2.7"
            r = c.post("/api/games", json=GAME, headers={"Forwarded": "for=203.0.113.6"})
            assert r.status_code == 429 and "you hold 1 active game" in r.json()["error"]
            assert {k for k in app.state.table.pool._used if k.startswith("new:")} == {"new:192.0.2.7"}


def test_two_forwarded_clients_get_separate_shares(tmp_path: Path) -> None:
    """Behind a trusted proxy two clients hold a game each under a cap of one per client,
    and each has its own key in the fair pool; the same client's second game is refused."""
    app = _app(tmp_path, PROXY)
    with TestClient(app, base_url=BASE_URL, client=(PROXY, 5000)) as c:
        a = c.post("/api/games", json=GAME, headers=_xff("203.0.113.5"))
        b = c.post("/api/games", json=GAME, headers={"Forwarded": 'for="[2001:db8::5]"'})
        assert a.status_code == b.status_code == 201
        store = app.state.store
        assert [store.game(r.json()["id"]).client for r in (a, b)] == ["203.0.113.5", "2001:db8::5"]
        assert {k for k in app.state.table.pool._used if k.startswith("new:")} == {
            "new:203.0.113.5", "new:2001:db8::5"}
        r = c.post("/api/games", json=GAME, headers=_xff("6.6.6.6, 203.0.113.5"))
        assert r.status_code == 429
        # The proxy's own requests (no header) count for the proxy.
        assert store.game(c.post("/api/games", json=GAME).json()["id"]).client == PROXY


def _post(port: int, headers: dict[str, str]) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", "/api/games", body=json.dumps(GAME).encode(),
                     headers={"Content-Type": "application/json", **headers})
        res = conn.getresponse()
        return res.status, json.loads(res.read())
    finally:
        conn.close()


@pytest.mark.parametrize("trusted", [False, True])
def test_a_real_server_reads_the_header_only_from_its_proxies(tmp_path: Path, trusted: bool) -> None:
    """uvicorn trusts X-Forwarded-For from loopback by default; the server turns that off,
    so on loopback without --forwarded-allow-ips every local program stays one client, and
    with 127.0.0.1 trusted (a proxy on this machine) the forwarded clients are apart."""
    app = _app(tmp_path, "127.0.0.1" if trusted else "")
    with serving(app) as port:
        first = _post(port, _xff("203.0.113.5"))
        second = _post(port, _xff("203.0.113.6"))
    assert first[0] == 201
    client = app.state.store.game(first[1]["id"]).client
    if trusted:
        assert client == "203.0.113.5" and second[0] == 201
    else:
        assert client == "loopback" and second[0] == 429


def test_a_proxys_connections_have_no_per_client_share() -> None:
    """The connections of a trusted proxy carry many clients: they count toward the server's
    limit only; another address is held to its share."""
    book = ConnectionBook(max_connections=4, per_client=1)

    class Conn(SimpleNamespace):
        __hash__ = object.__hash__

    def conn(key: str, via_proxy: bool):
        return Conn(client_key=key, via_proxy=via_proxy, is_idle=lambda: False)
    assert all(book.admit(conn(PROXY, True)) for _ in range(3))
    assert book.admit(conn("192.0.2.7", False)) and not book.admit(conn("192.0.2.7", False))
    assert not book.admit(conn(PROXY, True))  # the server's limit holds for the proxy too
    assert book.refused == 2


def test_hgin_web_forwarded_allow_ips(tmp_path: Path, monkeypatch, capsys) -> None:
    """The option reaches the app and the connections; a bad entry is a one-line error; a
    trusted proxy lets other machines in, so a server token is made as for another --host."""
    from hgin_web import cli as web_cli

    start = web_starter(tmp_path, monkeypatch, capsys)
    config, out = start("--forwarded-allow-ips", "127.0.0.1, 10.0.0.0/8")
    app_config = config.app.state.config
    assert app_config.proxies.spec == "127.0.0.1/32,10.0.0.0/8" and config.proxy_headers is False
    assert config.http.proxies is app_config.proxies
    assert app_config.server_token and f"?token={app_config.server_token}" in out
    config, _ = start()
    assert not config.app.state.config.proxies and config.proxy_headers is False
    with pytest.raises(web_cli.StartError, match="--forwarded-allow-ips: 'nginx' is not an IP address"):
        start("--forwarded-allow-ips", "nginx")
