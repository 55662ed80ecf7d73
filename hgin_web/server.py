"""Serving the app with uvicorn, with the timeouts a shared server needs: a connection must
send a request's whole header within ``header_seconds`` of its first byte (or of opening),
and an idle kept-alive connection is closed after ``keep_alive_seconds``. uvicorn has the
second (``timeout_keep_alive``) but not the first, so :class:`HeaderTimeoutH11` adds it to
uvicorn's h11 protocol: a client sending one header byte every few seconds is cut off.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Connections one server serves at once (more are answered 503 by uvicorn).
MAX_CONNECTIONS = 1000


class HeaderTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's header."""

    header_seconds = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm()

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
        if self.conn.their_state is h11.IDLE:
            self._arm()  # a new request starts: its header has header_seconds
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def server_config(app: Any, host: str, port: int, header_seconds: float = 10.0,
                  keep_alive_seconds: int = 5) -> uvicorn.Config:
    """uvicorn's configuration for ``app`` with the module's timeouts."""
    protocol = type("HeaderTimeoutH11", (HeaderTimeoutH11,), {"header_seconds": header_seconds})
    return uvicorn.Config(app, host=host, port=port, http=protocol, timeout_keep_alive=keep_alive_seconds,
                          limit_concurrency=MAX_CONNECTIONS, log_level="warning")
