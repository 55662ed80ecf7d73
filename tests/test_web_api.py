"""The web table's JSON API through Starlette's test client: whole matches in every profile
with a leak check on every answer, the refusals, match files and replays."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from hgin_cli.cli import main as hgin_main
from hgin_cli.cli import save_match
from hgin_env.match import Match
from hgin_env.rules import PROFILES
from hgin_web.app import WebConfig, create_app
from hgin_web.games import MAX_STEP_MOVES

try:
    from tests.web_helpers import BASE_URL, bearer, check_no_leak, greedy_choice, new_game, play_through
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    from web_helpers import BASE_URL, bearer, check_no_leak, greedy_choice, new_game, play_through


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    config = WebConfig(save_dir=tmp_path / "games", policy_dirs=[tmp_path / "policies"], max_body=4096)
    (tmp_path / "policies").mkdir()
    with TestClient(create_app(config), base_url=BASE_URL) as client:  # one event loop for every request: faster
        yield client


def _game(client: TestClient, gid: str):
    return client.app.state.store.game(gid)


@pytest.mark.parametrize("rules", sorted(PROFILES))
def test_whole_match_against_random_leaks_nothing(client: TestClient, rules: str, capsys) -> None:
    """Every answer to the human seat, over a whole match, holds none of the other seats'
    unseen cards nor the stock; the match ends, and its file replays with ``hgin replay``."""
    seat = 1 if PROFILES[rules].num_players > 2 else 0  # a seat that sits out / has a partner

    def check(view: dict) -> None:
        check_no_leak(view, _game(client, view["id"]).match, seat)
        assert "tables" not in view and view["seat"] == seat

    last = play_through(client, rules, seed=7, seat=seat, on_view=check)
    match = _game(client, last["id"]).match
    assert last["over"] and match.is_over and len(last["results"]) == len(match.hand_history)
    path = client.app.state.config.save_dir / last["file"]
    saved = json.loads(path.read_text())
    assert saved["actions"] == match.action_history and saved["complete"] is True
    assert saved["players"][seat] == "human"
    assert hgin_main(["replay", str(path), "--ascii"]) == 0
    assert "Match" in capsys.readouterr().out


def _started(client: TestClient, **body) -> tuple[dict, dict]:
    view, auth = new_game(client, **{"rules": "hollywood", "seat": 0, "opponents": "random", "seed": 3, **body})
    if not view["your_turn"]:
        view = client.post(f"/api/games/{view['id']}/step", json={"moves": 100}, headers=auth).json()
    assert view["your_turn"]
    return view, auth


def test_refused_moves_change_nothing(client: TestClient) -> None:
    view, auth = _started(client)
    gid = view["id"]
    legal = {a["id"] for a in view["legal_actions"]}
    illegal = next(a for a in range(108) if a not in legal)
    history = list(_game(client, gid).match.action_history)
    cases = [
        ({"action": illegal}, 422, "not legal now"),
        ({"action": 108}, 422, "not an action id"),
        ({"action": min(legal), "seat": 1}, 403, "not yours"),
        ({"action": str(min(legal))}, 400, "must be an action id"),
        ({"action": True}, 400, "must be an action id"),
        ({"action": min(legal), "extra": 1}, 400, "unknown field"),
        ({}, 400, "missing 'action'"),
    ]
    for body, status, reason in cases:
        r = client.post(f"/api/games/{gid}/actions", json=body, headers=auth)
        assert r.status_code == status and reason in r.json()["error"], (body, r.text)
    for raw in (b"{not json", b"[1, 2]", b"\xff\xfe"):
        r = client.post(f"/api/games/{gid}/actions", content=raw, headers={"content-type": "application/json", **auth})
        assert r.status_code == 400 and "JSON" in r.json()["error"], raw
    r = client.post(f"/api/games/{gid}/step", json={"moves": 1}, headers=auth)
    assert r.status_code == 409 and "your turn" in r.json()["error"]
    for moves in (0, -1, 10**9, "1", MAX_STEP_MOVES + 1):
        assert client.post(f"/api/games/{gid}/step", json={"moves": moves}, headers=auth).status_code == 400
    assert client.get(f"/api/games/{gid}?seat=1", headers=auth).status_code == 403
    assert client.get(f"/api/games/{gid}?seat=0").status_code == 403  # no token: no seat
    assert client.get(f"/api/games/{gid}?seat=x", headers=auth).status_code == 400
    assert client.get("/api/games/nope").status_code == 404
    assert _game(client, gid).match.action_history == history
    assert client.get(f"/api/games/{gid}", headers=auth).json()["legal_actions"] == view["legal_actions"]
    # Out of turn: after the human's move the agent acts.
    r = client.post(f"/api/games/{gid}/actions", json={"action": greedy_choice(view)}, headers=auth)
    after = r.json()
    if not after["your_turn"]:
        r = client.post(f"/api/games/{gid}/actions", json={"action": min(legal)}, headers=auth)
        assert r.status_code == 409 and "not your turn" in r.json()["error"]


def test_finished_and_watched_games_refuse_moves(client: TestClient) -> None:
    last = play_through(client, "oklahoma", seed=2)
    gid, auth = last["id"], bearer(last["seat_token"])
    r = client.post(f"/api/games/{gid}/actions", json={"action": 104}, headers=auth)
    assert r.status_code == 409 and "over" in r.json()["error"]
    assert client.post(f"/api/games/{gid}/step", json={"moves": 1}, headers=auth).status_code == 409
    watched, auth = new_game(client, rules="gin_us_uk", seat=None, opponents=["simple", "random"], seed=1)
    assert watched["mode"] == "watch" and len(watched["tables"][0]["hands"]) == 2
    r = client.post(f"/api/games/{watched['id']}/actions", json={"action": 104}, headers=auth)
    assert r.status_code == 409 and "no human seat" in r.json()["error"]
    stepped = client.post(f"/api/games/{watched['id']}/step", json={"moves": 3}, headers=auth).json()
    assert stepped["moves_made"] == 3 and len(_game(client, watched["id"]).match.action_history) == 3


def test_new_game_bodies_are_checked(client: TestClient, tmp_path: Path) -> None:
    (tmp_path / "outside.zip").write_bytes(b"x")
    cases = [
        ({"rules": "nope"}, "unknown rules profile"),
        ({"seat": 2}, "'seat' must be"),
        ({"seat": "0"}, "'seat' must be"),
        ({"opponents": "grandmaster"}, "unknown agent"),
        ({"opponents": ["random"]}, "'opponents' must be"),
        ({"opponents": "ppo:../outside.zip"}, "outside the policy folders"),
        ({"opponents": "ppo:/etc/passwd"}, "relative to the policy folders"),
        ({"opponents": "ppo:missing.zip"}, "no .zip checkpoint 'missing.zip' inside the policy folders"),
        ({"seed": -1}, "'seed' must be"),
        ({"seed": 1.5}, "'seed' must be"),
        ({"colour": "red"}, "unknown field"),
    ]
    for body, reason in cases:
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and reason in r.json()["error"], (body, r.text)
    assert client.app.state.store.games == {}


def test_oversized_bodies_are_refused(client: TestClient) -> None:
    big = {"rules": "hollywood", "pad": "x" * 5000}
    r = client.post("/api/games", json=big)
    assert r.status_code == 413 and "limit" in r.json()["error"]

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(10):
            yield b" " * 1000

    r = client.post("/api/games", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert client.app.state.store.games == {}


def test_trained_policy_probabilities_when_watching(client: TestClient) -> None:
    view, auth = new_game(client, rules="hollywood", seat=None, opponents=["ppo", "random"], seed=5)
    for _ in range(6):
        if view["to_act"] == 0:
            break
        view = client.post(f"/api/games/{view['id']}/step", json={"moves": 1}, headers=auth).json()
    assert view["to_act"] == 0
    policy = view["policy"]
    legal = set(_game(client, view["id"]).match.legal_actions())
    assert {p["id"] for p in policy} == legal
    assert abs(sum(p["p"] for p in policy) - 1) < 1e-4
    assert [p["p"] for p in policy] == sorted((p["p"] for p in policy), reverse=True)


# --------------------------------------------------------------------------- replays
def test_replay_steps_through_a_saved_match(client: TestClient) -> None:
    last = play_through(client, "hollywood_three_hand", seed=4)
    match = _game(client, last["id"]).match
    r = client.post("/api/replays", json={"path": last["file"]})
    assert r.status_code == 201, r.text
    first = r.json()
    n = len(match.action_history)
    assert first["mode"] == "replay" and first["step"] == 0 and first["steps"] == n
    assert [m["step"] for m in first["marks"]][0] == 0 and len(first["marks"]) == len(match.hand_history)
    end = client.get(f"/api/replays/{first['id']}?step={n}").json()
    assert end["over"] and end["sheet"] == last["sheet"] and len(end["results"]) == len(match.hand_history)
    mark = first["marks"][1]["step"]
    at = client.get(f"/api/replays/{first['id']}?step={mark}").json()
    assert len(at["results"]) == 1 and at["tables"][0]["stock"] == 31
    assert client.get(f"/api/replays/{first['id']}?step={n + 1}").status_code == 400
    assert client.get(f"/api/replays/{first['id']}?step=-1").status_code == 400


def test_replay_reads_uploads_and_only_inside_its_folder(client: TestClient, tmp_path: Path) -> None:
    match = Match("hollywood", seed=9)
    for _ in range(30):
        match.apply(match.legal_actions()[0])
    cli_file = save_match(match, tmp_path / "cli.json", players=["human", "expert"])
    r = client.post("/api/replays", json={"upload": cli_file.read_text(), "name": "cli.json"})
    assert r.status_code == 201 and r.json()["steps"] == 30 and not r.json()["complete"]
    r = client.post("/api/replays", json={"upload": "{broken", "name": "x.json"})
    assert r.status_code == 400 and "x.json" in r.json()["error"] and "invalid JSON" in r.json()["error"]
    root = client.app.state.config.save_dir
    root.mkdir(parents=True, exist_ok=True)
    (root / "corrupt.json").write_text(json.dumps({**json.loads(cli_file.read_text()), "actions": [999]}))
    os.symlink(cli_file, root / "link.json")
    cases = [
        ({"path": "../cli.json"}, 400, "outside the replay folder"),
        ({"path": str(cli_file)}, 400, "relative"),
        ({"path": "link.json"}, 400, "outside the replay folder"),
        ({"path": "sub/../../cli.json"}, 400, "outside the replay folder"),
        ({"path": ""}, 400, "non-empty"),
        ({"path": 3}, 400, "non-empty"),
        ({"path": "missing.json"}, 404, "no match file"),
        ({"path": "corrupt.json"}, 400, "corrupt"),
        ({"path": "cli.json", "x": 1}, 400, "unknown field"),
    ]
    for body, status, reason in cases:
        r = client.post("/api/replays", json=body)
        assert r.status_code == status and reason in r.json()["error"], (body, r.text)
    listed = client.get("/api/files").json()
    assert {"path": "corrupt.json"} in listed["matches"] and {"path": "link.json"} not in listed["matches"]
    assert client.get("/api/replays/nope").status_code == 404


def test_replay_of_a_tournament_match(client: TestClient) -> None:
    from eval.tournament import run_tournament

    folder = client.app.state.config.save_dir / "tour"
    result = run_tournament(["random", "simple"], matches=2, seed=3, workers=1, out=folder,
                            rules="gin_us_uk", progress=False)
    row = result.rows[0]
    assert client.get("/api/files").json()["tournaments"] == [{"path": "tour"}]
    listed = client.get("/api/tournament?path=tour").json()["matches"]
    assert len(listed) == 2
    body = {"path": "tour", "seed": row["seed"], "a_seat": row["a_seat"], "agent_a": "random", "agent_b": "simple"}
    r = client.post("/api/replays", json=body)
    assert r.status_code == 201, r.text
    view = client.get(f"/api/replays/{r.json()['id']}?step={r.json()['steps']}").json()
    assert view["over"] and len(view["results"]) == row["hands"]
    r = client.post("/api/replays", json={**body, "seed": 999})
    assert r.status_code == 404 and "no match seed 999" in r.json()["error"]
    assert client.get("/api/tournament?path=../..").status_code == 400


def test_hgin_web_command_line() -> None:
    from hgin_cli.cli import build_parser

    args = build_parser().parse_args(["web", "--port", "8123", "--save-dir", "x"])
    assert args.command == "web" and args.port == 8123 and args.host == "127.0.0.1"
    assert hgin_main(["web", "--port", "0"]) == 2


# --------------------------------------------------------------------------- issue 34's rows
def test_partnership_hand_number_is_the_same_everywhere(client: TestClient) -> None:
    """The first hand is hand 1 in every view of every format (as ``hgin play`` says
    "Hand 1"); in a partnership, where each round deals one hand at each table, the hand
    number is the round's for both tables, in the seat's view, the public and the watched
    view, the moves and the results' labels."""
    for rules in ("hollywood", "hollywood_three_hand", "hollywood_partnership"):
        view, _ = new_game(client, rules=rules, seat=0, opponents="random", seed=None)
        watched, _ = new_game(client, rules=rules, seat=None, opponents="random", seed=None)
        assert view["hand_number"] == watched["hand_number"] == 1, rules
        assert client.get(f"/api/games/{view['id']}").json()["hand_number"] == 1
    seen_rounds = []

    def check(view: dict) -> None:
        match = _game(client, view["id"]).match
        number = len(match.round_history) + (0 if match.is_over else 1)
        assert view["hand_number"] == number
        assert client.get(f"/api/games/{view['id']}").json()["hand_number"] == number
        for e in view["events"]:
            assert e["hand"] <= number
        for r in view["results"]:
            assert r["label"] == f"Round {r['round'] + 1}, table {r['table']}"
        seen_rounds.append(number)

    last = play_through(client, "gin_partnership", seed=11, seat=2, on_view=check)
    assert last["over"] and seen_rounds[0] == 1 and max(seen_rounds) >= 2
    moves = [e for e in last["events"] if e["seat"] is not None]
    assert moves and all(e["hand"] == last["hand_number"] for e in moves[-3:])


def test_match_winner_fields_are_named(client: TestClient) -> None:
    """The winner is given in named fields: the seat (duel, three-hand), the team
    (partnership), the environment's agent name (``player_1`` / ``team_0``), the seats."""
    duel = play_through(client, "gin_us_uk", seed=3)
    assert "match_winner" not in duel
    seat = duel["match_winner_seat"]
    assert seat in (0, 1) and duel["match_winner_team"] is None
    assert duel["match_winner_agent"] == f"player_{seat}" and duel["winning_seats"] == [seat]
    assert seat == _game(client, duel["id"]).match.match_winner
    team = play_through(client, "gin_partnership", seed=4, seat=1)
    t = team["match_winner_team"]
    assert t in (0, 1) and team["match_winner_seat"] is None and team["match_winner_agent"] == f"team_{t}"
    assert sorted(team["winning_seats"]) == sorted(team["teams"][t])
    running, _ = new_game(client, rules="hollywood", seat=0, opponents="random", seed=None)
    assert (running["match_winner_seat"], running["match_winner_team"], running["match_winner_agent"]) == (None,) * 3


def test_start_page_says_what_to_do(client: TestClient) -> None:
    """The start page is not an empty table: a hint says to choose and press Start (and the
    page hides it once a game is on screen)."""
    page = client.get("/").text
    assert 'id="welcome"' in page and "press <b>Start</b>" in page
    assert '$("welcome").hidden = true' in client.get("/static/app.js").text


@pytest.mark.parametrize("rules", ["hollywood_three_hand", "hollywood_partnership"])
def test_formats_seat_their_learned_policy(client: TestClient, rules: str) -> None:
    """A three-hand or partnership table takes ``ppo`` opponents: the shipped policy of the
    format's layout plays them, and the watcher sees its move probabilities."""
    n = 3 if rules.endswith("three_hand") else 4
    view, auth = new_game(client, rules=rules, seat=None, opponents=["ppo"] * n, seed=6)
    for _ in range(12):
        view = client.post(f"/api/games/{view['id']}/step", json={"moves": 1}, headers=auth).json()
    assert view["policy"], view
    legal = set(_game(client, view["id"]).match.legal_actions())
    assert {p["id"] for p in view["policy"]} == legal


def test_formats_seat_the_search(client: TestClient) -> None:
    """``search`` sits at a three-hand and a partnership table (the critic-valued search, a
    format's only one) and its moves are played; its game runs in the search threads."""
    for rules, n in (("hollywood_three_hand", 3), ("hollywood_partnership", 4)):
        view, auth = new_game(client, rules=rules, seat=None, opponents=["search"] + ["expert"] * (n - 1), seed=6 + n)
        game = _game(client, view["id"])
        assert game.slow
        before = len(game.match.action_history)
        for _ in range(40):
            view = client.post(f"/api/games/{view['id']}/step", json={"moves": 1}, headers=auth).json()
        assert len(game.match.action_history) == before + 40


# --------------------------------------------------------------------------- the table at a glance (issue 56)
def test_the_drawn_card_is_named_only_to_its_drawer(client: TestClient) -> None:
    """After your draw from the stock your view names the card (``table.drawn`` and your
    log line); the opponent's draws stay unnamed, and no other view names any drawn card."""
    view, auth = new_game(client, rules="hollywood", seat=0, opponents="random", seed=21)
    gid = view["id"]
    named = 0
    for _ in range(300):
        if view["over"] or named >= 3:
            break
        if not view["your_turn"]:
            view = client.post(f"/api/games/{gid}/step", json={"moves": 1}, headers=auth).json()
            continue
        draw = next((a["id"] for a in view["legal_actions"] if a["kind"] == "draw"), None)
        view = client.post(f"/api/games/{gid}/actions", json={"action": draw if draw is not None
                                                              else greedy_choice(view)}, headers=auth).json()
        if draw is not None and not view["results"][named:]:
            card = view["table"]["drawn"]
            hand = view["table"]["hand"]
            assert card in hand["loose"] + sum(hand["melds"], [])
            assert view["events"][-1]["text"] == f"player_0 (human) draws {card} from the stock"
            assert all("drawn" not in e for e in view["events"])
            named += 1
        else:
            assert view["table"]["drawn"] is None or view["events"][-1]["action"] != 104
    assert named == 3
    opponent_draws = [e["text"] for e in view["events"] if e["seat"] == 1 and e["action"] == 104]
    assert opponent_draws and all(t == "player_1 (random) draws from the stock" for t in opponent_draws)
    public = client.get(f"/api/games/{gid}").json()
    assert "drawn" not in json.dumps(public)
    watched, watch_auth = new_game(client, rules="hollywood", seat=None, opponents="random", seed=22)
    watched = client.post(f"/api/games/{watched['id']}/step", json={"moves": 40}, headers=watch_auth).json()
    assert "drawn" not in json.dumps(watched) and "draws from the stock" in json.dumps(watched["events"])


def test_each_result_says_what_it_added_to_the_sheet(client: TestClient) -> None:
    """``columns_added`` of every finished hand, summed, is the sheet (a duel, where each
    hand scores at once)."""
    last = play_through(client, "hollywood", seed=3)
    added = [r["columns_added"] for r in last["results"]]
    assert all(a is not None for a in added) and len(added) == len(last["results"]) >= 2
    total = [[sum(a[row][c] for a in added) for c in range(3)] for row in range(2)]
    assert total == last["sheet"]["columns"]


def test_meta_offers_the_registrys_agents_and_the_policy_folders_checkpoints(tmp_path: Path) -> None:
    """``/api/meta``'s agents are the plain names of agents.spec's registry (one list: a name
    registered there is offered and accepted), ``ppo`` and each checkpoint of the policy
    folders as ``ppo:PATH``; hidden files are not listed."""
    from agents import spec
    from agents.random_agent import RandomAgent

    policies = tmp_path / "policies"
    (policies / "sub").mkdir(parents=True)
    for name in ("a.zip", "sub/b.zip", ".hidden.zip", "notes.txt"):
        (policies / name).write_bytes(b"x")
    spec.register_agent("coin_flip", RandomAgent)
    try:
        with TestClient(create_app(WebConfig(save_dir=None, policy_dirs=[policies])), base_url=BASE_URL) as c:
            offered = [a["spec"] for a in c.get("/api/meta").json()["agents"]]
            assert offered == [*sorted(n for n in spec.known_agents() if ":" not in n), "ppo", "ppo:a.zip",
                               "ppo:sub/b.zip"]
            assert {"random", "simple", "expert", "search", "coin_flip"} <= set(offered)
            view, _ = new_game(c, rules="hollywood", seat=0, opponents="coin_flip", seed=2)
            assert view["settings"]["opponents"] == ["human", "coin_flip"]
    finally:
        spec._NAMES.pop("coin_flip", None)


def test_search_options_offered_and_bounded(client: TestClient) -> None:
    """``search:KEY=VALUE,...`` takes the options ``/api/meta`` offers (the search agent's
    own keywords), each within its bounds; any other option, ``policy`` (a checkpoint by
    any path) included, is refused before anything is built."""
    import inspect

    from agents.search import SearchAgent
    from hgin_web.games import SEARCH_OPTIONS

    assert set(SEARCH_OPTIONS) <= set(inspect.signature(SearchAgent.__init__).parameters)
    search = next(a for a in client.get("/api/meta").json()["agents"] if a["spec"] == "search")
    assert search["options"] == SEARCH_OPTIONS
    view, _ = new_game(client, rules="hollywood", seat=0, opponents="search:rollouts=8,until=turn,width=2", seed=4)
    assert view["settings"]["opponents"] == ["human", "search:rollouts=8,until=turn,width=2"]
    for spec, said in (("search:policy=ppo:/tmp/x.zip", "'policy' is not offered here"),
                       ("search:rollouts=100000", "rollouts=100000: a number in 1..256"),
                       ("search:rollouts=true", "a number in 1..256"),
                       ("search:until=never", "one of turn, hand"),
                       ("search:rollouts", "is not key=value")):
        r = client.post("/api/games", json={"rules": "hollywood", "seat": 0, "opponents": spec})
        assert r.status_code == 400 and said in r.json()["error"], (spec, r.text)
