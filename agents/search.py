"""Determinized Monte Carlo search over the engine: candidate moves compared on sampled worlds.

Two ways to value a (world, candidate) pair, ``value``:

* ``"critic"``, the default in every format: every pair is a row of one batched game,
  played on by the learned policy (``policy``, the format's shipped one) for every seat
  to the end of the hand and valued by its privileged critic
  (:mod:`agents.search_batched`). The candidates are those of step 1 below with the
  policy's move first (the baseline the confidence test protects) and its ``prior_k``
  most likely moves added. Defaults: :data:`VALUE_DEFAULTS`.
* ``"rollout"`` (the duel only; the default search before the critic's): each pair played
  out to the end of the hand by a heuristic rollout policy, as below.

How a decision is made (only when there is a real choice), with the heuristic rollouts:

1. **Candidates.** Draw decisions: every legal action (take or draw, take or pass). Discard
   decisions: the Expert's choice, the best knock when knocking is legal, and the
   ``width`` discards that leave the least deadwood (11 discards and their knocks are too
   many to separate with a few dozen rollouts; these are the ones worth separating).
2. **Worlds.** Full game states consistent with the agent's information set, sampled by
   :mod:`hgin_env.determinize` from the observation and what the agent remembers of its own
   moves in this hand (its pickups still in hand, whether it passed the upcard). The agent
   never sees the true hidden state: it only gets observation dicts, like every agent.
3. **Rollouts.** In each world every candidate is applied and the hand is played out by the
   rollout policy for both players (``"simple"``: Neller's rule on the sampled game, fast;
   ``"timed"``: Neller's draws and discards with the Expert's knock timing, as fast;
   ``"expert"``: the Expert on the sampled observations, ~10x slower). All candidates of a
   world share its sample and the rollout's random seed (common random numbers), so their
   difference is measured on the same deals: far less noise than independent rollouts.
4. **Value** of the finished hand for the agent: ± (hand points / 100 + ``column_weight``
   × columns the hand decided), 0 for a dead hand. The candidate with the best mean wins;
   ties go to the Expert's choice (the first candidate). With ``confidence=z > 0``
   (default 1) the search leaves the Expert's choice only when the paired mean advantage
   exceeds ``z`` standard errors (a one-sided test on the per-world differences), so
   rollout noise alone does not make it deviate; ``confidence=0`` is the plain argmax.

Learned policy and opponent behaviour (off by default with ``value="rollout"``):

* ``temperature=T``: the worlds are weighted by what the opponent did
  (:meth:`hgin_env.determinize.InfoSet.surprise`: each of its declines, discards and
  pickups that Neller's rule would not have made with the world's hand multiplies the
  world's weight by ``exp(-1/T)``); means and the confidence test use the weights.
* ``prior_k=k``: the learned policy's (``policy="ppo:PATH"``, ``"ppo:"`` = the shipped
  one) ``k`` most likely moves join the candidates (``width=0`` leaves the Expert's move,
  the best knock and the policy's picks: pruning to the prior).
* ``rollout="policy"``: the learned policy plays both players for the first
  ``policy_plies`` plies of every rollout, every unfinished (world, candidate) game stepped
  together in one batched torch forward per ply (:class:`agents.batched.BatchedPolicy`);
  Neller's rule plays the rest of the hand.

The opponents' model (the critic search, every format; :mod:`agents.inference`):

* ``infer=true``: policy-based inference of worlds. The seat rebuilds, from its own
  observations, each decision its opponent made this hand (upcard take or pass, pile or
  stock draw, discard instead of a knock); ``infer_worlds`` times as many worlds are drawn
  as kept and resampled by the likelihood of those decisions (the last ``infer_points``)
  under the opponent model, tempered by ``infer_temperature`` (defaults 2, 16, 2; whether it
  is on by default: :data:`INFERENCE_DEFAULTS`). ``infer_weighting="weights"`` keeps every
  world drawn instead (``infer_worlds`` unused), each weighted by that tempered likelihood
  in the means and the confidence test: no repeated worlds (:data:`INFER_WEIGHTINGS`).
  ``infer_moves=true`` takes the model as playing its most likely move (likelihood 1 for
  that move, 0 for the others, before the uniform mixture): exact for a deterministic
  opponent such as ``ppo:`` as tournaments play it.
* ``opponent=SPEC``: the opponent model (an agent spec, e.g. ``expert``; default the
  search's own policy), for the inference and for ``opponent_rollouts=f``: in a fraction
  ``f`` of the worlds the model plays the opponents' seats in the playouts (the policy
  plays the others; 0, the default: the policy plays every seat).

Every candidate valued (``gumbel_k=k``, ``value="critic"`` only; off by default): ``k``
more candidates are drawn without replacement from the policy's probabilities by the
Gumbel top-k trick (the ``k`` legal moves with the largest log-probability + Gumbel noise,
the noise drawn from the agent's seeded generator, as in Gumbel MuZero) and join the
candidates above, so a searched decision values at least ``k`` moves (every legal move
when there are fewer). They are valued by **sequential halving** over rounds of worlds:
``ceil(log2 C)`` rounds for ``C`` candidates, each on fresh worlds (the ``rollouts``
worlds split evenly), after each round the better half by mean value goes on (the
policy's own move, the confidence test's baseline, always goes on, so the final test
compares it with the last challenger on every world). A candidate's value is its mean
over the worlds it was valued on, its visit count how many those were
(:class:`SearchRecord`); the move is chosen among the last round's candidates as above.
The values and the policy's probabilities are what ``train.ppo --distill-target soft``
learns from (:mod:`train.distill`).

Three-hand and partnership (``value="critic"`` only): the worlds are whole match states
sampled from the seat's observation (:mod:`hgin_env.format_worlds`: the seat's table as
in the duel, the match around it from the context slices, a partnership's other table a
stand-in), valued on the format's batched engine by the format policy's critic from the
seat's own view (:mod:`agents.search_batched`).

Budget: ``rollouts`` worlds per decision (deterministic given the seed), stopped early once
``budget_ms`` milliseconds have been spent (at least ``min_worlds`` worlds). With a time
budget the number of worlds depends on the machine's speed, so results are reproducible
from the seed only when ``budget_ms`` is None. ``decision_ms`` holds the time of every
searched decision and ``decision_cpu_ms`` its process CPU time (``mean_decision_ms`` over
all decisions, trivial ones included).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np

from hgin_env import actions as A
from hgin_env.cards import CARD_VALUES
from hgin_env.determinize import InfoSet, behaviour_weights
from hgin_env.format_worlds import FormatInfoSet
from hgin_env.game import Hand, HandRecord, Phase
from hgin_env.melds import deadwood_after_discard_mask
from hgin_env.observation import ObservationLayout, observe
from hgin_env.rules import Rules, get_rules

from .base import SeededAgent
from .expert import ExpertAgent, ExpertParams, knock_timing
from .inference import OpponentHistory, WorldInference, tempered_weights
from .simple import simple_action
from .spec import parse_options
from .view import ObsView, parse

ROLLOUT_POLICIES = ("simple", "timed", "expert", "policy")
#: How a (world, candidate) pair is valued: played out by the rollout policy to the end of
#: the hand ("rollout"), or played on by the learned policy on the batched engine and valued
#: by its critic ("critic": :mod:`agents.search_batched`).
VALUES = ("rollout", "critic")
_DRAWING = (Phase.FIRST_UPCARD, Phase.DRAW)
#: The rules a format layout implies when none are given: (format, columns) -> profile.
_FORMAT_PROFILES = {("three_hand", 3): "hollywood_three_hand", ("three_hand", 1): "gin_three_hand",
                    ("partnership", 3): "hollywood_partnership", ("partnership", 1): "gin_partnership"}
_EXPERT_PARAMS = ExpertParams()


@dataclass(frozen=True)
class SearchRecord:
    """What the last searched decision weighed (:attr:`SearchAgent.last_search`): the
    candidates (the first is the baseline the confidence test protects: the Expert's move,
    or the policy's with ``value="critic"``), their mean values over the worlds, the move
    chosen and how many worlds were played. Search games for distillation record it
    (:mod:`train.search_games`)."""

    candidates: tuple[int, ...]
    means: tuple[float, ...]
    action: int
    worlds: int
    #: Worlds each candidate was valued on (all ``worlds`` unless sequential halving, ``gumbel_k``).
    visits: tuple[int, ...] = ()
    #: The learned policy's move probabilities at the decision (float [108]); None without a policy.
    prior: np.ndarray | None = None


#: Each value's defaults for the keywords left unset. The critic's (the default value in
#: every format) are the setting fixed on the screens and measured on held-out matches
#: (docs/runs/search_critic): plain ``search`` plays it. The heuristic rollouts' are the
#: search agent that was the default before (``search:value=rollout``, the "rollout" rows
#: of the results tables; duel only: it scores two-player hands).
VALUE_DEFAULTS: dict[str, dict[str, object]] = {
    "rollout": {"rollouts": 24, "width": 3, "confidence": 1.0, "prior_k": 0, "policy_plies": 8, "until": "turn"},
    "critic": {"rollouts": 32, "width": 1, "confidence": 2.0, "prior_k": 2, "policy_plies": 80, "until": "hand"},
}
#: Policy-based inference of worlds (:mod:`agents.inference`), for the critic search in every
#: format: off by default, since the search measured no stronger with it although its worlds
#: guess the opponent's cards better (docs/runs/inference54); ``infer=true`` turns it on.
INFERENCE_DEFAULTS: dict[str, object] = {"infer": False}
#: How ``infer`` uses the likelihoods: ``"resample"`` (``infer_worlds`` times the worlds drawn,
#: the kept ones resampled and counted equally) or ``"weights"`` (the worlds drawn are all
#: kept, each weighted by its likelihood in the means and the confidence test: no copies).
INFER_WEIGHTINGS = ("resample", "weights")
#: The ``infer_*`` keywords' values when ``infer=true`` leaves them unset (refused without it).
INFER_KEYWORD_DEFAULTS: dict[str, object] = {"infer_worlds": 2, "infer_points": 16, "infer_temperature": 2.0,
                                             "infer_weighting": "resample", "infer_moves": False}
#: The critic's default worlds in a partnership, and in three-hand where a sitter is played
#: on: a row plays longer there (a partnership row to the round's end, a three-hand sitter to
#: its next decision), and 16 worlds keep a searched decision under 100 ms of CPU: 94 ms in
#: three-hand, 78 ms in a partnership, against 55 ms for the duel's 32 (docs/runs/search_time).
FORMAT_WORLDS = 16
#: How the three-hand critic search values a row whose seat sits the next hand out
#: (:mod:`agents.search_batched`): played on to the seat's next decision ("play"), or its
#: critic value calibrated ("critic", where the policy file has a measured calibration; a
#: file without one plays on). "critic" at :data:`SITTER_WORLDS` won the rule of
#: docs/runs/sitter54 (section 6) against 16 worlds played on.
SITTER_DEFAULT = "critic"
#: The three-hand default worlds when the sitter is read from its calibrated critic: its rows
#: are about half as long, and 48 worlds cost 74 ms of CPU per searched decision where 16
#: played on cost 80 (docs/runs/sitter54).
SITTER_WORLDS = 48


def _read_knots(path: str) -> tuple[list[float], list[float]]:
    """The calibration knots of ``eval.sitter_value``'s JSON at ``path``."""
    import json
    from pathlib import Path

    try:
        data = json.loads(Path(path).read_text())
        return data["knots_x"], data["knots_y"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"sitter_calibration={path!r} is not a readable JSON with knots_x and knots_y "
                         f"(python -m eval.sitter_value --out writes one): {exc}") from exc


class SearchAgent(SeededAgent):
    """Determinized Monte Carlo search on observation dicts (see the module docstring).

    ``rules`` must be the match's rules (the agent simulates them); ``columns`` is taken
    from them. Left None: the duel's ``hollywood``, or for a three-hand or partnership
    ``layout`` (a tournament gives its agents the layout only) that format's profile with
    the layout's columns (``hollywood_*`` for 3, ``gin_*`` for 1).

    Three-hand and partnership are searched with ``value="critic"`` only (the rollout
    values simulate a two-player hand to its end, which a format's sheet does not score
    alone): the worlds are :class:`hgin_env.format_worlds.FormatInfoSet`'s, valued on the
    format's batched engine by the format policy's critic (:mod:`agents.search_batched`).
    The memory of the seat's own moves is kept per seat (one agent may play several seats
    of a match: a partnership team, a tournament's two copies in three-hand).
    """

    name = "search"

    def __init__(self, seed: int | None = None, columns: int | None = None,
                 rules: Rules | str | dict | None = None, rollouts: int | None = None,
                 budget_ms: float | None = None, min_worlds: int = 4, width: int | None = None,
                 rollout: str = "simple", decline_weight: float = 1.0,
                 column_weight: float = 1.0, draws: bool = True, model: str = "improved",
                 confidence: float | None = None, layout: ObservationLayout | None = None,
                 temperature: float | None = None, policy: str = "ppo:", prior_k: int | None = None,
                 policy_plies: int | None = None, value: str | None = None, engine: str | None = None,
                 until: str | None = None, infer: bool | None = None, opponent: str | None = None,
                 infer_worlds: int | None = None, infer_points: int | None = None,
                 infer_temperature: float | None = None, opponent_rollouts: float = 0.0,
                 gumbel_k: int = 0, infer_weighting: str | None = None, infer_moves: bool | None = None,
                 sitter: str | None = None, sitter_calibration: str | None = None):
        if rules is None:
            rules = _FORMAT_PROFILES.get((layout.format, layout.columns), "hollywood") \
                if layout is not None else "hollywood"
        self.rules = get_rules(rules)
        self.format = self.rules.format
        if value is None:  # the strongest search measured, and a format's only one
            value = "critic"
        if value not in VALUES:
            raise ValueError(f"value must be one of {VALUES}, got {value!r}")
        unset = VALUE_DEFAULTS[value]
        width = unset["width"] if width is None else width  # type: ignore[assignment]
        confidence = unset["confidence"] if confidence is None else confidence  # type: ignore[assignment]
        prior_k = unset["prior_k"] if prior_k is None else prior_k  # type: ignore[assignment]
        policy_plies = unset["policy_plies"] if policy_plies is None else policy_plies  # type: ignore[assignment]
        until = unset["until"] if until is None else until  # type: ignore[assignment]
        if layout is not None and layout.format != self.format:
            raise ValueError(f"the layout's format {layout.format!r} disagrees with the rules ({self.format!r})")
        if self.format != "duel" and (value != "critic" or rollout == "policy"):
            raise ValueError(f"SearchAgent searches format={self.format!r} with value='critic' only (the "
                             f"rollout values play two-player hands to their end), got value={value!r}, "
                             f"rollout={rollout!r}")
        if layout is not None and layout.columns != self.rules.columns:
            raise ValueError(f"the layout's {layout.columns} columns disagree with the rules "
                             f"({self.rules.columns})")
        if columns is not None and columns != self.rules.columns:
            raise ValueError(f"columns={columns} disagrees with the rules ({self.rules.columns})")
        if rollout not in ROLLOUT_POLICIES:
            raise ValueError(f"rollout must be one of {ROLLOUT_POLICIES}, got {rollout!r}")
        sitter_setting = self._sitter_setting(policy, sitter, sitter_calibration) if value == "critic" else {}
        if rollouts is None:
            rollouts = self._default_worlds(unset, sitter_setting)
        if rollouts < 1 or min_worlds < 1 or width < 0:
            raise ValueError("rollouts and min_worlds must be >= 1, width >= 0")
        if temperature is not None:
            behaviour_weights([0], temperature)  # raises on a temperature that is not > 0
        if prior_k < 0 or policy_plies < 1:
            raise ValueError(f"prior_k must be >= 0 and policy_plies >= 1, got {prior_k}, {policy_plies}")
        if gumbel_k < 0 or (gumbel_k and value != "critic"):
            raise ValueError(f"gumbel_k must be >= 0, and > 0 only with value='critic' (the policy's "
                             f"probabilities draw the candidates); got gumbel_k={gumbel_k}, value={value!r}")
        super().__init__(seed=seed, layout=ObservationLayout.for_rules(self.rules))
        self.rollouts = rollouts
        self.budget_ms = budget_ms
        self.min_worlds = min_worlds
        self.width = width
        self.rollout = rollout
        self.decline_weight = decline_weight
        self.column_weight = column_weight
        self.draws = draws
        self.model = model
        self.confidence = confidence
        self.temperature = temperature
        self.prior_k = prior_k
        self.policy_plies = policy_plies
        self.value = value
        self.gumbel_k = gumbel_k
        #: The policy's probabilities at the current decision (None without a policy).
        self._prior: np.ndarray | None = None
        self.policy = self._load_policy(policy, seed) if prior_k or rollout == "policy" or value == "critic" else None
        self.critic_values = None
        if value == "critic":
            from .search_batched import CriticValues

            self.critic_values = CriticValues(self.policy, self.rules, plies=policy_plies, engine=engine,
                                              until=until, **sitter_setting)
        elif sitter is not None or sitter_calibration is not None:
            raise ValueError("sitter and sitter_calibration set how the critic values a three-hand seat "
                             f"sitting out; this search values with value={value!r}")
        self._set_opponent_model(infer, opponent, infer_worlds, infer_points, infer_temperature,
                                 opponent_rollouts, seed, infer_weighting, infer_moves)
        self.expert = ExpertAgent(seed=seed, layout=self.layout)
        self._rollout_agents = [ExpertAgent(seed=0, columns=self.rules.columns) for _ in range(2)]
        self.decision_ms: list[float] = []
        self.decision_cpu_ms: list[float] = []
        self.worlds: list[int] = []
        self.decisions = 0
        #: The last decision's :class:`SearchRecord`; None when it had one candidate.
        self.last_search: SearchRecord | None = None
        self.total_ms = 0.0
        self.total_cpu_ms = 0.0
        self._forget()

    def _default_worlds(self, unset: dict[str, object], sitter_setting: dict[str, object]) -> int:
        """The worlds per decision when ``rollouts`` is left unset: the value's default in the
        duel; in a format :data:`FORMAT_WORLDS`, or :data:`SITTER_WORLDS` where a three-hand
        sitter is read from its calibrated critic (its rows are shorter)."""
        if self.format == "duel":
            return int(unset["rollouts"])  # type: ignore[call-overload]
        return SITTER_WORLDS if sitter_setting.get("sitter") == "critic" else FORMAT_WORLDS

    def _sitter_setting(self, policy: str, sitter: str | None, calibration: str | None) -> dict[str, object]:
        """:class:`~agents.search_batched.CriticValues`' keywords for a seat sitting out
        (:data:`SITTER_DEFAULT`): its value played on, or its critic value calibrated, by the
        knots of the ``sitter_calibration`` file given (``eval.sitter_value``'s JSON) or the
        policy file's measured ones (:data:`agents.search_batched.SITTER_CALIBRATIONS`)."""
        from .ppo import file_digest, shipped_policy
        from .search_batched import SITTER_CALIBRATIONS

        if self.format != "three_hand":
            if sitter is not None or calibration is not None:
                raise ValueError(f"sitter and sitter_calibration are three-hand settings (a seat sits out only "
                                 f"there), got them for format={self.format!r}")
            return {}
        path = policy[len("ppo:"):] or shipped_policy(ObservationLayout.for_rules(self.rules))
        knots = SITTER_CALIBRATIONS.get(file_digest(path)) if calibration is None else _read_knots(calibration)
        if sitter is None:  # the default where the policy has a calibration, else the play-on
            sitter = SITTER_DEFAULT if knots is not None else "play"
        if sitter == "critic" and knots is None:
            raise ValueError(f"sitter=critic needs a calibration of the policy's critic for a seat sitting out, "
                             f"and {path} has none measured: fit one with python -m eval.sitter_value --agent "
                             f"'search:policy=ppo:{path},sitter=play' --out FILE.json and give "
                             f"sitter_calibration=FILE.json")
        # CriticValues checks the setting and the knots (its own keywords).
        return {"sitter": sitter, "sitter_knots": knots if sitter == "critic" else None}

    def _set_opponent_model(self, infer: bool | None, opponent: str | None, infer_worlds: int | None,
                            infer_points: int | None, infer_temperature: float | None,
                            opponent_rollouts: float, seed: int | None, infer_weighting: str | None = None,
                            infer_moves: bool | None = None) -> None:
        """The model of the opponents (:data:`INFERENCE_DEFAULTS`, :mod:`agents.inference`):
        ``opponent`` (an agent spec; None: the search's own policy) weighs the worlds by what
        the opponent did (``infer``) and plays the opponents' seats in a fraction
        ``opponent_rollouts`` of the worlds' playouts (the policy plays the others). The
        ``infer_*`` keywords tune the inference, so they are refused without it rather than
        silently unused (:data:`INFER_KEYWORD_DEFAULTS` fills those left unset)."""
        self.infer = bool(INFERENCE_DEFAULTS["infer"]) and self.value == "critic" if infer is None else bool(infer)
        if self.infer and self.value != "critic":
            raise ValueError("infer=true weighs the critic search's worlds (value='critic'), "
                             f"got value={self.value!r}")
        given = {"infer_worlds": infer_worlds, "infer_points": infer_points,
                 "infer_temperature": infer_temperature, "infer_weighting": infer_weighting,
                 "infer_moves": infer_moves}
        given = {name: value for name, value in given.items() if value is not None}
        if given and not self.infer:
            verb, pronoun = ("tune", "them") if len(given) > 1 else ("tunes", "it")
            raise ValueError(f"{', '.join(given)} {verb} the inference of worlds, which is off: add "
                             f"infer=true (or leave {pronoun} unset)")
        settings = {**INFER_KEYWORD_DEFAULTS, **given}
        infer_worlds, infer_points = settings["infer_worlds"], settings["infer_points"]
        infer_temperature, infer_weighting = settings["infer_temperature"], settings["infer_weighting"]
        infer_moves = settings["infer_moves"]
        if not isinstance(infer_worlds, int) or infer_worlds < 1:
            raise ValueError(f"infer_worlds must be an integer >= 1, got {infer_worlds!r}")
        if infer_weighting not in INFER_WEIGHTINGS:
            raise ValueError(f"infer_weighting must be one of {INFER_WEIGHTINGS}, got {infer_weighting!r}")
        if not 0.0 <= opponent_rollouts <= 1.0:
            raise ValueError(f"opponent_rollouts must be in [0, 1], got {opponent_rollouts!r}")
        if opponent_rollouts and self.value != "critic":
            raise ValueError("opponent_rollouts plays the critic search's playouts (value='critic')")
        model = self.policy
        if opponent is not None:
            from .spec import make_batched_agent

            model = make_batched_agent(opponent, seed=seed, layout=self.layout)
        self.infer_worlds = infer_worlds
        self.infer_weighting = infer_weighting
        self.opponent_rollouts = float(opponent_rollouts)
        self.inference = WorldInference(model, temperature=infer_temperature, max_points=infer_points,
                                        moves_only=bool(infer_moves)) if self.infer else None
        self.opponent_model = model
        if self.critic_values is not None and opponent_rollouts:
            self.critic_values.opponent = model

    def _load_policy(self, spec: str, seed: int | None):
        """The learned policy as a :class:`agents.batched.BatchedPolicy` (one torch forward
        for a whole batch of observations)."""
        if not isinstance(spec, str) or not spec.startswith("ppo:"):
            raise ValueError(f"policy must be a trained policy spec 'ppo:PATH' ('ppo:' = the "
                             f"shipped one), got {spec!r}")
        from .spec import make_batched_agent

        return make_batched_agent(spec, seed=seed, layout=self.layout)

    # ------------------------------------------------------------------ memory
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.expert.reset(seed)
        self._forget()

    def _forget(self) -> None:
        """Forget the current hand (own pickups, own pass) of every seat."""
        self._own_known = 0
        self._own_passed = False
        self._last_stock: int | None = None
        self._last_score: tuple | None = None
        #: What the opponent at the seat's table did this hand (``infer``).
        self._history = OpponentHistory()
        #: Per seat (formats): (own_known, own_passed, last stock, last score, the opponent's
        #: history) of the seat's hand.
        self._seats: dict[int, tuple] = {}
        self._seat: int | None = None

    def _remember(self, view: ObsView, vector: np.ndarray, observation: dict) -> None:
        score = (tuple(view.own_columns), tuple(view.opponent_columns), tuple(view.won_by_me),
                 tuple(view.won_by_opponent))
        if self.format != "duel":
            # One agent may play several seats: switch to this seat's memory. The hands played
            # (three-hand) or the round (partnership) tell a new hand even where the sheet does
            # not change (a dead hand, a hand the seat sat out).
            seat = int(self.layout.get(vector, "seat").argmax())
            counter = "hand_number" if self.format == "three_hand" else "round_number"
            score += (self.layout.count(vector, counter),)
            if seat != self._seat:
                if self._seat is not None:
                    self._seats[self._seat] = (self._own_known, self._own_passed, self._last_stock,
                                               self._last_score, self._history)
                self._own_known, self._own_passed, self._last_stock, self._last_score, self._history = \
                    self._seats.get(seat, (0, False, None, None, OpponentHistory()))
                self._seat = seat
        new_hand = (self._last_stock is None or view.stock_size > self._last_stock
                    or view.phase == "first_upcard" or score != self._last_score)
        if new_hand:
            self._own_known, self._own_passed = 0, False
            self._history.forget()
        self._own_known &= view.hand  # discarded pickups are no longer known to be held
        self._last_stock, self._last_score = view.stock_size, score
        if self.infer:
            self._track_opponent(observation)

    def information_set(self, observation: dict) -> InfoSet | FormatInfoSet:
        """The information set of the seat deciding at ``observation``, with what the agent
        remembers of its own moves this hand (the last observation it was given)."""
        if self.format == "duel":
            return InfoSet.from_observation(observation, self.rules, own_known=self._own_known,
                                            own_passed=self._own_passed)
        return FormatInfoSet.from_observation(observation, self.rules, own_known=self._own_known,
                                              own_passed=self._own_passed)

    def follow(self, observation: dict) -> None:
        """Remember a decision without searching it (what the opponent did since the last);
        :meth:`played` then remembers the move made there. :mod:`eval.inference_quality`
        follows another player's decisions with the two."""
        self._remember(parse(observation, self.layout), np.asarray(observation["observation"]), observation)

    def played(self, observation: dict, action: int) -> None:
        """The move made at the decision :meth:`follow` last remembered."""
        self._note_action(parse(observation, self.layout), action)

    def _note_action(self, view: ObsView, action: int) -> None:
        self._history.note(action)
        if action == A.TAKE_DISCARD:
            self._own_known |= 1 << view.discard_top
        elif action == A.PASS:
            self._own_passed = True

    # ------------------------------------------------------------------ the opponents' model
    def _track_opponent(self, observation: dict) -> None:
        """Add what the opponent did since this seat's last decision to its history
        (:class:`agents.inference.OpponentHistory`), from this observation alone."""
        info = self.information_set(observation)
        if isinstance(info, InfoSet):
            self._history.update(info)
            return
        opponent = info.seats[info.table_index][1 - info.table.seat]
        # The opponent seat's match context (public): read off any world of this information set.
        world = info.sample(np.random.default_rng(0))
        context = self.critic_values.seat_context(world, opponent)  # type: ignore[union-attr]
        self._history.update(info.table, context)

    def _opponent_hand(self, info: InfoSet | FormatInfoSet, world: object) -> int:
        """The hand of the seat's opponent at its table in a sampled ``world``."""
        if isinstance(info, InfoSet):
            return world.hands[1 - info.seat]  # type: ignore[attr-defined]
        return info.opponent_hand(world)

    def sample_worlds(self, info: InfoSet | FormatInfoSet, n: int) -> list:
        """``n`` worlds of the seat's information set ``info``: drawn from the prior
        (``decline_weight``, ``model``), or with ``infer`` ``infer_worlds`` times as many
        drawn and ``n`` of them resampled by the likelihood of what the opponent did this
        hand (:class:`agents.inference.WorldInference`). A world drawn twice is a copy."""
        points = self._history.points if self.inference is not None else []
        if not points:
            return [info.sample(self.rng, self.decline_weight, self.model) for _ in range(n)]
        drawn, log_likelihoods = self._drawn_with_likelihoods(info, n * self.infer_worlds, points)
        kept, out = set(), []
        for i in self.inference.resample(log_likelihoods, n, self.rng).tolist():  # type: ignore[union-attr]
            out.append(drawn[i] if i not in kept else copy.deepcopy(drawn[i]))
            kept.add(i)
        return out

    def weighted_worlds(self, info: InfoSet | FormatInfoSet, n: int) -> tuple[list, np.ndarray | None]:
        """``n`` worlds and their log-weights: with ``infer_weighting="weights"`` (and a
        decision of the opponent's to weigh by) ``n`` worlds from the prior, each with its
        log-likelihood divided by ``infer_temperature``; else :meth:`sample_worlds`' worlds
        and None (they count equally)."""
        points = self._history.points if self.inference is not None else []
        if not points or self.infer_weighting != "weights":
            return self.sample_worlds(info, n), None
        worlds, log_likelihoods = self._drawn_with_likelihoods(info, n, points)
        return worlds, log_likelihoods / self.inference.temperature  # type: ignore[union-attr]

    def _drawn_with_likelihoods(self, info: InfoSet | FormatInfoSet, n: int, points: list) -> tuple[list, np.ndarray]:
        """``n`` worlds from the prior and the log-likelihood of the opponent's decisions at
        ``points`` in each (both ways of using the inference start here)."""
        worlds = [info.sample(self.rng, self.decline_weight, self.model) for _ in range(n)]
        hands = [self._opponent_hand(info, world) for world in worlds]
        return worlds, self.inference.log_likelihoods(points, hands, self.rng)  # type: ignore[union-attr]

    def _world_weights(self, surprises: list[int], log_weights: list[float]) -> np.ndarray | None:
        """Normalised weights of the worlds valued so far: the opponent-behaviour weights
        (``temperature``) times the inferred likelihoods (``infer_weighting="weights"``);
        None when every world counts equally."""
        if not any(log_weights):
            return None if self.temperature is None else behaviour_weights(surprises, self.temperature)
        z = np.asarray(log_weights, dtype=np.float64)
        if self.temperature is not None:
            z = z + np.log(behaviour_weights(surprises, self.temperature))
        return tempered_weights(z)

    def _opponent_rows(self, worlds: int) -> np.ndarray | None:
        """Which worlds' playouts play the opponents with their model (``opponent_rollouts``
        of them, drawn from the seed); None when none does."""
        if not self.opponent_rollouts:
            return None
        return self.rng.random(worlds) < self.opponent_rollouts

    @property
    def mean_decision_ms(self) -> float:
        """Mean wall time per decision (every call, trivial ones included)."""
        return self.total_ms / self.decisions if self.decisions else 0.0

    @property
    def mean_decision_cpu_ms(self) -> float:
        """Mean process CPU time per decision (every call, trivial ones included): unlike
        wall time, it does not grow with other jobs on the machine."""
        return self.total_cpu_ms / self.decisions if self.decisions else 0.0

    # ------------------------------------------------------------------ decisions
    def __call__(self, observation: dict) -> int:
        start, cpu = time.perf_counter(), time.process_time()
        view = parse(observation, self.layout)
        self._remember(view, np.asarray(observation["observation"]), observation)
        legal = [int(a) for a in view.legal]
        if not legal:
            raise ValueError("no legal action in the observation's action mask")
        candidates = self._candidates(view, legal, observation)
        self.last_search = None
        if len(candidates) == 1:
            action = candidates[0]
        else:
            action = self._search(observation, candidates, start)
            self.decision_ms.append((time.perf_counter() - start) * 1000.0)
            self.decision_cpu_ms.append((time.process_time() - cpu) * 1000.0)
        self._note_action(view, action)
        self.decisions += 1
        self.total_ms += (time.perf_counter() - start) * 1000.0
        self.total_cpu_ms += (time.process_time() - cpu) * 1000.0
        return action

    def _candidates(self, view: ObsView, legal: list[int], observation: dict) -> list[int]:
        if len(legal) == 1:
            return legal
        if A.BIG_GIN in legal:
            return [A.BIG_GIN]
        expert = int(self.expert(observation))
        probs = self._policy_probabilities(observation) if self.prior_k or self.value == "critic" else None
        self._prior = probs
        prior = self._prior_moves(probs)
        # The move the search must beat (the confidence test's baseline): the Expert's, or
        # with the critic the policy's own (the search improves on the policy it values by).
        first = int(self.policy.choose(probs[None], np.asarray(observation["action_mask"])[None])[0]) \
            if self.value == "critic" else expert  # type: ignore[union-attr,index]
        prior = [expert] + prior if first != expert else prior
        if view.phase in ("first_upcard", "draw"):
            out = [first] + [a for a in legal if a != first] if self.draws else [first]
            return list(dict.fromkeys(out + prior + self._gumbel_moves(probs, legal)))
        after = deadwood_after_discard_mask(view.hand)
        out = [first]
        knocks = [a - A.KNOCK for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
        if knocks:
            if 0 in (after[c] for c in knocks):  # gin: nothing beats it
                return [A.KNOCK + min(knocks, key=lambda c: (after[c], -CARD_VALUES[c], c))]
            out.append(A.KNOCK + min(knocks, key=lambda c: (after[c], -CARD_VALUES[c], c)))
        discards = sorted((a - A.DISCARD for a in legal if a < A.KNOCK),
                          key=lambda c: (after[c], -CARD_VALUES[c], c))
        out += [A.DISCARD + c for c in discards[:self.width]]
        return list(dict.fromkeys(out + prior + self._gumbel_moves(probs, legal)))

    def _policy_probabilities(self, observation: dict) -> np.ndarray:
        """The learned policy's move probabilities on the real observation (one forward)."""
        return self.policy.probabilities(np.asarray(observation["observation"])[None],  # type: ignore[union-attr]
                                         np.asarray(observation["action_mask"])[None])[0]

    def _prior_moves(self, probs: np.ndarray | None) -> list[int]:
        """The learned policy's ``prior_k`` most likely legal moves, from its probabilities
        ``probs`` (none without a prior)."""
        if not self.prior_k or probs is None:
            return []
        order = np.argsort(-probs, kind="stable")[:self.prior_k]
        return [int(a) for a in order if probs[a] > 0]

    def _gumbel_moves(self, probs: np.ndarray | None, legal: list[int]) -> list[int]:
        """``gumbel_k`` legal moves drawn without replacement from the policy's probabilities
        (Gumbel top-k: the largest log-probability + Gumbel noise); none when it is off."""
        if not self.gumbel_k or probs is None:
            return []
        moves = np.asarray(legal)
        scores = np.log(np.maximum(probs[moves], 1e-30)) + self.rng.gumbel(size=len(moves))
        return [int(a) for a in moves[np.argsort(-scores, kind="stable")[:self.gumbel_k]]]

    def _halving_plan(self, count: int) -> list[int]:
        """Worlds of each round of sequential halving for ``count`` candidates (one round,
        every world, without ``gumbel_k``)."""
        if not self.gumbel_k:
            return [self.rollouts]
        rounds = max(1, int(np.ceil(np.log2(count))))
        each = max(1, self.rollouts // rounds)
        return [each] * (rounds - 1) + [max(1, self.rollouts - each * (rounds - 1))]

    @staticmethod
    def _halve(active: list[int], means: np.ndarray) -> list[int]:
        """The better half of the ``active`` candidates by mean value, the baseline (index
        0) always kept: it and the ``ceil(n / 2) - 1`` best others."""
        others = sorted(active[1:], key=lambda c: (-means[c], c))
        return [0] + sorted(others[:max(1, -(-len(active) // 2) - 1)])

    @staticmethod
    def _weighted_mean_and_error(diff: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
        """The weighted mean of ``diff`` and its standard error through the effective number
        of worlds (Kish): the weighted variance over ``1 / sum(w^2)`` worlds, which is the
        plain ``std(ddof=1) / sqrt(n)`` for equal weights. The sandwich form
        ``sqrt(sum(w^2 (d - mean)^2))`` used before shrinks towards 0 when one world carries
        most of the weight (its residual is then ~0), which let a decision leave the policy's
        move on the evidence of one or two worlds (docs/runs/inference54)."""
        mean = float(weights @ diff)
        concentration = float(weights @ weights)  # 1 / the effective number of worlds
        if concentration >= 1.0 - 1e-12:
            return mean, float("inf")  # one world: no evidence of a difference
        variance = float(weights @ (diff - mean) ** 2) / (1.0 - concentration)
        return mean, float(np.sqrt(variance * concentration))

    @staticmethod
    def _visited_means(v: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Each candidate's weighted mean over the worlds it was valued on (NaN elsewhere)."""
        seen = ~np.isnan(v)
        w = weights[:, None] * seen
        return np.where(seen, v, 0.0).T @ weights / np.maximum(w.sum(axis=0), 1e-300)

    def _search(self, observation: dict, candidates: list[int], start: float) -> int:
        info = self.information_set(observation)
        opponent_hand = lambda world: self._opponent_hand(info, world)  # noqa: E731
        table = info if self.format == "duel" else info.table  # the seat's two-player table
        values: list[list[float]] = []
        surprises: list[int] = []
        log_weights: list[float] = []  # each world's inferred log-weight (0: counts equally)
        deadline = None if self.budget_ms is None else start + self.budget_ms / 1000.0
        # Policy rollouts step many worlds in lockstep (one forward per ply for all of them),
        # so they take worlds in blocks; the others take one world at a time.
        block = 1 if self.rollout != "policy" and self.value != "critic" else (
            self.rollouts if self.budget_ms is None else self.min_worlds)
        # Sequential halving (gumbel_k): the candidates still valued, and where each round ends.
        active = list(range(len(candidates)))
        ends = list(np.cumsum(self._halving_plan(len(candidates))))
        while len(values) < ends[-1]:
            if deadline is not None and len(values) >= self.min_worlds and time.perf_counter() >= deadline:
                break
            if self.gumbel_k and len(values) == ends[0]:  # a round is over: the better half goes on
                ends.pop(0)
                so_far = self._world_weights(surprises, log_weights)
                active = self._halve(active, self._visited_means(
                    np.array(values), np.ones(len(values)) if so_far is None else so_far))
            batch = []
            worlds_drawn, drawn_log_weights = self.weighted_worlds(info, min(block, ends[0] - len(values)))
            log_weights += [0.0] * len(worlds_drawn) if drawn_log_weights is None else drawn_log_weights.tolist()
            for world in worlds_drawn:
                batch.append((world, int(self.rng.integers(2**63 - 1))))
                if self.temperature is not None:  # before the rollouts change the world
                    surprises.append(table.surprise(opponent_hand(world)))
            if self.value == "critic":
                found = np.full((len(batch), len(candidates)), np.nan)  # NaN: halved out before this world
                found[:, active] = self.critic_values.values(  # type: ignore[union-attr]
                    [world for world, _ in batch], [seed for _, seed in batch], [candidates[i] for i in active],
                    info.seat, opponent_rows=self._opponent_rows(len(batch)))
                values += found.tolist()
            elif self.rollout == "policy":
                values += self._policy_values(batch, candidates, info.seat)
            else:
                for world, rollout_seed in batch:
                    values.append([self._value(world.clone() if i < len(candidates) - 1 else world,
                                               action, rollout_seed, info.seat)
                                   for i, action in enumerate(candidates)])
        worlds = len(values)
        self.worlds.append(worlds)
        v = np.array(values)
        weighted = self._world_weights(surprises, log_weights)
        if weighted is None:
            weights = np.full(worlds, 1.0 / worlds)
            means = v.mean(axis=0) if not self.gumbel_k else self._visited_means(v, weights)
        else:
            weights = weighted
            means = weights @ v if not self.gumbel_k else self._visited_means(v, weights)
        # Halved out: not chosen (valued on fewer worlds; the last round's candidates were valued on all).
        final = np.where(np.isin(np.arange(len(candidates)), active), means, -np.inf)
        best = int(np.flatnonzero(final == final.max())[0])  # ties: the earliest (Expert's first)
        if best and self.confidence > 0 and worlds > 1:
            diff = v[:, best] - v[:, 0]  # paired by world: common random numbers
            if weighted is None:
                mean, se = diff.mean(), diff.std(ddof=1) / np.sqrt(worlds)
            else:
                mean, se = self._weighted_mean_and_error(diff, weights)
            if mean <= self.confidence * se:
                best = 0
        visits = tuple(int(n) for n in (~np.isnan(v)).sum(axis=0))
        self.last_search = SearchRecord(tuple(candidates), tuple(float(m) for m in means), candidates[best], worlds,
                                        visits, self._prior)
        return candidates[best]

    # ------------------------------------------------------------------ rollouts
    def _value(self, game: Hand, action: int, seed: int, me: int) -> float:
        record = game.apply(action)
        if record is None:
            record = self._play_out(game, np.random.default_rng(seed))
        return self._hand_value(record, me)

    def _policy_values(self, batch: list[tuple[Hand, int]], candidates: list[int],
                       me: int) -> list[list[float]]:
        """Every candidate in every world, played on by the learned policy for both players
        for ``policy_plies`` plies (one batched forward per ply over all unfinished games),
        then by Neller's rule to the end of the hand (seeded by the world: common numbers)."""
        out = np.zeros((len(batch), len(candidates)))
        live: list[tuple[int, int, Hand]] = []
        for w, (world, _) in enumerate(batch):
            for c, action in enumerate(candidates):
                game = world.clone() if c < len(candidates) - 1 else world
                record = game.apply(action)
                if record is None:
                    live.append((w, c, game))
                else:
                    out[w, c] = self._hand_value(record, me)
        for _ in range(self.policy_plies):
            if not live:
                break
            seen = [observe(game, game.current_player) for _, _, game in live]
            actions = self.policy.act(np.stack([o["observation"] for o in seen]),  # type: ignore[union-attr]
                                      np.stack([o["action_mask"] for o in seen]))
            still = []
            for (w, c, game), action in zip(live, actions, strict=True):
                record = game.apply(int(action))
                if record is None:
                    still.append((w, c, game))
                else:
                    out[w, c] = self._hand_value(record, me)
            live = still
        for w, c, game in live:
            out[w, c] = self._hand_value(self._play_out(game, np.random.default_rng(batch[w][1])), me)
        return out.tolist()

    def _hand_value(self, record: HandRecord, me: int) -> float:
        """± (hand points / 100 + column_weight × columns decided), 0 for a dead hand."""
        if record.winner is None:
            return 0.0
        sign = 1.0 if record.winner == me else -1.0
        return sign * (record.points / 100.0 + self.column_weight * len(record.columns_decided))

    def _play_out(self, game: Hand, rng: np.random.Generator) -> HandRecord:
        """Play the hand to its end with the rollout policy for both players."""
        if self.rollout == "expert":
            for agent in self._rollout_agents:
                agent.reset(int(rng.integers(2**63 - 1)))
        while True:
            p = game.current_player
            if self.rollout != "expert":
                drawing = game.phase in _DRAWING
                top = game.discard_pile[-1] if game.discard_pile else -1
                after = None if drawing else game.deadwood_after_discard()
                action = simple_action(game.hands[p], top, game.legal_actions(), drawing, rng, after)
                if self.rollout == "timed" and A.KNOCK <= action < A.DRAW_STOCK and \
                        not knock_timing(_EXPERT_PARAMS, after[action - A.KNOCK], len(game.stock)):
                    action -= A.KNOCK - A.DISCARD  # the same card, discarded face up
            else:
                action = int(self._rollout_agents[p](observe(game, p)))
            record = game.apply(action)
            if record is not None:
                return record


def search_from_spec(arg: str, seed: int | None = None, **kwargs: object) -> SearchAgent:
    """``make_agent("search:temperature=1,prior_k=2,policy=ppo:PATH")``: keyword arguments
    as ``key=value`` pairs separated by commas (values read as JSON when they parse, e.g.
    numbers, ``true``, ``null``; else as text), so a variant fits in one agent name."""
    options = parse_options(arg, "search")
    clash = options.keys() & kwargs.keys()
    if clash:
        raise ValueError(f"search spec {arg!r} and the keyword arguments both set {sorted(clash)}")
    try:
        return SearchAgent(seed=seed, **options, **kwargs)  # type: ignore[arg-type]
    except TypeError as exc:  # an unknown keyword: say which in one line
        raise ValueError(f"search spec {arg!r}: {exc}") from None
