"""hgin_web.scheduler: the agents' threads serve the game that used them least first, and
search games run in threads of their own."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from hgin_web.app import WebConfig, create_app
from hgin_web.scheduler import FairPool


def _pool_with_use(**used: float) -> tuple[list[float], FairPool, list[str], threading.Event]:
    """A one-thread pool on a clock the test sets, its keys charged ``used`` seconds at
    time 0; a list for the order the slices ran in and the gate a blocking slice waits on."""
    clock = [0.0]
    pool = FairPool(1, "test", half_life=5.0, clock=lambda: clock[0])
    with pool._ready:
        for key, seconds in used.items():
            pool._charge(key, seconds)
    return clock, pool, [], threading.Event()


def test_a_game_that_used_the_threads_least_goes_first() -> None:
    """One thread, held busy while slices queue: five of a game that has used the pool for
    a second and one of a game that has not. The light game's slice runs next, then the
    heavy game's in the order they came; each slice's time is charged to its game."""
    clock, pool, order, gate = _pool_with_use(heavy=1.0)

    async def scenario() -> None:
        blocker = asyncio.ensure_future(pool.run("blocker", gate.wait))
        await asyncio.sleep(0.05)  # the one thread is taken
        heavy = [asyncio.ensure_future(pool.run("heavy", lambda i=i: order.append(f"heavy{i}"))) for i in range(5)]
        await asyncio.sleep(0.05)
        light = asyncio.ensure_future(pool.run("light", lambda: order.append("light")))
        await asyncio.sleep(0.05)
        gate.set()
        await asyncio.gather(blocker, light, *heavy)

    asyncio.run(scenario())
    pool.shutdown()
    assert order == ["light", "heavy0", "heavy1", "heavy2", "heavy3", "heavy4"]
    with pool._ready:
        assert pool.used("heavy") >= 1.0 and pool.used("blocker") > 0.1
        clock[0] += 5.0  # one half-life later
        assert pool.used("heavy") == pytest.approx(pool._used["heavy"][0] / 2)


def test_a_queued_slice_decays_while_it_waits() -> None:
    """A slice queued by a game that had just used the pool for 8 s waits; two half-lives
    later its game's use is 2 s, so it goes before a slice queued then by a game that has
    used 4 s (ordered by their use at queueing, it would wait behind every lighter slice
    that kept arriving)."""
    clock, pool, order, gate = _pool_with_use(burst=8.0)

    async def scenario() -> None:
        blocker = asyncio.ensure_future(pool.run("blocker", gate.wait))
        await asyncio.sleep(0.05)
        burst = asyncio.ensure_future(pool.run("burst", lambda: order.append("burst")))
        await asyncio.sleep(0.05)
        clock[0] = 10.0
        with pool._ready:
            pool._charge("busy", 4.0)
        busy = asyncio.ensure_future(pool.run("busy", lambda: order.append("busy")))
        await asyncio.sleep(0.05)
        gate.set()
        await asyncio.gather(blocker, burst, busy)

    asyncio.run(scenario())
    pool.shutdown()
    assert order == ["burst", "busy"]
    with pool._ready:
        assert pool.priority("nobody") == float("-inf")


def test_an_exception_reaches_the_request_and_the_pool_goes_on() -> None:
    pool = FairPool(1, "test")

    def boom() -> None:
        raise ValueError("bad move")

    async def scenario() -> int:
        with pytest.raises(ValueError, match="bad move"):
            await pool.run("g", boom)
        return await pool.run("g", lambda: 7)

    assert asyncio.run(scenario()) == 7
    pool.shutdown()
    with pytest.raises(ValueError, match="at least one thread"):
        FairPool(0, "none")


def test_search_games_step_in_their_own_threads(tmp_path: Path) -> None:
    """A watched game of search agents steps in the search pool, one of Simple in the
    agents' pool: each pool charges only its own games."""
    app = create_app(WebConfig(save_dir=tmp_path / "games"))
    agents, search = app.state.pools
    with TestClient(app, base_url="http://127.0.0.1") as client:
        ids = {}
        for opponents in ("search", "simple"):
            r = client.post("/api/games", json={"rules": "hollywood", "seat": None, "opponents": opponents})
            assert r.status_code == 201, r.text
            view = r.json()
            ids[opponents] = view["id"]
            auth = {"Authorization": f"Bearer {view['seat_token']}"}
            r = client.post(f"/api/games/{view['id']}/step", json={"moves": 2}, headers=auth)
            assert r.status_code == 200 and r.json()["moves_made"] >= 1, r.text
        assert ids["search"] in search._used and ids["search"] not in agents._used
        assert ids["simple"] in agents._used and ids["simple"] not in search._used
        assert app.state.store.games[ids["search"]].slow and not app.state.store.games[ids["simple"]].slow
