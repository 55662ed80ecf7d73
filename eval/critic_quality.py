"""How well a checkpoint's critic predicts what its policy's matches return.

The critic search (:mod:`agents.search_batched`) values every row by the policy's critic,
so a critic that misjudges a format's states misleads the search even where the policy
plays well. This plays the checkpoint's policy (sampled, as in training) against an
opponent mixture on the batched engine, with the training environment's reward, and
compares the critic's value at each of the learner's decisions with the discounted return
that followed it to the end of the match (Monte Carlo, ``gamma`` as in training; the
decisions of matches still running at the end are dropped):

* explained variance ``1 - Var(G - V) / Var(G)`` (1: perfect; 0: no better than a constant),
* the mean error ``mean(V - G)`` (a biased critic) and the root mean squared error,
* the same at the first decision of each hand (where ``until=hand`` rows are valued).

Two checkpoints given together play the same deals and opponents (same seed)::

    python -m eval.critic_quality agents/policies/hgin_ppo_three_hand.zip runs/fit/model.zip \\
        --rules hollywood_three_hand --steps 2000
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

import numpy as np


@dataclass
class CriticQuality:
    """The critic's values against the returns that followed them."""
    decisions: int
    matches: int
    explained_variance: float
    mean_error: float
    rmse: float
    mean_return: float

    @classmethod
    def of(cls, values: np.ndarray, returns: np.ndarray, matches: int) -> CriticQuality:
        from stable_baselines3.common.utils import explained_variance  # the figure PPO's logs give

        error = values - returns
        return cls(decisions=int(values.size), matches=int(matches),
                   explained_variance=float(explained_variance(values, returns)),
                   mean_error=float(error.mean()), rmse=float(np.sqrt(np.mean(error ** 2))),
                   mean_return=float(returns.mean()))


def discounted_returns(rewards: np.ndarray, dones: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """``[T, N]`` rewards and episode ends (after step t) to the discounted return from each
    step to its episode's end, and whether that end was reached within the ``T`` steps."""
    returns = np.zeros_like(rewards, dtype=np.float64)
    complete = np.zeros(rewards.shape, dtype=bool)
    running = np.zeros(rewards.shape[1], dtype=np.float64)
    ended = np.zeros(rewards.shape[1], dtype=bool)
    for t in range(rewards.shape[0] - 1, -1, -1):
        running = np.where(dones[t], 0.0, running * gamma) + rewards[t]
        ended = ended | dones[t]
        returns[t], complete[t] = running, ended
    return returns, complete


def measure(checkpoint: str, rules: str, opponents: str, steps: int, n_envs: int, seed: int,
            gamma: float, match_bonus: float) -> dict:
    """Play ``steps`` decisions in each of ``n_envs`` matches; the critic's quality overall and
    at hand starts."""
    import torch as th

    from agents.nets.policy import load_model
    from agents.ppo import check_layout, read_meta
    from agents.spec import parse_mixture
    from hgin_env.observation import ObservationLayout
    from hgin_env.rules import get_rules
    from train.envs import BatchedVecEnv

    specs, weights = parse_mixture(opponents)
    game = get_rules(rules)
    layout = ObservationLayout.for_rules(game)
    # Refused in one line before any env starts: another layout (the checkpoints' own check),
    # or no privileged critic (the envs below serve the privileged columns).
    meta = read_meta(checkpoint)
    check_layout(meta, checkpoint, layout=layout)
    if not meta.get("privileged_size"):
        raise ValueError(f"{checkpoint} has no privileged critic: critic_quality measures checkpoints "
                         f"trained with --privileged-critic")
    stock = layout.slice("stock_size")
    envs = BatchedVecEnv(n_envs, specs, weights, rules=game, reward="points",
                         match_bonus=match_bonus, seed=seed, privileged=True)
    model = load_model(checkpoint, device="cpu")
    th.manual_seed(seed)
    obs = envs.reset()
    values = np.zeros((steps, n_envs))
    rewards = np.zeros((steps, n_envs))
    dones = np.zeros((steps, n_envs), dtype=bool)
    hand_start = np.zeros((steps, n_envs), dtype=bool)
    # A hand's first decision of the learner: the match's first, or the stock grown back
    # since its last decision (a new deal).
    last_stock = np.full(n_envs, -np.inf)
    try:
        for t in range(steps):
            with th.no_grad():
                tensor = th.as_tensor(obs, dtype=th.float32)
                actions, value, _ = model.policy(tensor, action_masks=th.as_tensor(envs.action_masks()))
            values[t] = value.numpy().reshape(-1)
            stock_now = obs[:, stock].reshape(-1)
            hand_start[t] = stock_now > last_stock
            last_stock = stock_now
            obs, reward, done, _ = envs.step(actions.numpy())
            rewards[t], dones[t] = reward, done
            last_stock = np.where(done, -np.inf, last_stock)  # a fresh match starts a hand
    finally:
        envs.close()
    returns, complete = discounted_returns(rewards, dones, gamma)
    if not complete.any():
        raise ValueError(f"no match ended within --steps {steps}: give more steps (a match is some hundred "
                         f"decisions)")
    overall = CriticQuality.of(values[complete], returns[complete], int(dones.sum()))
    starts = complete & hand_start
    at_starts = CriticQuality.of(values[starts], returns[starts], int(dones.sum()))
    return {"checkpoint": checkpoint, "overall": overall.__dict__, "hand_starts": at_starts.__dict__}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", help="ppo checkpoints with a privileged critic")
    parser.add_argument("--rules", default="hollywood_three_hand")
    parser.add_argument("--opponents", default="expert:0.5,simple:0.5", help="mixture, as train.ppo's")
    parser.add_argument("--steps", type=int, default=2000, help="decisions per match slot")
    parser.add_argument("--n-envs", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gamma", type=float, default=0.995)
    parser.add_argument("--match-bonus", type=float, default=1.0)
    parser.add_argument("--out", default="", help="write the figures as JSON here")
    args = parser.parse_args(argv)
    results = [measure(path, args.rules, args.opponents, args.steps, args.n_envs, args.seed, args.gamma,
                       args.match_bonus) for path in args.checkpoints]
    for result in results:
        o, h = result["overall"], result["hand_starts"]
        print(f"{result['checkpoint']}: {o['matches']} matches, {o['decisions']} decisions: explained variance "
              f"{o['explained_variance']:.3f}, mean error {o['mean_error']:+.3f}, rmse {o['rmse']:.3f} "
              f"(mean return {o['mean_return']:+.3f}); at hand starts ({h['decisions']}): "
              f"{h['explained_variance']:.3f}, {h['mean_error']:+.3f}, {h['rmse']:.3f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
