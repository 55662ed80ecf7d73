"""The observer's cache: what it derives from a state and reuses while the state holds (the
match-context part of a vector, which changes only when a hand ends). It lives here, on the
observer's side, because the engine knows nothing of observers."""

from __future__ import annotations

import weakref


class StateCache:
    """Values the observer derives from a state and reuses while it holds: the match-context
    part of a vector, which changes only when a hand ends. The observer keeps them here, not
    on the engine's objects (the engine knows nothing of observers). An entry is keyed by the
    state's ``id`` and seat and holds a weak reference that proves it is that state's (an id
    is reused once its object is gone) and the key it was computed for (hands played); the
    entries of collected states are dropped whenever the table fills up."""

    def __init__(self, limit: int = 4096):
        self._entries: dict[tuple[int, int], tuple[weakref.ref, int, object]] = {}
        self._limit = limit

    def get(self, state: object, who: int, key: int):
        entry = self._entries.get((id(state), who))
        if entry is not None and entry[1] == key and entry[0]() is state:
            return entry[2]
        return None

    def put(self, state: object, who: int, key: int, value: object) -> None:
        if len(self._entries) >= self._limit:
            dead = [k for k, e in self._entries.items() if e[0]() is None]
            for k in dead:  # in place: the encoder holds the dict itself
                del self._entries[k]
            self._limit = max(self._limit, 2 * len(self._entries))  # many live states: grow
        self._entries[(id(state), who)] = (weakref.ref(state), key, value)

    def clear(self) -> None:
        self._entries.clear()


#: The observer's one cache (see :class:`StateCache`).
CONTEXT_CACHE = StateCache()
