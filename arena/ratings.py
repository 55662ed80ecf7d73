"""Bradley-Terry ratings on the Elo scale from pairwise match results.

Why Bradley-Terry instead of sequential Elo: a round-robin is a batch of results, and the
maximum-likelihood fit does not depend on the order in which matches were played.
A small pseudo-count (half a win each way per pair) keeps ratings finite when one agent
wins every match (expert vs random).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def bradley_terry(agents: Sequence[str], results: dict[tuple[str, str], tuple[float, float]],
                  prior: float = 0.5, iterations: int = 2000, anchor: str | None = None) -> dict[str, float]:
    """Ratings (Elo points, 400 * log10 strength) from ``{(a, b): (wins_a, wins_b)}``.

    Draws should be split half-half into the two win counts. ``anchor`` gets rating 0
    (default: the ratings average 0).
    """
    names = list(agents)
    wins = {a: 0.0 for a in names}
    games: dict[tuple[str, str], float] = {}
    for (a, b), (wa, wb) in results.items():
        wa, wb = wa + prior, wb + prior
        wins[a] += wa
        wins[b] += wb
        key = (a, b) if a < b else (b, a)
        games[key] = games.get(key, 0.0) + wa + wb
    strength = {a: 1.0 for a in names}
    for _ in range(iterations):
        new = {}
        for a in names:
            denom = 0.0
            for (x, y), n in games.items():
                if a == x:
                    denom += n / (strength[a] + strength[y])
                elif a == y:
                    denom += n / (strength[a] + strength[x])
            new[a] = wins[a] / denom if denom > 0 else strength[a]
        norm = math.exp(sum(math.log(v) for v in new.values()) / len(new))
        new = {a: v / norm for a, v in new.items()}
        delta = max(abs(math.log(new[a] / strength[a])) for a in names)
        strength = new
        if delta < 1e-10:
            break
    ratings = {a: 400.0 * math.log10(strength[a]) for a in names}
    if anchor is not None and anchor in ratings:
        shift = ratings[anchor]
        ratings = {a: r - shift for a, r in ratings.items()}
    return ratings


def expected_score(rating_a: float, rating_b: float) -> float:
    """Elo expectation of A against B."""
    return 1.0 / (1.0 + 10 ** ((rating_b - rating_a) / 400.0))
