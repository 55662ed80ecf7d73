# noqa: D212, D415
"""
# Hollywood Gin

| Import               | `from hgin_env import hollywood_gin_v0`          |
|----------------------|--------------------------------------------------|
| Actions              | Discrete                                         |
| Parallel API         | No                                               |
| Manual Control       | No (use the `hgin play` command)                 |
| Agents               | `agents= ['player_0', 'player_1']` (duel; `player_0..player_{n-1}` in a format) |
| Agents               | 2 (duel), 3 (`three_hand`), 4 (`partnership`)    |
| Action Shape         | Discrete(108)                                    |
| Action Values        | Discrete(108)                                    |
| Observation Shape    | (394,) with 3 columns (duel); see Formats         |
| Observation Values   | [0, 1] (column totals up to 4, win counts up to 100) |

Gin Rummy with three-column **Hollywood** match scoring, for two players. One episode is a
whole Hollywood match by default: hands are dealt until all three columns are decided
(a player reaches 100 in a column), and the player who won at least two columns wins.
The rules are those of the rule book `docs/RULES.md` (default profile `hollywood`); every other profile
(`hollywood_classic`, `hollywood_winner_deals`, `gin_us_uk`, `gin_classic`, `oklahoma`,
`straight_gin`, `hollywood_short`) or any custom `Rules` can be selected.

The same env serves the three-hand and partnership formats (`rules=` a profile such as
`hollywood_three_hand`, `hollywood_partnership`, `gin_three_hand`, `gin_partnership`, or
any `Rules` with `format=`): see Formats below.

The showdown (melds, lay-offs) is played optimally by the engine: the knocker's
arrangement is chosen for its best result against the defender's best lay-offs.

```python
from hgin_env import hollywood_gin_v0

env = hollywood_gin_v0.env(render_mode="ansi")
env.reset(seed=42)
for agent in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None
    else:
        mask = observation["action_mask"]
        action = env.action_space(agent).sample(mask)
    env.step(action)
env.close()
```

### Arguments

| argument      | default      | meaning                                                          |
|---------------|--------------|------------------------------------------------------------------|
| `rules`       | `"hollywood"`| a profile name, a `hgin_env.rules.Rules`, or a dict of options    |
| `episode`     | `"match"`    | `"match"`: a whole match; `"hand"`: one hand per episode          |
| `reward`      | `"match"`    | `"match"`, `"columns"` or `"points"` (see Rewards)               |
| `match_bonus` | `0.0`        | `"columns"`/`"points"`: also pay `match_bonus` × the match outcome at its end |
| `shaping`     | `0.0`        | weight of potential-based deadwood shaping added to `reward` (0 = off) |
| `shaping_gamma` | `1.0`      | discount of the shaping terms: set it to the learner's `gamma`   |
| `shaping_potential` | `"deadwood"` | the potential Φ: `"deadwood"` or `"lookahead"` (below)   |
| `render_mode` | `None`       | `None`, `"ansi"` (text), `"human"` (prints it), `"rgb_array"` (image) |
| `render_viewpoint` | `None`  | duel image: whose hand is face up (`None`: the acting player; `"player_0"`: hers) |
| `engine`      | `None`       | the observer: `"numba"`, `"numpy"` (the reference) or `None` (`HGIN_ENGINE`'s) |

`"rgb_array"` returns the table as an `(H, W, 3)` uint8 array, drawn by
`hgin_env.render.image`: the acting player's hand in melds, the stock and discard pile,
the Hollywood sheet, and once after each hand the showdown (both hands, lay-offs, points).
In a format it is the whole match (`render.image.match_array`): three-hand, the table with
who deals and sits out and the three sheet rows; partnership, both tables side by side
(seats with their teams, the acting table marked, a finished table's showdown while the
other plays on) and the two team rows. By default the duel's picture shows the acting
player's hand, so consecutive frames change sides; `render_viewpoint="player_0"` keeps
player_0's hand face up all match (the opponent's face down), which is what a GIF wants.

### Action space

| id        | action                                                            |
|-----------|-------------------------------------------------------------------|
| 0..51     | discard card `id` (card id = suit*13 + rank; suits C D H S; A=0..K=12) |
| 52..103   | knock (gin when deadwood is 0), discarding card `id - 52` face down |
| 104       | draw the top card of the stock                                    |
| 105       | take the top card of the discard pile (or the first upcard)       |
| 106       | pass on the first upcard                                          |
| 107       | big gin with all 11 cards (only when `Rules.big_gin_bonus` is set) |

A turn is two decisions: draw (104 or 105), then discard or knock. The card just taken
from the discard pile cannot be discarded or knocked with. After both players pass the
first upcard, the non-dealer's only legal action is 104. Without the offer
(`Rules.first_upcard_offer=False`: `gin_classic`, `gin_three_hand`, `gin_partnership`)
a hand starts with the non-dealer's draw (104 or 105) and 106 is never legal.

### Observation space

A dict: `observation` is a float32 vector with named slices, `action_mask` an int8
vector of 108 (1 = legal; all zeros for the agent not to act). The slices are defined
in `hgin_env.observation` (the only place that knows offsets); decode a vector with
`hgin_env.observation.decode(vec)`. With 3 columns:

| slice             | indices  | meaning                                                      |
|-------------------|----------|--------------------------------------------------------------|
| hand              | 0..51    | own cards                                                    |
| discard_top       | 52..103  | top of the discard pile                                      |
| discard_rest      | 104..155 | rest of the discard pile                                     |
| opponent_known    | 156..207 | cards the opponent took from the pile and still holds        |
| opponent_discards | 208..259 | cards the opponent discarded this hand                       |
| own_discards      | 260..311 | cards this player discarded this hand                        |
| discard_deadwood  | 312..363 | discard phase: deadwood after discarding each held card /100 (else 1) |
| deadwood          | 364      | own minimum deadwood /100                                    |
| take_deadwood     | 365      | best deadwood if taking the discard top /100 (1 if not possible) |
| stock_size        | 366      | stock cards /31                                              |
| phase             | 367..369 | one-hot: first upcard, draw, discard                         |
| knock_limit       | 370      | this hand's knock limit /10                                  |
| doubled           | 371      | hand score multiplied (Oklahoma spade upcard)                |
| is_dealer         | 372      | this player dealt                                            |
| opponent_passed   | 373      | the opponent passed the first upcard (0 without the offer)   |
| own_columns       | 374..376 | own column totals / target                                   |
| opponent_columns  | 377..379 | opponent column totals / target                              |
| own_open          | 380..382 | own columns opened by own wins                               |
| opponent_open     | 383..385 | opponent's opened columns                                    |
| won_by_me         | 386..388 | columns decided for this player                              |
| won_by_opponent   | 389..391 | columns decided for the opponent                             |
| wins              | 392..393 | hands won by this player and by the opponent /10             |

`discard_deadwood` holds a value for every held card, the card just taken from the discard
pile included (the deadwood as if it went back), though the action mask forbids discarding
that card this turn: read the slice together with the mask.

The observation never contains the opponent's unseen cards or the stock order.

### Rewards

Zero-sum; given to both players at the step where they arise (also on the opponent's
move), accumulated by PettingZoo until each agent acts.

| `reward`    | winner                         | loser       |
|-------------|--------------------------------|-------------|
| `"match"`   | +1 at match end                | -1          |
| `"columns"` | +1/C each time it wins a column | -1/C       |
| `"points"`  | +hand points/100 at each hand end | -points/100 |

The default is `"match"`: it is exactly the objective of Hollywood Gin (win two of three
columns); denser rewards are available for shaping, but a policy trained on points alone
plays a different game (it ignores which columns are open or nearly decided). With
`episode="hand"`, `"match"` gives ±1 to the hand's winner. Dead hands give 0. A match cut
by `Rules.max_hands` is truncated with reward 0. The arithmetic of every mode lives in
`hgin_env.rewards`.

**Shaping** (`shaping=w > 0`, with any `reward`): potential-based shaping (Ng, Harada &
Russell 1999) added to the base reward. Each player has its own potential
Φ = −w × (its best reachable deadwood)/100, read from its own observation (the `deadwood`
slice, or the least `discard_deadwood` in the discard phase). Between two consecutive
decisions of a player it receives `shaping_gamma`·Φ(new) − Φ(old); when the episode ends
(truncation included) it receives −Φ(last) (Φ = 0 at the end). For each player the terms
telescope to −Φ(first observation), which no decision can change, so every policy's return
moves by the same constant and the optimal policy (and the best response to any opponent)
is unchanged, provided `shaping_gamma` is the learner's discount per decision. Shaped
rewards are no longer zero-sum. The full argument is in `hgin_env/rewards.py`.
`shaping_potential="lookahead"` uses Φ = −w × (¼ best reachable deadwood + ¾ expected best
deadwood after one more draw from the cards the player has not seen)/100 instead
(`hgin_env.rewards.lookahead_potential`).

### Infos

One info builder serves every format (the duel is the two-seat case); seats are named
by their agents (`player_1`) and sheet rows by their labels (`player_1`, `team_0`)
everywhere. From `reset` on, each agent's info holds `hands_played`, `scoreboard` (the
sheet: 2x3 `columns` with rows ordered player_0/player_1, `column_winners` and
`match_winner` as row labels, `wins`, `settlement`) and `seat` (`Match.seat_context` with
seats named: its table, opponent, dealer, who sits out, partner, sheet row). After every
hand it also holds `hand` (the finished hand: kind, points, winner, loser, knocker,
dealer, the two `seats` that played, deadwoods, melds and lay-offs shown); at the match's
end (not a truncation) `match_winner` (the winning row's label, or None for a draw).
These are rebuilt when a hand ends and stay until the next one.

### Illegal actions, refusals and copies

`env()` (a `GuardedEnv`) does what PettingZoo's standard wrappers do, natively: call order is
enforced, out-of-bounds actions are refused, and an illegal action ends the game with -1 for
the offender (every agent terminated and truncated, all masks zero). `raw_env()` raises
`ValueError` naming the illegal action and the legal ones. Actions are integer ids (Python
or numpy integers, `operator.index`); a `str`, `float` or `bool` raises `TypeError`. A
refused action changes nothing in the env. `copy.deepcopy` and `pickle` carry the whole
state: a copy taken mid-match plays on exactly like the original.

### Formats (`docs/RULES.md` §13)

`hgin_env.match.Match` plays every format (the duel is its two-seat case; duel
trajectories are bit-identical to the env before formats, a test replays recorded ones).
`env.match` is the match; `env.game` the `Hand` of the table that acts next.

| format        | agents             | who acts                                                     |
|---------------|--------------------|--------------------------------------------------------------|
| `duel`        | player_0, player_1 | as above                                                     |
| `three_hand`  | player_0..player_2 | the two seats at the table; the dealer sits out (never selected, mask zero) |
| `partnership` | player_0..player_3 | teams {0, 2}, {1, 3}; two tables, alternating turn by turn   |

The single-agent Gymnasium adapter (`hgin_env.envs.single_agent.SingleAgentEnv`) serves every format
too: one learner seat, the opponent agent on every other seat (the partner included unless
`partner=` is given), the seat's reward from this env.

`episode="hand"` is for the duel only. `reset(options={"first_dealer": k})` fixes the first
dealer (three-hand: a seat; partnership: the dealing team); `deck` is for the duel only.
Only the acting seat's agent is ever selected; every other agent's mask is all zeros.

**Observations.** A format's vector is the duel's vector, slice for slice at the same
offsets, followed by format slices (`ObservationLayout.for_rules(rules)`, format layout
version 1; the duel layout never changes). The table slices (`hand` .. `opponent_passed`)
are the seat's own table exactly as in the duel; a seat sitting out holds no cards and sees
only the table's public cards (discard pile, stock size, knock limit; `is_dealer` = 1).
The sheet slices `own_*`/`opponent_*`/`wins` are the seat's row against its current
opponent's row (three-hand; zeros while sitting out) or its team's row against the other
team's (partnership). The partner's cards are never observed. Format slices (relative
seats: 0 = this seat, 1 = the next seat, 2 = the one after):

| format        | slice           | size | meaning                                                 |
|---------------|-----------------|------|---------------------------------------------------------|
| `three_hand`  | seat            | 3    | one-hot: this seat's number                             |
|               | sitting_out     | 3    | one-hot relative seat sitting out                       |
|               | opponent_seat   | 3    | one-hot relative seat of its opponent (0s while sitting out) |
|               | seat_columns    | 3C   | every player's column totals / target (relative order)  |
|               | seat_open       | 3C   | every player's opened columns                           |
|               | seat_won        | 3C   | columns decided for each player                         |
|               | seat_wins       | 3    | hands won by each player / 10                           |
|               | hand_number     | 1    | hands played / 100                                      |
| `partnership` | seat            | 4    | one-hot: this seat's number (the partner is seat + 2 mod 4) |
|               | partner_running | 1    | 1 while the partner's hand is still running             |
|               | round_points    | 2    | points its team / the other team won this round / 100 |
|               | round_number    | 1    | partnership round / 100                                 |

Sizes with 3 columns: three-hand 434, partnership 402 (1 column: 404 and 390).

**Rewards** (same modes, the one reward function `hgin_env.rewards.step_rewards`), zero-sum
over all seats, partners identical:

| `reward`    | three-hand                                  | partnership (both partners alike)      |
|-------------|---------------------------------------------|----------------------------------------|
| `"match"`   | winner +1, each other player -1/2           | winners +1, losers -1                  |
| `"columns"` | column winner +1/C, each other -1/(2C)      | column's team +1/C, the other -1/C     |
| `"points"`  | hand winner +pts/100, loser -pts/100, sitter 0 | at each round's end: ± round score/100 |

**Infos.** The same builder as the duel's (above): `hand` also carries `table`, `round`
and `sitting_out`; after a partnership round `round` (`winner` team label or None,
`points` (the team score), `team_points`, `hands`, `dealing_team`, ...); `scoreboard` has
one row per player or team, and for partnerships `teams` (each team's agents,
`[["player_0", "player_2"], ["player_1", "player_3"]]`); at match end `match_winner`
(`player_2`, `team_0`).

### Version history

* v0: initial release (hgin_env 0.1.0), observation layout version 1, rules version 1.
  Formats: `three_hand` and `partnership` served by the same env (format layouts version
  1); the duel is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger

from .. import actions as A
from ..actions import as_action  # the one action check (beside as_actions for batches)
from ..compiled import resolve_engine
from ..game import Hand, checked_seed
from ..match import Match, RoundResult, SeatHand
from ..observation import ObservationLayout, encode_seat, observation_bounds, observe
from ..render.text import render_hand_result, render_seat_table
from ..rewards import PotentialShaping, check_match_bonus, check_mode, seat_rewards
from ..rules import Rules, get_rules

EPISODES = ("match", "hand")


class raw_env(AECEnv, EzPickle):
    """The Hollywood Gin AEC environment (see the module docstring for the full spec)."""

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "hollywood_gin_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, rules: Rules | str | dict | None = None, episode: str = "match",
                 reward: str = "match", render_mode: str | None = None, shaping: float = 0.0,
                 shaping_gamma: float = 1.0, shaping_potential: str = "deadwood",
                 render_viewpoint: str | None = None, match_bonus: float = 0.0, engine: str | None = None):
        EzPickle.__init__(self, rules, episode, reward, render_mode, shaping, shaping_gamma, shaping_potential,
                          render_viewpoint, match_bonus, engine)
        super().__init__()
        if episode not in EPISODES:
            raise ValueError(f"invalid episode {episode!r}; expected one of {EPISODES}")
        check_mode(reward)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"invalid render_mode {render_mode!r}; expected one of "
                             f"{self.metadata['render_modes']} or None")
        self.rules = get_rules(rules)
        self.format = self.rules.format
        if episode == "hand" and self.format != "duel":
            raise ValueError(f"episode='hand' is for the duel only; format={self.format!r} "
                             f"plays whole matches (episode='match')")
        self.episode = episode
        self.reward_mode = reward
        self.match_bonus = check_match_bonus(match_bonus)
        self.render_mode = render_mode
        self.layout = ObservationLayout.for_rules(self.rules)
        #: The observer's engine, passed to every observation (None: the process's choice).
        self.engine = None if engine is None else resolve_engine(engine)
        n = self.rules.num_players
        self.shaping = PotentialShaping(self.layout, shaping, shaping_gamma, potential=shaping_potential,
                                        num_players=n) if shaping else None
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._agent_index = {name: i for i, name in enumerate(self.possible_agents)}
        if render_viewpoint is not None:
            if self.format != "duel":
                raise ValueError(f"render_viewpoint is for the duel; format={self.format!r} draws every "
                                 f"table of the match, each from its acting seat")
            if render_viewpoint not in self._agent_index:
                raise ValueError(f"invalid render_viewpoint {render_viewpoint!r}; expected None (the acting "
                                 f"player) or one of {self.possible_agents}")
        self.render_viewpoint = render_viewpoint
        self.agents = self.possible_agents[:]
        low, high = observation_bounds(self.rules.columns, self.format)
        obs_space = spaces.Dict({
            "observation": spaces.Box(low=low, high=high, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(A.NUM_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(A.NUM_ACTIONS) for a in self.possible_agents}
        #: The match (every format); ``game`` is the ``Hand`` of the table that acts next (the
        #: last hand once the match is over).
        self.match: Match | None = None
        self.game: Hand | None = None
        self.game_seed: int | None = None
        self._seed_rng = np.random.default_rng()

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new match (or hand).

        ``options`` may hold ``first_dealer`` (duel and three-hand: a seat; partnership: the
        first dealing team) and, in the duel, ``deck`` (a stacked first deal, see
        ``hgin_env.game.build_deck``); bad values raise ValueError; other keys are ignored,
        as PettingZoo's API test expects.
        """
        seed = checked_seed(seed)  # a TypeError naming the seed, not numpy's SeedSequence message
        if seed is not None:
            self._seed_rng = np.random.default_rng(seed)
            self.game_seed = seed
        else:
            # Unseeded resets continue the stream of the last seed: reproducible sequences.
            self.game_seed = int(self._seed_rng.integers(2**63 - 1))
        options = options or {}
        self.match = match = Match(self.rules, seed=self.game_seed,
                                   first_dealer=options.get("first_dealer"),
                                   single_hand=self.episode == "hand", deck=options.get("deck"))
        self.game = match.current_game
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = step_infos(match, {}, None, None)
        self.agent_selection = self.possible_agents[match.current_seat]
        if self.shaping is not None:
            self.shaping.reset()
            self._add_shaping()  # the first decision's potential (pays 0)

    def observe(self, agent: str) -> dict:
        if self.game is None:
            raise RuntimeError("call reset() before observe()")
        match = self.match
        assert match is not None
        # While the match runs the selected agent is the acting seat, and once it is over
        # every mask is zero: the match's own observation dict is the env's.
        return observe(match, self._agent_index[agent], self.engine)

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """The legal-action mask of ``agent`` (default: the acting agent)."""
        return self.observe(agent or self.agent_selection)["action_mask"]

    def step(self, action: int | None) -> None:
        """Play the acting agent's action (an integer id). A refused action (``None`` for an
        agent that must act, a non-integer, out of bounds, or illegal: ``TypeError`` or
        ``ValueError`` naming it and the legal actions) changes nothing."""
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} must act (action=None is only for finished agents)")
        self._play(agent, as_action(action))

    def play_checked(self, action: int) -> None:
        """``step`` for the acting agent's action that the caller has checked already: an
        ``int`` id, legal now (the single-agent adapter checks each action once, where it
        arrives). Nothing is checked again; an unchecked action here would corrupt the
        match, so anything else calls ``step``."""
        self._play(self.agent_selection, action, checked=True)

    def _play(self, agent: str, action: int, checked: bool = False) -> None:
        """``step`` for an action id of the acting agent whose type and range are checked
        (``checked``: its legality too); one path for every format."""
        match = self.match
        assert match is not None
        columns_before = list(match.sheet.column_winners) if self.reward_mode == "columns" else None
        # Match.apply checks legality (unless checked) before anything changes.
        finished = match.apply(action, checked=checked)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if finished:
            self._on_finished(finished, columns_before)
        if self.shaping is not None:
            self._add_shaping()
        if finished or self.shaping is not None:
            self._accumulate_rewards()
        if match.is_over:
            self.terminations = dict.fromkeys(self.agents, not match.truncated)
            self.truncations = dict.fromkeys(self.agents, match.truncated)
        else:
            table = match.tables[match.current_table]
            self.game = table.game
            self.agent_selection = self.possible_agents[table.current_seat]
        if self.render_mode == "human":
            self.render()

    def _on_finished(self, finished: list[SeatHand | RoundResult], columns_before: list[int | None] | None) -> None:
        """A hand (or a partnership round) ended: rewards, infos, the hand's text."""
        match = self.match
        assert match is not None
        hands = [r for r in finished if isinstance(r, SeatHand)]
        rounds = [r for r in finished if isinstance(r, RoundResult)]
        # The sheet moves at every hand's end, except in a partnership: at each round's end.
        if rounds or match.num_tables == 1:
            before = columns_before if columns_before is not None else list(match.sheet.column_winners)
            paid = seat_rewards(self.reward_mode, match, before, self.match_bonus)
            for name, amount in zip(self.possible_agents, paid.tolist(), strict=True):
                self.rewards[name] += amount
        self.infos = step_infos(match, self.infos, hands[-1] if hands else None, rounds[-1] if rounds else None)
        if self.render_mode is not None and hands:
            last = hands[-1]
            names = [agent_name(s) for s in last.seats]  # the table's players by seat
            text = render_hand_result(last.record, names=names, number=last.number)
            self._last_hand_text = text if match.format == "duel" else \
                f"table {last.table} ({names[0]} v {names[1]}):\n{text}"

    def _add_shaping(self) -> None:
        """Potential-based shaping terms (``hgin_env.rewards``): to the player about to act,
        or to both players when the episode has ended."""
        match, shaping = self.match, self.shaping
        assert match is not None and shaping is not None
        if match.is_over:
            for p, name in enumerate(self.possible_agents):
                self.rewards[name] += shaping.at_end(p)
        else:
            p = match.current_seat
            assert p is not None
            self.rewards[self.possible_agents[p]] += shaping.at_decision(p, encode_seat(match, p, self.engine))

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the table as text; ``human``: print it; ``rgb_array``: the table as an image.

        Right after a hand ends, the text starts with the hand's result and the image shows
        the showdown (both hands in melds, lay-offs, points) instead of the new deal, once;
        after the match it shows the last hand. Otherwise the acting player's hand is shown.
        In a format the image is the whole match (``render.image.match_array``: every table,
        who sits out, the match's sheet).
        """
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render without specifying a render mode.")
            return None
        if self.game is None:
            return None
        if self.render_mode == "rgb_array":
            from ..render.image import match_array, table_array

            showdown = getattr(self, "_last_hand_text", None) is not None or self.game.is_over
            self._last_hand_text = None
            match = self.match
            if match is not None and match.format != "duel":  # the whole match: every table, the sheet
                return match_array(match, showdown=showdown or match.is_over)
            player = None  # the acting player's hand, face up
            if self.render_viewpoint is not None:
                view = match.seat_view(self._agent_index[self.render_viewpoint]) if match is not None else None
                player = view[1] if view is not None else self._agent_index[self.render_viewpoint]
            return table_array(match, player=player, showdown=showdown)
        match = self.match
        assert match is not None
        text = render_seat_table(match)
        if match.format != "duel":
            table = match.tables[match.current_table]
            text = f"{match.format}, table {table.index}: player_{table.seats[0]} v player_{table.seats[1]}\n" + text
        last = getattr(self, "_last_hand_text", None)
        if last:
            text = last + "\n" + text
            self._last_hand_text = None
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ copies
    # EzPickle would rebuild a fresh, never-reset env from the constructor arguments; a copy
    # (pickle, copy.copy/deepcopy) carries the whole state instead and plays on identically.
    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


# ---------------------------------------------------------------------- infos
def agent_name(seat: int | None) -> str | None:
    """The agent of a seat (``player_<seat>``), None for None."""
    return None if seat is None else f"player_{seat}"


def hand_info(hand: SeatHand) -> dict:
    """A finished hand for the infos: the table's hand record (kind, points, melds, lay-offs,
    final hands in the table's seat order) with every seat named by its agent: ``seats``,
    ``dealer`` (three-hand: the seat that dealt and sat out), ``knocker``, ``winner``,
    ``loser``; ``number`` counts the match's hands, ``table`` and ``round`` place it."""
    info = hand.record.to_dict()
    info.update(number=hand.number, table=hand.table, seats=[agent_name(s) for s in hand.seats],
                dealer=agent_name(hand.dealer), sitting_out=agent_name(hand.sitting_out),
                knocker=agent_name(hand.knocker), winner=agent_name(hand.winner),
                loser=agent_name(hand.loser), round=hand.round)
    return info


def round_info(result: RoundResult, labels: tuple[str, ...]) -> dict:
    """A finished partnership round for the infos: teams by their sheet labels."""
    info = result.to_dict()
    info.update(winner=None if result.winner is None else labels[result.winner],
                dealing_team=labels[result.dealing_team], hands=[hand_info(h) for h in result.hands])
    return info


def sheet_info(match: Match) -> dict:
    """The sheet for the infos: one row per player or team (``labels``), ``column_winners``
    and ``match_winner`` as row labels (``player_1``, ``team_0``), ``teams`` (partnership:
    each team's agents)."""
    board = match.sheet.to_dict()
    labels = match.sheet.labels
    board["column_winners"] = [None if w is None else labels[w] for w in board["column_winners"]]
    if board.get("match_winner") is not None:
        board["match_winner"] = labels[board["match_winner"]]
    if match.teams is not None:
        board["teams"] = [[agent_name(s) for s in team] for team in match.teams]
    return board


_SEAT_KEYS = ("seat", "opponent", "dealer", "sitting_out", "partner")


def seat_info(match: Match, seat: int) -> dict:
    """``Match.seat_context`` with every seat named by its agent (``table``, ``row``,
    ``round`` and ``hand`` stay numbers)."""
    context = match.seat_context(seat)
    for key in _SEAT_KEYS:
        context[key] = agent_name(context[key])
    return context


def step_infos(match: Match, previous: dict[str, dict], hand: SeatHand | None,
               result: RoundResult | None) -> dict[str, dict]:
    """THE infos of every format (the duel is the two-seat case), built when a match starts
    and whenever a hand ends: ``hands_played``, ``scoreboard`` (:func:`sheet_info`), ``seat``
    (:func:`seat_info`), the last ``hand`` (:func:`hand_info`) and partnership ``round``
    (:func:`round_info`), kept until the next one, and at the match's end (not a truncation)
    ``match_winner`` (the winning row's label, or None for a draw)."""
    board = sheet_info(match)
    labels = match.sheet.labels
    hand_dict = None if hand is None else hand_info(hand)
    round_dict = None if result is None else round_info(result, labels)
    infos = {}
    for seat in range(match.num_players):
        name = agent_name(seat)
        old = previous.get(name, {})
        info: dict = {"hands_played": len(match.hand_history), "scoreboard": board, "seat": seat_info(match, seat)}
        for key, value in (("hand", hand_dict), ("round", round_dict)):
            if value is not None:
                info[key] = value
            elif key in old:
                info[key] = old[key]
        if match.is_over and not match.truncated and match.sheet.match_over:
            info["match_winner"] = board["match_winner"]
        infos[name] = info
    return infos


#: Attributes that PettingZoo's order enforcement hides before the first reset().
_BEFORE_RESET = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection",
                           "num_agents", "agents", "_cumulative_rewards"})


class GuardedEnv(raw_env):
    """What ``env()`` returns: ``raw_env`` with PettingZoo's standard wrappers' behaviour,
    done natively (one class, no delegation, none of it by ``assert``):

    * order enforcement (``OrderEnforcingWrapper``): ``step``, ``observe``, ``render``,
      ``agent_iter`` before ``reset`` raise, the PettingZoo state attributes do not exist
      before ``reset``, ``agent_iter`` requires a ``step`` per agent, ``step`` after the end
      warns;
    * out-of-bounds and non-integer actions are refused (``AssertOutOfBoundsWrapper``,
      here ``ValueError``/``TypeError`` that also hold under ``python -O``);
    * an illegal action ends the game (``TerminateIllegalWrapper``): a warning, the offender
      gets -1, every agent is terminated and truncated, and the offender's mask is all zeros.
    """

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        del self.agents  # order enforcement: no PettingZoo state before reset()
        self._has_reset = False
        self._has_updated = False
        self._illegal_end = False

    def __getattr__(self, name: str) -> Any:  # only reached when the attribute is missing
        if name in _BEFORE_RESET and not self.__dict__.get("_has_reset", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        super().reset(seed=seed, options=options)
        self._has_reset = True
        self._has_updated = True
        self._illegal_end = False

    def observe(self, agent: str) -> dict:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        obs = raw_env.observe(self, agent)
        if self._illegal_end:
            obs["action_mask"][:] = 0  # the game ended: no agent has a legal move
        return obs

    def render(self) -> Any:
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return super().render()

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return self._agent_iter(max_iter)

    def _agent_iter(self, max_iter: int) -> Iterator[str]:
        while max_iter > 0 and self.agents:
            if not self._has_updated:
                raise RuntimeError("need to call step() or reset() in a loop over `agent_iter`")
            self._has_updated = False
            max_iter -= 1
            yield self.agent_selection

    def step(self, action: int | None) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent] or action is None:
            super().step(action)  # a finished agent's None, or the refusal of None
            return
        action = as_action(action)
        game = self.game
        if not game.is_legal(action):  # type: ignore[union-attr]
            EnvLogger.warn_on_illegal_move()
            self._cumulative_rewards[agent] = 0.0
            self.terminations = dict.fromkeys(self.agents, True)
            self.truncations = dict.fromkeys(self.agents, True)
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self.rewards[agent] = -1.0
            self._accumulate_rewards()
            self._deads_step_first()
            self._illegal_end = True
            return
        self._play(agent, action, checked=True)  # legality checked just above, once


def env(**kwargs: Any) -> AECEnv:
    """The standard environment: illegal moves end the game (reward -1 for the offender),
    out-of-bounds and non-integer actions are refused, call order is enforced
    (:class:`GuardedEnv`, PettingZoo's wrappers' behaviour without their cost).

    ``raw_env`` instead raises ``ValueError`` naming the illegal action and the legal ones.
    """
    return GuardedEnv(**kwargs)


ENV_ID = "hgin/HollywoodGin-v0"


def register() -> None:
    """Register ``hgin/HollywoodGin-v0`` with PettingZoo's registry (pettingzoo >= 1.27)."""
    try:
        from pettingzoo import aec_registry
        from pettingzoo import register as pz_register
    except ImportError:  # older PettingZoo: no registry
        return
    if ENV_ID not in aec_registry:
        pz_register("aec", ENV_ID, entry_point="hgin_env.hollywood_gin_v0:env")


register()
