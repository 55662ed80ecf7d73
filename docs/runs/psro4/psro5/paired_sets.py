"""Round 5's average against ft54 on the same deals: per set of held-out seeds and pooled,
the win rates, the paired difference with its 95% CI (the deal, both seatings, as the unit)
and how many outcomes differ. ``python docs/runs/psro4/psro5/paired_sets.py`` from the
repository root; it reads the committed ``matches.csv`` files."""

import csv
import math

HERE = "docs/runs/psro4/psro5/eval/"
FT54 = "docs/runs/ft54/eval/"
#: name: (ft54's folder, round 5's folder, the opponent's label in both)
SETS = {
    "expert 10.5M": (HERE + "shipped_vs_expert_10500000", HERE + "avg_vs_expert_10500000", "expert"),
    "expert 10.6M": (HERE + "shipped_vs_expert_10600000", HERE + "avg_vs_expert_10600000", "expert"),
    "expert 7.6M": (FT54 + "heldout_7600000", HERE + "heldout_7600000", "expert"),
    "expert 1.65M": (FT54 + "vs_table", HERE + "vs_table", "expert"),
    "simple 9.3M": (FT54 + "avg_vs_simple_9300000", HERE + "avg_vs_simple_9300000", "simple"),
    "simple 7.6M": (FT54 + "heldout_7600000", HERE + "heldout_7600000", "simple"),
    "simple 1.65M": (FT54 + "vs_table", HERE + "vs_table", "simple"),
    "imitation 1.65M": (FT54 + "vs_table", HERE + "vs_table", "ppo"),
}


def scores(folder: str, opponent: str) -> dict:
    """{(seed, seat of the first agent): 1 win, 0.5 draw, 0 loss} against ``opponent``."""
    with open(folder + "/matches.csv", newline="") as f:
        return {(r["seed"], r["a_seat"]): {"a": 1.0, "b": 0.0}.get(r["winner_side"], 0.5)
                for r in csv.DictReader(f) if r["agent_b"] == opponent}


def report(name: str, pairs: dict) -> None:
    """One line: ft54's and round 5's rates, the paired difference and its CI by deal."""
    keys = sorted(pairs)
    old = sum(pairs[k][0] for k in keys) / len(keys)
    new = sum(pairs[k][1] for k in keys) / len(keys)
    by_deal: dict = {}
    for k in keys:
        by_deal.setdefault(k[:-1], []).append(pairs[k][1] - pairs[k][0])
    d = [sum(v) / len(v) for v in by_deal.values()]
    mean = sum(d) / len(d)
    half = 1.96 * math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1) / len(d))
    differ = sum(pairs[k][0] != pairs[k][1] for k in keys)
    print(f"{name}: n={len(keys)} ft54 {old:.1%} round 5 {new:.1%} paired {100 * mean:+.1f} "
          f"({100 * (mean - half):+.1f} to {100 * (mean + half):+.1f}), {differ} outcomes differ")


pooled: dict = {}
for name, (old_folder, new_folder, opponent) in SETS.items():
    a, b = scores(old_folder, opponent), scores(new_folder, opponent)
    pairs = {k: (a[k], b[k]) for k in a.keys() & b.keys()}
    report(name, pairs)
    kind = name.split()[0]
    pooled.setdefault(kind, {}).update({(name, *k): v for k, v in pairs.items()})
for kind in ("expert", "simple"):
    report(f"{kind}, pooled", pooled[kind])
