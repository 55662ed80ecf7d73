"""The RLlib trainer's flags and its ``PPOConfig``: :class:`Args` (``train.ppo``'s recipe,
:class:`train.recipe.Recipe`, plus Ray's and RLlib's settings), the run's rules, the card
network's config, and :func:`build_config`: the batched env per runner
(:mod:`train.rllib.env`, :class:`train.rllib.runner.BatchedEnvRunner`), the card module,
the learner (:class:`train.rllib.learner.CardPPOLearner`) with SB3's PPO settings, and the
runner-side callbacks (:class:`HginCallbacks`) that log one item per finished match.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ray.rllib.callbacks.callbacks import RLlibCallback

from agents.spec import parse_mixture
from train.recipe import Recipe

#: The ``episodes.csv`` metric the env runners log (one item per finished match).
EPISODES_METRIC = "hgin_episodes"


@dataclass
class Args(Recipe):
    run_name: str = field(default="", metadata={"help": "run folder name (default: rllib_<seed>_<time>)"})
    out_dir: str = field(default="runs", metadata={"help": "parent folder of run folders"})
    seed: int = field(default=0, metadata={"help": "seed of the deals and the network"})
    total_timesteps: int = field(default=200_000, metadata={"help": "learner decisions to train for (the run's total)"})
    rules: str = field(default="hollywood", metadata={"help": "rules profile name"})
    max_hands: int = field(default=0, metadata={"help": "cut every match after N hands (0 = the profile's)"})
    n_envs: int = field(default=0, metadata={
        "help": "matches over all env runners (0 = train.ppo's: 128; three-hand 256), split evenly"})
    n_steps: int = field(default=0, metadata={"help": "steps per match per iteration (0 = 32; three-hand 16)"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "gradient norm clip"})
    num_env_runners: int = field(default=0, metadata={"help": "sampling actors (0 = sample in the driver)"})
    num_cpus: int = field(default=2, metadata={"help": "CPUs of the local Ray (ignored on a cluster)"})
    num_cpus_per_env_runner: float = field(default=1.0, metadata={"help": "CPUs reserved per env runner"})
    address: str = field(default="", metadata={"help": "Ray cluster address (default: $RAY_ADDRESS, else local)"})
    working_dir: str = field(default="", metadata={"help": "folder shipped to the cluster as the working dir"})
    num_learners: int = field(default=0, metadata={"help": "Learner actors (0 = update in the driver)"})
    num_gpus_per_learner: float = field(default=0.0, metadata={
        "help": "GPUs per Learner (0 = by --device: 1 when the learner runs on CUDA)"})
    device: str = field(default="auto", metadata={
        "help": "where the learner runs: 'cpu', 'cuda' or 'auto' (CUDA when torch sees it); the env runners "
                "(the engine, the opponents, the sampling forward) run on the CPU"})
    sample_timeout_s: float = field(default=600.0, metadata={"help": "wait this long for a runner's samples"})
    restart_failed_env_runners: bool = field(default=True, metadata={
        "help": "replace an env runner that died (its node lost) and go on"})
    checkpoint_every: int = field(default=100_000, metadata={"help": "checkpoint every N steps (0 = end only)"})
    resume: str = field(default="", metadata={"help": "run folder or checkpoints/step_N to continue"})
    init_from: str = field(default="", metadata={"help": "SB3 checkpoint .zip (ppo:) whose weights start the run"})
    eval_matches: int = field(default=0, metadata={"help": "duplicate matches per opponent at the end (0 = off)"})
    eval_opponents: str = field(default="simple,expert", metadata={"help": "agents to evaluate against"})
    log_window: int = field(default=100, metadata={"help": "finished matches in the rolling charts/ means"})
    torch_threads: int = field(default=1, metadata={"help": "torch CPU threads of the learner"})
    pipelined: bool = field(default=False, metadata={
        "help": "the remote runners sample the next batch during the update (each batch one update "
                "old when learned from; needs --num-env-runners >= 1; train/rllib/pipeline.py)"})

    def validate(self) -> None:
        self.validate_league()
        learner_gpus(self)  # refuses an unknown --device, cuda without CUDA, or GPUs with --device cpu
        if self.self_play_every and not self.league:
            raise ValueError("--self-play-every adds the learner's snapshots to the league here "
                             "(train.rllib.ppo has no plain self-play pool): give --league")
        if self.num_env_runners and self.n_envs % self.num_env_runners:
            raise ValueError(f"--n-envs {self.n_envs} does not split evenly over {self.num_env_runners} runners")
        if self.pipelined and self.num_env_runners < 1:
            raise ValueError("--pipelined samples on remote env runners while the driver updates: "
                             "give --num-env-runners 1 or more")
        parse_mixture(self.opponents)


def run_rules(args: Args) -> Any:
    """The run's rules: the profile, with ``--max-hands`` when given."""
    from hgin_env.rules import get_rules

    rules = get_rules(args.rules)
    return get_rules(dict(rules.to_dict(), max_hands=args.max_hands)) if args.max_hands else rules


def learner_gpus(args: Args) -> float:
    """RLlib's ``num_gpus_per_learner`` for ``--device``: 0 with ``cpu``; with ``cuda`` or
    ``auto`` an explicit ``--num-gpus-per-learner``, else 1 when the learner is on CUDA
    (:func:`train.run.torch_device`: ``auto`` = when torch sees a GPU here). A learner in
    the driver (``--num-learners 0``) is checked against the driver's torch: ``cuda`` (or
    GPUs asked for) without CUDA is refused in one line (:class:`train.run.DeviceError`); remote learners
    (``--num-learners`` >= 1) may have GPUs on other nodes, so ``cuda`` or an explicit count
    is taken as said there. Checkpoints hold numpy arrays (RLlib's ``get_state``), so a GPU
    run's load on a CPU-only machine and resume on either device."""
    from train.run import DEVICES, DeviceError, torch_device

    if args.device not in DEVICES:
        raise DeviceError(f"--device must be one of {', '.join(DEVICES)}, not {args.device!r}")
    if args.num_gpus_per_learner < 0:
        raise DeviceError(f"--num-gpus-per-learner must be >= 0, not {args.num_gpus_per_learner}")
    if args.device == "cpu":
        if args.num_gpus_per_learner:
            raise DeviceError(f"--num-gpus-per-learner {args.num_gpus_per_learner} asks for GPUs; "
                             f"--device cpu keeps the learner on the CPU")
        return 0.0
    explicit = args.num_gpus_per_learner
    if args.num_learners and (explicit or args.device == "cuda"):
        return explicit or 1.0
    on_cuda = torch_device(args.device) == "cuda"
    if explicit and not on_cuda:
        raise DeviceError(f"--num-gpus-per-learner {explicit}: the learner runs in this process "
                         f"(--num-learners 0) and torch sees no GPU here; use --device cpu or auto")
    return (explicit or 1.0) if on_cuda else 0.0


# ---------------------------------------------------------------------- the RLlib config
def net_config(args: Args, rules: Any) -> dict:
    from agents.nets.rllib_module import model_config
    from hgin_env.batch import privileged_size

    return model_config(rules.columns, rules.format, hidden=args.hidden, summary=args.summary,
                        card_hidden=args.card_hidden, relations=args.relations, knock_bound=args.knock_bound,
                        privileged=privileged_size(rules.format) if args.privileged_critic else 0,
                        shared_trunk=args.shared_trunk, seed=args.seed)


def build_config(args: Args, rules: Any, specs: list[str], weights: list[float]) -> Any:
    """The ``PPOConfig``: the batched env per runner, the card module, SB3-like PPO settings."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.nets.rllib_module import CardRLModule
    from train.rllib.env import register
    from train.rllib.learner import CardPPOLearner
    from train.rllib.pipeline import configure
    from train.rllib.runner import BatchedEnvRunner

    runners = max(1, args.num_env_runners)
    env_config = {"rules": rules.to_dict(), "reward": args.reward, "match_bonus": args.match_bonus,
                  "shaping": args.shaping, "gamma": args.gamma, "shaping_potential": args.shaping_potential,
                  "partner": args.partner, "opponents": list(specs), "weights": list(weights),
                  "privileged": args.privileged_critic, "seed": args.seed, "net_config": net_config(args, rules)}
    config = (
        PPOConfig()
        .environment(register(), env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.n_envs // runners,
                     rollout_fragment_length=args.n_steps, gym_env_vectorize_mode="vector_entry_point",
                     num_cpus_per_env_runner=args.num_cpus_per_env_runner,
                     sample_timeout_s=args.sample_timeout_s, env_runner_cls=BatchedEnvRunner)
        .fault_tolerance(restart_failed_env_runners=args.restart_failed_env_runners)
        .learners(num_learners=args.num_learners, num_gpus_per_learner=learner_gpus(args),
                  learner_class=CardPPOLearner)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=CardRLModule, model_config=net_config(args, rules)))
        .training(lr=args.learning_rate, gamma=args.gamma, lambda_=args.gae_lambda, clip_param=args.clip_range,
                  entropy_coeff=args.ent_coef, vf_loss_coeff=args.vf_coef, grad_clip=args.max_grad_norm,
                  grad_clip_by="global_norm", use_kl_loss=False, vf_clip_param=float("inf"),
                  num_epochs=args.n_epochs, minibatch_size=args.batch_size,
                  train_batch_size_per_learner=args.n_envs * args.n_steps // max(1, args.num_learners))
        .callbacks(HginCallbacks)
        .debugging(seed=args.seed)
    )
    if args.pipelined:  # the batches are one update old: decoupled PPO's loss (train/rllib/learner.py)
        config.learners(learner_config_dict={"proximal_policy": True})
        return configure(config)
    return config


class HginCallbacks(RLlibCallback):
    """On the env runners: hook the env to its runner, log one item per finished match."""

    def on_environment_created(self, *, env_runner: Any, env: Any, **kwargs: Any) -> None:
        base = getattr(env, "unwrapped", env)
        if hasattr(base, "attach_to_runner"):
            base.attach_to_runner(env_runner)

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        from hgin_env.envs.rllib import SUMMARY_KEY
        from train.callbacks import episode_row
        from train.league import Member

        info = episode.get_infos(-1)
        if metrics_logger is None or SUMMARY_KEY not in info:
            return
        spec = info.get("opponent_spec", "")
        row = episode_row(info[SUMMARY_KEY], 0, Member(spec).name)
        metrics_logger.log_value(EPISODES_METRIC, {"row": row, "spec": spec}, reduce="item_series")
