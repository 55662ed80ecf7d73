"""Determinization: sample full game states consistent with one player's information.

Search agents (and research on imperfect information) need whole :class:`~hgin_env.game.Hand`
states to simulate, but a player only knows its information set. This module builds that
information set **from the player's observation** (plus the few facts the player remembers
about its own moves) and samples the hidden part: which unseen cards the opponent holds
and the order of the stock.

Why from the observation: a helper that takes the real ``Hand`` can return the real hidden
cards by accident (OpenSpiel's ``ResampleFromInfostate`` for gin rummy was found to return
the defender's real cards). Here :meth:`InfoSet.from_observation` reads only the observation
dict, and :meth:`InfoSet.from_game` only calls :func:`hgin_env.observation.observe` (whose
vector reads public fields and the player's own hand) and copies three public fields. A sample
is drawn from the ``InfoSet`` alone, so two states that differ only in hidden cards give
the same samples for the same seed (``tests/test_determinize.py`` checks it).

What a sample respects:

* the player's hand, the discard pile (its top; the order of the cards below the top is not
  observed and is set by card id: it never matters for play, since only the top card can be
  taken and whoever takes it discards on top of the rest), the cards the opponent took from
  the pile and still holds, both players' discards, the stock size, the phase, the card
  just taken (it may not be discarded), a forced stock draw, the knock limit and multiplier,
  the dealer, the upcard passes, and the scoreboard (totals, decided columns, wins);
* card conservation (52 cards, each once), so the sample is a legal ``Hand`` that continues
  with the same legal actions and the same observation for the player as the real state.

The opponent's hidden cards are drawn from the unseen cards (not in the player's hand, not
in the pile, not known to be in the opponent's hand), the rest is shuffled into the stock.
By default uniformly (``decline_weight=1``, ``model="uniform"``): exactly consistent, no
modelling. ``model="improved"`` replays the opponent's hand improvement (see
:meth:`InfoSet.sample`): still consistent, but mid-hand opponent hands hold realistic
deadwood instead of a random hand's. With
``decline_weight=w < 1`` each unseen card that could meld with a card the opponent declined
(a discard of mine it did not take, the first upcard it passed) or discarded gets weight
``w`` (the others 1), drawn sequentially without replacement: a heuristic prior (the
Expert's), not a posterior, and still always consistent.

**Behaviour weights** (:meth:`InfoSet.sample_weighted`): any of these priors can be turned
into an approximate posterior given what the opponent did. Each world gets the weight
``exp(-surprise / temperature)``, where the surprise counts the opponent's observed moves
(declines, discards, pickups) that Neller's take-and-discard rule would not have made with
the world's hand (:meth:`InfoSet.surprise`). The worlds stay the same consistent samples;
only how much each one counts changes (self-normalised importance sampling).

Not observed, therefore not reconstructed exactly: the box counts and settlement of the
scoreboard (they never change play or who wins the match), the number of dead hands
(``hand_number`` is set to the number of won hands + 1, which matters only for
``Rules.max_hands``), and, unless the caller passes them, the player's own pile pickups
still in hand, whether it passed the first upcard, and the turn counter (estimated from
the stock size and the pickups visible in the pile; it matters only for ``Rules.max_turns``).
The identity of a first upcard that someone took is not observed either; ``upcard`` is -1
then (it is informational only).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import actions as A
from .cards import NUM_CARDS
from .codes import Phase
from .game import Hand
from .melds import deadwood_after_discard_mask, meld_partners, melds_with
from .observation import PHASES, ObservationLayout, observe
from .rules import Rules, get_rules
from .scoring import Scoreboard

FULL = (1 << NUM_CARDS) - 1
#: Priors over the opponent's hidden cards (see :meth:`InfoSet.sample`).
SAMPLE_MODELS = ("uniform", "improved")
#: Cards in the stock right after the deal (52 - 2 * 10 - the upcard).
FULL_STOCK = NUM_CARDS - 21


def _cards(mask: int) -> list[int]:
    return [c for c in range(NUM_CARDS) if mask >> c & 1]


@dataclass(frozen=True)
class InfoSet:
    """What one player knows when it is about to act (card sets as 52-bit masks)."""

    rules: Rules
    #: The player's seat in the sampled games (0 or 1).
    seat: int
    hand: int
    discard_top: int  # -1 when the pile is empty
    pile: int  # every card of the discard pile, top included
    opponent_known: int
    opponent_discards: int
    own_discards: int
    own_known: int  # cards the player took from the pile and still holds
    own_passed: bool
    opponent_passed: bool
    stock_size: int
    phase: Phase
    taken_card: int  # card taken from the pile this turn (may not be discarded), else -1
    forced_stock_draw: bool
    knock_limit: int
    multiplier: int
    is_dealer: bool
    #: Column totals, decided columns and wins, from the player's side (0 = me, 1 = opponent).
    own_columns: tuple[int, ...]
    opponent_columns: tuple[int, ...]
    column_winners: tuple[int | None, ...]
    wins: tuple[int, int]
    turns: int

    # ------------------------------------------------------------------ derived facts
    @property
    def unseen(self) -> int:
        """Cards that are in the stock or among the opponent's hidden cards."""
        return FULL & ~self.hand & ~self.pile & ~self.opponent_known

    @property
    def hidden(self) -> int:
        """How many of the opponent's cards the player has not seen (it holds 10)."""
        return 10 - self.opponent_known.bit_count()

    @property
    def upcard_in_pile(self) -> int:
        """Mask of the first upcard when it is still in the pile (it is nobody's discard)."""
        return self.pile & ~self.own_discards & ~self.opponent_discards

    @property
    def declined_by_opponent(self) -> int:
        """Cards the opponent was offered on top of the pile and did not take: my discards
        still in the pile, and the first upcard if it passed it."""
        declined = self.own_discards & self.pile
        if self.opponent_passed:
            declined |= self.upcard_in_pile
        return declined

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_observation(cls, observation: dict, rules: Rules | str | dict | None = None, *,
                         seat: int = 0, own_known: int | None = None,
                         own_passed: bool | None = None, turns: int | None = None) -> InfoSet:
        """The information set of the player whose observation dict this is (it must act).

        ``own_known``, ``own_passed`` and ``turns`` are facts about the player's own moves
        that the observation does not hold; pass what the player remembers, or leave
        ``None`` to infer them (see the module docstring).
        """
        rules = get_rules(rules)
        layout = ObservationLayout(rules.columns)
        vec = np.asarray(observation["observation"])
        mask = np.asarray(observation["action_mask"])
        if not mask.any():
            raise ValueError("the observation's player is not to act (empty action mask)")
        phase_name = layout.phase(vec)
        if phase_name == "over":
            raise ValueError("the hand is over: nothing to determinize")
        phase = Phase(PHASES.index(phase_name))
        hand = layout.mask(vec, "hand")
        top = layout.card(vec, "discard_top")
        pile = layout.mask(vec, "discard_rest") | (1 << top if top >= 0 else 0)
        own_discards = layout.mask(vec, "own_discards")
        opponent_discards = layout.mask(vec, "opponent_discards")
        stock_size = layout.count(vec, "stock_size")
        taken = -1
        if phase == Phase.DISCARD:
            blocked = [c for c in _cards(hand) if not mask[A.DISCARD + c]]
            taken = blocked[0] if blocked else -1
        forced = bool(phase == Phase.DRAW and top >= 0 and not mask[A.TAKE_DISCARD])
        upcard_in_pile = pile & ~own_discards & ~opponent_discards
        if own_known is None:
            own_known = hand & opponent_discards
        if own_passed is None:
            own_passed = (bool(upcard_in_pile) and phase != Phase.FIRST_UPCARD
                          and rules.first_upcard_offer)
        if turns is None:
            pickups = (own_discards & ~pile).bit_count() + (opponent_discards & ~pile).bit_count()
            upcard_taken = phase != Phase.FIRST_UPCARD and not upcard_in_pile
            turns = FULL_STOCK - stock_size + pickups + int(upcard_taken)
        target = rules.target
        won_me = layout.flags(vec, "won_by_me")
        won_opp = layout.flags(vec, "won_by_opponent")
        return cls(
            rules=rules, seat=seat, hand=hand, discard_top=top, pile=pile,
            opponent_known=layout.mask(vec, "opponent_known"), opponent_discards=opponent_discards,
            own_discards=own_discards, own_known=int(own_known), own_passed=bool(own_passed),
            opponent_passed=layout.flag(vec, "opponent_passed"), stock_size=stock_size,
            phase=phase, taken_card=taken, forced_stock_draw=forced,
            knock_limit=layout.count(vec, "knock_limit"),
            multiplier=rules.spade_multiplier if layout.flag(vec, "doubled") else 1,
            is_dealer=layout.flag(vec, "is_dealer"),
            own_columns=tuple(layout.counts(vec, "own_columns", target)),
            opponent_columns=tuple(layout.counts(vec, "opponent_columns", target)),
            column_winners=tuple(0 if a else (1 if b else None) for a, b in zip(won_me, won_opp, strict=True)),
            wins=tuple(layout.counts(vec, "wins")),
            turns=int(turns),
        )

    @classmethod
    def from_game(cls, game: Hand, player: int) -> InfoSet:
        """The information set of ``player`` (who must be the one to act) in ``game``.

        Reads only ``player``'s observation dict (:func:`~hgin_env.observation.observe`)
        and three facts about the player's own moves that everyone at the table saw (its
        pickups still in hand, whether it passed the upcard, the turn count).
        """
        if game.is_over or game.current_player != player:
            raise ValueError(f"player {player} is not to act (current player "
                             f"{game.current_player}, phase {game.phase.name})")
        obs = observe(game, player)
        return cls.from_observation(obs, game.rules, seat=player,
                                    own_known=game.known_cards[player],
                                    own_passed=game.passed_upcard[player], turns=game.turns)

    # ------------------------------------------------------------------ sampling
    def check(self) -> None:
        """Raise ValueError when the facts cannot come from a real game."""
        unseen = self.unseen.bit_count()
        if self.hidden < 0 or unseen != self.hidden + self.stock_size:
            raise ValueError(f"inconsistent information set: {unseen} unseen cards for "
                             f"{self.hidden} hidden opponent cards and a stock of {self.stock_size}")
        if self.own_known & ~self.hand:
            raise ValueError("own_known must be a subset of the hand")

    def sample(self, rng: np.random.Generator, decline_weight: float = 1.0,
               model: str = "uniform") -> Hand:
        """One full game state consistent with this information set (module docstring).

        ``model="uniform"`` draws the opponent's hidden cards uniformly (after the optional
        ``decline_weight``). ``model="improved"`` starts from such a draw and replays the
        opponent's improvement: for each card it has discarded this hand, it draws an
        unseen card and throws the hidden card whose loss leaves the least deadwood (ties
        at random). Real opponents keep their best cards, so mid-hand their deadwood is far
        below a random hand's (about 15 against 50 for the Expert ten turns in); the
        uniform model makes knocking look much safer than it is. Either model is only a
        prior over the same consistent states: it never uses a hidden card.
        """
        if model not in SAMPLE_MODELS:
            raise ValueError(f"model must be one of {SAMPLE_MODELS}, got {model!r}")
        self.check()
        hidden, stock = self._draw_hidden(rng, decline_weight)
        if model == "improved" and self.hidden > 0:
            hidden, stock = self._improve(hidden, stock, rng)
        # One integer more, not used: worlds were once whole-match games seeded from it, and
        # the draw stays so that the sampler's stream (every world after this one) is kept.
        rng.integers(2**63 - 1)
        return self._build(hidden.tolist(), stock.tolist())

    # ------------------------------------------------------------------ behaviour weights
    @cached_property
    def _opponent_moves(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """The opponent's observed moves: cards it declined, discarded, and picked up (held)."""
        return (tuple(_cards(self.declined_by_opponent)), tuple(_cards(self.opponent_discards)),
                tuple(_cards(self.opponent_known)))

    def surprise(self, opponent_hand: int) -> int:
        """How many of the opponent's observed moves Neller's rule would not have made
        holding ``opponent_hand`` (a world's full opponent hand, known cards included):

        * a declined card (my discard it did not take, the first upcard it passed) that
          melds with the hand: the rule takes such a card;
        * a discarded card that melds with the hand: the rule keeps cards that meld;
        * a picked-up card it still holds that melds with nothing else in the hand: the
          rule takes only cards that meld.

        The hand is today's, not the one held at the time of each move (the order of moves
        is not observed), so this is a cheap stand-in for the likelihood of the history,
        not the exact one. It reads only this information set and the given hand.
        """
        declined, discarded, picked = self._opponent_moves
        count = sum(1 for c in declined if melds_with(c, opponent_hand))
        count += sum(1 for c in discarded if melds_with(c, opponent_hand))
        count += sum(1 for c in picked if not melds_with(c, opponent_hand & ~(1 << c)))
        return count

    def sample_weighted(self, rng: np.random.Generator, n: int, temperature: float,
                        decline_weight: float = 1.0,
                        model: str = "uniform") -> tuple[list[Hand], np.ndarray]:
        """``n`` worlds from :meth:`sample` and their importance weights (summing to 1).

        The weights turn the sampling prior into prior x likelihood of the opponent's moves
        under a noisy Neller rule: each move the rule would not have made with the world's
        hand (:meth:`surprise`) multiplies the world's weight by ``exp(-1 / temperature)``.
        Weighted averages over the worlds then estimate averages under that posterior
        (self-normalised importance sampling); with ``model="uniform"`` and
        ``decline_weight=1`` the posterior is exactly ``exp(-surprise / temperature)`` over the
        consistent hands (``tests/test_determinize.py`` checks it against an enumeration).
        """
        worlds = [self.sample(rng, decline_weight, model) for _ in range(n)]
        opp = 1 - self.seat
        return worlds, behaviour_weights([self.surprise(w.hands[opp]) for w in worlds], temperature)

    def _improve(self, hidden: np.ndarray, stock: np.ndarray,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Replay one greedy stock draw per opponent discard on the sampled hidden cards."""
        held = set(hidden.tolist())
        pool = stock.tolist()
        for _ in range(self.opponent_discards.bit_count()):
            if not pool:
                break
            card = pool.pop(int(rng.integers(len(pool))))
            mask = self.opponent_known | sum(1 << c for c in held) | 1 << card
            after = deadwood_after_discard_mask(mask)
            options = [c for c in (*held, card)]
            best = min(after[c] for c in options)
            ties = [c for c in options if after[c] == best]
            out = ties[int(rng.integers(len(ties)))]
            if out != card:
                held.discard(out)
                held.add(card)
            pool.append(out)
        rest = np.array(pool, dtype=np.int64)
        return np.array(sorted(held), dtype=np.int64), rng.permutation(rest)

    def _draw_hidden(self, rng: np.random.Generator,
                     decline_weight: float) -> tuple[np.ndarray, np.ndarray]:
        """The opponent's hidden cards and the stock (in drawing order), consistently."""
        unseen = np.array(_cards(self.unseen), dtype=np.int64)
        if decline_weight == 1.0 or self.hidden == 0:
            order = rng.permutation(unseen)
            hidden, stock = order[:self.hidden], order[self.hidden:]
        else:
            if not decline_weight > 0:
                raise ValueError(f"decline_weight must be > 0, got {decline_weight!r}")
            suppressed = 0
            for y in _cards(self.declined_by_opponent | self.opponent_discards):
                suppressed |= meld_partners(y)
            w = np.array([decline_weight if suppressed >> int(c) & 1 else 1.0 for c in unseen])
            hidden = rng.choice(unseen, size=self.hidden, replace=False, p=w / w.sum())
            rest = np.setdiff1d(unseen, hidden)
            stock = rng.permutation(rest)
        return hidden, stock

    def _build(self, hidden: list[int], stock: list[int]) -> Hand:
        """The world: a ``Hand`` dealt in id order, then every card placed where the sample
        puts it, carrying the sampled scoreboard (on which a rollout's record names the
        columns the hand decides). It ends with its hand: whatever follows is the caller's
        (the batched engine deals on from a seed it is given)."""
        me, opp = self.seat, 1 - self.seat
        dealer = me if self.is_dealer else opp
        game = Hand(self.rules, dealer=dealer, deck=list(range(NUM_CARDS)))
        opp_hand = self.opponent_known
        for c in hidden:
            opp_hand |= 1 << c
        hands = [0, 0]
        hands[me], hands[opp] = self.hand, opp_hand
        game.hands = hands
        game.stock = list(stock)
        below = _cards(self.pile & ~(1 << self.discard_top)) if self.discard_top >= 0 else []
        game.discard_pile = below + ([self.discard_top] if self.discard_top >= 0 else [])
        upcard = _cards(self.upcard_in_pile)
        game.upcard = upcard[0] if len(upcard) == 1 else -1
        game.knock_limit = self.knock_limit
        game.multiplier = self.multiplier
        game.current_player = me
        game.phase = self.phase
        game.taken_card = self.taken_card
        game.forced_stock_draw = self.forced_stock_draw
        known, discarded, passed = [0, 0], [0, 0], [False, False]
        known[me], known[opp] = self.own_known, self.opponent_known
        discarded[me], discarded[opp] = self.own_discards, self.opponent_discards
        passed[me], passed[opp] = self.own_passed, self.opponent_passed
        game.known_cards, game.discarded, game.passed_upcard = known, discarded, passed
        game.turns = self.turns
        game.hand_number = sum(self.wins) + 1
        game.scoreboard = self._scoreboard()
        game.forget_cached()
        return game

    def _scoreboard(self) -> Scoreboard:
        me, opp = self.seat, 1 - self.seat
        board = Scoreboard(self.rules)
        board.columns[me] = self.own_columns
        board.columns[opp] = self.opponent_columns
        board.column_winners = [None if w is None else (me if w == 0 else opp)
                                for w in self.column_winners]
        wins = [0, 0]
        wins[me], wins[opp] = self.wins
        board.wins = wins
        board.decided_order = [j for j, w in enumerate(board.column_winners) if w is not None]
        return board


def determinize(game: Hand, player: int, rng: np.random.Generator, n: int = 1,
                decline_weight: float = 1.0, model: str = "uniform") -> list[Hand]:
    """``n`` full states consistent with what ``player`` (about to act) knows in ``game``.

    Shorthand for ``InfoSet.from_game(game, player).sample(rng)`` repeated ``n`` times; only
    the player's observation and its own moves are read (see :meth:`InfoSet.from_game`).
    """
    info = InfoSet.from_game(game, player)
    return [info.sample(rng, decline_weight, model) for _ in range(n)]


def behaviour_weights(surprises: list[int] | np.ndarray, temperature: float) -> np.ndarray:
    """Normalised weights ``exp(-surprise / temperature)`` (see :meth:`InfoSet.surprise`).

    Shifted by the smallest surprise before exponentiating, so a low temperature never
    underflows every weight to zero.
    """
    if not (isinstance(temperature, (int, float)) and temperature > 0 and np.isfinite(temperature)):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    s = np.asarray(surprises, dtype=np.float64)
    if s.size == 0:
        raise ValueError("no worlds to weight")
    w = np.exp(-(s - s.min()) / float(temperature))
    return w / w.sum()
