"""Digest of a whole duel episode of ``hollywood_gin_v0`` (observations, masks, rewards,
terminations, truncations and infos at every step), for the bit-identity test of the duel.

``python tests/duel_trace.py OUT.json`` records the digests with whatever ``hgin_env`` is
on the path. ``tests/data/duel_trace.json`` was recorded with the env of ``main`` before
the duel and the formats shared one step path and one info builder (commit 6491764; the
profiles RULES_VERSION 2 changed with their version-1 options, as the test plays them), with
this file's digest: the infos enter it as the duel's infos were then (``hands_played``,
``hand`` with the hand record's keys, ``scoreboard``, ``match_winner``; before the first
hand only ``hands_played``), so keys added since
(``seat``, a hand's ``seats``, ``table``, ...) do not change it, and every value it had
must stay the same.
"""

from __future__ import annotations

import hashlib
import json
import sys

import numpy as np

#: (seed, env keyword arguments) of the recorded episodes.
CASES: list[tuple[int, dict]] = [
    (seed, kwargs)
    for kwargs in ({}, {"reward": "columns"}, {"reward": "points"}, {"episode": "hand"},
                   {"rules": "gin_classic", "reward": "points"}, {"rules": "oklahoma"},
                   {"rules": "hollywood_short", "shaping": 0.5, "shaping_gamma": 0.99})
    for seed in (0, 7)
]


def _default(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(type(x))


#: The duel's info keys and the hand record's keys as they were recorded.
INFO_KEYS = ("hands_played", "hand", "scoreboard", "match_winner")
HAND_KEYS = ("number", "dealer", "upcard", "knock_limit", "multiplier", "knocker", "winner", "points",
             "kind", "result", "knock_discard", "final_hands", "columns_decided", "turns")


def recorded_view(info: dict) -> dict:
    """The part of an info the recording holds (see the module docstring)."""
    out = {k: info[k] for k in INFO_KEYS if k in info}
    if info["hands_played"] == 0:  # before the first hand the duel's info held only the count
        out = {"hands_played": 0}
    if "hand" in out:
        out["hand"] = {k: out["hand"][k] for k in HAND_KEYS}
    return out


def trace(seed: int, kwargs: dict) -> tuple[str, int]:
    """(sha256 hex digest, number of steps) of one episode; actions from a seeded stream
    (a random legal action; a knock, when legal, nine times in ten)."""
    from hgin_env import hollywood_gin_v0

    env = hollywood_gin_v0.env(**kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed + 1000)
    h = hashlib.sha256()
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        h.update(agent.encode())
        h.update(np.asarray(obs["observation"], dtype=np.float32).tobytes())
        h.update(np.asarray(obs["action_mask"], dtype=np.int8).tobytes())
        h.update(repr((float(reward), bool(term), bool(trunc))).encode())
        h.update(json.dumps(recorded_view(info), sort_keys=True, default=_default).encode())
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            # knock (52..103) or big gin (107) whenever possible: short hands, every kind
            knocks = legal[((legal >= 52) & (legal < 104)) | (legal == 107)]
            pick = knocks if len(knocks) and rng.random() < 0.9 else legal
            action = int(pick[rng.integers(len(pick))])
        env.step(action)
        steps += 1
    return h.hexdigest(), steps


def main(path: str) -> None:
    rows = [{"seed": seed, "kwargs": kwargs, "digest": d, "steps": n}
            for seed, kwargs in CASES for d, n in [trace(seed, kwargs)]]
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
