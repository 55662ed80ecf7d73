"""How well the search's worlds guess the opponent's hidden cards, with and without
policy-based inference (:mod:`agents.inference`), on positions from real play (a script).

Seat 0 is played by ``--player`` (default the format's shipped policy, ``ppo:``), every
other seat by ``--others`` (default the Expert), in matches dealt from ``--seed``, ``--seed + 1``, ... (seeds no
training or selection used). A search agent follows seat 0's decisions
(:meth:`agents.search.SearchAgent.follow`: it rebuilds what the opponent did from seat 0's
observations only); at each of seat 0's decisions where the opponent has made at least one
decision this hand, ``--worlds`` worlds are drawn from each prior (``improved``, the
search's, and ``uniform``) and weighted equally (no inference) or by the likelihood of the
opponent's moves under the opponent model (the policy, or ``--opponent``; with ``--moves``
taken as playing its most likely move, the search's ``infer_moves``). The score of a
weighting: for each of the opponent's hidden cards (its hand minus the cards it visibly
took), the weighted fraction of worlds in which it holds that card, p; reported as the
mean p and the mean log p (p floored at 0.5 / worlds), the log-probability per hidden card
of the true hand under the worlds' per-card marginals; and the effective number of worlds
(1 / sum of squared weights). Under the uniform prior p is hidden / unseen on average.
The true hand is read only to score, never by the agent. The floored log p punishes a
weighting that concentrates on few worlds (a true card in none of them scores the floor),
so it falls as the effective number of worlds does; the mean p does not.

    python -m eval.inference_quality --rules hollywood --positions 2000 --seed 770000
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from agents.inference import tempered_weights
from agents.search import SearchAgent
from arena.matches import as_spec, derive_seed, reset_agent
from hgin_env.match import Match
from hgin_env.observation import observe
from hgin_env.rules import get_rules

PRIORS = ("improved", "uniform")


def _true_hidden(match: Match, seat: int, info: Any) -> tuple[int, int]:
    """The opponent's hand at the seat's table and the part of it the seat cannot see."""
    table = info if not hasattr(info, "table") else info.table
    game, player = match.seat_view(seat)
    hand = game.hands[1 - player]
    return hand, hand & ~table.opponent_known


def _scores(weights: np.ndarray, hands: list[int], hidden: int, floor: float) -> tuple[float, float]:
    """Mean p and mean log p over the true hidden cards (module docstring)."""
    cards = [c for c in range(52) if hidden >> c & 1]
    held = np.array([[h >> c & 1 for c in cards] for h in hands], dtype=np.float64)
    p = weights @ held
    return float(p.mean()), float(np.log(np.maximum(p, floor)).mean())


def measure(rules: str = "hollywood", positions: int = 2000, seed: int = 770000, worlds: int = 64,
            player: str = "ppo:", opponent: str | None = None,
            temperatures: tuple[float, ...] = (1.0, 2.0, 4.0), others: str = "expert",
            moves: bool = False) -> dict[str, Any]:
    """The scores of each prior, unweighted and weighted at each inference temperature."""
    rules_ = get_rules(rules)
    follower = SearchAgent(seed=seed, rules=rules_, infer=True, opponent=opponent, rollouts=1, infer_moves=moves)
    actor = as_spec(player).build(rules_)
    experts = [as_spec(others).build(rules_) for _ in range(rules_.num_players - 1)]
    rng = np.random.default_rng(seed)
    names = ["equal"] + [f"inferred T={t:g}" for t in temperatures]
    sums = {f"{prior}/{name}": [0.0, 0.0, 0.0] for prior in PRIORS for name in names}
    points = 0.0
    counted = matches = 0
    while counted < positions:
        match = Match(rules_, seed=seed + matches)
        for i, agent in enumerate([actor, follower, *experts]):
            reset_agent(agent, derive_seed(seed + matches, i + 1))
        matches += 1
        while not match.is_over and counted < positions:
            seat = match.current_seat
            obs = observe(match, seat)
            if seat != 0:
                match.apply(int(experts[seat - 1](obs)))
                continue
            action = int(actor(obs))
            follower.follow(obs)
            history = follower._history.points
            if history and int(np.asarray(obs["action_mask"]).sum()) > 1:
                info = follower.information_set(obs)
                _, hidden = _true_hidden(match, seat, info)
                if hidden:
                    counted += 1
                    points += min(len(history), follower.inference.max_points)  # type: ignore[union-attr]
                    for prior in PRIORS:
                        drawn = [info.sample(rng, 1.0, prior) for _ in range(worlds)]
                        hands = [follower._opponent_hand(info, w) for w in drawn]
                        ll = follower.inference.log_likelihoods(history, hands, rng)  # type: ignore[union-attr]
                        weightings = [np.full(worlds, 1.0 / worlds)]
                        weightings += [tempered_weights(ll, t) for t in temperatures]
                        for name, weights in zip(names, weightings, strict=True):
                            p, logp = _scores(weights, hands, hidden, 0.5 / worlds)
                            entry = sums[f"{prior}/{name}"]
                            entry[0] += p
                            entry[1] += logp
                            entry[2] += 1.0 / float(weights @ weights)  # effective sample size
            follower.played(obs, action)
            match.apply(action)
    return {"rules": rules_.name, "positions": counted, "matches": matches, "worlds": worlds,
            "player": player, "others": others, "opponent_model": opponent or "the search's policy",
            "model_as_moves": moves,
            "mean_points": points / max(counted, 1),
            "mean_p_true_card": {k: v[0] / counted for k, v in sums.items()},
            "mean_log_p_true_card": {k: v[1] / counted for k, v in sums.items()},
            "mean_effective_worlds": {k: v[2] / counted for k, v in sums.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default="hollywood")
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=770000)
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--player", default="ppo:")
    parser.add_argument("--opponent", default=None, help="the opponent model (default: the search's policy)")
    parser.add_argument("--temperatures", default="1,2,4", help="inference temperatures, comma separated")
    parser.add_argument("--others", default="expert", help="the agent at every other seat (default: the Expert)")
    parser.add_argument("--moves", action="store_true",
                        help="the model plays its most likely move (the search's infer_moves)")
    args = parser.parse_args(argv)
    temperatures = tuple(float(t) for t in args.temperatures.split(","))
    print(json.dumps(measure(args.rules, args.positions, args.seed, args.worlds, args.player, args.opponent,
                             temperatures, args.others, args.moves), indent=2))


if __name__ == "__main__":
    main()
