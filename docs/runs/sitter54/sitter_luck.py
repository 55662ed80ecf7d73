"""How much of three-hand's luck correction (``arena.variance``) is the sitting seat's.

Each match (``ppo:`` against the Expert, every seating) is played three times, the same
match each time (both agents are deterministic from the seed), under recorders whose
critic weights keep every seat, only the seat sitting the hand out, or only the two
playing it; the match's correction C is the sum of the last two.

    python docs/runs/sitter54/sitter_luck.py SEEDS [FIRST_SEED]
"""

import sys

import numpy as np

from arena.matches import AgentSpec, play_match, seatings
from arena.variance import CriticValue, LuckRecorder
from hgin_env.rules import get_rules


class SeatsKept(CriticValue):
    """The critic's value with the weights of the sitting seat (``keep="sitter"``) or of
    the playing seats (``keep="playing"``) alone."""

    def __init__(self, rules, keep):
        super().__init__(rules)
        self.keep = keep

    def inputs(self, batch, rows, a_seats):
        x, w = super().inputs(batch, rows, a_seats)
        m = self.num_players
        rr, seats = np.repeat(rows, m), np.tile(np.arange(m), rows.size)
        sitting = (batch.seat_tables(rr, seats)[1] < 0).reshape(rows.size, m)
        return x, np.where(sitting == (self.keep == "sitter"), w, 0.0)


def main() -> None:
    rules = get_rules("hollywood_three_hand")
    recorders = {"every seat": LuckRecorder(rules, CriticValue(rules)),
                 "the sitter's": LuckRecorder(rules, SeatsKept(rules, "sitter")),
                 "the playing seats'": LuckRecorder(rules, SeatsKept(rules, "playing"))}
    a, b = AgentSpec("ppo:").build(rules), AgentSpec("expert").build(rules)
    n, first = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 13_000_000
    luck: dict[str, list[float]] = {k: [] for k in recorders}
    for seed in range(first, first + n):
        for seat in range(len(seatings(rules.format))):
            for k, recorder in recorders.items():
                luck[k].append(play_match(a, b, seed, seat, rules, "ppo", "expert", luck=recorder)["a_luck"])
    c = {k: np.array(v) for k, v in luck.items()}
    print(f"{c['every seat'].size} matches, seeds {first}+")
    for k, v in c.items():
        print(f"C from {k} terms: mean {v.mean():+.4f}, sd {v.std():.4f}")
    split = np.abs(c["every seat"] - c["the sitter's"] - c["the playing seats'"]).max()
    print(f"largest |C - sitter's - playing seats'|: {split:.1e}")


if __name__ == "__main__":
    main()
