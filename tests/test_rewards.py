"""Rewards in one place (hgin_env.rewards) and potential-based shaping."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from hgin_env.envs.aec import raw_env
from hgin_env.envs.single_agent import SingleAgentEnv
from hgin_env.match import Match
from hgin_env.melds import cached_deadwood
from hgin_env.observation import ObservationLayout, encode, observe
from hgin_env.rewards import (
    POTENTIALS,
    PotentialShaping,
    best_deadwood,
    deadwood_potential,
    expected_deadwood_after_draw,
    lookahead_potential,
    seat_rewards,
)


def _play(env: raw_env, seed: int) -> dict[str, list[tuple[float, float]]]:
    """Play a seeded match with two Simple agents; per agent, the (reward from ``last()``,
    potential of the observation) at each of its decisions, then (final reward, 0)."""
    agents = {a: make_agent("simple", seed=seed + i, layout=env.layout)
              for i, a in enumerate(env.possible_agents)}
    env.reset(seed=seed)
    out: dict[str, list[tuple[float, float]]] = {a: [] for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            out[agent].append((reward, 0.0))
            env.step(None)
            continue
        out[agent].append((reward, deadwood_potential(obs["observation"], env.layout)))
        env.step(agents[agent](obs))
    return out


@pytest.mark.parametrize("gamma", [1.0, 0.9])
@pytest.mark.parametrize("rules,base", [("hollywood_short", "points"), ("hollywood", "match"),
                                        ("gin_us_uk", "columns")])
def test_shaping_telescopes_on_whole_matches(rules, base, gamma):
    weight = 2.0
    for seed in (3, 4):
        plain = _play(raw_env(rules=rules, reward=base), seed)
        shaped = _play(raw_env(rules=rules, reward=base, shaping=weight, shaping_gamma=gamma), seed)
        for agent, steps in shaped.items():
            base_steps = plain[agent]
            assert len(steps) == len(base_steps)  # same actions: Simple ignores rewards
            # The reward seen at decision k+1 (or at the end) pays transition k.
            terms = [s[0] - b[0] for s, b in zip(steps[1:], base_steps[1:], strict=True)]
            phis = [weight * s[1] for s in steps]
            assert steps[0][0] == 0.0
            for k, term in enumerate(terms):  # each term is gamma * phi' - phi, phi(end) = 0
                assert term == pytest.approx(gamma * phis[k + 1] - phis[k], abs=1e-9)
            discounted = sum(gamma ** k * t for k, t in enumerate(terms))
            assert discounted == pytest.approx(-phis[0], abs=1e-9)  # = -Phi(o_0)
            if gamma == 1.0:
                assert sum(terms) == pytest.approx(-phis[0], abs=1e-9)


def test_shaping_off_leaves_rewards_zero_sum():
    """Without shaping the points rewards are each hand's points / 100, to the winner and
    from the loser: zero-sum, and not all zero (a reward function paying nothing fails)."""
    steps = _play(raw_env(rules="hollywood_short", reward="points"), 5)
    totals = {a: sum(r for r, _ in s) for a, s in steps.items()}
    assert totals["player_0"] == pytest.approx(-totals["player_1"])
    paid = [r for s in steps.values() for r, _ in s if r != 0.0]
    assert len(paid) >= 4, "hands were scored, so rewards were paid"
    assert all(abs(100 * r - round(100 * r)) < 1e-6 for r in paid)  # whole points / 100
    assert sorted(round(100 * r) for r in paid if r > 0) == sorted(-round(100 * r) for r in paid if r < 0)


def test_single_agent_adapter_telescopes():
    gamma = 0.95

    def episode(shaping: float) -> list[float]:
        env = SingleAgentEnv(opponent=make_agent("simple", seed=1), rules="hollywood_short",
                             reward="points", shaping=shaping, shaping_gamma=gamma, seat=0)
        learner = make_agent("simple", seed=2)
        obs, _ = env.reset(seed=11)
        rewards, phis = [], [deadwood_potential(obs, env.aec.layout)]
        done = False
        while not done:
            action = learner({"observation": obs, "action_mask": env.action_masks().astype(np.int8)})
            obs, r, term, trunc, _ = env.step(action)
            done = term or trunc
            rewards.append(r)
            phis.append(0.0 if done else deadwood_potential(obs, env.aec.layout))
        return rewards, phis

    base, _ = episode(0.0)
    shaped, phis = episode(1.5)
    terms = [s - b for s, b in zip(shaped, base, strict=True)]
    for k, t in enumerate(terms):
        assert t == pytest.approx(gamma * 1.5 * phis[k + 1] - 1.5 * phis[k], abs=1e-9)
    assert sum(gamma ** k * t for k, t in enumerate(terms)) == pytest.approx(-1.5 * phis[0], abs=1e-9)


def test_potential_reads_the_best_reachable_deadwood():
    match = Match(seed=8)
    layout = ObservationLayout(3)
    seen = set()
    while len(seen) < 2 and not match.is_over:
        game = match.current_game
        p = game.current_player
        vec = encode(game, p)
        if game.phase.name == "DISCARD":
            expected = min(game.deadwood_after_discard().values())
        else:
            expected = cached_deadwood(game.hands[p])
        assert best_deadwood(vec, layout) == pytest.approx(min(expected, 100) / 100.0)
        seen.add(game.phase.name)
        match.apply(game.legal_actions()[0])


def test_duel_rewards_modes_and_errors():
    """The duel's modes from a whole match, checked against the sheet they came from."""
    match = Match("hollywood", seed=2)
    agents = [make_agent("simple", seed=0), make_agent("simple", seed=1)]
    totals = {m: np.zeros(2) for m in ("match", "columns", "points")}
    bonus = np.zeros(2)
    signed = np.zeros(2)
    while not match.is_over:
        seat = match.current_seat
        before = list(match.sheet.column_winners)
        finished = match.apply(agents[seat](observe(match, seat)))
        if finished:
            for mode in totals:
                totals[mode] += seat_rewards(mode, match, before)
            bonus += seat_rewards("points", match, before, match_bonus=2.0)
            hand = finished[0]
            if hand.winner is not None:
                signed[hand.winner] += hand.points
                signed[hand.loser] -= hand.points
    winner = match.sheet.match_winner
    assert totals["match"][winner] == 1.0 and totals["match"][1 - winner] == -1.0
    won = match.sheet.columns_won
    assert totals["columns"][0] == pytest.approx((won[0] - won[1]) / 3)
    assert totals["points"] == pytest.approx(signed / 100.0)
    assert bonus == pytest.approx(signed / 100.0 + 2.0 * totals["match"])  # the bonus: 2 x the outcome
    with pytest.raises(ValueError, match="invalid reward"):
        seat_rewards("nope", match, before)
    with pytest.raises(ValueError, match="match_bonus"):
        raw_env(reward="points", match_bonus=-1.0)
    with pytest.raises(ValueError, match="shaping_gamma"):
        PotentialShaping(ObservationLayout(3), 1.0, gamma=0.0)


def test_seat_rewards_zero_sum_every_format():
    """The reward function over N seats: zero-sum, partners identical, each mode equal to
    what the sheet and the hand results say."""
    for profile in ("hollywood", "hollywood_three_hand", "hollywood_partnership", "gin_partnership"):
        for mode in ("match", "columns", "points"):
            match = Match(profile, seed=2)
            rng = np.random.default_rng(0)
            total = np.zeros(match.num_players)
            while not match.is_over:
                before = list(match.sheet.column_winners)
                legal = match.legal_actions()
                knocks = [a for a in legal if 52 <= a < 104]
                finished = match.apply(int(rng.choice(knocks or legal)))
                if not finished:
                    continue
                got = seat_rewards(mode, match, before)
                total += got
                assert got.sum() == pytest.approx(0.0, abs=1e-12)
                if match.format == "partnership":
                    assert got[0] == got[2] and got[1] == got[3]
                if mode == "points":
                    assert got == pytest.approx(match.last_rewards / 100.0)
            if mode == "match":
                assert total == pytest.approx(match.returns())


@pytest.mark.parametrize("mode", ["match", "columns", "points"])
@pytest.mark.parametrize("bonus", [0.0, 1.5])
def test_batched_rewards_equal_scalar(mode, bonus):
    """BatchGame pays exactly what the scalar Match + hgin_env.rewards pay, step by step,
    for every mode and the match bonus: the same seeds and actions in both engines."""
    from hgin_env.batch import BatchGame

    n, steps = 6, 1200
    rules = "hollywood_short"
    batch = BatchGame(n, rules=rules, seed=11, reward=mode, match_bonus=bonus)
    matches = [Match(rules, seed=int(batch.match_seeds[i])) for i in range(n)]
    rng = np.random.default_rng(5)
    ended = 0
    for _ in range(steps):
        masks = batch.legal_action_masks()
        actions = np.zeros(n, dtype=np.int64)
        for i, m in enumerate(masks):  # random legal play that knocks when it can: short hands
            legal = np.flatnonzero(m)
            knocks = legal[legal >= 52]
            actions[i] = rng.choice(knocks if knocks.size and rng.random() < 0.9 else legal)
        result = batch.step(actions)
        for i, match in enumerate(matches):
            before = list(match.sheet.column_winners)
            finished = match.apply(int(actions[i]))
            expected = seat_rewards(mode, match, before, bonus) if finished else np.zeros(2)
            np.testing.assert_allclose(result.rewards[i], expected, atol=1e-6)
            if match.is_over:
                ended += 1
                matches[i] = Match(rules, seed=int(batch.match_seeds[i]))
    assert ended > 0


@pytest.mark.parametrize("potential", sorted(POTENTIALS))
@pytest.mark.parametrize("gamma", [1.0, 0.95])
def test_batched_learner_shaping_telescopes(gamma, potential):
    """The batched training environment pays the same terms: per learner step
    γΦ(o') − Φ(o), −Φ(o_last) when its match ends, so each match's discounted shaping sum
    is −Φ(o_0). Same seed with and without shaping: same trajectories."""
    from agents.batched import BatchedSimple
    from hgin_env.batch.vector import LearnerBatch

    weight, n, steps = 1.5, 6, 400

    def run(shaping: float):
        core = LearnerBatch(n, [BatchedSimple(seed=0)], rules="hollywood_short", reward="points",
                            seed=3, shaping=shaping, shaping_gamma=gamma, shaping_potential=potential)
        learner = BatchedSimple(seed=1)
        obs, rewards, dones = [core.observations().copy()], [], []
        for _ in range(steps):
            actions = learner.act(obs[-1], core.action_masks())
            r, term, trunc, _ = core.step(actions)
            rewards.append(r.astype(np.float64))
            dones.append(term | trunc)
            obs.append(core.observations().copy())
        return np.array(obs), np.array(rewards), np.array(dones)

    obs0, plain, done0 = run(0.0)
    obs1, shaped, done1 = run(weight)
    np.testing.assert_array_equal(obs0, obs1)
    np.testing.assert_array_equal(done0, done1)
    layout = ObservationLayout(3)
    phi = weight * POTENTIALS[potential](obs1.reshape(-1, obs1.shape[-1]), layout).reshape(obs1.shape[:2])
    terms = shaped - plain
    finished = 0
    for i in range(n):
        start = 0
        for t in range(steps):
            expected = -phi[t, i] if done1[t, i] else gamma * phi[t + 1, i] - phi[t, i]
            assert terms[t, i] == pytest.approx(expected, abs=1e-5)
            if done1[t, i]:  # a whole match: its discounted sum is -Phi(o_0)
                total = sum(gamma ** k * terms[start + k, i] for k in range(t + 1 - start))
                assert total == pytest.approx(-phi[start, i], abs=1e-4)
                start, finished = t + 1, finished + 1
    assert finished >= 1


def test_lookahead_potential_is_the_expected_deadwood_after_one_draw():
    """Brute force on real observations: every unseen card drawn to the hand (after its
    least-deadwood discard, lowest card first on ties, in the discard phase), the best
    10 cards of the 11 kept; the potential weighs that mean ¾ and today's deadwood ¼."""
    from hgin_env.melds import min_deadwood

    layout = ObservationLayout(3)
    env = SingleAgentEnv(make_agent("simple", seed=4, layout=layout), reward="points", seat=0)
    obs, _ = env.reset(seed=11)
    vectors = []
    for _ in range(240):
        vectors.append(obs.copy())
        mask = env.action_masks()
        obs, _, done, truncated, _ = env.step(int(np.flatnonzero(mask)[-1]))
        if done or truncated:
            obs, _ = env.reset()
    batch = np.array(vectors)
    got = expected_deadwood_after_draw(batch, layout)
    sizes = []
    for v, value in zip(batch, got, strict=True):
        hand = [int(c) for c in np.flatnonzero(layout.get(v, "hand") > 0.5)]
        sizes.append(len(hand))
        seen = set(hand) | set(np.flatnonzero(layout.get(v, "discard_top") + layout.get(v, "discard_rest")
                                              + layout.get(v, "opponent_known") > 0.5))
        if len(hand) == 11:
            dd = layout.get(v, "discard_deadwood")
            hand.remove(min(hand, key=lambda c: dd[c]))
        draws = [u for u in range(52) if u not in seen]
        after = [min(min_deadwood([c for c in hand + [u] if c != d]) for d in hand + [u]) for u in draws]
        assert value == pytest.approx(np.mean(after) / 100.0, abs=1e-9)
        phi = lookahead_potential(v, layout)
        assert phi == pytest.approx(-(0.25 * best_deadwood(v, layout) + 0.75 * value), abs=1e-6)
    assert sizes.count(10) > 50 and sizes.count(11) > 50  # draw and discard decisions


def test_unknown_potential_is_refused():
    with pytest.raises(ValueError, match="invalid shaping potential 'deadwod'"):
        raw_env(shaping=1.0, shaping_potential="deadwod")
