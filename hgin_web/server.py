"""Serving the app with uvicorn, with what a shared server needs from its connections.

- **Header deadline.** A connection must send a request's whole header within
  ``header_seconds`` of its first byte (or of opening), and an idle kept-alive connection
  is closed after ``keep_alive_seconds``. uvicorn has the second (``timeout_keep_alive``)
  but not the first, so :class:`HeaderTimeoutH11` adds it to uvicorn's h11 protocol: a
  client sending one header byte every few seconds is cut off.
- **Connections shared out by client** (:class:`ConnectionBook`). The server holds at most
  ``max_connections`` connections, and one client at most ``per_client`` of them. A client
  is an address, except that the whole loopback range is one client (:func:`client_of`:
  on this machine every local program is the same user). When a new connection would pass
  either limit, an *idle* connection (no request in progress, nothing received for at least
  ``IDLE_SECONDS`` since it opened or got its last answer) makes room: the least recently
  used one of that client, or, at the server's limit, of the client holding the most. Only
  when none is idle is the new connection refused: its request is answered ``503`` with
  ``{"error": ...}`` and ``Retry-After``. So a client holding a thousand idle connections
  shuts nobody out: a new connection closes one of them. (The minimum idle time keeps a
  client that reopens every closed connection at once from turning the server into a
  loop of closes and opens: its fresh connections are not idle yet, and it is refused.)
  The token a request carries (a seat or server token) arrives after the connection is
  counted, so connections are counted by address alone.
- **Behind a proxy** (``--forwarded-allow-ips``, :mod:`hgin_web.proxies`). A trusted
  proxy's connections carry many clients, and which one only shows in each request's
  header, after the connection is counted: so they count toward ``max_connections`` but
  not toward a per-client share; the proxy keeps each client's connections (nginx's
  ``limit_conn``). uvicorn's own reading of ``X-Forwarded-For`` (on by default, trusting
  loopback) is turned off: :class:`~hgin_web.proxies.ForwardedClients` in the app is the
  one place that reads it.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .guard import is_loopback
from .proxies import TrustedProxies

#: Connections one server holds at once.
MAX_CONNECTIONS = 1000
#: Connections one client (an address; the loopback range counts as one) holds at once.
MAX_CONNECTIONS_PER_CLIENT = 250
#: What a refused connection's client is told to wait before it tries again (seconds).
RETRY_AFTER_SECONDS = 1
#: A refused connection that sends no request within this is closed (seconds).
REFUSED_SECONDS = 2.0
#: How long a connection must have been quiet to be closed to make room (seconds).
IDLE_SECONDS = 0.5
#: The client every loopback address counts as.
LOOPBACK_CLIENT = "loopback"


def client_of(address: str | None) -> str:
    """The client an address counts as, for connection shares and per-client caps: the
    address itself, or :data:`LOOPBACK_CLIENT` for any loopback address (127.0.0.0/8, ::1):
    on a local server every program of this machine is one user."""
    if not address:
        return ""
    return LOOPBACK_CLIENT if is_loopback(address) else address


def refusal_body(reason: str) -> bytes:
    return json.dumps({"error": reason}).encode()


async def _busy(scope: Any, receive: Any, send: Any) -> None:
    """The answer to a request on a refused connection: 503, JSON, Retry-After, closed."""
    body = refusal_body(f"the server holds its limit of connections for your address and every one of them "
                        f"is busy; try again in {RETRY_AFTER_SECONDS} s")
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"retry-after", str(RETRY_AFTER_SECONDS).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class ConnectionBook:
    """The connections one server holds, by client, least recently used first (see the
    module docstring)."""

    def __init__(self, max_connections: int = MAX_CONNECTIONS, per_client: int = MAX_CONNECTIONS_PER_CLIENT):
        if not 1 <= per_client <= max_connections:
            raise ValueError(f"per_client must be in 1..max_connections, got {per_client} and {max_connections}")
        self.max_connections = max_connections
        self.per_client = per_client
        self.by_client: dict[str, OrderedDict[Any, None]] = {}
        self.total = 0
        #: Connections closed to make room, and connections refused (for the load script).
        self.closed_idle = 0
        self.refused = 0

    def admit(self, conn: Any) -> bool:
        """Count ``conn`` (a :class:`HeaderTimeoutH11`) for its client, closing an idle
        connection when a limit needs room; False (not counted) when none is idle."""
        mine = self.by_client.setdefault(conn.client_key, OrderedDict())
        if not conn.via_proxy and len(mine) >= self.per_client and not self._close_idle(mine):
            self.refused += 1
            return False
        if self.total >= self.max_connections:
            fullest = sorted(self.by_client.values(), key=len, reverse=True)
            if not any(self._close_idle(conns) for conns in fullest):
                self.refused += 1
                return False
        mine[conn] = None
        self.total += 1
        return True

    def touch(self, conn: Any) -> None:
        """``conn`` was used: it is the last of its client's to be closed for room."""
        conns = self.by_client.get(conn.client_key)
        if conns is not None and conn in conns:
            conns.move_to_end(conn)

    def release(self, conn: Any) -> None:
        conns = self.by_client.get(conn.client_key)
        if conns is not None and conns.pop(conn, False) is None:
            self.total -= 1
            if not conns:
                del self.by_client[conn.client_key]

    def _close_idle(self, conns: OrderedDict[Any, None]) -> bool:
        for conn in conns:  # least recently used first
            if conn.is_idle():
                self.release(conn)
                conn.close_idle()
                self.closed_idle += 1
                return True
        return False


class HeaderTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's header, counted in the
    server's :class:`ConnectionBook` (a subclass per server sets both, and the trusted
    proxies, whose connections have no per-client share)."""

    header_seconds = 10.0
    book: ConnectionBook = ConnectionBook()
    proxies: TrustedProxies = TrustedProxies()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._quiet_since: float | None = self.loop.time()  # None: a request is on its way or in progress
        peer = self.client[0] if self.client else None
        self.client_key = client_of(peer)
        self.via_proxy = self.proxies.trusts(peer) if peer else False
        if not self.book.admit(self):
            self.app = _busy  # answer its request 503, then close
            self._header_timer = self.loop.call_later(REFUSED_SECONDS, self._header_timeout)
            return
        self._arm()

    def is_idle(self) -> bool:
        """No request in progress, nothing received for :data:`IDLE_SECONDS` since the
        connection opened or got its last answer."""
        return self._quiet_since is not None and self.loop.time() - self._quiet_since >= IDLE_SECONDS \
            and (self.cycle is None or self.cycle.response_complete) and self.conn.their_state is h11.IDLE \
            and not self.transport.is_closing()

    def close_idle(self) -> None:
        """Close this idle connection to make room for another (as uvicorn's keep-alive timeout does)."""
        self._disarm()
        try:
            self.conn.send(h11.ConnectionClosed())
        except h11.LocalProtocolError:  # h11 already closed its side
            pass
        self.transport.close()

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_seconds, self._header_timeout)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()  # the header did not arrive in time

    def data_received(self, data: bytes) -> None:
        self._quiet_since = None
        self.book.touch(self)
        if self.conn.their_state is h11.IDLE and self.app is not _busy:
            self._arm()  # a new request starts: its header has header_seconds
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()

    def on_response_complete(self) -> None:
        self._quiet_since = self.loop.time()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.book.release(self)
        super().connection_lost(exc)


def server_config(app: Any, host: str, port: int, header_seconds: float = 10.0, keep_alive_seconds: int = 5,
                  max_connections: int = MAX_CONNECTIONS, per_client: int = MAX_CONNECTIONS_PER_CLIENT,
                  proxies: TrustedProxies | None = None) -> uvicorn.Config:
    """uvicorn's configuration for ``app`` with the module's timeouts and connection shares
    (the book is the protocol's ``book``, one per configuration); ``proxies``: the trusted
    proxies, the same the app's :class:`~hgin_web.proxies.ForwardedClients` trusts."""
    book = ConnectionBook(max_connections, per_client)
    protocol = type("HeaderTimeoutH11", (HeaderTimeoutH11,), {"header_seconds": header_seconds, "book": book,
                                                               "proxies": proxies or TrustedProxies()})
    # uvicorn's own limit_concurrency would answer plain-text 503s to every client alike;
    # the book above decides instead (a connection holds at most one request at a time).
    return uvicorn.Config(app, host=host, port=port, http=protocol, timeout_keep_alive=keep_alive_seconds,
                          limit_concurrency=None, proxy_headers=False, log_level="warning")
