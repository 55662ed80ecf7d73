"""``hgin web``: serve the web table on this machine (127.0.0.1 unless ``--host`` says).

Importing this module is light (argparse only): the server's packages are imported when
the command runs, so ``hgin`` works without the ``web`` extra installed.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path
from typing import Any


class StartError(Exception):
    """The server cannot start (a bad option, the web extra missing): ``hgin`` reports it as
    one line with exit code 2."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``web`` subcommand to ``hgin``'s subparsers."""
    p = sub.add_parser(
        "web", help="play, watch and replay matches in the browser (a local web server)",
        description="Serve the web table: play any rules profile against any agents, watch agents "
                    "play (with a trained policy's move probabilities), and replay saved matches. "
                    "Games are saved as match files that 'hgin replay' reads. Needs the web extra: "
                    "pip install 'hgin_env[web]'.")
    p.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on (default 127.0.0.1, this machine only; anything else "
                        "lets other machines play and is warned about)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--save-dir", default="runs/web", metavar="DIR",
                   help="folder where every game is saved as a match file (default runs/web)")
    p.add_argument("--replay-dir", default=None, metavar="DIR",
                   help="the only folder replays may read files from (default: --save-dir); tournament "
                        "folders inside it are listed too")
    p.add_argument("--policy-dir", action="append", default=None, metavar="DIR",
                   help="folder whose checkpoints seats may load as ppo:PATH / rllib:PATH (PATH relative "
                        "to it; repeatable; default: the current folder)")
    p.add_argument("--max-body", type=int, default=1 << 20, metavar="BYTES",
                   help="largest request body accepted (default 1 MiB; uploads of match files included)")
    p.set_defaults(func=run)
    return p


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    """Start the server and block until it is stopped (Ctrl-C)."""
    try:
        import uvicorn

        from .app import WebConfig, create_app
    except ImportError as exc:
        raise StartError(f"'hgin web' needs the web extra (missing {exc.name!r}): "
                       "pip install 'hgin_env[web]'") from None
    if not 0 < args.port < 65536:
        raise StartError(f"--port {args.port}: a port is 1..65535")
    if not _is_loopback(args.host):
        print(f"hgin web: warning: listening on {args.host}: every machine that can reach it can play, "
              "read the replay folder and load the policy folders' checkpoints", file=sys.stderr)
    config = WebConfig(save_dir=Path(args.save_dir), replay_dir=Path(args.replay_dir) if args.replay_dir else None,
                       policy_dirs=[Path(d) for d in (args.policy_dir or ["."])], max_body=args.max_body)
    print(f"hgin web: the table is at http://{args.host}:{args.port}/ (games saved in {config.save_dir}); "
          "Ctrl-C stops it", flush=True)
    uvicorn.run(create_app(config), host=args.host, port=args.port, log_level="warning")
    return 0
