"""Which client a request comes from when the server stands behind a proxy.

Behind a TLS proxy every connection comes from the proxy's address, so without help every
client would be one client: one client's games, its share of the agents' threads and of
the connections would fall on everyone. ``hgin web --forwarded-allow-ips IPS`` (uvicorn's
name and meaning: addresses and networks, comma-separated, or ``*`` for any) names the
proxies whose word is taken: a request arriving from one of them is attributed to the
client address its ``X-Forwarded-For`` (else ``Forwarded``, RFC 7239) header names; from
any other address both headers are ignored, so a client cannot name itself someone else.

The address taken is uvicorn's: the headers' list of addresses is read from the right
(each proxy appends the address it was reached from), and the first one that is not a
trusted proxy is the client; when all are trusted, the leftmost. With ``*`` every peer is
trusted and the leftmost is taken (any client can then name any address: only for a
server no one reaches but the proxy). An entry that is not an IP address (``unknown``, an
obfuscated ``_name``) leaves the request attributed to the proxy.

:class:`ForwardedClients` rewrites the ASGI scope's ``client`` in place, as uvicorn's
``ProxyHeadersMiddleware`` does, so everything after it (the per-client caps, the fair
pool's keys, an access log) sees the client; the connection shares of
:mod:`hgin_web.server`, counted before any header arrives, leave the per-client share of a
trusted proxy's connections to the proxy (see docs/web.md's nginx block).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
#: One ``for=`` parameter of a ``Forwarded`` element (quoted or not).
_FORWARDED_FOR = re.compile(r'(?:^|;)\s*for\s*=\s*("([^"]*)"|[^;,\s]*)', re.IGNORECASE)


def _address(text: str) -> Address | None:
    """An entry of a forwarding header as an address (``1.2.3.4``, ``1.2.3.4:80``, ``::1``,
    ``[::1]:80``); None for anything else."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:text.find("]")] if "]" in text else text
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def forwarded_for(headers: Iterable[tuple[bytes, bytes]]) -> list[str]:
    """The addresses a request's forwarding headers name, the original client first: those
    of ``X-Forwarded-For`` (every such header, in order), or when it has none, the ``for=``
    of each ``Forwarded`` element."""
    xff: list[str] = []
    fwd: list[str] = []
    for name, value in headers:
        text = value.decode("latin-1")
        if name == b"x-forwarded-for":
            xff.extend(part.strip() for part in text.split(","))
        elif name == b"forwarded":
            for element in text.split(","):
                m = _FORWARDED_FOR.search(element.strip())
                fwd.append(m.group(2) if m and m.group(2) is not None else (m.group(1) if m else ""))
    return xff or fwd


class TrustedProxies:
    """The proxies named by ``--forwarded-allow-ips``: addresses, networks (``10.0.0.0/8``)
    or ``*``; a bad entry raises ValueError naming it."""

    def __init__(self, spec: str | Sequence[str] = ""):
        items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
        self.any = "*" in items
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for item in items:
            if item == "*":
                continue
            try:
                self.networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(f"{item!r} is not an IP address or network (such as 127.0.0.1, "
                                 "10.0.0.0/8, ::1) nor '*'") from None
        self.spec = "*" if self.any else ",".join(str(n) for n in self.networks)

    def __bool__(self) -> bool:
        return self.any or bool(self.networks)

    def trusts(self, address: str | Address | None) -> bool:
        if self.any:
            return True
        ip = address if isinstance(address, Address) else _address(address or "")
        return ip is not None and any(ip in net for net in self.networks)

    def client(self, peer: str | None, headers: Iterable[tuple[bytes, bytes]]) -> str | None:
        """The client address of a request from ``peer`` (the address it reached the server
        from): the forwarded one when ``peer`` is a trusted proxy and names one, else ``peer``."""
        if not self.trusts(peer):
            return peer
        chain = forwarded_for(headers)
        if not chain:
            return peer
        chosen = chain[0]
        if not self.any:
            for entry in reversed(chain):
                if not self.trusts(entry):
                    chosen = entry
                    break
        ip = _address(chosen)
        return peer if ip is None else str(ip)


class ForwardedClients:
    """ASGI middleware: ``scope["client"]`` becomes the client a trusted proxy forwarded
    for (:meth:`TrustedProxies.client`); requests from other peers pass untouched."""

    def __init__(self, app: ASGIApp, proxies: TrustedProxies):
        self.app = app
        self.proxies = proxies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and self.proxies:
            peer = scope.get("client")
            host = peer[0] if peer else None
            client = self.proxies.client(host, scope.get("headers", []))
            if client is not None and client != host:
                scope["client"] = (client, 0)
        await self.app(scope, receive, send)
