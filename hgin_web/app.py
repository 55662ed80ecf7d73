"""The web table's ASGI app (Starlette): the JSON API the page uses, and the page itself
(``static/``: plain HTML, CSS and JavaScript, nothing fetched from elsewhere).

API (every body and answer is JSON; a refused request answers 4xx with ``{"error": reason}``
and changes nothing; ``TOKEN`` is the seat token ``POST /api/games`` answers once, sent as
``Authorization: Bearer TOKEN``):

==========================================  ================================================
``GET  /api/meta``                           profiles (format, seats, columns), agents, limits
``POST /api/games``                          ``{rules, seat, opponents, seed}`` -> 201 the view
                                             and ``seat_token``
``GET  /api/games/{id}``                     with TOKEN the seat's view (a watched game: all
                                             hands); without, the public view
``POST /api/games/{id}/actions``             TOKEN; ``{action, seat?}``: the human's move
``POST /api/games/{id}/step``                TOKEN; ``{moves}``: agent moves up to the human's
                                             turn (at most ``max_step_moves``, ``step_seconds``)
``GET  /api/games/{id}/file``                the match file, once the match is over
``GET  /api/files``                          finished match files and tournaments to replay
``GET  /api/tournament?path=``               a tournament folder's matches
``POST /api/replays``                        ``{path}``, ``{path, seed, a_seat, agent_a,
                                             agent_b}`` (tournament) or ``{upload: <file>}``
``GET  /api/replays/{id}?step=N``            the match after N actions, every hand open
==========================================  ================================================

The checks before a request reaches these (Host, server token, origin, body size) are
:mod:`hgin_web.guard`; the caps, files and restores are :mod:`hgin_web.store`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hgin_env.game import draw_seed
from hgin_env.rules import PROFILES

from . import files
from .games import MAX_STEP_MOVES, Refused, agent_choices, parse_new_game
from .guard import Guard
from .proxies import ForwardedClients, TrustedProxies
from .scheduler import FairPool
from .server import client_of
from .store import Limits, Store

STATIC = Path(__file__).parent / "static"
#: The folder of the shipped policies (``agents/policies``): the default --policy-dir.
SHIPPED_POLICIES = Path(__file__).resolve().parents[1] / "agents" / "policies"
#: The agents' moves of a step run in slices of about this long (see ``step``).
STEP_SLICE_SECONDS = 0.02
#: How deep a request body's JSON may nest (the API's bodies are two levels deep).
MAX_JSON_DEPTH = 16


@dataclass
class WebConfig:
    """Where games are saved, what replays may read, which checkpoints seats may load, who
    may connect, and the limits (see :mod:`hgin_web.store` and :mod:`hgin_web.guard`)."""

    save_dir: Path | None = Path("runs/web")
    replay_dir: Path | None = None  # default: save_dir
    policy_dirs: list[Path] = field(default_factory=lambda: [SHIPPED_POLICIES])
    max_body: int = 1 << 20
    limits: Limits = field(default_factory=Limits)
    #: Host names served besides the loopback ones ("*": any).
    allowed_hosts: tuple[str, ...] = ()
    #: A token every API request must carry (None: none; required off loopback).
    server_token: str | None = None
    #: Threads that run the agents' moves (and replays' plays), off the event loop.
    agent_threads: int = 2
    #: Threads of their own for the games with an agent that can take long per move
    #: (``search``), so those moves never hold the other games' threads.
    search_threads: int = 1
    #: Wall time one ``step`` request may spend on agent moves (it returns after the move
    #: in progress; the page asks again).
    step_seconds: float = 0.25
    #: Time a request's whole body may take to arrive.
    body_seconds: float = 20.0
    #: The proxies whose X-Forwarded-For / Forwarded name the client (none by default).
    proxies: TrustedProxies = field(default_factory=TrustedProxies)

    @property
    def replays_from(self) -> Path | None:
        return self.replay_dir if self.replay_dir is not None else self.save_dir


# --------------------------------------------------------------------------- request bodies
def _depth_ok(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return False
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return True


def _has_nul(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        data = json.loads(raw.decode("utf-8")) if raw else {}
    except RecursionError:
        raise Refused(400, "the body is not JSON this server reads: nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(400, f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise Refused(400, f"the body must be a JSON object, got {type(data).__name__}")
    if not _depth_ok(data, MAX_JSON_DEPTH):
        raise Refused(400, f"the body's JSON nests deeper than {MAX_JSON_DEPTH} levels")
    if _has_nul(data):
        raise Refused(400, "the body holds a NUL character")
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


def _seat_token(request: Request) -> str | None:
    """The seat token of ``Authorization: Bearer TOKEN`` (None without one)."""
    auth = request.headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _client(request: Request) -> str:
    """The client a request counts for (the per-client caps, the fair pool's keys): its
    address (behind a trusted proxy the forwarded one, :mod:`hgin_web.proxies`), the whole
    loopback range as one (:func:`hgin_web.server.client_of`)."""
    return client_of(request.client.host if request.client else None)


Handler = Callable[[Request], Awaitable[Response]]


def _refusals(handler: Handler) -> Handler:
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except Refused as exc:
            return JSONResponse({"error": exc.reason}, status_code=exc.status)
        except files.FileRefused as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
    return wrapped


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    reason = {404: f"no such page or API route: {request.url.path}",
              405: f"{request.method} is not allowed on {request.url.path}"}.get(exc.status_code, exc.detail)
    return JSONResponse({"error": reason}, status_code=exc.status_code, headers=exc.headers)


async def _server_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": f"internal server error ({type(exc).__name__}); this is a bug"}, status_code=500)


class Table:
    """What every request of one app shares (``request.app.state.table``): the config, the
    games and replays (:class:`~hgin_web.store.Store`), the replay folder's listing, the
    agents' threads (:mod:`hgin_web.scheduler`) and the answer of ``/api/meta``."""

    def __init__(self, config: WebConfig):
        self.config = config
        self.store = Store(config.save_dir, config.limits, config.policy_dirs)
        self.listing = files.Listing(config.replays_from) if config.replays_from is not None else None
        self.pool = FairPool(max(1, config.agent_threads), "hgin-agents")
        self.search_pool = FairPool(max(1, config.search_threads), "hgin-search")
        self.meta_body = json.dumps({
            "profiles": [{"name": n, "format": r.format, "seats": r.num_players, "columns": r.columns,
                          "target": r.target} for n, r in PROFILES.items()],
            "agents": agent_choices(config.policy_dirs),
            "max_body": config.max_body, "max_step_moves": MAX_STEP_MOVES, "step_seconds": config.step_seconds,
            "replays": config.replays_from is not None}).encode()

    async def in_pool(self, key: str, fn: Callable[[], Any], slow: bool = False) -> Any:
        """Run ``fn`` (agents' moves, a replay's play) in the agents' threads, off the event
        loop and off the threads that answer the other requests, queued fairly by ``key``
        (a game); ``slow``: in the search agents' own threads (:mod:`hgin_web.scheduler`)."""
        return await (self.search_pool if slow else self.pool).run(key, fn)

    async def game(self, request: Request) -> Any:
        """The game the path names (restored from its file if it was evicted)."""
        return await run_in_threadpool(self.store.game, request.path_params["id"], _client(request))

    def replay_root(self) -> Path:
        if self.config.replays_from is None:
            raise Refused(404, "this server has no replay folder")
        return self.config.replays_from

    def tournament_folder(self, rel: Any) -> Path:
        folder = files.resolve_inside(self.replay_root(), rel)
        if not files.is_file(folder / "tournament.json"):
            raise Refused(404, f"{rel!r} is not a tournament folder")
        return folder

    def shutdown(self) -> None:
        self.pool.shutdown()
        self.search_pool.shutdown()


def _table(request: Request) -> Table:
    return request.app.state.table


def _seat(request: Request) -> int | None:
    return _int_param(request, "seat") if "seat" in request.query_params else None


def _own(request: Request, game: Any) -> bool:
    """Whether the request carries the game's seat token (a wrong one is refused)."""
    token = _seat_token(request)
    if token is None:
        return False
    if not game.holds(token):
        raise Refused(403, "that is not this game's seat token")
    return True


def _owner(request: Request, game: Any) -> None:
    if _seat_token(request) is None:
        raise Refused(401, "this needs the game's seat token (Authorization: Bearer TOKEN, "
                           "as POST /api/games answered it)")
    _own(request, game)


# --------------------------------------------------------------------------- the page, meta
async def index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", media_type="text/html")


async def meta(request: Request) -> Response:
    return Response(_table(request).meta_body, media_type="application/json")


# --------------------------------------------------------------------------- games
async def new_game(request: Request) -> Response:
    table = _table(request)
    body = await _body(request)
    client = _client(request)
    new = parse_new_game(body, table.config.policy_dirs, draw_seed)
    game, token = await table.in_pool(f"new:{client}", lambda: table.store.new_game(new, client))

    def run() -> dict:
        with game.lock:
            return game.view(own=True)
    view = await run_in_threadpool(run)
    view["seat_token"] = token
    return JSONResponse(view, status_code=201)


async def get_game(request: Request) -> Response:
    game = await _table(request).game(request)
    own = _own(request, game)
    seat = _seat(request)

    def run() -> dict:
        with game.lock:
            return game.view(own, seat)
    return JSONResponse(await run_in_threadpool(run))


async def _owned(request: Request, known: set[str]) -> tuple[Table, Any, dict[str, Any]]:
    """The game the path names, which the request must hold the seat token of, and the
    request's body, refused if it has a field not in ``known``."""
    table = _table(request)
    game = await table.game(request)
    _owner(request, game)
    body = await _body(request)
    _only(body, known)
    return table, game, body


async def act(request: Request) -> Response:
    table, game, body = await _owned(request, {"action", "seat"})
    if "action" not in body:
        raise Refused(400, "missing 'action' (an action id; the view's legal_actions lists them)")

    def run() -> dict:
        with game.lock:
            game.act(body["action"], body.get("seat"))
            table.store.saved_change(game)
            return game.view(own=True)
    return JSONResponse(await run_in_threadpool(run))


async def step(request: Request) -> Response:
    table, game, body = await _owned(request, {"moves"})
    moves = body.get("moves", 1)
    if not isinstance(moves, int) or isinstance(moves, bool) or not 1 <= moves <= MAX_STEP_MOVES:
        raise Refused(400, f"'moves' must be an integer in 1..{MAX_STEP_MOVES}, got {moves!r}")

    # The moves run in slices, each queued fairly among the games' slices (the game that
    # used the threads least goes first), so a short step (an agent's one reply) never
    # waits for a long one to end; the last slice also draws the view.
    deadline = time.monotonic() + table.config.step_seconds
    made = 0

    def run_slice() -> tuple[int, dict | None]:
        with game.lock:
            if made and (game.over or game.match.current_seat == game.human):
                n = 0  # another request's moves got there first
            else:
                n = game.step(moves - made, min(STEP_SLICE_SECONDS, max(0.0, deadline - time.monotonic())))
                table.store.saved_change(game)
            stopped = game.over or game.match.current_seat == game.human
            if stopped or made + n >= moves or time.monotonic() >= deadline:
                return n, game.view(own=True)
            return n, None

    while True:
        n, out = await table.in_pool(game.id, run_slice, slow=game.slow)
        made += n
        if out is not None:
            break
    out["moves_made"] = made
    return JSONResponse(out)


async def game_file(request: Request) -> Response:
    game = await _table(request).game(request)
    if game.path is None or not files.is_file(game.path):
        raise Refused(404, "this server does not save games (no --save-dir)")
    if not game.over:
        raise Refused(409, "the match is still being played: its file (which holds every card) is served "
                           "once it is over")
    return FileResponse(game.path, media_type="application/json", filename=game.path.name)


# --------------------------------------------------------------------------- files and replays
async def list_files(request: Request) -> Response:
    table = _table(request)
    table.replay_root()
    assert table.listing is not None
    return JSONResponse(await run_in_threadpool(table.listing))


async def tournament(request: Request) -> Response:
    rel = request.query_params.get("path", "")
    folder = _table(request).tournament_folder(rel)
    matches = await run_in_threadpool(files.tournament_matches, folder, rel)
    return JSONResponse({"path": rel, "matches": matches})


async def new_replay(request: Request) -> Response:
    table = _table(request)
    body = await _body(request)
    client = _client(request)
    if "upload" in body:
        _only(body, {"upload", "name"})
        upload = body["upload"]
        raw = (upload if isinstance(upload, str) else json.dumps(upload)).encode("utf-8")
        name = body.get("name") if isinstance(body.get("name"), str) else "upload"
        name = os.path.basename(name)[:100] or "upload"
        recording = await run_in_threadpool(files.load_upload, raw, name)
    elif "seed" in body:
        _only(body, {"path", "seed", "a_seat", "agent_a", "agent_b"})
        folder = table.tournament_folder(body.get("path"))
        seed, a_seat = body.get("seed"), body.get("a_seat", 0)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (seed, a_seat)):
            raise Refused(400, "'seed' and 'a_seat' must be integers")
        if not all(isinstance(body.get(k), str) and len(body[k]) <= 300 for k in ("agent_a", "agent_b")):
            raise Refused(400, "'agent_a' and 'agent_b' must name the tournament's agents")
        recording = await table.in_pool(f"replay:{client}", lambda: files.load_tournament_match(
            folder, body["path"], seed, a_seat, body["agent_a"], body["agent_b"]))
    else:
        _only(body, {"path"})
        path = files.resolve_inside(table.replay_root(), body.get("path"))
        if not files.is_file(path):
            raise Refused(404, f"no match file {body.get('path')!r} in the replay folder")
        if table.store.is_live_file(path):
            raise Refused(409, f"{body['path']!r} is a game still being played: it can be replayed once it "
                               "is over")
        recording = await run_in_threadpool(files.load_path, path, body["path"])
    replay = await table.in_pool(f"replay:{client}", lambda: table.store.new_replay(recording, client))
    return JSONResponse(await run_in_threadpool(replay.view, 0), status_code=201)


async def get_replay(request: Request) -> Response:
    replay = _table(request).store.replay(request.path_params["id"])
    step_no = _int_param(request, "step") if "step" in request.query_params else 0

    def run() -> dict:
        with replay.lock:
            return replay.view(step_no)
    return JSONResponse(await run_in_threadpool(run))


ROUTES = [
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


def create_app(config: WebConfig | None = None) -> Starlette:
    """The web table over a fresh :class:`~hgin_web.store.Store` (which restores the
    unfinished games of the save folder): the routes above, their shared :class:`Table`,
    and the :class:`~hgin_web.guard.Guard` in front."""
    config = config or WebConfig()
    table = Table(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        table.shutdown()

    app = Starlette(routes=ROUTES, exception_handlers={HTTPException: _http_error, Exception: _server_error},
                    lifespan=lifespan)
    app.state.table = table
    app.state.store = table.store
    app.state.config = config
    app.state.pools = (table.pool, table.search_pool)
    app.state.listing = table.listing
    app.add_middleware(Guard, allowed_hosts=config.allowed_hosts, server_token=config.server_token,
                       max_body=config.max_body, body_seconds=config.body_seconds)
    app.add_middleware(ForwardedClients, proxies=config.proxies)
    return app
