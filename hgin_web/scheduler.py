"""The threads that run the agents' moves, shared fairly between games.

Why: a ``step`` request runs agent moves in short slices (``hgin_web.app``), each queued
for a worker thread. With a first-in-first-out queue, 40 clients stepping long games keep
40 slices queued, and a third client's one-move step waits behind all of them (2.8 s at
the median with search agents). Here each slice is queued with its game's recent use of
the pool (seconds of work, halved every ``half_life`` seconds), and a free thread takes
the slice of the game that used least: a game that asks for one move now and then is
served next, while games that step without pause share what is left evenly. A slice is
never cut, so the wait is at most the slices already running.

A queued slice's use keeps decaying while it waits, as its game's does: slices are ordered
by ``log2(use) + queued_at / half_life``, which orders them as their use decayed to any
common moment would. (Ordered by the use at the moment each was queued, a slice queued
by a game that had just been busy, such as a client's burst of new games, kept that
priority while lighter slices kept arriving, and waited as long as they did: 20 s and
more under load.)

Games whose agents can take long per move (:data:`hgin_web.games.SLOW_AGENTS`, the search
agent: tens of milliseconds to seconds for one move, which no slice can cut) run in a pool
of their own, so their moves never hold the threads the other games' moves need.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable
from typing import Any


class FairPool:
    """``threads`` worker threads; :meth:`run` queues a function for a key (a game) and
    awaits its result (see the module docstring)."""

    def __init__(self, threads: int, name: str, half_life: float = 5.0, clock: Callable[[], float] = time.monotonic):
        if threads < 1:
            raise ValueError(f"a pool needs at least one thread, got {threads}")
        self.name = name
        self.half_life = half_life
        self.clock = clock
        self._queue: list[tuple[float, int, str, Callable[[], Any], asyncio.Future, asyncio.AbstractEventLoop]] = []
        self._ready = threading.Condition()
        self._used: dict[str, tuple[float, float]] = {}  # key -> (seconds used, when last charged)
        self._order = itertools.count()
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True) for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def used(self, key: str) -> float:
        """The key's recent use of the pool in seconds, decayed to now (call with the lock)."""
        seconds, when = self._used.get(key, (0.0, 0.0))
        return seconds * 0.5 ** ((self.clock() - when) / self.half_life) if seconds else 0.0

    def priority(self, key: str) -> float:
        """The key's queue order now: ``log2`` of its use plus the time in half-lives, the
        same for every moment the use is decayed to (-inf for a key with no use: first, in
        arrival order). Call with the lock."""
        used = self.used(key)
        return math.log2(used) + self.clock() / self.half_life if used > 0 else -math.inf

    def _charge(self, key: str, seconds: float) -> None:
        self._used[key] = (self.used(key) + seconds, self.clock())
        if len(self._used) > 4096:  # forget the keys whose use has decayed away
            self._used = {k: v for k, v in self._used.items() if self.used(k) > 1e-3}

    async def run(self, key: str, fn: Callable[[], Any]) -> Any:
        """``fn()`` on a worker thread, queued by ``key``'s recent use; its result or exception."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._ready:
            if self._closed:
                raise RuntimeError(f"the {self.name} pool is shut down")
            heapq.heappush(self._queue, (self.priority(key), next(self._order), key, fn, future, loop))
            self._ready.notify()
        return await future

    def _work(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._ready.wait()
                if self._closed:
                    return
                _, _, key, fn, future, loop = heapq.heappop(self._queue)
            began = time.monotonic()
            try:
                result, error = fn(), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting request
                result, error = None, exc
            with self._ready:
                self._charge(key, time.monotonic() - began)
            with contextlib.suppress(RuntimeError):  # the event loop is closed: nobody waits
                loop.call_soon_threadsafe(_settle, future, result, error)

    def shutdown(self) -> None:
        """Stop the threads after the slices running now; queued ones are cancelled."""
        with self._ready:
            self._closed = True
            pending, self._queue = self._queue, []
            self._ready.notify_all()
        for *_, future, loop in pending:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(future.cancel)


def _settle(future: asyncio.Future, result: Any, error: BaseException | None) -> None:
    if future.cancelled():  # the request went away
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
