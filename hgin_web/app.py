"""The web table's ASGI app (Starlette): the JSON API the page uses, and the page itself
(``static/``: plain HTML, CSS and JavaScript, nothing fetched from elsewhere).

API (every body and answer is JSON; a refused request answers 4xx with ``{"error": reason}``
and changes nothing):

==========================================  ================================================
``GET  /api/meta``                           profiles (format, seats, columns), agents, limits
``POST /api/games``                          ``{rules, seat, opponents, seed}`` -> 201 the view
``GET  /api/games/{id}``                     the human seat's view (a watched game: all hands)
``POST /api/games/{id}/actions``             ``{action, seat?}``: the human's move -> the view
``POST /api/games/{id}/step``                ``{moves}``: agent moves up to the human's turn
``GET  /api/games/{id}/file``                the saved match file (``hgin replay`` reads it)
``GET  /api/files``                          match files and tournaments in the replay folder
``GET  /api/tournament?path=``               a tournament folder's matches
``POST /api/replays``                        ``{path}``, ``{path, seed, a_seat, agent_a,
                                             agent_b}`` (tournament) or ``{upload: <file>}``
``GET  /api/replays/{id}?step=N``            the match after N actions, every hand open
==========================================  ================================================
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from hgin_env.rules import PROFILES

from . import files
from .games import BUILTIN_AGENTS, MAX_STEP_MOVES, Refused, Store, parse_new_game

STATIC = Path(__file__).parent / "static"


@dataclass
class WebConfig:
    """Where games are saved, what replays may read, which checkpoints seats may load, limits."""

    save_dir: Path | None = Path("runs/web")
    replay_dir: Path | None = None  # default: save_dir
    policy_dirs: list[Path] = field(default_factory=lambda: [Path.cwd()])
    max_body: int = 1 << 20
    max_games: int = 256
    max_replays: int = 64

    @property
    def replays_from(self) -> Path | None:
        return self.replay_dir if self.replay_dir is not None else self.save_dir


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Refuses (413) a request body over ``limit`` bytes, by its Content-Length or, for a
    streamed body, as soon as the bytes received pass the limit."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", []):
            if key == b"content-length":
                try:
                    size = int(value)
                except ValueError:
                    size = -1
                if size < 0 or size > self.limit:
                    await self._refuse(scope, receive, send)
                    return
        received = 0
        started = False

        async def limited() -> dict:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise _TooLarge
            return message

        async def tracking(message: dict) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited, tracking)
        except _TooLarge:
            if not started:
                await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = JSONResponse({"error": f"request body over the limit of {self.limit} bytes"}, status_code=413)
        await response(scope, receive, send)


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        data = json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(400, f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise Refused(400, f"the body must be a JSON object, got {type(data).__name__}")
    return data


def _only(body: dict[str, Any], known: set[str]) -> None:
    unknown = sorted(set(body) - known)
    if unknown:
        raise Refused(400, f"unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")


def _int_param(request: Request, name: str) -> int:
    text = request.query_params.get(name)
    try:
        return int(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise Refused(400, f"query parameter {name!r} must be an integer, got {text!r}") from None


Handler = Callable[[Request], Awaitable[Response]]


def _refusals(handler: Handler) -> Handler:
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except Refused as exc:
            return JSONResponse({"error": exc.reason}, status_code=exc.status)
        except files.FileRefused as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
    return wrapped


def create_app(config: WebConfig | None = None) -> Starlette:
    """The web table over a fresh :class:`~hgin_web.games.Store`."""
    config = config or WebConfig()
    store = Store(config.save_dir, config.max_games, config.max_replays)
    seeds = random.SystemRandom()

    async def meta(request: Request) -> Response:
        profiles = [{"name": n, "format": r.format, "seats": r.num_players, "columns": r.columns,
                     "target": r.target} for n, r in PROFILES.items()]
        return JSONResponse({"profiles": profiles, "agents": [*BUILTIN_AGENTS, "ppo", "ppo:PATH", "rllib:PATH"],
                             "max_body": config.max_body, "max_step_moves": MAX_STEP_MOVES,
                             "replays": config.replays_from is not None})

    async def new_game(request: Request) -> Response:
        body = await _body(request)
        rules, seat, specs, seed = parse_new_game(body, config.policy_dirs, lambda: seeds.randrange(2**31))
        game = await run_in_threadpool(store.new_game, rules, seat, specs, seed)
        with game.lock:
            view = game.view()
        return JSONResponse(view, status_code=201)

    def _seat(request: Request) -> int | None:
        return _int_param(request, "seat") if "seat" in request.query_params else None

    async def get_game(request: Request) -> Response:
        game = store.game(request.path_params["id"])
        seat = _seat(request)

        def run() -> dict:
            with game.lock:
                return game.view(seat)
        return JSONResponse(await run_in_threadpool(run))

    async def act(request: Request) -> Response:
        game = store.game(request.path_params["id"])
        body = await _body(request)
        _only(body, {"action", "seat"})
        if "action" not in body:
            raise Refused(400, "missing 'action' (an action id; the view's legal_actions lists them)")

        def run() -> dict:
            with game.lock:
                game.act(body["action"], body.get("seat"))
                return game.view()
        return JSONResponse(await run_in_threadpool(run))

    async def step(request: Request) -> Response:
        game = store.game(request.path_params["id"])
        body = await _body(request)
        _only(body, {"moves"})
        moves = body.get("moves", 1)
        if not isinstance(moves, int) or isinstance(moves, bool) or not 1 <= moves <= MAX_STEP_MOVES:
            raise Refused(400, f"'moves' must be an integer in 1..{MAX_STEP_MOVES}, got {moves!r}")

        def run() -> dict:
            with game.lock:
                made = game.step(moves)
                out = game.view()
            out["moves_made"] = made
            return out
        return JSONResponse(await run_in_threadpool(run))

    async def game_file(request: Request) -> Response:
        game = store.game(request.path_params["id"])
        if game.path is None or not game.path.is_file():
            raise Refused(404, "this server does not save games (no --save-dir)")
        return FileResponse(game.path, media_type="application/json", filename=game.path.name)

    def _replay_root() -> Path:
        if config.replays_from is None:
            raise Refused(404, "this server has no replay folder")
        return config.replays_from

    async def list_files(request: Request) -> Response:
        root = _replay_root()
        return JSONResponse(await run_in_threadpool(files.list_files, root))

    async def tournament(request: Request) -> Response:
        rel = request.query_params.get("path", "")
        folder = files.resolve_inside(_replay_root(), rel)
        if not (folder / "tournament.json").is_file():
            raise Refused(404, f"{rel!r} is not a tournament folder")
        return JSONResponse({"path": rel, "matches": await run_in_threadpool(files.tournament_matches, folder)})

    async def new_replay(request: Request) -> Response:
        body = await _body(request)
        if "upload" in body:
            _only(body, {"upload", "name"})
            upload = body["upload"]
            raw = (upload if isinstance(upload, str) else json.dumps(upload)).encode("utf-8")
            name = body.get("name") if isinstance(body.get("name"), str) else "upload"
            recording = await run_in_threadpool(files.load_bytes, raw, os.path.basename(name))
        elif "seed" in body:
            _only(body, {"path", "seed", "a_seat", "agent_a", "agent_b"})
            folder = files.resolve_inside(_replay_root(), body.get("path"))  # type: ignore[arg-type]
            if not (folder / "tournament.json").is_file():
                raise Refused(404, f"{body.get('path')!r} is not a tournament folder")
            seed, a_seat = body.get("seed"), body.get("a_seat", 0)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (seed, a_seat)):
                raise Refused(400, "'seed' and 'a_seat' must be integers")
            if not all(isinstance(body.get(k), str) for k in ("agent_a", "agent_b")):
                raise Refused(400, "'agent_a' and 'agent_b' must name the tournament's agents")
            recording = await run_in_threadpool(files.load_tournament_match, folder, body["path"], seed, a_seat,
                                                body["agent_a"], body["agent_b"])
        else:
            _only(body, {"path"})
            path = files.resolve_inside(_replay_root(), body.get("path"))  # type: ignore[arg-type]
            if not path.is_file():
                raise Refused(404, f"no match file {body.get('path')!r} in the replay folder")
            recording = await run_in_threadpool(files.load_path, path, body["path"])
        replay = await run_in_threadpool(store.new_replay, recording)
        return JSONResponse(await run_in_threadpool(replay.view, 0), status_code=201)

    async def get_replay(request: Request) -> Response:
        replay = store.replay(request.path_params["id"])
        step_no = _int_param(request, "step") if "step" in request.query_params else 0

        def run() -> dict:
            with replay.lock:
                return replay.view(step_no)
        return JSONResponse(await run_in_threadpool(run))

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    routes = [
        Route("/", index),
        Route("/api/meta", _refusals(meta)),
        Route("/api/games", _refusals(new_game), methods=["POST"]),
        Route("/api/games/{id}", _refusals(get_game)),
        Route("/api/games/{id}/actions", _refusals(act), methods=["POST"]),
        Route("/api/games/{id}/step", _refusals(step), methods=["POST"]),
        Route("/api/games/{id}/file", _refusals(game_file)),
        Route("/api/files", _refusals(list_files)),
        Route("/api/tournament", _refusals(tournament)),
        Route("/api/replays", _refusals(new_replay), methods=["POST"]),
        Route("/api/replays/{id}", _refusals(get_replay)),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.store = store
    app.state.config = config
    app.add_middleware(BodyLimit, limit=config.max_body)
    return app
