"""The web table shared safely (issue 32), through Starlette's test client: one test per
probe of the issue's table, each named after its row. The probes that need a real server
(slow headers, SIGKILL, load on the agents' threads) are in ``test_web_server.py``."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from hgin_env.match import Match
from hgin_env.rules import RULES_VERSION, get_rules
from hgin_web.app import SHIPPED_POLICIES, WebConfig, create_app
from hgin_web.games import MAX_STEP_MOVES
from hgin_web.store import Limits

try:
    from tests.web_helpers import BASE_URL, bearer, greedy_choice, new_game, play_through, web_starter
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    from web_helpers import BASE_URL, bearer, greedy_choice, new_game, play_through, web_starter


def _app(tmp_path: Path, **config):
    config.setdefault("save_dir", tmp_path / "games")
    config.setdefault("policy_dirs", [tmp_path / "policies"])
    (tmp_path / "policies").mkdir(exist_ok=True)
    return create_app(WebConfig(**config))


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(_app(tmp_path), base_url=BASE_URL) as c:
        yield c


def _store(client: TestClient):
    return client.app.state.store


def _moves(client: TestClient, view: dict, auth: dict, n: int) -> dict:
    """``n`` moves of the human (and the agents' replies) in a played game."""
    for _ in range(n):
        if view["over"]:
            break
        if view["your_turn"]:
            view = client.post(f"/api/games/{view['id']}/actions", json={"action": greedy_choice(view)},
                               headers=auth).json()
        else:
            view = client.post(f"/api/games/{view['id']}/step", json={"moves": 50}, headers=auth).json()
    return view


# --------------------------------------------------------------------------- a live game's file
def test_live_game_file_is_not_listed(client: TestClient) -> None:
    """While a game runs its file (every card, the stock order) is neither listed, nor
    replayable, nor downloadable; once the match is over it is all three."""
    view, auth = new_game(client, rules="hollywood", seat=0, opponents="random", seed=None)
    view = _moves(client, view, auth, 6)
    game = _store(client).game(view["id"])
    name = game.path.name
    assert game.path.is_file() and not view["over"] and view["file"] is None
    assert {"path": name} not in client.get("/api/files").json()["matches"]
    r = client.post("/api/replays", json={"path": name})
    assert r.status_code == 409 and "still being played" in r.json()["error"]
    r = client.get(f"/api/games/{view['id']}/file", headers=auth)
    assert r.status_code == 409 and "still being played" in r.json()["error"]
    r = client.post("/api/replays", json={"path": "." + name + ".seat"})  # the seat record is never served
    assert r.status_code == 400 and "hidden" in r.json()["error"]
    last = play_through(client, "gin_us_uk", seed=5)
    assert last["file"] and {"path": last["file"]} in client.get("/api/files").json()["matches"]
    assert client.post("/api/replays", json={"path": last["file"]}).status_code == 201
    assert client.get(f"/api/games/{last['id']}/file").status_code == 200


# --------------------------------------------------------------------------- the seed
def test_seed_hidden_until_match_end(client: TestClient) -> None:
    """A seed the server drew is in no view before the end (the seat's, the public one, a
    watched game's); a seed the player chose is shown to the player; every seed is shown
    at the end."""
    view, auth = new_game(client, rules="hollywood", seat=0, opponents="random", seed=None)
    gid = view["id"]
    assert view["seed"] is None and view["settings"]["seed"] is None
    assert client.get(f"/api/games/{gid}", headers=auth).json()["seed"] is None
    assert client.get(f"/api/games/{gid}").json()["seed"] is None
    watched, _ = new_game(client, rules="hollywood", seat=None, opponents="random", seed=None)
    assert watched["seed"] is None
    chosen, _ = new_game(client, rules="hollywood", seat=0, opponents="random", seed=12345)
    assert chosen["seed"] == 12345  # to its seat token's holder only
    assert client.get(f"/api/games/{chosen['id']}").json()["seed"] is None
    last = play_through(client, "gin_us_uk", seed=None)
    assert last["over"] and isinstance(last["seed"], int)
    assert last["seed"] == _store(client).game(last["id"]).match.seed


#: Chosen seeds no answer holds by chance (no id, token or count spells them).
LIVE_SEEDS = (8_675_309_123, 7_654_321_987)


def _public_answers(client: TestClient, games: list[tuple[dict, dict]], other_auth: dict) -> list[tuple[str, str]]:
    """Every answer someone without a game's seat token can get about it: (request, text)."""
    out: list[tuple[str, str]] = []

    def ask(method: str, path: str, **kw) -> None:
        r = client.request(method, path, **kw)
        out.append((f"{method} {path} {kw.get('json', '')} {sorted(kw.get('headers', {}))} -> {r.status_code}",
                    r.text))
    ask("GET", "/api/meta")
    ask("GET", "/api/files")
    ask("GET", "/api/games/0123456789abcdef")
    for view, _ in games:
        gid = view["id"]
        ask("GET", f"/api/games/{gid}")
        ask("GET", f"/api/games/{gid}?seat=0")
        ask("GET", f"/api/games/{gid}", headers=other_auth)
        ask("GET", f"/api/games/{gid}/file")
        ask("POST", f"/api/games/{gid}/actions", json={"action": 0})
        ask("POST", f"/api/games/{gid}/actions", json={"action": 0}, headers=other_auth)
        ask("POST", f"/api/games/{gid}/step", json={"moves": 1})
        name = _store(client).game(gid).path.name
        ask("POST", "/api/replays", json={"path": name})
        ask("POST", "/api/replays", json={"path": "." + name + ".seat"})
    return out


def test_live_seed_is_in_no_view_but_its_seat_holders(client: TestClient) -> None:
    """A live game's seed, chosen or drawn, is in no answer without its seat token: not the
    public view of a played game, not a watched game's view, not a listing, not an error;
    the token's holder sees a seed it chose (never a drawn one), and everyone sees the
    seed once the match is over (its file and replays hold it)."""
    played, played_auth = new_game(client, rules="hollywood", seat=0, opponents="random", seed=LIVE_SEEDS[0])
    watched, watched_auth = new_game(client, rules="gin_us_uk", seat=None, opponents="random", seed=LIVE_SEEDS[1])
    drawn, drawn_auth = new_game(client, rules="hollywood", seat=1, opponents="expert", seed=None)
    _, other_auth = new_game(client, rules="hollywood", seat=0, opponents="random", seed=1)
    played = _moves(client, played, played_auth, 12)
    watched = client.post(f"/api/games/{watched['id']}/step", json={"moves": 30}, headers=watched_auth).json()
    drawn = _moves(client, drawn, drawn_auth, 12)
    drawn_seed = _store(client).game(drawn["id"]).match.seed
    games = [(played, played_auth), (watched, watched_auth), (drawn, drawn_auth)]
    assert not any(v["over"] for v, _ in games)
    answers = _public_answers(client, games, other_auth)
    assert len(answers) == 3 + 9 * len(games)
    for secret in (*LIVE_SEEDS, drawn_seed):
        leaks = [request for request, text in answers if str(secret) in text]
        assert not leaks, f"seed {secret} of a live game answered to {leaks}"
    # The holders: a chosen seed in their view and settings bar, a drawn one not yet.
    for (view, auth), seed in zip(games, (*LIVE_SEEDS, None), strict=True):
        mine = client.get(f"/api/games/{view['id']}", headers=auth).json()
        assert mine["seed"] == mine["settings"]["seed"] == seed
    # Once over, the seed is public (the file and a replay of it hold it anyway).
    view = _moves(client, played, played_auth, 10_000)
    assert view["over"]
    public = client.get(f"/api/games/{view['id']}").json()
    assert public["seed"] == public["settings"]["seed"] == LIVE_SEEDS[0]
    assert json.loads(client.get(f"/api/games/{view['id']}/file").text)["seed"] == LIVE_SEEDS[0]


def test_a_live_seed_is_no_oracle(client: TestClient) -> None:
    """Another game or a replay with a live game's seed is answered as with any seed: a
    refusal ("in use") would tell anyone which seeds are being played, and a seed alone
    deals its cards offline anyway (``hgin play --seed``), so refusing it kept nothing secret."""
    new_game(client, rules="hollywood", seat=0, opponents="random", seed=77)
    answers = []
    for seed in (77, 78):
        r = client.post("/api/games", json={"rules": "hollywood", "seat": None, "opponents": "random", "seed": seed})
        answers.append((r.status_code, sorted(r.json())))
        match = Match(get_rules("hollywood_three_hand"), seed=seed)
        upload = json.dumps({"format": "hgin-format-match", "rules_version": RULES_VERSION,
                             "rules": match.rules.to_dict(), "seed": seed, "first_dealer": None,
                             "players": ["a", "b", "c"], "actions": []})
        r = client.post("/api/replays", json={"upload": upload, "name": "same_seed.json"})
        answers.append((r.status_code, sorted(r.json())))
    assert answers[:2] == answers[2:] and answers[0][0] == answers[1][0] == 201, answers


# --------------------------------------------------------------------------- seat ownership
def test_moves_need_the_seat_token(client: TestClient) -> None:
    """Moves and steps need the game's seat token: none is 401, another game's is 403, and
    nothing changes; the token is answered once, never in a later view."""
    view, auth = new_game(client, rules="hollywood", seat=0, opponents="random", seed=3)
    other, other_auth = new_game(client, rules="hollywood", seat=0, opponents="random", seed=4)
    gid = view["id"]
    if not view["your_turn"]:
        view = client.post(f"/api/games/{gid}/step", json={"moves": 50}, headers=auth).json()
    history = list(_store(client).game(gid).match.action_history)
    action = greedy_choice(view)
    for headers, status in (({}, 401), (other_auth, 403), (bearer("x" * 32), 403), ({"Authorization": "Basic x"}, 401)):
        r = client.post(f"/api/games/{gid}/actions", json={"action": action}, headers=headers)
        assert r.status_code == status and "seat token" in r.json()["error"], (headers, r.text)
        r = client.post(f"/api/games/{gid}/step", json={"moves": 1}, headers=headers)
        assert r.status_code == status
    assert _store(client).game(gid).match.action_history == history
    assert client.post(f"/api/games/{gid}/actions", json={"action": action}, headers=auth).status_code == 200
    assert "seat_token" not in client.get(f"/api/games/{gid}", headers=auth).json()
    assert client.get(f"/api/games/{gid}", headers=other_auth).status_code == 403


def test_watchers_see_only_public_views(client: TestClient) -> None:
    """Without the token a game a person plays shows its public view: no table, no hand, no
    legal moves, no moves made, only the results (no card of a running hand)."""
    view, auth = new_game(client, rules="hollywood", seat=0, opponents="random", seed=8)
    view = _moves(client, view, auth, 10)
    public = client.get(f"/api/games/{view['id']}").json()
    assert public["view"] == "public" and public["yours"] is False
    assert not {"table", "tables", "legal_actions", "policy"} & set(public)
    assert all(e["seat"] is None for e in public["events"])
    match = _store(client).game(view["id"]).match
    held = {c for hand in (match.tables[0].game.hands[0], match.tables[0].game.hands[1]) for c in range(52)
            if hand >> c & 1}
    from hgin_env.cards import format_card

    text = json.dumps({k: v for k, v in public.items() if k not in ("results", "rounds")})
    assert not [format_card(c) for c in held if f'"{format_card(c)}"' in text]
    assert client.get(f"/api/games/{view['id']}", headers=auth).json()["view"] == "seat"


# --------------------------------------------------------------------------- other origins
def test_foreign_host_refused(tmp_path: Path) -> None:
    """DNS rebinding: a Host that is not a loopback name (or one given) is refused, on every
    route; the names given with --allow-host are served."""
    with TestClient(_app(tmp_path, allowed_hosts=("table.lan",)), base_url=BASE_URL) as c:
        for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example", ""):
            for method, path in (("GET", "/api/meta"), ("GET", "/"), ("POST", "/api/games")):
                r = c.request(method, path, json={} if method == "POST" else None, headers={"host": host})
                assert r.status_code == 403 and "is not served" in r.json()["error"], (host, path)
        for host in ("localhost:8000", "127.0.0.1", "[::1]:8000", "table.lan:8000"):
            assert c.get("/api/meta", headers={"host": host}).status_code == 200, host


def test_cross_site_post_refused(client: TestClient) -> None:
    """A page of another site cannot create games (or replays): its text/plain POST (a
    "simple" request, no preflight) and any request with a foreign Origin or
    Sec-Fetch-Site: cross-site are refused, and nothing is created."""
    body = json.dumps({"rules": "hollywood", "seat": 0, "opponents": "random"})
    cases = [
        ({"content-type": "text/plain", "origin": "http://evil.example"}, 403),
        ({"content-type": "text/plain"}, 415),
        ({"content-type": "application/x-www-form-urlencoded"}, 415),
        ({"content-type": "application/json", "origin": "http://evil.example"}, 403),
        ({"content-type": "application/json", "origin": "null"}, 403),
        ({"content-type": "application/json", "sec-fetch-site": "cross-site"}, 403),
        ({"content-type": "application/json", "sec-fetch-site": "same-site"}, 403),
    ]
    for headers, status in cases:
        for path in ("/api/games", "/api/replays"):
            r = client.post(path, content=body, headers=headers)
            assert r.status_code == status, (headers, path, r.text)
    assert _store(client).games == {}
    same = {"content-type": "application/json", "origin": BASE_URL, "sec-fetch-site": "same-origin"}
    assert client.post("/api/games", content=body, headers=same).status_code == 201


def test_non_loopback_host_needs_a_server_token(tmp_path: Path, monkeypatch, capsys) -> None:
    """With a server token every API request needs it (header, or the cookie /?token= sets);
    ``hgin web --host`` other than loopback makes one when none is given and prints the
    address with it."""
    with TestClient(_app(tmp_path, server_token="s3cret"), base_url=BASE_URL) as c:
        assert c.get("/api/meta").status_code == 401
        assert c.get("/api/meta", headers={"x-hgin-token": "wrong"}).status_code == 401
        assert c.get("/api/meta", headers={"x-hgin-token": "s3cret"}).status_code == 200
        assert c.get("/").status_code == 200  # the page itself holds nothing
        r = c.get("/?token=s3cret", follow_redirects=False)
        assert r.status_code == 303 and "hgin_web_token=s3cret" in r.headers["set-cookie"]
        assert "httponly" in r.headers["set-cookie"].lower() and "samesite=strict" in r.headers["set-cookie"].lower()
        c.cookies.set("hgin_web_token", "s3cret")
        assert c.get("/api/meta").status_code == 200
    from hgin_web import cli as web_cli

    start_uvicorn = web_starter(tmp_path, monkeypatch, capsys)

    def start(*argv: str):  # the app's settings, and what the command printed
        config, out = start_uvicorn(*argv)
        return config.app.state.config, out

    config, out = start("--host", "0.0.0.0")
    assert config.server_token and f"?token={config.server_token}" in out and config.allowed_hosts == ("*",)
    config, out = start("--host", "192.168.1.9", "--token", "t0k")
    assert config.server_token == "t0k" and "192.168.1.9" in config.allowed_hosts and "?token=t0k" in out
    config, out = start()
    assert config.server_token is None and "token" not in out
    config, _ = start("--search-threads", "3")
    assert config.search_threads == 3
    for bad, said in ((("--connections-per-client", "0"), "must be at least 1"),
                      (("--max-connections", "10", "--connections-per-client", "20"), "at most --max-connections")):
        with pytest.raises(web_cli.StartError, match=said):
            start(*bad)


# --------------------------------------------------------------------------- bad names and paths
def test_bad_agent_names_and_paths_are_4xx(client: TestClient, tmp_path: Path) -> None:
    """Spaces, over-long names and paths, link loops, NULs and hidden files in an agent spec
    or a replay path are refused with a reason (never a 500), and name no absolute path."""
    policies = tmp_path / "policies"
    os.symlink("loop", policies / "loop")
    root = tmp_path / "games"
    root.mkdir(exist_ok=True)
    os.symlink("loop", root / "loop")
    long = "x" * 6000
    for spec in ("ppo:a b", "ppo:" + long, "ppo:loop", "ppo:loop/x", "rllib:loop", "ppo:.hidden.zip",
                 "p" * 5000, "ppo:a\tb", "ppo:" + "d/" * 600 + "m.zip"):
        r = client.post("/api/games", json={"opponents": spec})
        assert r.status_code == 400, (spec[:40], r.text)
        assert str(tmp_path) not in r.json()["error"]
    for path in (long, "loop", "loop/x", "a b", "d/" * 3000, "\u00e9" * 300, ".hidden"):
        for r in (client.get("/api/tournament", params={"path": path}),
                  client.post("/api/replays", json={"path": path}),
                  client.post("/api/replays", json={"path": path, "seed": 1, "a_seat": 0, "agent_a": "a",
                                                     "agent_b": "b"})):
            assert 400 <= r.status_code < 500 and "error" in r.json(), (path[:30], r.status_code, r.text)
            assert str(tmp_path) not in r.json()["error"]


def _nested(value, depth: int):
    for _ in range(depth):
        value = [value]
    return value


def test_deep_json_and_nul_are_400(client: TestClient) -> None:
    """A body nested 100,000 deep, nested past the API's 16 levels, or with a NUL anywhere
    (an agent spec, a path, a key) is a 400."""
    for raw in (b"[" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
                json.dumps({"opponents": _nested(["random"], 17)}).encode(),
                json.dumps({"opponents": "ran\x00dom"}).encode(), json.dumps({"ru\x00les": 1}).encode()):
        for path in ("/api/games", "/api/replays"):
            r = client.post(path, content=raw, headers={"content-type": "application/json"})
            assert r.status_code in (400, 413), (raw[:30], r.text)
            assert "error" in r.json()
    r = client.post("/api/replays", json={"upload": "[" * 100_000, "name": "deep.json"})
    assert r.status_code == 413 or (r.status_code == 400 and "deep" in r.json()["error"])


def test_unknown_routes_and_methods_answer_json(client: TestClient) -> None:
    for method, path, status in (("GET", "/nope", 404), ("GET", "/api/nope", 404), ("GET", "/static/nope.js", 404),
                                 ("DELETE", "/api/meta", 405), ("PUT", "/api/games", 405),
                                 ("GET", "/api/games", 405), ("POST", "/api/files", 405)):
        r = client.request(method, path)
        assert r.status_code == status and r.headers["content-type"].startswith("application/json"), (method, path)
        assert r.json()["error"]


# --------------------------------------------------------------------------- uploads
def _three_hand_file(seed: int | None, actions_ok: int, illegal: bool = False) -> tuple[str, int]:
    """A three-hand match file: ``actions_ok`` legal actions, then (``illegal``) one that is
    not legal there."""
    rules = get_rules("hollywood_three_hand")
    match = Match(rules, seed=seed if seed is not None else 0)
    for _ in range(actions_ok):
        legal = match.legal_actions()
        knocks = [a for a in legal if 52 <= a < 104]
        match.apply((knocks or legal)[0])
    actions = list(match.action_history)
    if illegal:
        actions.append(next(a for a in range(108) if a not in match.legal_actions()))
    data = {"format": "hgin-format-match", "rules_version": RULES_VERSION, "rules": rules.to_dict(), "seed": seed,
            "first_dealer": None, "players": ["human", "expert", "expert"], "actions": actions, "complete": False}
    return json.dumps(data), len(actions)


def test_upload_illegal_later_is_refused_with_its_action_number(client: TestClient) -> None:
    """A three-hand upload whose actions turn illegal far in is refused at upload with the
    action's number, and no replay is made (no view of it can fail later)."""
    text, n = _three_hand_file(seed=21, actions_ok=300, illegal=True)
    r = client.post("/api/replays", json={"upload": text, "name": "late.json"})
    assert r.status_code == 400 and f"action #{n}" in r.json()["error"] and "late.json" in r.json()["error"]
    assert _store(client).replays == {}
    text, n = _three_hand_file(seed=21, actions_ok=300)
    r = client.post("/api/replays", json={"upload": text, "name": "fine.json"})
    assert r.status_code == 201 and r.json()["steps"] == n
    for step in (0, n // 2, n):
        assert client.get(f"/api/replays/{r.json()['id']}?step={step}").status_code == 200


def test_upload_without_seed_refused(client: TestClient) -> None:
    """A saved file always has its seed: a three-hand upload with "seed": null is refused at
    upload (each view would deal another match)."""
    text, _ = _three_hand_file(seed=None, actions_ok=0)
    r = client.post("/api/replays", json={"upload": text, "name": "noseed.json"})
    assert r.status_code == 400 and "'seed' is null" in r.json()["error"]


def test_upload_numbers_out_of_range_refused(client: TestClient) -> None:
    """A seed past 2**63-1, a rule number past 2**31-1 (a target of 10**30), or more actions
    than a replay holds, are refused at upload."""
    rules = get_rules("hollywood")
    base = {"format": "hgin-match", "rules_version": RULES_VERSION, "rules": rules.to_dict(), "seed": 1,
            "first_dealer": None, "actions": [], "players": ["a", "b"]}
    for change, reason in (({"seed": 2**64}, "'seed' must be an integer in 0..2**63-1"),
                           ({"seed": -3}, "'seed' must be"),
                           ({"rules": dict(rules.to_dict(), target=10**30)}, "target"),
                           ({"rules": dict(rules.to_dict(), max_hands=2**40)}, "max_hands"),
                           ({"rules": dict(rules.to_dict(), target=0)}, "target")):
        r = client.post("/api/replays", json={"upload": json.dumps({**base, **change}), "name": "n.json"})
        assert r.status_code == 400 and reason in r.json()["error"], (change, r.text)
    for seed in (2**63, 10**30):
        r = client.post("/api/games", json={"seed": seed})
        assert r.status_code == 400 and "'seed' must be" in r.json()["error"]


# --------------------------------------------------------------------------- caps
def test_one_client_cannot_evict_another_clients_active_game(tmp_path: Path) -> None:
    """One client creating games as fast as it can fills its own share and is answered 429;
    another client's active game stays; the server's cap answers 429 too."""
    app = _app(tmp_path, limits=Limits(max_games=6, max_games_per_client=4))
    with TestClient(app, base_url=BASE_URL, client=("10.0.0.2", 1)) as other, \
            TestClient(app, base_url=BASE_URL, client=("10.0.0.1", 1)) as flood:
        kept, kept_auth = new_game(other, rules="hollywood", seat=0, opponents="random", seed=None)
        codes = [flood.post("/api/games", json={"opponents": "random"}).status_code for _ in range(50)]
        assert codes.count(201) == 4 and set(codes[4:]) == {429}
        r = flood.post("/api/games", json={"opponents": "random"})
        assert "limit per client" in r.json()["error"]
        assert other.get(f"/api/games/{kept['id']}", headers=kept_auth).status_code == 200
        more = [other.post("/api/games", json={"opponents": "random"}).status_code for _ in range(3)]
        assert more == [201, 429, 429]  # 6 games in all: the server's cap
        assert "server holds its limit" in other.post("/api/games", json={}).json()["error"]
        assert other.get(f"/api/games/{kept['id']}", headers=kept_auth).status_code == 200


def test_finished_then_idle_games_go_first(tmp_path: Path) -> None:
    """Room for a new game is made from a finished game first, then from the game idle the
    longest; an evicted unfinished game comes back from its file when asked for."""
    app = _app(tmp_path, limits=Limits(max_games=3, max_games_per_client=3, idle_seconds=60))
    store = app.state.store
    now = [1000.0]
    store.clock = lambda: now[0]
    with TestClient(app, base_url=BASE_URL) as c:
        idle, idle_auth = new_game(c, rules="hollywood", seat=0, opponents="random", seed=None)
        done = play_through(c, "gin_us_uk", seed=None)
        now[0] += 30
        active, _ = new_game(c, rules="hollywood", seat=0, opponents="random", seed=None)
        fourth, _ = new_game(c, rules="hollywood", seat=0, opponents="random", seed=None)
        assert done["id"] not in store.games and {idle["id"], active["id"], fourth["id"]} <= set(store.games)
        assert c.post("/api/games", json={"opponents": "random"}).status_code == 429  # all active
        now[0] += 45  # the first game has been idle 75 s, the others 45 s
        fifth, _ = new_game(c, rules="hollywood", seat=0, opponents="random", seed=None)
        assert idle["id"] not in store.games and fifth["id"] in store.games
        now[0] += 100
        back = c.get(f"/api/games/{idle['id']}", headers=idle_auth)  # restored from its file
        assert back.status_code == 200 and back.json()["view"] == "seat"
        assert back.json()["table"]["hand"] == idle["table"]["hand"]


# --------------------------------------------------------------------------- steps
def test_step_is_bounded_in_moves_and_time(tmp_path: Path, monkeypatch) -> None:
    """A step makes at most max_step_moves moves and returns once step_seconds have passed
    (after the move in progress); the page asks again."""
    import time as _time

    from hgin_web import games

    app = _app(tmp_path, step_seconds=0.2)
    with TestClient(app, base_url=BASE_URL) as c:
        assert c.get("/api/meta").json()["max_step_moves"] == MAX_STEP_MOVES
        view, auth = new_game(c, rules="hollywood", seat=None, opponents="random", seed=None)
        r = c.post(f"/api/games/{view['id']}/step", json={"moves": MAX_STEP_MOVES + 1}, headers=auth)
        assert r.status_code == 400
        real = games.WebGame.agent

        def slow(self, seat):  # every agent takes 50 ms a move
            agent = real(self, seat)

            def move(obs):
                _time.sleep(0.05)
                return agent(obs)
            return move
        monkeypatch.setattr(games.WebGame, "agent", slow)
        start = _time.monotonic()
        out = c.post(f"/api/games/{view['id']}/step", json={"moves": MAX_STEP_MOVES}, headers=auth).json()
        took = _time.monotonic() - start
        assert 2 <= out["moves_made"] <= 8 and took < 2, (out["moves_made"], took)
        monkeypatch.setattr(games.WebGame, "agent", real)
        fast = c.post(f"/api/games/{view['id']}/step", json={"moves": 30}, headers=auth).json()
        assert fast["moves_made"] == 30 or fast["over"]


# --------------------------------------------------------------------------- policies
def test_policy_dir_defaults_to_shipped_policies(tmp_path: Path, monkeypatch) -> None:
    """By default a seat may load the shipped policies only: ``ppo``, ``ppo:hgin_ppo.zip``;
    a checkpoint in the working directory is not reachable."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.zip").write_bytes(b"PK")
    assert WebConfig().policy_dirs == [SHIPPED_POLICIES]
    with TestClient(create_app(WebConfig(save_dir=tmp_path / "g")), base_url=BASE_URL) as c:
        r = c.post("/api/games", json={"opponents": "ppo:mine.zip"})
        assert r.status_code == 400 and "no .zip checkpoint 'mine.zip'" in r.json()["error"]
        assert str(tmp_path) not in r.json()["error"]
        r = c.post("/api/games", json={"opponents": "ppo:hgin_ppo_scratch.zip", "seed": 1})
        assert r.status_code == 201, r.text
        assert r.json()["players"][1]["label"] == "ppo:hgin_ppo_scratch.zip"  # never the absolute path


def test_checkpoint_errors_name_relative_paths(client: TestClient, tmp_path: Path) -> None:
    """A file in a policy folder that is not a checkpoint is refused naming it relative to
    the folder (its absolute path never reaches the page)."""
    (tmp_path / "policies" / "sub").mkdir()
    (tmp_path / "policies" / "sub" / "bad.zip").write_bytes(b"not a zip at all")
    with zipfile.ZipFile(tmp_path / "policies" / "empty.zip", "w"):
        pass
    for spec in ("ppo:sub/bad.zip", "ppo:empty.zip"):
        r = client.post("/api/games", json={"opponents": spec})
        assert r.status_code == 400 and "cannot load agent" in r.json()["error"], r.text
        assert str(tmp_path) not in r.json()["error"]


# --------------------------------------------------------------------------- the save folder
def test_save_folder_is_bounded(tmp_path: Path) -> None:
    """At most max_saved game files: the oldest finished go first, a game being played
    stays (with its seat record)."""
    with TestClient(_app(tmp_path, limits=Limits(max_saved=3)), base_url=BASE_URL) as c:
        live, _ = new_game(c, rules="hollywood", seat=0, opponents="random", seed=None)
        finished = [play_through(c, "gin_us_uk", seed=None) for _ in range(4)]
        names = sorted(p.name for p in (tmp_path / "games").glob("web_*.json"))
        assert len(names) == 3
        live_path = _store(c).game(live["id"]).path
        assert live_path.name in names and (live_path.parent / f".{live_path.name}.seat").is_file()
        assert [f["file"] in names for f in finished] == [False, False, True, True]


def test_listing_reads_each_file_once(tmp_path: Path) -> None:
    """Listing thousands of files stays fast: each file's head is read once (the answer is
    kept under its modification time), later listings only stat them."""
    root = tmp_path / "games"
    root.mkdir()
    text = json.dumps({"format": "hgin-match"})
    for i in range(3000):
        (root / f"m{i:04}.json").write_text(text)
    (root / "other.json").write_text("{}")
    with TestClient(_app(tmp_path), base_url=BASE_URL) as c:
        first = c.get("/api/files").json()["matches"]
        assert len(first) == 500  # newest first, at most 500
        reads = _listing(c).reads
        assert reads == 3001
        (root / "m0001.json").write_text(text + " ")
        again = c.get("/api/files").json()["matches"]
        assert _listing(c).reads == reads + 1 and again[0] == {"path": "m0001.json"}


def _listing(client: TestClient):
    return client.app.state.listing


# --------------------------------------------------------------------------- restarts
def test_restart_restores_unfinished_games(tmp_path: Path) -> None:
    """A new server over the same save folder holds every unfinished game again: same id,
    same seat token, same view; a finished one is only a file."""
    app = _app(tmp_path)
    with TestClient(app, base_url=BASE_URL) as c:
        view, auth = new_game(c, rules="hollywood_three_hand", seat=1, opponents="random", seed=None)
        view = _moves(c, view, auth, 12)
        watched, watched_auth = new_game(c, rules="gin_us_uk", seat=None, opponents="random", seed=None)
        c.post(f"/api/games/{watched['id']}/step", json={"moves": 7}, headers=watched_auth)
        done = play_through(c, "gin_us_uk", seed=None)
        before = c.get(f"/api/games/{view['id']}", headers=auth).json()
    again = _app(tmp_path)
    assert set(again.state.store.games) == {view["id"], watched["id"]}
    with TestClient(again, base_url=BASE_URL) as c:
        after = c.get(f"/api/games/{view['id']}", headers=auth).json()
        assert {k: v for k, v in after.items() if k != "event_count"} == {
            k: v for k, v in before.items() if k != "event_count"}
        assert c.get(f"/api/games/{view['id']}").json()["view"] == "public"
        assert _moves(c, after, auth, 3)["id"] == view["id"]
        w = c.post(f"/api/games/{watched['id']}/step", json={"moves": 1}, headers=watched_auth)
        assert w.status_code == 200 and len(again.state.store.games[watched["id"]].match.action_history) == 8
        assert c.get(f"/api/games/{done['id']}").status_code == 404
        assert {"path": done["file"]} in c.get("/api/files").json()["matches"]


def test_one_loopback_test_for_hosts_binding_and_clients() -> None:
    """One is_loopback decides the Host header, whether ``hgin web --host`` needs a token
    and which connections are the one local client; the CLI and the guard once disagreed
    on ``*.localhost`` (browsers resolve it to the loopback)."""
    from hgin_web import cli, guard, server

    assert cli.is_loopback is guard.is_loopback
    for name in ("localhost", "app.localhost", "127.0.0.1", "127.8.9.10", "::1"):
        assert guard.is_loopback(name), name
    for name in ("0.0.0.0", "::", "10.0.0.1", "localhost.example.com", "example.com", ""):
        assert not guard.is_loopback(name), name
    assert {server.client_of(a) for a in ("127.0.0.1", "127.0.0.2", "::1")} == {server.LOOPBACK_CLIENT}
    assert server.client_of("10.0.0.1") == "10.0.0.1" and server.client_of(None) == ""
