"""``hgin web``: serve the web table on this machine (127.0.0.1 unless ``--host`` says).

Importing this module is light (argparse only): the server's packages are imported when
the command runs, so ``hgin`` works without the web extra installed.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from .guard import is_loopback

#: The environment variable that may hold the server token (instead of --token).
TOKEN_VARIABLE = "HGIN_WEB_TOKEN"


class StartError(Exception):
    """The server cannot start (a bad option, the web extra missing): ``hgin`` reports it as
    one line with exit code 2."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``web`` subcommand to ``hgin``'s subparsers."""
    p = sub.add_parser(
        "web", help="play, watch and replay matches in the browser (a local web server)",
        description="Serve the web table: play any rules profile against any agents, watch agents "
                    "play (with a trained policy's move probabilities), and replay saved matches. "
                    "Games are saved as match files that 'hgin replay' reads, and an unfinished game "
                    "is restored when the server starts again. Needs the web extra: "
                    "pip install 'hgin_env[web]'. See docs/web.md for who can see and do what.")
    p.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on (default 127.0.0.1, this machine only); any other address "
                        "needs a server token (--token, or one is made and printed)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--token", default=None, metavar="TOKEN",
                   help=f"a secret every API request must carry (the page gets it from the printed "
                        f"address ?token=...); default: ${TOKEN_VARIABLE}, else none on loopback and a "
                        "random one otherwise")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a Host name the server answers besides the loopback names (repeatable; '*' for "
                        "any, only with a token); requests naming another host are refused")
    p.add_argument("--forwarded-allow-ips", default="", metavar="IPS",
                   help="proxies to trust (uvicorn's option): addresses or networks, comma-separated, or '*'. "
                        "A request from one of them counts for the client its X-Forwarded-For (else Forwarded) "
                        "names; from any other address those headers are ignored. Default: none. Needs a server "
                        "token, as another --host does (the proxy lets other machines in)")
    p.add_argument("--save-dir", default="runs/web", metavar="DIR",
                   help="folder where every game is saved as a match file (default runs/web)")
    p.add_argument("--max-saved", type=int, default=2000, metavar="N",
                   help="game files kept in the save folder; the oldest finished ones go first (default 2000)")
    p.add_argument("--replay-dir", default=None, metavar="DIR",
                   help="the only folder replays may read files from (default: --save-dir); tournament "
                        "folders inside it are listed too")
    p.add_argument("--policy-dir", action="append", default=None, metavar="DIR",
                   help="folder whose checkpoints seats may load as ppo:PATH / rllib:PATH (PATH relative "
                        "to it; repeatable; default: the shipped policies only). A checkpoint is code: "
                        "loading it unpickles it, so name only folders you trust")
    p.add_argument("--max-games", type=int, default=256, metavar="N", help="games held at once (default 256)")
    p.add_argument("--max-games-per-client", type=int, default=64, metavar="N",
                   help="games one client address holds at once (default 64)")
    p.add_argument("--idle-minutes", type=float, default=10.0, metavar="M",
                   help="a game without requests for this long may give its place to a new one (default 10)")
    p.add_argument("--agent-threads", type=int, default=2, metavar="N",
                   help="threads that run the agents' moves (default 2)")
    p.add_argument("--step-seconds", type=float, default=0.25, metavar="S",
                   help="time one step request may spend on agent moves (default 0.25)")
    p.add_argument("--search-threads", type=int, default=1, metavar="N",
                   help="threads of their own for games with a search agent (default 1)")
    p.add_argument("--max-connections", type=int, default=1000, metavar="N",
                   help="connections the server holds at once (default 1000)")
    p.add_argument("--connections-per-client", type=int, default=250, metavar="N",
                   help="connections one address holds at once, the whole loopback range counting as one "
                        "(default 250); idle ones make room first")
    p.add_argument("--header-timeout", type=float, default=10.0, metavar="S",
                   help="a request's header must arrive within this (default 10 s)")
    p.add_argument("--max-body", type=int, default=1 << 20, metavar="BYTES",
                   help="largest request body accepted (default 1 MiB; uploads of match files included)")
    p.set_defaults(func=run)
    return p


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    """Start the server and block until it is stopped (Ctrl-C)."""
    try:
        import uvicorn

        from .app import WebConfig, create_app
        from .proxies import TrustedProxies
        from .server import server_config
        from .store import Limits
    except ImportError as exc:
        raise StartError(f"'hgin web' needs the web extra (missing {exc.name!r}): "
                         "pip install 'hgin_env[web]'") from None
    if not 0 < args.port < 65536:
        raise StartError(f"--port {args.port}: a port is 1..65535")
    for flag, value in (("--max-saved", args.max_saved), ("--max-games", args.max_games),
                        ("--max-games-per-client", args.max_games_per_client), ("--agent-threads", args.agent_threads),
                        ("--search-threads", args.search_threads), ("--max-connections", args.max_connections),
                        ("--connections-per-client", args.connections_per_client), ("--max-body", args.max_body)):
        if value < 1:
            raise StartError(f"{flag} {value}: must be at least 1")
    if args.connections_per_client > args.max_connections:
        raise StartError(f"--connections-per-client {args.connections_per_client}: at most --max-connections "
                         f"({args.max_connections})")
    for flag, value in (("--idle-minutes", args.idle_minutes), ("--step-seconds", args.step_seconds),
                        ("--header-timeout", args.header_timeout)):
        if not value > 0:
            raise StartError(f"{flag} {value}: must be more than 0")
    token = args.token if args.token is not None else os.environ.get(TOKEN_VARIABLE) or None
    allowed = list(args.allow_host)
    try:
        proxies = TrustedProxies(args.forwarded_allow_ips)
    except ValueError as exc:
        raise StartError(f"--forwarded-allow-ips: {exc}") from None
    if proxies and token is None:
        token = secrets.token_urlsafe(18)  # the proxy lets other machines in
    if not is_loopback(args.host):
        if token is None:
            token = secrets.token_urlsafe(18)
        if not _is_wildcard(args.host):
            allowed.append(args.host)
        elif not allowed:
            allowed.append("*")  # any name reaches it; the token guards it
        print(f"hgin web: listening on {args.host}: every machine that can reach it and has the token can play, "
              "replay the replay folder's finished games and load the policy folders' checkpoints", file=sys.stderr)
    if "*" in allowed and token is None:
        raise StartError("--allow-host '*' needs a server token (--token)")
    policy_dirs = [Path(d) for d in args.policy_dir] if args.policy_dir else None
    limits = Limits(max_games=args.max_games, max_games_per_client=args.max_games_per_client,
                    idle_seconds=args.idle_minutes * 60, max_saved=args.max_saved)
    config = WebConfig(save_dir=Path(args.save_dir), replay_dir=Path(args.replay_dir) if args.replay_dir else None,
                       max_body=args.max_body, limits=limits, allowed_hosts=tuple(allowed), server_token=token,
                       agent_threads=args.agent_threads, search_threads=args.search_threads,
                       step_seconds=args.step_seconds, proxies=proxies)
    if policy_dirs is not None:
        config.policy_dirs = policy_dirs
    app = create_app(config)
    restored = sum(not g.over for g in app.state.store.games.values())
    shown = f"[{args.host}]" if ":" in args.host else args.host
    address = f"http://{shown}:{args.port}/" + (f"?token={token}" if token else "")
    print(f"hgin web: the table is at {address} (games saved in {config.save_dir}"
          + (f"; {restored} unfinished game(s) restored" if restored else "") + "); Ctrl-C stops it", flush=True)
    uvicorn.Server(server_config(app, args.host, args.port, header_seconds=args.header_timeout,
                                 max_connections=args.max_connections,
                                 per_client=args.connections_per_client, proxies=proxies)).run()
    return 0
