"""The training recipe's settings that ``train.ppo`` (SB3) and ``train.rllib.ppo`` (RLlib) share:
the reward and its shaping, the opponents and the league, the card network, PPO's
hyper-parameters. Each trainer's ``Args`` extends :class:`Recipe` with its own flags (the
vector env, evaluations, Ray resources), so one flag means one thing in both and has one
default."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Recipe:
    reward: str = field(default="points", metadata={
        "help": "env reward: 'points' (hand points/100), 'columns' or 'match' (+-1)"})
    match_bonus: float = field(default=1.0, metadata={
        "help": "extra +-reward at match end when reward is 'points' or 'columns'"})
    shaping: float = field(default=0.0, metadata={
        "help": "weight of potential-based deadwood shaping added to the reward (0 = off; its "
                "discount is --gamma, so the optimal policy is unchanged: hgin_env/rewards.py)"})
    shaping_potential: str = field(default="deadwood", metadata={
        "help": "the shaping potential: 'deadwood' (best deadwood now) or 'lookahead' (also the "
                "expected deadwood after the next draw)"})
    partner: str = field(default="", metadata={
        "help": "partnership: the agent spec of the learner's partner ('' = the learner plays both seats of "
                "its team; 'self' = the live policy, sampled, not trained on; simple, expert, ppo:PATH...)"})
    opponents: str = field(default="simple:0.5,expert:0.5", metadata={
        "help": "opponent mixture 'name:weight,...' (random, simple, expert, ppo:PATH; with "
                "'batched' also self = the live learner on the other seat)"})
    # One meaning in both trainers: the period at which the learner's snapshots join its
    # opponents. Where they join is --league's (a league member) or, train.ppo only, the
    # plain pool of --self-play-weight; train.rllib.ppo has no plain pool and asks for --league.
    self_play_every: int = field(default=0, metadata={
        "help": "every N learner steps a frozen snapshot of the learner joins the opponents (0 = off): "
                "with --league a league member; without it (train.ppo only) the pool of the newest "
                "--self-play-pool, which --self-play-weight of the matches draw from"})
    self_play_pool: int = field(default=5, metadata={"help": "newest snapshots kept in the pool"})
    league: bool = field(default=False, metadata={
        "help": "PFSP league (train/league.py): the --opponents (their weights unused) and a snapshot "
                "of the learner every --self-play-every steps (the newest --self-play-pool kept), each "
                "drawn by PFSP weights from the learner's running win rate against it; with --resume, "
                "the league saved with the checkpoint, joined by any new --opponents"})
    pfsp: str = field(default="hard", metadata={
        "help": "league: PFSP weighting, 'hard' ((1-x)^p), 'even' (x(1-x)) or 'uniform'"})
    pfsp_exponent: float = field(default=2.0, metadata={"help": "league: p of the 'hard' weighting"})
    league_memory: int = field(default=200, metadata={
        "help": "league: the running win rates remember about this many matches per member"})
    privileged_critic: bool = field(default=False, metadata={
        "help": "the critic also sees the opponent's hand, the next stock card and the opponent's "
                "deadwood during training; the policy never does (agents/nets/policy.py)"})
    shared_trunk: bool = field(default=False, metadata={
        "help": "card policy: one trunk for actor and critic (about half the FLOPs per sample)"})
    learning_rate: float = field(default=3e-4, metadata={"help": "Adam learning rate"})
    batch_size: int = field(default=1024, metadata={"help": "minibatch size"})
    n_epochs: int = field(default=4, metadata={"help": "PPO epochs per update"})
    gamma: float = field(default=0.995, metadata={"help": "discount factor"})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    clip_range: float = field(default=0.2, metadata={"help": "PPO clip range"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    hidden: int = field(default=128, metadata={"help": "card policy: width of the actor/critic trunks"})
    summary: int = field(default=64, metadata={"help": "card policy: size of the state summary"})
    card_hidden: int = field(default=32, metadata={"help": "card policy: width of the per-card scorer"})
    knock_bound: float = field(default=0.0, metadata={
        "help": "card policy: bound each knock logit to within this of the discard logit of the "
                "same card, so play-on keeps being sampled (0 = off; 2.2 = at least 10%%)"})
    relations: bool = field(default=False, metadata={
        "help": "card policy: add each card's meld partners (in hand, unseen, opponent's...) to its features"})

    def validate_league(self) -> None:
        """The league flags against each other (both trainers' ``validate`` call it)."""
        from train.league import PFSP_MODES

        if self.league and self.self_play_every <= 0:
            raise ValueError("--league adds a snapshot every --self-play-every steps: give it (> 0)")
        if self.pfsp not in PFSP_MODES:
            raise ValueError(f"--pfsp must be one of {', '.join(PFSP_MODES)}, not {self.pfsp!r}")
