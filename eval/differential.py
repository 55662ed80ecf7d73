"""Differential check of the batched engine against the scalar engine, step by step.

Match ``i`` of a :class:`hgin_env.batch.BatchGame` is played with the same seed (hence the
same decks) by a scalar :class:`hgin_env.match.Match` (its duel ``Game``), and both
receive the same actions. At every step the check compares, for every game: the acting
player, the legal-action mask, the observation vector (bit for bit against
:func:`hgin_env.observation.encode`), each seat's reward (the batch's against
:func:`hgin_env.rewards.seat_rewards` of the scalar match; the profiles take the reward
modes in turn, the dense ones with a match bonus), and whenever a hand ends its kind,
winner, knocker, points and the scoreboard (columns, column winners, wins, settlement,
match winner). A finished match restarts in both with the batch's next seed.

Actions come from a seeded mix that reaches every part of the rules: uniformly random
moves, but knocking (or big gin) often when legal and always with gin, and discarding the
card that leaves the least deadwood often, so that hands end by knocks, gins, undercuts and
dead hands and matches run to the end. Each step a fifth of the games wait (action -1), to
check partial steps.

    python -m eval.differential --hands 20000            # every two-player profile
    python -m eval.differential --hands 2000 --profiles hollywood oklahoma
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
from hgin_env.cards import NUM_CARDS
from hgin_env.match import Match
from hgin_env.observation import encode
from hgin_env.rewards import REWARD_MODES, seat_rewards
from hgin_env.rules import PROFILES, Rules, get_rules, profile_names

#: The named profiles plus variants that switch on what no profile uses (big gin, an ace
#: upcard meaning gin only, a knock limit of 0 with columns of 1, no first-upcard offer
#: on the Hollywood sheet).
EXTRA_RULES: dict[str, Rules] = {
    "big_gin": Rules(big_gin_bonus=31, name="big_gin"),
    "oklahoma_ace_gin_only": Rules(oklahoma=True, oklahoma_ace_gin_only=True, spade_multiplier=3,
                                   name="oklahoma_ace_gin_only"),
    "short_match": Rules(target=40, max_hands=6, box_bonus=5, game_bonus=20, shutout_game_bonus=50,
                         dealer_rotation="winner", name="short_match"),
    "oklahoma_sheet_no_offer": Rules(oklahoma=True, columns=3, first_upcard_offer=False,
                                     name="oklahoma_sheet_no_offer"),
}


def all_profiles() -> dict[str, Rules]:
    """Every two-player rules profile (``format="duel"``) plus :data:`EXTRA_RULES`."""
    return {**{name: PROFILES[name] for name in profile_names("duel")}, **EXTRA_RULES}


def choose_actions(rng: np.random.Generator, masks: np.ndarray, obs: np.ndarray, columns: int) -> np.ndarray:
    """The seeded action mix described in the module docstring (vectorised)."""
    from hgin_env.observation import ObservationLayout

    n = masks.shape[0]
    u = rng.random((n, 3))
    scores = rng.random(masks.shape)  # random legal move by default
    scores[~masks] = -1.0
    dd = obs[:, ObservationLayout(columns).slice("discard_deadwood")]
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


def run(profiles: dict[str, Rules], n: int, hands: int, seed: int = 0,
        max_steps: int | None = None) -> dict[str, dict]:
    """Play ``hands`` hands (per profile) in ``n`` parallel games through both engines;
    raise AssertionError at the first difference. Returns counts per profile."""
    out: dict[str, dict] = {}
    for k, (name, rules) in enumerate(profiles.items()):
        rules = get_rules(rules)
        rng = np.random.default_rng([seed, k])
        mode = REWARD_MODES[k % len(REWARD_MODES)]
        bonus = 0.0 if mode == "match" else 0.5
        batch = BatchGame(n, rules=rules, seed=seed * 1000 + k, reward=mode, match_bonus=bonus)
        matches_ = [Match(rules, seed=int(s)) for s in batch.match_seeds]
        games = [m.duel_game for m in matches_]
        kinds: Counter[str] = Counter()
        done_hands = matches = steps = decisions = 0
        while done_hands < hands and (max_steps is None or steps < max_steps):
            masks = batch.legal_action_masks().copy()
            obs = batch.observations().copy()
            for i, game in enumerate(games):
                where = f"{name}: game {i} step {steps} ({game.describe()})"
                assert game.current_player == batch.current_player[i], f"acting player differs, {where}"
                expected = game.legal_action_mask().astype(bool)
                if not np.array_equal(expected, masks[i]):
                    raise AssertionError(f"legal mask differs, {where}: game {np.flatnonzero(expected)} "
                                         f"batch {np.flatnonzero(masks[i])}")
                vec = encode(game, game.current_player)
                if not np.array_equal(vec, obs[i]):
                    bad = np.flatnonzero(vec != obs[i])
                    raise AssertionError(f"observation differs at {bad.tolist()}, {where}: "
                                         f"game {vec[bad]} batch {obs[i][bad]}")
            actions = choose_actions(rng, masks, obs, rules.columns)
            actions[rng.random(n) < 0.2] = -1  # partial steps: these games wait
            result = batch.step(actions)
            steps += 1
            decisions += int((actions >= 0).sum())
            for i, game in enumerate(games):
                if actions[i] < 0:
                    assert not result.hand_over[i], f"{name}: a waiting game changed"
                    assert not result.rewards[i].any(), f"{name}: a waiting game was paid"
                    continue
                match = matches_[i]
                before = list(match.sheet.column_winners)
                finished = match.apply(int(actions[i]))
                where = f"{name}: game {i} step {steps}"
                paid = seat_rewards(mode, match, before, bonus) if finished else np.zeros(2)
                if not np.allclose(result.rewards[i], paid, atol=1e-6):
                    raise AssertionError(f"{mode} rewards differ, {where}: batch {result.rewards[i]} scalar {paid}")
                if not finished:
                    assert not result.hand_over[i], f"batch ended a hand the game did not, {where}"
                    continue
                record = finished[0].record
                done_hands += 1
                kinds[record.kind] += 1
                assert result.hand_over[i], f"game ended a hand the batch did not, {where}"
                got = (HAND_KINDS[result.hand_kind[i]], int(result.hand_points[i]),
                       _none(result.hand_winner[i]), _none(result.knocker[i]))
                want = (record.kind, record.points, record.winner, record.knocker)
                assert got == want, f"hand result differs, {where}: batch {got} game {want}"
                if game.is_over:
                    assert result.match_over[i], f"match end differs, {where}"
                    summary = result.finished[i]
                    assert summary["scoreboard"] == game.scoreboard.to_dict(), f"final scoreboard differs, {where}"
                    assert summary["truncated"] == game.truncated, f"truncation differs, {where}"
                    assert summary["match_winner"] == game.match_winner, f"match winner differs, {where}"
                    matches += 1
                    matches_[i] = Match(rules, seed=int(batch.match_seeds[i]))
                    games[i] = matches_[i].duel_game
                else:
                    assert not result.match_over[i], f"match end differs, {where}"
                    board = batch.boards[i]
                    assert board.to_dict() == game.scoreboard.to_dict(), f"scoreboard differs, {where}"
                    assert np.array_equal(batch.columns[i], game.scoreboard.columns), f"columns differ, {where}"
        out[name] = {"hands": done_hands, "matches": matches, "steps": steps, "decisions": decisions,
                     "kinds": dict(kinds)}
    return out


def _none(x: np.integer) -> int | None:
    return None if x < 0 else int(x)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20_000, help="hands in total, split over the profiles")
    parser.add_argument("--games", type=int, default=64, help="parallel games in the batch")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profiles", nargs="*", default=None, help="profile names (default: all)")
    args = parser.parse_args(argv)
    profiles = all_profiles()
    if args.profiles:
        profiles = {k: profiles[k] for k in args.profiles}
    per = max(1, args.hands // len(profiles))
    start = time.perf_counter()
    total: Counter[str] = Counter()
    hands = matches = decisions = 0
    for k, (name, rules) in enumerate(profiles.items()):
        stats = run({name: rules}, args.games, per, seed=args.seed * 100 + k)[name]
        hands += stats["hands"]
        matches += stats["matches"]
        decisions += stats["decisions"]
        total.update(stats["kinds"])
        kinds = " ".join(f"{k}={v}" for k, v in sorted(stats["kinds"].items()))
        print(f"{name:24s} hands {stats['hands']:6d}  matches {stats['matches']:5d}  "
              f"decisions {stats['decisions']:8d}  {kinds}", flush=True)
    took = time.perf_counter() - start
    print(f"all {len(profiles)} profiles: {hands} hands, {matches} matches, {decisions} decisions "
          f"compared step by step in {took:.0f} s, 0 differences; hand kinds {dict(sorted(total.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
