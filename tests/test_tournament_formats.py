"""Three- and four-seat tournaments: seat rotation on the same deals, per-agent CIs."""

from __future__ import annotations

import pytest

from arena.matches import play_match
from eval.tournament import run_tournament
from hgin_env.rules import get_rules


@pytest.mark.parametrize("profile, per_seed", [("gin_three_hand", 6), ("gin_partnership", 2)])
def test_every_agent_plays_every_seat_on_the_same_deals(profile, per_seed, tmp_path):
    rules = get_rules(profile).replace(target=40, name=profile)
    result = run_tournament(["simple", "random", "expert"], matches=2 * per_seed, seed=3, workers=1,
                            rules=rules, progress=False, out=tmp_path)
    assert result.matches_per_pair == 2 * per_seed and result.seatings == per_seed
    n = rules.num_players
    for a, b in result.pairs:
        rows = result.pair_rows(a, b)
        assert len(rows) == 2 * per_seed
        for seed in {r["seed"] for r in rows}:
            same = [r for r in rows if r["seed"] == seed]
            assert sorted(r["a_seat"] for r in same) == list(range(per_seed))
            for agent in (a, b):  # at every seat of this deal
                assert {s for r in same for s in range(n) if r[f"player_{s}"] == agent} == set(range(n))
            if rules.format == "partnership":  # an agent partners itself
                assert all(r["player_0"] == r["player_2"] and r["player_1"] == r["player_3"] for r in same)
    per_agent = {x["agent"]: x for x in result.agent_summaries()}
    assert set(per_agent) == {"simple", "random", "expert"}
    for x in per_agent.values():
        assert 0.0 <= x["ci_low"] <= x["win_rate"] <= x["ci_high"] <= 1.0
    text = result.markdown()
    assert "95% CI" in text and "every agent at every seat" in text or per_seed == 2
    # resumable: a rerun into the folder plays nothing new and gives the same rows
    again = run_tournament(["simple", "random", "expert"], matches=2 * per_seed, seed=3, workers=1,
                           rules=rules, progress=False, out=tmp_path)
    assert [r["winner"] for r in again.rows] == [r["winner"] for r in result.rows]


def test_three_hand_seatings():
    """Seatings 0-2: A alone at seat k against two copies of B; 3-5: B alone at seat k."""
    from agents import make_agent
    from hgin_env.observation import ObservationLayout

    rules = get_rules("gin_three_hand").replace(target=30, name="t")
    layout = ObservationLayout.for_rules(rules)
    a, b = make_agent("simple", layout=layout), make_agent("random", layout=layout)
    for k in range(6):
        row = play_match(a, b, 5, k, rules, "x", "y")
        alone = "x" if k < 3 else "y"
        assert [row[f"player_{s}"] == alone for s in range(3)] == [s == k % 3 for s in range(3)]
        assert row["winner_side"] in ("a", "b", "")
