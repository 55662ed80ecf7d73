"""Behaviour cloning warm start: teach the PPO network to imitate a teacher agent first.

Why: from a random start, PPO spends most of its first million steps learning what any
heuristic already knows (keep deadwood low, knock when you can), because a random policy
almost never knocks and so almost never sees a positive reward. Cloning the Expert gives
the network that knowledge in minutes; PPO then has to improve on it, not rediscover it.

The teacher plays whole Hollywood matches (through :func:`hgin_env.loop.run_match`, seeing
only observation dicts like every agent). Each teacher decision is stored with its observation, mask,
action and the discounted return the learner's reward would give from there (the
environment's ``reward`` mode through :func:`hgin_env.rewards.seat_rewards`, default
hand points / 100, plus ± ``match_bonus`` at match end unless the mode is ``"match"``, as
the training environments pay it), so the critic is warm-started too.
"""

from __future__ import annotations

import multiprocessing as mp
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.observation import ObservationLayout
from hgin_env.rewards import PotentialShaping, check_mode, seat_rewards
from hgin_env.rules import Rules, get_rules


@dataclass
class Demonstrations:
    observations: np.ndarray  # (N, obs) float32
    masks: np.ndarray  # (N, 108) bool
    actions: np.ndarray  # (N,) int64
    returns: np.ndarray  # (N,) float32

    def __len__(self) -> int:
        return len(self.actions)

    @staticmethod
    def concat(parts: list[Demonstrations]) -> Demonstrations:
        return Demonstrations(*(np.concatenate([getattr(p, f) for p in parts])
                                for f in ("observations", "masks", "actions", "returns")))


def _play_and_record(teacher: str, opponent: str, seed: int, rules: Rules, gamma: float,
                     match_bonus: float, reward: str = "points", shaping: float = 0.0,
                     shaping_potential: str = "deadwood") -> Demonstrations:
    from agents.spec import make_agent

    seat = seed % 2
    agents = [None, None]
    agents[seat] = make_agent(teacher, seed=seed, columns=rules.columns)
    agents[1 - seat] = make_agent(opponent, seed=seed + 1, columns=rules.columns)
    match = Match(rules, seed=seed)
    obs, masks, acts, rewards = [], [], [], []
    # The column winners change only when a hand ends, so those of the last hand's end are
    # the ones "before" the next hand's last action (what seat_rewards wants).
    columns_before = list(match.sheet.column_winners)
    shaper = PotentialShaping(ObservationLayout.for_rules(rules), shaping, gamma,
                              potential=shaping_potential) if shaping else None

    def record(p: int, o: dict, a: int, finished: list) -> None:
        nonlocal columns_before
        if p == seat:
            if shaper is not None:  # this decision's term pays the transition that led here
                term = shaper.at_decision(seat, o["observation"])
                if rewards:
                    rewards[-1] += term
            obs.append(o["observation"])
            masks.append(o["action_mask"].astype(bool))
            acts.append(a)
            rewards.append(0.0)
        if finished:
            if rewards:
                # The environment's reward and match bonus (one function: hgin_env.rewards).
                rewards[-1] += seat_rewards(reward, match, columns_before, match_bonus)[seat]
            columns_before = list(match.sheet.column_winners)

    run_match(match, agents, on_move=record)
    if shaper is not None and rewards:
        rewards[-1] += shaper.at_end(seat)
    returns = np.zeros(len(rewards), dtype=np.float32)
    acc = 0.0
    for i in range(len(rewards) - 1, -1, -1):
        acc = rewards[i] + gamma * acc
        returns[i] = acc
    return Demonstrations(np.asarray(obs, dtype=np.float32), np.asarray(masks, dtype=bool),
                          np.asarray(acts, dtype=np.int64), returns)


def _worker(task: tuple) -> Demonstrations:
    teacher, opponents, seeds, rules_dict, gamma, match_bonus, reward, shaping, potential = task
    rules = Rules.from_dict(rules_dict)
    return Demonstrations.concat([
        _play_and_record(teacher, opponents[s % len(opponents)], s, rules, gamma, match_bonus, reward, shaping,
                         potential)
        for s in seeds])


def collect(matches: int, teacher: str = "expert", opponents: tuple[str, ...] = ("expert", "simple"),
            rules: Rules | str | None = None, gamma: float = 0.995, match_bonus: float = 1.0,
            seed: int = 1_000_000, workers: int = 2, progress: bool = True,
            reward: str = "points", shaping: float = 0.0, shaping_potential: str = "deadwood") -> Demonstrations:
    """Record the teacher's decisions over ``matches`` matches (seats alternate).

    ``reward`` is the environment's reward mode the returns are computed in, and
    ``shaping`` the weight of the potential-based shaping on top (discounted by ``gamma``),
    as the training environment pays them (:mod:`hgin_env.rewards`).
    """
    check_mode(reward)
    rules = get_rules(rules)
    chunk = 5
    tasks = [(teacher, list(opponents), list(range(seed + i, seed + min(i + chunk, matches))),
              rules.to_dict(), gamma, match_bonus, reward, shaping, shaping_potential)
             for i in range(0, matches, chunk)]
    parts = []
    bar = tqdm(total=matches, desc=f"recording {teacher}", unit="match", disable=not progress)
    if workers > 1:
        with mp.get_context("spawn").Pool(workers) as pool:
            for part, task in zip(pool.imap(_worker, tasks), tasks, strict=True):
                parts.append(part)
                bar.update(len(task[2]))
    else:
        for task in tasks:
            parts.append(_worker(task))
            bar.update(len(task[2]))
    bar.close()
    return Demonstrations.concat(parts)


def pretrain(model, demos: Demonstrations, epochs: int = 3, batch_size: int = 1024, lr: float = 1e-3,
             value_coef: float = 0.5, knock_weight: float = 1.0, seed: int = 0,
             progress: bool = True) -> dict[str, float]:
    """Fit the policy to the teacher's actions (masked cross-entropy) and the value to returns.

    ``knock_weight`` multiplies the loss of decisions where knocking was legal: they are few
    (a few percent of all decisions) but a wrong knock is the costliest mistake (undercuts).
    Returns the final epoch's mean loss and teacher agreement, with every epoch's in ``history``.
    """
    import torch as th

    policy = model.policy
    policy.set_training_mode(True)
    optimizer = th.optim.Adam(policy.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    n = len(demos)
    could_knock = demos.masks[:, 52:104].any(axis=1)
    weights = np.where(could_knock, knock_weight, 1.0).astype(np.float32)
    stats: dict = {}
    history = []
    for epoch in range(epochs):
        order = rng.permutation(n)
        total, correct, count = 0.0, 0, 0
        bar = tqdm(range(0, n, batch_size), desc=f"imitation epoch {epoch + 1}/{epochs}",
                   disable=not progress, leave=False)
        for start in bar:
            idx = order[start:start + batch_size]
            obs = th.as_tensor(demos.observations[idx])
            masks = demos.masks[idx]
            actions = th.as_tensor(demos.actions[idx])
            returns = th.as_tensor(demos.returns[idx])
            w = th.as_tensor(weights[idx])
            values, log_prob, _ = policy.evaluate_actions(obs, actions, action_masks=masks)
            policy_loss = -(w * log_prob).sum() / w.sum()
            loss = policy_loss + value_coef * th.nn.functional.mse_loss(values.flatten(), returns)
            optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimizer.step()
            with th.no_grad():
                dist = policy.get_distribution(obs, action_masks=masks)
                predicted = dist.distribution.probs.argmax(dim=1)
                correct += int((predicted == actions).sum())
            total += float(loss.detach()) * len(idx)
            count += len(idx)
        stats = {"loss": total / count, "accuracy": correct / count}
        history.append({"epoch": epoch + 1, **stats})
        if progress:
            print(f"imitation epoch {epoch + 1}: loss {stats['loss']:.3f}, "
                  f"agreement with teacher {stats['accuracy']:.1%}")
    policy.set_training_mode(False)
    return {**stats, "history": history}
