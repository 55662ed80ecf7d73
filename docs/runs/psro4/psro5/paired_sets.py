"""A candidate against the policy it would replace, on the same deals: per set of held-out
seeds and pooled, the win rates, the paired difference with its 95% CI (the deal, both
seatings, as the unit) and how many outcomes differ. From the repository root:
``python docs/runs/psro4/psro5/paired_sets.py`` (round 5 against ft54), ``... psro6``
(round 6 against round 5), ``... psro7`` (round 7 against round 6) or ``... search6`` (the
default search on each against the Expert), ``... partnership6`` or
``... three_hand6``, ``... three_hand6_avg``, ``... three_hand_self`` (docs/runs/formats6: a format policy from round 6
against the shipped one), ``... three_hand7`` (round 7's three-hand warm start against round 6's),
``... three_hand8`` (round 6's warm start, shipped later on Dec 6, against the three-hand policy
before it, a fresh set added) or ``... search_three_hand8`` (the three-hand search on it);
it reads the committed ``matches.csv`` files. The figures are :mod:`eval.paired`'s (``python -m
eval.paired OLD NEW`` prints any one set)."""

import sys

from eval.paired import compare, line, match_scores, pooled

R5 = "docs/runs/psro4/psro5/eval/"
R6 = "docs/runs/psro4/psro6/eval/"
R7 = "docs/runs/psro4/psro7/eval/"
FT54 = "docs/runs/ft54/eval/"
F6 = "docs/runs/formats6/eval/"
F6S = "docs/runs/formats6/search/"
#: The figures every policy plays again when it ships (docs/results.md's table, seeds 1,650,000+,
#: and the held-out 1,000 of seeds 7,600,000+): (set, folder in either policy's eval/, opponent's label)
RESHIPPED = (("expert 7.6M", "heldout_7600000", "expert"), ("expert 1.65M", "vs_table", "expert"),
             ("simple 7.6M", "heldout_7600000", "simple"), ("simple 1.65M", "vs_table", "simple"),
             ("imitation 1.65M", "vs_table", "ppo"))
KINDS = ("expert", "simple", "imitation")


def with_reshipped(sets: dict, old: str, new: str) -> dict:
    """``sets`` and the :data:`RESHIPPED` figures of the old policy's and the candidate's eval
    folders, in the order of :data:`KINDS`."""
    every = {**sets, **{name: (old + folder, new + folder, label) for name, folder, label in RESHIPPED}}
    return dict(sorted(every.items(), key=lambda item: KINDS.index(item[0].split()[0])))


def against_shipped_format(shipped: str, six: str, eleven: str) -> dict:
    """A format candidate against the format's shipped policy (folders ``shipped`` + the
    seeds) on the formats' two held-out sets, 6,000,000+ and 11,300,000+, in :data:`F6`."""
    return {"expert 6.0M": (F6 + shipped + "6000000", F6 + six, "expert"),
            "expert 11.3M": (F6 + shipped + "11300000", F6 + eleven, "expert")}


#: candidate: (the names of the two policies, {set: (old's folder, candidate's folder, the opponent's label)})
SETS = {
    "psro5": (("ft54", "round 5"), with_reshipped({
        "expert 10.5M": (R5 + "shipped_vs_expert_10500000", R5 + "avg_vs_expert_10500000", "expert"),
        "expert 10.6M": (R5 + "shipped_vs_expert_10600000", R5 + "avg_vs_expert_10600000", "expert"),
        "simple 9.3M": (FT54 + "avg_vs_simple_9300000", R5 + "avg_vs_simple_9300000", "simple"),
    }, FT54, R5)),
    "psro6": (("round 5", "round 6"), with_reshipped({
        "expert 10.8M": (R6 + "shipped_vs_expert_10800000", R6 + "avg_vs_expert_10800000", "expert"),
        "expert 10.9M": (R6 + "shipped_vs_expert_10900000", R6 + "avg_vs_expert_10900000", "expert"),
        "expert 11.2M": (R6 + "shipped_vs_expert_11200000", R6 + "avg_vs_expert_11200000", "expert"),
        "simple 11.1M": (R6 + "shipped_vs_simple_11100000", R6 + "avg_vs_simple_11100000", "simple"),
    }, R5, R6)),
    "psro7": (("round 6", "round 7"), {
        "expert 11.5M": (R7 + "shipped_vs_expert_11500000", R7 + "avg_vs_expert_11500000", "expert"),
        "expert 11.6M": (R7 + "shipped_vs_expert_11600000", R7 + "avg_vs_expert_11600000", "expert"),
    }),
    "search6": (("search on round 5", "search on round 6"), {
        "expert 970k": (R5 + "search_vs_expert", R6 + "search_vs_expert", "expert"),
    }),
    "partnership6": (("partnership policy shipped before", "round 6's warm start"), against_shipped_format(
        "p_shipped_vs_expert_", "p_warm6_vs_expert_6000000", "p_warm6_vs_expert_11300000")),
    "three_hand6": (("three-hand policy shipped before", "round 6's warm start"), against_shipped_format(
        "t_shipped_vs_expert_", "t_warm6_6000000", "t_warm6_vs_expert_11300000")),
    "three_hand6_avg": (("three-hand policy shipped before", "three_hand6's average"), against_shipped_format(
        "t_shipped_vs_expert_", "t_avg20_30_6000000", "t_avg20_30_vs_expert_11300000")),
    "three_hand_self": (("three-hand policy shipped before", "three_hand_self's average"), against_shipped_format(
        "t_shipped_vs_expert_", "t_self_avg7_11_6000000", "t_self_avg7_11_vs_expert_11300000")),
    "three_hand7": (("round 6's warm start", "round 7's warm start"), {
        "expert 6.0M": (F6 + "t_warm6_6000000", R7 + "t_warm7_vs_expert_6000000", "expert"),
        "expert 11.3M": (F6 + "t_warm6_vs_expert_11300000", R7 + "t_warm7_vs_expert_11300000", "expert"),
    }),
    "three_hand8": (("three-hand policy shipped before", "round 6's warm start"), {
        **against_shipped_format("t_shipped_vs_expert_", "t_warm6_6000000", "t_warm6_vs_expert_11300000"),
        "expert 11.8M": (F6 + "t_shipped_vs_expert_11800000", F6 + "t_warm6_vs_expert_11800000", "expert"),
        "simple 6.0M": (F6 + "t_shipped_vs_simple_6000000", F6 + "t_warm6_6000000", "simple"),
        "simple 11.8M": (F6 + "t_shipped_vs_simple_11800000", F6 + "t_warm6_vs_simple_11800000", "simple"),
    }),
    "search_three_hand8": (("the policy alone", "search on it"), {
        "expert 8.3M": (F6S + "ppo_three_hand_8300000", F6S + "three_hand_8300000", "expert"),
        "expert 11.7M": (F6S + "ppo_three_hand_11700000", F6S + "three_hand_11700000", "expert"),
    }),
}
NAMES, CHOSEN = SETS[sys.argv[1] if len(sys.argv) > 1 else "psro5"]


by_kind: dict = {}
for name, (old_folder, new_folder, opponent) in CHOSEN.items():
    old, new = match_scores(old_folder, opponent), match_scores(new_folder, opponent)
    print(line(name, compare(old, new), NAMES))
    by_kind.setdefault(name.split()[0], []).append((old, new))
for kind, sets in by_kind.items():
    if len(sets) > 1:  # pooled where a kind has sets to pool
        print(line(f"{kind}, pooled", compare(*pooled(sets)), NAMES))
