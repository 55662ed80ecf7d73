"""How strong is an agent: duplicate matches against one opponent, its pair summary.

The one evaluation used by training (periodic evaluation), checkpoint selection, the
exploitability probe and the demo.
"""

from __future__ import annotations

from agents.spec import make_agent
from hgin_env.observation import ObservationLayout
from hgin_env.rules import get_rules

from .matches import play_match, seatings
from .stats import summarize_pair


def evaluate_against(agent: object, opponent: str, matches: int, seed: int, rules: object) -> dict:
    """Duplicate matches (each seed in every seating of the format: twice in a duel or a
    partnership, seats swapped; six times in three-hand) in this process; returns the
    tournament's pair summary with the agent as side A. A PPO agent plays all its matches
    at once on the batched engine (:func:`arena.batched_play.play_matches_batched`, the same
    deals and rows as ``play_match``); other agents play them one by one with ``play_match``."""
    rules = get_rules(rules)
    per_seed = len(seatings(rules.format))
    seeds = range(seed, seed + max(1, matches // per_seed))
    layout = ObservationLayout.for_rules(rules)
    model = getattr(agent, "model", None)
    if model is not None and hasattr(agent, "deterministic"):
        # A PPO policy: every match at once on the batched engine, one torch call per step.
        from agents.batched import BatchedPolicy, make_batched_agent  # torch only for a policy

        from .batched_play import play_matches_batched

        # An agent whose model is not SB3's (an RLlib module) gives its own batched form.
        batched = getattr(agent, "batched", None)
        learner = batched(seed) if callable(batched) else BatchedPolicy(model, deterministic=agent.deterministic,
                                                                        seed=seed)
        opp_b = make_batched_agent(opponent, seed=seed, layout=layout)
        rows = play_matches_batched(learner, opp_b, list(seeds), rules, "learner", opponent)
    else:
        kwargs: dict = {"columns": rules.columns} if rules.format == "duel" else {"layout": layout}
        opp = make_agent(opponent, seed=seed, **kwargs)
        rows = [play_match(agent, opp, s, seating, rules, "learner", opponent)
                for s in seeds for seating in range(per_seed)]
    summary = summarize_pair(rows, "learner", opponent)
    for side in "ab":  # mean final total of each column
        summary[f"{side}_columns"] = [sum(r[f"{side}_col{j + 1}"] for r in rows) / len(rows)
                                      for j in range(rules.columns)]
    return summary
