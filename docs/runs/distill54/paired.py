"""Win rates of two tournaments' first agents on the matches both played (same seed and
seat), and how many outcomes differ: ``python docs/runs/distill54/paired.py A/matches.csv B/matches.csv``."""

import csv
import math
import sys


def wins(path: str) -> dict:
    return {(r["seed"], r["a_seat"]): r["winner_side"] == "a" for r in csv.DictReader(open(path))}


a, b = wins(sys.argv[1]), wins(sys.argv[2])
keys = sorted(a.keys() & b.keys())
for path, won in ((sys.argv[1], a), (sys.argv[2], b)):
    p = sum(won[k] for k in keys) / len(keys)
    half = 1.96 * math.sqrt(p * (1 - p) / len(keys))
    print(f"{path}: {p:.1%} ({p - half:.1%}-{p + half:.1%}) of {len(keys)}")
print(f"outcomes differ in {sum(a[k] != b[k] for k in keys)} matches")
