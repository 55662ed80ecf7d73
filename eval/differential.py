"""Differential check of the batched engine against the scalar engine, step by step, in
every format.

Match ``i`` of a :class:`hgin_env.batch.BatchGame` is played with the same seed (hence the
same decks) by the AEC environment (:class:`hgin_env.envs.aec.raw_env` over
:class:`hgin_env.match.Match`, the duel its two-seat case), in the same reward mode, and
both receive the same actions. At every step the check compares, for every match: the
acting seat, the legal-action mask and the observation vector (bit for bit against
``env.observe``, i.e. :func:`hgin_env.observation.observe`); after it, every seat's reward;
whenever a hand ends its kind, winner, knocker and points (as seats) and the sheet
(columns, column winners, wins, settlement, match winner); when a match ends the
truncation, the winner and every seat's episode summary
(:func:`hgin_env.batch.vector.seat_summary` against
:func:`hgin_env.summary.match_summary`). A finished match restarts in both
with the batch's next seed.

Actions come from a seeded mix per match (match ``i``'s kind is ``i % 4``): the rule mix
(uniformly random moves, but knocking (or big gin) often when legal and always with gin,
and discarding the card that leaves the least deadwood often, so that hands end by knocks,
gins, undercuts and dead hands and matches run to the end), uniform random play, and
heuristic play (the batched Simple and Expert). Each step a fifth of the matches wait
(action -1), to check partial steps.

    python -m eval.differential --hands 20000            # every profile and variant
    python -m eval.differential --decisions 300000 --profiles hollywood_three_hand
    python -m eval.differential --engine numpy           # the numpy reference path (default: compiled)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence

import numpy as np

from hgin_env import actions as A
from hgin_env.batch import HAND_KINDS, BatchGame
from hgin_env.batch.vector import seat_summary
from hgin_env.cards import NUM_CARDS
from hgin_env.compiled import ENGINE_VARIABLE, ENGINES, resolve_engine
from hgin_env.envs.aec import raw_env
from hgin_env.observation import ObservationLayout
from hgin_env.rewards import REWARD_MODES
from hgin_env.rules import PROFILES, Rules, get_rules, profile_names
from hgin_env.summary import match_summary

#: The named profiles plus variants that switch on what no profile uses (big gin, an ace
#: upcard meaning gin only, a knock limit of 0 with columns of 1, no first-upcard offer
#: on the Hollywood sheet; the formats with short targets, hand caps, Oklahoma, short
#: sessions and big gin).
EXTRA_RULES: dict[str, Rules] = {
    "big_gin": Rules(big_gin_bonus=31, name="big_gin"),
    "oklahoma_ace_gin_only": Rules(oklahoma=True, oklahoma_ace_gin_only=True, spade_multiplier=3,
                                   name="oklahoma_ace_gin_only"),
    "short_match": Rules(target=40, max_hands=6, box_bonus=5, game_bonus=20, shutout_game_bonus=50,
                         dealer_rotation="winner", name="short_match"),
    "oklahoma_sheet_no_offer": Rules(oklahoma=True, columns=3, first_upcard_offer=False,
                                     name="oklahoma_sheet_no_offer"),
    "three_hand_short": Rules(format="three_hand", dealer_rotation="loser", dead_hand_same_dealer=True,
                              target=40, max_hands=7, box_bonus=5, game_bonus=20, shutout_game_bonus=50,
                              big_gin_bonus=31, name="three_hand_short"),
    "three_hand_oklahoma_short": Rules(format="three_hand", dealer_rotation="loser", dead_hand_same_dealer=True,
                                       oklahoma=True, short_session=True, target=60,
                                       name="three_hand_oklahoma_short"),
    "partnership_short": Rules(format="partnership", target=50, max_hands=4, box_bonus=5, game_bonus=20,
                               shutout_game_bonus=50, big_gin_bonus=31, name="partnership_short"),
    "partnership_straight_no_offer": Rules(format="partnership", knock_limit=0, columns=1, target=60,
                                           first_upcard_offer=False, short_session=True,
                                           name="partnership_straight_no_offer"),
}


def all_profiles() -> dict[str, Rules]:
    """Every rules profile (every format) plus :data:`EXTRA_RULES`."""
    return {**{name: PROFILES[name] for name in profile_names()}, **EXTRA_RULES}


def format_profiles() -> list[str]:
    """The named three-hand and partnership profiles."""
    return [name for name in profile_names() if PROFILES[name].format != "duel"]


def choose_actions(rng: np.random.Generator, masks: np.ndarray, obs: np.ndarray,
                   layout: ObservationLayout | int) -> np.ndarray:
    """The seeded rule mix described in the module docstring (vectorised); ``layout`` is
    the observation's (an int: the duel layout of that many columns)."""
    if isinstance(layout, int):
        layout = ObservationLayout(layout)
    n = masks.shape[0]
    u = rng.random((n, 3))
    scores = rng.random(masks.shape)  # random legal move by default
    scores[~masks] = -1.0
    dd = obs[:, layout.slice("discard_deadwood")]
    greedy = u[:, 0] < 0.6
    # Greedy discard: the least deadwood left (ties random).
    scores[greedy, :52] = np.where(masks[greedy, :52], 2.0 - dd[greedy] + 0.001 * scores[greedy, :52], -1.0)
    knocks = masks[:, A.KNOCK:A.KNOCK + NUM_CARDS]
    gin_now = (knocks & (dd == 0.0)).any(axis=1)
    knock = knocks.any(axis=1) & ((u[:, 1] < 0.3) | gin_now)  # play on for gin sometimes
    scores[knock, A.KNOCK:A.KNOCK + NUM_CARDS] = np.where(knocks[knock], 12.0 - dd[knock], -1.0)
    gin = masks[:, A.BIG_GIN] & (u[:, 2] < 0.9)
    scores[gin, A.BIG_GIN] = 100.0
    return scores.argmax(axis=1)


class _Players:
    """Each match's kind of play (``i % 4``): the rule mix, uniform random, Simple, Expert."""

    def __init__(self, n: int, layout: ObservationLayout, rng: np.random.Generator, seed: int):
        from agents.batched import BatchedExpert, BatchedRandom, BatchedSimple

        self.kind = np.arange(n) % 4
        self.layout = layout
        self.rng = rng
        self.agents = {1: BatchedRandom(seed=seed, layout=layout), 2: BatchedSimple(seed=seed + 1, layout=layout),
                       3: BatchedExpert(seed=seed + 2, layout=layout)}

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = choose_actions(self.rng, masks, obs, self.layout)
        for kind, agent in self.agents.items():
            rows = np.flatnonzero(self.kind == kind)
            if rows.size:
                out[rows] = agent.act(obs[rows], masks[rows])
        return out


def run(profiles: dict[str, Rules], n: int, hands: int, seed: int = 0, max_steps: int | None = None,
        reward: str = "points", decisions: int = 0, match_bonus: float = 0.0,
        engine: str | None = None) -> dict[str, dict]:
    """Play ``hands`` hands (per profile; and at least ``decisions`` decisions) in ``n``
    parallel matches through both engines, in reward mode ``reward`` with ``match_bonus``;
    raise AssertionError at the first difference. ``engine`` is the batched engine's
    implementation ("numba", "numpy"; default :func:`~hgin_env.compiled.resolve_engine`'s).
    The scalar side always observes through the Python reference encoder, so the compiled
    kernels (which the compiled scalar encoder shares) are checked against independent code.
    Returns counts per profile."""
    return _run(profiles, n, hands, seed, max_steps, reward, decisions, match_bonus, engine)


def _run(profiles: dict[str, Rules], n: int, hands: int, seed: int, max_steps: int | None, reward: str,
         decisions: int, match_bonus: float, engine: str | None) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for k, (name, rules) in enumerate(profiles.items()):
        rules = get_rules(rules)
        rng = np.random.default_rng([seed, k])
        batch = BatchGame(n, rules=rules, seed=seed * 1000 + k, reward=reward, match_bonus=match_bonus,
                          engine=engine)
        players = _Players(n, batch.layout, rng, seed * 1000 + k)
        envs = [_env(rules, reward, match_bonus, int(s)) for s in batch.match_seeds]
        kinds: Counter[str] = Counter()
        done_hands = matches = steps = count = rounds = 0
        while (done_hands < hands or count < decisions) and (max_steps is None or steps < max_steps):
            masks = batch.legal_action_masks().copy()
            obs = batch.observations().copy()
            for i, env in enumerate(envs):
                where = f"{name}: match {i} seed {int(batch.match_seeds[i])} step {steps}"
                seat = env.match.current_seat
                assert seat == batch.current_seat[i], f"acting seat differs, {where}: {seat} vs {batch.current_seat[i]}"
                want = env.observe(env.agent_selection)
                if not np.array_equal(want["action_mask"].astype(bool), masks[i]):
                    raise AssertionError(f"legal mask differs, {where}: env {np.flatnonzero(want['action_mask'])} "
                                         f"batch {np.flatnonzero(masks[i])}")
                vec = want["observation"]
                if not np.array_equal(vec, obs[i]):
                    bad = np.flatnonzero(vec != obs[i])
                    raise AssertionError(f"observation differs at {bad.tolist()}, {where}: "
                                         f"env {vec[bad]} batch {obs[i][bad]}")
            actions = players.act(obs, masks)
            actions[rng.random(n) < 0.2] = -1  # partial steps: these matches wait
            result = batch.step(actions)
            steps += 1
            count += int((actions >= 0).sum())
            for i, env in enumerate(envs):
                where = f"{name}: match {i} step {steps}"
                if actions[i] < 0:
                    assert not result.hand_over[i], f"{name}: a waiting match changed"
                    assert not result.rewards[i].any(), f"{name}: a waiting match was paid"
                    continue
                hands_before = len(env.match.hand_history)
                rounds_before = len(env.match.round_history)
                env.step(int(actions[i]))
                paid = np.array([env.rewards[a] for a in env.possible_agents], dtype=np.float32)
                if not np.allclose(paid, result.rewards[i], atol=1e-6):
                    raise AssertionError(f"rewards differ, {where}: env {paid} batch {result.rewards[i]}")
                if len(env.match.hand_history) == hands_before:
                    assert not result.hand_over[i], f"batch ended a hand the env did not, {where}"
                    continue
                hand = env.match.hand_history[-1]
                done_hands += 1
                kinds[hand.kind] += 1
                assert result.hand_over[i], f"env ended a hand the batch did not, {where}"
                got = (HAND_KINDS[result.hand_kind[i]], int(result.hand_points[i]),
                       _none(result.hand_winner[i]), _none(result.knocker[i]))
                want_hand = (hand.kind, hand.points, hand.winner, hand.knocker)
                assert got == want_hand, f"hand result differs, {where}: batch {got} env {want_hand}"
                round_over = len(env.match.round_history) > rounds_before
                if rules.format == "partnership":
                    assert bool(result.round_over[i]) == round_over, f"round end differs, {where}"
                    rounds += int(round_over)
                if env.match.is_over:
                    assert result.match_over[i], f"match end differs, {where}"
                    summary = result.finished[i]
                    assert summary["scoreboard"] == env.match.sheet.to_dict(), f"final sheet differs, {where}"
                    assert summary["truncated"] == env.match.truncated, f"truncation differs, {where}"
                    assert summary["match_winner"] == env.match.match_winner, f"match winner differs, {where}"
                    for seat in range(rules.num_players):
                        want_summary = match_summary(env.match, seat)
                        got_summary = seat_summary(summary, seat)
                        assert got_summary == want_summary, \
                            f"summary of seat {seat} differs, {where}: batch {got_summary} env {want_summary}"
                    matches += 1
                    envs[i] = _env(rules, reward, match_bonus, int(batch.match_seeds[i]))
                else:
                    assert not result.match_over[i], f"match end differs, {where}"
                    board = batch.boards[i]
                    assert board.to_dict() == env.match.sheet.to_dict(), f"sheet differs, {where}"
                    assert np.array_equal(batch.columns[i], env.match.sheet.columns), f"columns differ, {where}"
        out[name] = {"hands": done_hands, "matches": matches, "steps": steps, "decisions": count,
                     "rounds": rounds, "kinds": dict(kinds)}
    return out


def _env(rules: Rules, reward: str, match_bonus: float, seed: int) -> raw_env:
    # The scalar side observes through the Python reference encoder (see run).
    env = raw_env(rules=rules, reward=reward, match_bonus=match_bonus, engine="numpy")
    env.reset(seed=seed)
    return env


def _none(x: np.integer) -> int | None:
    return None if x < 0 else int(x)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20_000, help="hands in total, split over the profiles")
    parser.add_argument("--decisions", type=int, default=0,
                        help="at least this many decisions per profile (split over the reward modes)")
    parser.add_argument("--games", type=int, default=64, help="parallel matches in the batch")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profiles", nargs="*", default=None, help="profile names (default: all)")
    parser.add_argument("--match-bonus", type=float, default=1.0,
                        help="match bonus of the dense reward modes (default 1.0, train.ppo's)")
    parser.add_argument("--rewards", nargs="*", default=list(REWARD_MODES), choices=REWARD_MODES,
                        help="reward modes, each on its own share of every profile (default: all three)")
    parser.add_argument("--engine", choices=ENGINES, default=None,
                        help=f"the batched engine's implementation (default: ${ENGINE_VARIABLE}, else numba "
                             f"where installed)")
    args = parser.parse_args(argv)
    engine = resolve_engine(args.engine)
    profiles = all_profiles()
    if args.profiles:
        unknown = sorted(set(args.profiles) - set(profiles))
        if unknown:
            parser.error(f"unknown profile(s) {unknown}; known: {sorted(profiles)}")
        profiles = {k: profiles[k] for k in args.profiles}
    modes = args.rewards
    per = max(1, args.hands // (len(profiles) * len(modes)))
    per_decisions = -(-args.decisions // len(modes))
    start = time.perf_counter()
    total: Counter[str] = Counter()
    hands = matches = decisions = 0
    for k, (name, rules) in enumerate(profiles.items()):
        stats = {"hands": 0, "matches": 0, "decisions": 0, "rounds": 0, "kinds": Counter()}
        for m, mode in enumerate(modes):
            one = run({name: rules}, args.games, per, seed=args.seed * 100 + k * 7 + m, reward=mode,
                      decisions=per_decisions, match_bonus=0.0 if mode == "match" else args.match_bonus,
                      engine=engine)[name]
            for key in ("hands", "matches", "decisions", "rounds"):
                stats[key] += one[key]
            stats["kinds"].update(one["kinds"])
        hands += stats["hands"]
        matches += stats["matches"]
        decisions += stats["decisions"]
        total.update(stats["kinds"])
        kinds = " ".join(f"{k}={v}" for k, v in sorted(stats["kinds"].items()))
        rounds = f"  rounds {stats['rounds']:6d}" if get_rules(rules).format == "partnership" else ""
        print(f"{name:30s} hands {stats['hands']:7d}  matches {stats['matches']:5d}  "
              f"decisions {stats['decisions']:8d}{rounds}  {kinds}", flush=True)
    took = time.perf_counter() - start
    print(f"engine {engine}: all {len(profiles)} profiles, rewards {'/'.join(modes)} (match bonus {args.match_bonus}): "
          f"{hands} hands, {matches} matches, "
          f"{decisions} decisions compared step by step in {took:.0f} s, 0 differences; "
          f"hand kinds {dict(sorted(total.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
