"""How often the match-end change of Dec 7 changes the search's values and its best candidate.

A one-off measurement for docs/runs/sitter54 (not part of the package): the search plays
against the Expert (``eval.search_time``'s matches, seeds 12,097,000+); at every searched
call its values are computed by ``agents.search_batched`` as it is now (a row whose match
ended is worth its rewards alone) and by the module before the change, on the same
arguments. Counted: the calls whose values differ, and those whose best candidate by the
mean over the worlds differs.

    git show 83155d1:agents/search_batched.py > /tmp/old_search_batched.py
    python docs/runs/sitter54/match_end_flips.py hollywood 400
"""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np

from eval.search_time import play_searched
from hgin_env.rules import get_rules


def main(profile: str, decisions: int, old_path: str = "/tmp/old_search_batched.py") -> dict:
    spec = importlib.util.spec_from_file_location("old_search_batched", old_path)
    old_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old_module)
    stats = {"calls": 0, "values_differ": 0, "best_differs": 0}

    def attach(agent) -> None:
        now = agent.critic_values
        before = old_module.CriticValues(now.policy, now.rules, plies=now.plies, reward=now.reward,
                                         match_bonus=now.match_bonus, engine=now.engine, until=now.until)
        values_now = now.values

        def both(worlds, seeds, candidates, me, opponent_rows=None):
            v = values_now(worlds, seeds, candidates, me, opponent_rows)
            w = before.values(worlds, seeds, candidates, me, opponent_rows)
            stats["calls"] += 1
            stats["values_differ"] += int(not np.allclose(v, w))
            stats["best_differs"] += int(np.argmax(v.mean(axis=0)) != np.argmax(w.mean(axis=0)))
            return v

        now.values = both

    play_searched("search", get_rules(profile), decisions, 12097000, prepare=attach)
    return {"rules": profile, **stats}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
