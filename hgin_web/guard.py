"""What the web table checks before a request reaches the API (an ASGI middleware, as
Jupyter's server does): the Host header, the server token, the origin of state-changing
requests, and the body's size, type and arrival time. A refusal is JSON, ``{"error": ...}``.

- **Host.** Only loopback names (``localhost``, ``127.0.0.1``, ``[::1]``, ...) and the names
  given with ``--allow-host`` are served: a page of another site that rebinds its DNS
  name to 127.0.0.1 sends its own name as Host and is refused (403).
- **Server token.** When one is set (always when ``--host`` is not loopback), every API
  request needs it: the cookie that ``/?token=TOKEN`` sets (HttpOnly, SameSite=Strict), or
  the header ``X-Hgin-Token`` (401 otherwise). The page and its static files need none.
- **Origin.** A request that changes something (any method but GET, HEAD, OPTIONS) must
  come from the page itself: an ``Origin`` header other than the server's own, or
  ``Sec-Fetch-Site`` other than ``same-origin`` / ``none``, is refused (403); a body must
  be ``application/json`` (415), which a cross-site form or ``text/plain`` fetch cannot
  send without a CORS preflight the server never grants.
- **Body.** At most ``max_body`` bytes (413, by Content-Length or as the bytes arrive),
  all of it within ``body_seconds`` (408).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlsplit

from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_COOKIE = "hgin_web_token"
TOKEN_HEADER = "x-hgin-token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def host_name(host: str) -> str:
    """The name part of a Host header (``[::1]:8000`` -> ``::1``), lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host


def is_loopback(name: str) -> bool:
    """Whether ``name`` (a host name or an address, without port or brackets) is this
    machine's loopback: ``localhost``, a ``*.localhost`` name (browsers resolve them to
    loopback, RFC 6761), or an address in 127.0.0.0/8 or ::1. The server's one test of it:
    which Host headers it serves, whether ``hgin web --host`` needs a token, and which
    connections count as the one local client (:func:`hgin_web.server.client_of`)."""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class _Refuse(Exception):
    def __init__(self, status: int, reason: str):
        self.status, self.reason = status, reason


class Guard:
    """The checks of the module around ``app``. ``allowed_hosts``: names served besides the
    loopback ones (``"*"``: any); ``server_token``: None for none."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = (), server_token: str | None = None,
                 max_body: int = 1 << 20, body_seconds: float = 20.0):
        self.app = app
        self.allowed = {host_name(h) for h in allowed_hosts}
        self.server_token = server_token
        self.max_body = max_body
        self.body_seconds = body_seconds

    # ------------------------------------------------------------------ the checks
    def _host_ok(self, host: str) -> bool:
        name = host_name(host)
        return "*" in self.allowed or name in self.allowed or is_loopback(name)

    def _token_ok(self, headers: dict[bytes, bytes]) -> bool:
        assert self.server_token is not None
        given = headers.get(TOKEN_HEADER.encode(), b"").decode("latin-1")
        if not given and b"cookie" in headers:
            cookie = SimpleCookie()
            try:
                cookie.load(headers[b"cookie"].decode("latin-1"))
            except Exception:  # a malformed Cookie header counts as none
                cookie = SimpleCookie()
            given = cookie[TOKEN_COOKIE].value if TOKEN_COOKIE in cookie else ""
        return bool(given) and hmac.compare_digest(given.encode(), self.server_token.encode())

    def _check(self, scope: Scope, headers: dict[bytes, bytes]) -> Response | None:
        host = headers.get(b"host", b"").decode("latin-1")
        if not self._host_ok(host):
            raise _Refuse(403, f"Host {host!r} is not served here (only this machine's loopback names and "
                               "the names given with hgin web --allow-host)")
        path = scope.get("path", "")
        if self.server_token is not None:
            if path == "/" and scope.get("query_string"):
                given = parse_qs(scope["query_string"].decode("latin-1")).get("token", [""])[0]
                if given and hmac.compare_digest(given.encode(), self.server_token.encode()):
                    response = RedirectResponse("/", status_code=303)
                    response.set_cookie(TOKEN_COOKIE, given, httponly=True, samesite="strict")
                    return response
            if path.startswith("/api/") and not self._token_ok(headers):
                raise _Refuse(401, "this server needs its token: open the address hgin web printed "
                                   "(http://HOST:PORT/?token=...), or send the header X-Hgin-Token")
        if scope["method"] not in SAFE_METHODS:
            origin = headers.get(b"origin", b"").decode("latin-1")
            if origin and (origin == "null" or urlsplit(origin).netloc.lower() != host.lower()):
                raise _Refuse(403, f"a request from another origin ({origin}) cannot change anything here")
            site = headers.get(b"sec-fetch-site", b"").decode("latin-1").lower()
            if site and site not in ("same-origin", "none"):
                raise _Refuse(403, f"a {site} request cannot change anything here")
            kind = headers.get(b"content-type", b"").decode("latin-1").split(";", 1)[0].strip().lower()
            has_body = headers.get(b"content-length", b"0") != b"0" or b"transfer-encoding" in headers
            if has_body and kind != "application/json":
                raise _Refuse(415, f"the body must be JSON sent as Content-Type: application/json, "
                                   f"got {kind or 'none'!r}")
        length = headers.get(b"content-length")
        if length is not None:
            try:
                size = int(length)
            except ValueError:
                size = -1
            if size < 0 or size > self.max_body:
                raise _Refuse(413, f"request body over the limit of {self.max_body} bytes")
        return None

    # ------------------------------------------------------------------ ASGI
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = {}
        for key, value in scope.get("headers", []):
            headers.setdefault(key, value)
        try:
            early = self._check(scope, headers)
        except _Refuse as exc:
            await JSONResponse({"error": exc.reason}, status_code=exc.status)(scope, receive, send)
            return
        if early is not None:
            await early(scope, receive, send)
            return
        received = 0
        complete = False
        deadline = asyncio.get_running_loop().time() + self.body_seconds
        started = False

        async def limited() -> Message:
            nonlocal received, complete
            if complete:
                return await receive()
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), timeout=max(remaining, 0.001))
            except TimeoutError:
                raise _Refuse(408, f"the request body did not arrive within {self.body_seconds:g} s") from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise _Refuse(413, f"request body over the limit of {self.max_body} bytes")
                complete = not message.get("more_body", False)
            return message

        async def tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited, tracking)
        except _Refuse as exc:
            if not started:
                await JSONResponse({"error": exc.reason}, status_code=exc.status)(scope, receive, send)
