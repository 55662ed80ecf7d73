"""The state machine of Hollywood Gin: one hand (deal, first upcard, turns, showdown).

``Hand`` plays one hand between players 0 and 1, dealt from a deck it is given, and records
its result onto the scoreboard it is given (or none). Every table of every format plays
``Hand``s; a match of any format, the duel included, is :class:`hgin_env.match.Match`,
which draws every deal from its seeded generator and deals each ``Hand`` (a hand draws
nothing at random). Also here: the seed rules (:func:`checked_seed`, :func:`draw_seed`) and
the cut for the first deal. No RL framework is imported here: the environment layer wraps
these classes.
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Self

import numpy as np

from . import actions as A
from .cards import NUM_CARDS, NUM_RANKS, RANK_VALUES, as_card_ids, format_cards, mask_to_cards
from .codes import Phase
from .melds import cached_after_discard, cached_deadwood
from .rules import Rules, get_rules
from .scoring import DEAD_HAND, HandResult, Scoreboard, settle

# Enum members as module constants: ``Phase.DRAW`` is a slow attribute lookup on Python 3.11.
_FIRST_UPCARD = Phase.FIRST_UPCARD
_DRAW = Phase.DRAW
_DISCARD = Phase.DISCARD
_HAND_OVER = Phase.HAND_OVER
_MATCH_OVER = Phase.MATCH_OVER
_DISCARD_BASE = A.DISCARD
_KNOCK_BASE = A.KNOCK
_UPCARD_OPTIONS = (A.TAKE_DISCARD, A.PASS)


#: The seeds a game, a match or a saved match may hold.
MAX_SEED = 2**63 - 1
#: The smallest seed :func:`draw_seed` draws: the drawn seeds stay clear of the small ones
#: people choose, so a chosen seed never collides with a drawn one by accident.
MIN_DRAWN_SEED = 2**32


def checked_seed(seed: object) -> int | None:
    """``seed`` as a game seed: None (one is drawn) or a non-negative integer, Python or
    numpy. Anything else raises ``TypeError`` (a str, float or bool: nothing is converted
    silently) or ``ValueError`` (a negative one), naming ``seed``; the one check of the seed
    of a ``Match`` and the environments' ``reset``."""
    if seed is None:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be an integer or None, got {seed!r} ({type(seed).__name__})")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return int(seed)


def draw_seed() -> int:
    """THE seed of a game or match whose seed nobody chose (``Match`` without one,
    ``hgin play``, the web table; recorded, so it replays): from the operating system's
    random source (:mod:`secrets`), uniform over ``MIN_DRAWN_SEED .. MAX_SEED``, about 63
    bits. The seed fixes every deal of the match, so whoever learns it learns every hidden
    card; with 2**63 candidates, a player's first hand and upcard cannot single it out by
    trying seeds (at 34 µs a candidate in Python, about 10 million core-years)."""
    return MIN_DRAWN_SEED + secrets.randbelow(MAX_SEED + 1 - MIN_DRAWN_SEED)


def cut_for_deal(rng: np.random.Generator, players: int) -> int:
    """Each of ``players`` players cuts a card; the lowest rank deals; a tie for the lowest
    cuts again (RULES.md §4). The draws of every format's cut (``Match``, the
    batched engine)."""
    while True:
        ranks = [int(c) % NUM_RANKS for c in rng.choice(NUM_CARDS, size=players, replace=False)]
        low = min(ranks)
        if ranks.count(low) == 1:
            return ranks.index(low)


def draw_first_dealer(how: str, rng: np.random.Generator, players: int) -> int:
    """The first dealer among ``players``: ``how`` is ``Rules.first_dealer`` ("random":
    uniform, "cut": :func:`cut_for_deal`)."""
    if how == "random":
        return int(rng.integers(players))
    return cut_for_deal(rng, players)


def checked_dealer(dealer: object, name: str = "dealer") -> int:
    """``dealer`` as a player of a two-player hand, 0 or 1; anything else raises
    ``ValueError`` naming ``name``."""
    if isinstance(dealer, bool | np.bool_) or dealer not in (0, 1):
        raise ValueError(f"{name} must be 0 or 1, got {dealer!r}")
    return int(dealer)  # type: ignore[call-overload]


#: Every card id once: what a deck to deal holds.
_FULL_DECK = frozenset(range(NUM_CARDS))


def stacked_deck(deck: list[int] | str) -> list[int]:
    """A deck to deal (52 card ids or text) as a list of ids, each card once, else
    ``ValueError``."""
    if isinstance(deck, list) and len(deck) == NUM_CARDS and all(type(c) is int for c in deck) \
            and set(deck) == _FULL_DECK:  # a match's own draw: checked in a third of the time
        return list(deck)
    ids = list(as_card_ids(deck))
    if sorted(ids) != list(range(NUM_CARDS)):
        raise ValueError(f"a stacked deck must hold all 52 cards once, got {len(ids)} cards")
    return ids


@dataclass(frozen=True)
class HandRecord:
    """One finished hand, as the table saw it (players are 0/1)."""

    number: int
    dealer: int
    upcard: int
    knock_limit: int
    multiplier: int
    #: Player who knocked / went gin (None for a dead hand).
    knocker: int | None
    #: Player who won the hand (None for a dead hand).
    winner: int | None
    points: int
    result: HandResult
    #: Card discarded face down with the knock (None for gin via big gin or dead hand).
    knock_discard: int | None
    #: Both players' cards at the end of the hand (10 each; 11 for a big-gin knocker).
    final_hands: tuple[tuple[int, ...], tuple[int, ...]]
    #: Columns of the hand's scoreboard this result decided: () without one (a format's
    #: table, whose match's sheet decides them; a partnership round's record names them).
    columns_decided: tuple[int, ...]
    turns: int

    @property
    def kind(self) -> str:
        return self.result.kind

    def to_dict(self) -> dict:
        return {
            "number": self.number, "dealer": self.dealer, "upcard": self.upcard,
            "knock_limit": self.knock_limit, "multiplier": self.multiplier,
            "knocker": self.knocker, "winner": self.winner, "points": self.points,
            "kind": self.kind, "result": self.result.to_dict(),
            "knock_discard": self.knock_discard,
            "final_hands": [list(h) for h in self.final_hands],
            "columns_decided": list(self.columns_decided), "turns": self.turns,
        }


@dataclass
class Hand:
    """One hand of Hollywood Gin between players 0 and 1.

    ``dealer`` deals ``deck`` (52 card ids or text): cards 0..19 go alternately to the
    non-dealer and the dealer, card 20 is the upcard, the rest is the stock in drawing
    order. Use ``legal_actions()`` / ``legal_action_mask()`` and ``apply(action)``; the
    action ids are in :mod:`hgin_env.actions`. When the hand ends, ``apply`` returns its
    :class:`HandRecord`, also kept in ``record``; the result is recorded onto
    ``scoreboard`` when one is given (a duel's sheet: the record then names the columns it
    decided), and the phase is HAND_OVER, or MATCH_OVER when that sheet is decided. A hand
    draws nothing at random: its deal is the deck.
    """

    rules: Rules | str | dict | None
    dealer: int
    deck: list[int] | str | None
    hand_number: int = 1
    scoreboard: Scoreboard | None = None

    # State (filled by ``_deal``)
    hands: list[int] = field(init=False)
    stock: list[int] = field(init=False)
    discard_pile: list[int] = field(init=False)
    current_player: int = field(init=False)
    phase: Phase = field(init=False)
    upcard: int = field(init=False)
    knock_limit: int = field(init=False)
    multiplier: int = field(init=False)
    #: Card taken from the discard pile this turn (may not be discarded), else -1.
    taken_card: int = field(init=False, default=-1)
    #: After both pass the first upcard the non-dealer must draw from the stock.
    forced_stock_draw: bool = field(init=False, default=False)
    #: Cards each player took from the discard pile and still holds (public knowledge).
    known_cards: list[int] = field(init=False)
    #: Cards each player discarded this hand (public knowledge).
    discarded: list[int] = field(init=False)
    #: Which players passed the first upcard this hand.
    passed_upcard: list[bool] = field(init=False)
    turns: int = field(init=False, default=0)
    #: The finished hand's record (None while it runs).
    record: HandRecord | None = field(init=False, default=None)
    #: Hand results recorded onto ``scoreboard`` so far: the observer's context rows read
    #: the sheet, so they are cached per this count (they change only when it grows).
    results_recorded: int = field(init=False, default=0)
    action_history: list[int] = field(init=False)
    _after_discard: dict[int, int] | None = field(init=False, default=None, repr=False)
    _legal: list[int] | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.rules = get_rules(self.rules)
        if self.deck is None:
            raise ValueError("a Hand is dealt from a deck: pass deck= (52 card ids or text)")
        self.dealer = checked_dealer(self.dealer)
        self.action_history = []
        self._deal(stacked_deck(self.deck))

    # ------------------------------------------------------------------ dealing
    def _deal(self, deck: list[int]) -> None:
        """Deal ``deck`` (``dealer`` deals) and reset the hand's state."""
        non_dealer = 1 - self.dealer
        self.hands = [0, 0]
        for i in range(20):  # one at a time, alternating, non-dealer first
            player = non_dealer if i % 2 == 0 else self.dealer
            self.hands[player] |= 1 << deck[i]
        self.upcard = deck[20]
        self.discard_pile = [self.upcard]
        self.stock = deck[:20:-1]  # stock.pop() draws deck[21], then deck[22], ...
        rank = self.upcard % NUM_RANKS
        if self.rules.oklahoma:
            limit = RANK_VALUES[rank]
            if rank == 0 and self.rules.oklahoma_ace_gin_only:
                limit = 0
            self.knock_limit = limit
            self.multiplier = self.rules.spade_multiplier if self.upcard // NUM_RANKS == 3 else 1
        else:
            self.knock_limit = self.rules.knock_limit
            self.multiplier = 1
        self.current_player = non_dealer
        # Without the offer (004) the non-dealer starts with a normal draw: stock or upcard.
        self.phase = _FIRST_UPCARD if self.rules.first_upcard_offer else _DRAW
        self.taken_card = -1
        self.forced_stock_draw = False
        self.known_cards = [0, 0]
        self.discarded = [0, 0]
        self.passed_upcard = [False, False]
        self.turns = 0
        self.record = None
        self.forget_cached()

    # ------------------------------------------------------------------ queries
    @property
    def is_over(self) -> bool:
        return self.phase >= _HAND_OVER  # HAND_OVER or MATCH_OVER

    @property
    def discard_top(self) -> int | None:
        return self.discard_pile[-1] if self.discard_pile else None

    def hand_cards(self, player: int) -> tuple[int, ...]:
        return mask_to_cards(self.hands[player])

    def deadwood_after_discard(self) -> dict[int, int]:
        """For the acting player's 11 cards: card -> min deadwood without it (cached per turn)."""
        if self.phase != _DISCARD:
            raise ValueError("deadwood after discard is only defined in the discard phase")
        if self._after_discard is None:
            self._after_discard = cached_after_discard(self.hands[self.current_player])
        return self._after_discard

    def legal_actions(self) -> list[int]:
        """Legal action ids of the acting player (computed once per state)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return list(self._legal)

    def _compute_legal(self) -> list[int]:
        phase = self.phase
        if phase == _DISCARD:
            after = self.deadwood_after_discard()
            limit = self.knock_limit
            taken = self.taken_card
            out = [_DISCARD_BASE + card for card in after if card != taken]
            out += [_KNOCK_BASE + card for card, dw in after.items() if dw <= limit and card != taken]
            if self.rules.big_gin_bonus is not None and \
                    cached_deadwood(self.hands[self.current_player]) == 0:
                out.append(A.BIG_GIN)
            return out
        if phase == _DRAW:
            if self.forced_stock_draw or not self.discard_pile:
                return [A.DRAW_STOCK]
            return [A.DRAW_STOCK, A.TAKE_DISCARD]
        if phase == _FIRST_UPCARD:
            return list(_UPCARD_OPTIONS)
        return []

    def legal_action_mask(self) -> np.ndarray:
        mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
        mask[self.legal_actions()] = 1
        return mask

    # ------------------------------------------------------------------ transitions
    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal now (no message; :meth:`check_legal` raises one)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return action in self._legal

    def check_legal(self, action: int, player: str | None = None) -> None:
        """Raise ``ValueError`` unless ``action`` is legal now, naming it, the acting player
        (``player``: the name the caller knows it by, e.g. a match's seat; default
        ``player <current_player>``) and the legal actions."""
        if self._legal is None:
            self._legal = self._compute_legal()
        legal = self._legal
        if action not in legal:
            if self.is_over:
                raise ValueError(f"the game is over ({self.phase.name}); no action is legal")
            names = ", ".join(f"{a} ({A.describe_action(a)})" for a in sorted(legal))
            who = player or f"player {self.current_player}"
            raise ValueError(f"illegal action {action!r} ({A.describe_action(int(action))}) "
                             f"for {who} in phase {self.phase.name}; legal: {names}")

    def apply(self, action: int, checked: bool = False) -> HandRecord | None:
        """Apply the acting player's action; returns the hand's record when it ends it.

        An illegal action raises ``ValueError`` (:meth:`check_legal`) and changes nothing;
        ``checked=True`` says the caller has checked it already (``Match.apply``, the
        environments: each action is checked once, by the outermost layer), and it is
        trusted."""
        if not checked:
            self.check_legal(action)
        action = int(action)
        self._legal = None
        self.action_history.append(action)
        p = self.current_player
        if action == A.PASS:
            self.passed_upcard[p] = True
            if p != self.dealer:
                self.current_player = self.dealer
            else:
                self.current_player = 1 - self.dealer
                self.phase = _DRAW
                self.forced_stock_draw = True
            return None
        if action == A.DRAW_STOCK:
            card = self.stock.pop()
            self.hands[p] |= 1 << card
            self.taken_card = -1
            self.forced_stock_draw = False
            self._start_discard()
            return None
        if action == A.TAKE_DISCARD:
            card = self.discard_pile.pop()
            self.hands[p] |= 1 << card
            self.known_cards[p] |= 1 << card
            self.taken_card = card
            self._start_discard()
            return None
        if action == A.BIG_GIN:
            return self._showdown(p, None)
        card = action - _KNOCK_BASE if action >= _KNOCK_BASE else action - _DISCARD_BASE
        self.hands[p] &= ~(1 << card)
        self.known_cards[p] &= ~(1 << card)
        if action >= _KNOCK_BASE:
            return self._showdown(p, card)
        self.discarded[p] |= 1 << card
        self.discard_pile.append(card)
        self._after_discard = None
        if len(self.stock) <= self.rules.dead_hand_stock or \
                (self.rules.max_turns and self.turns >= self.rules.max_turns):
            return self._end_hand(DEAD_HAND, knocker=None, knock_discard=None)
        self.current_player = 1 - p
        self.phase = _DRAW
        self.taken_card = -1
        return None

    def _start_discard(self) -> None:
        self.phase = _DISCARD
        self.turns += 1
        self._after_discard = None

    def _showdown(self, knocker: int, knock_discard: int | None) -> HandRecord:
        result = settle(mask_to_cards(self.hands[knocker]), mask_to_cards(self.hands[1 - knocker]),
                        self.rules, knock_limit=self.knock_limit, multiplier=self.multiplier)
        return self._end_hand(result, knocker=knocker, knock_discard=knock_discard)

    def _end_hand(self, result: HandResult, knocker: int | None,
                  knock_discard: int | None) -> HandRecord:
        sheet = self.scoreboard
        decided: list[int] = []
        winner = None if knocker is None else knocker if result.winner == "knocker" else 1 - knocker
        if sheet is not None:
            if winner is None:
                sheet.record_dead()
            else:
                decided = sheet.record(winner, result.points)
            self.results_recorded += 1
        record = HandRecord(
            number=self.hand_number, dealer=self.dealer, upcard=self.upcard,
            knock_limit=self.knock_limit, multiplier=self.multiplier, knocker=knocker,
            winner=winner, points=result.points, result=result, knock_discard=knock_discard,
            final_hands=(self.hand_cards(0), self.hand_cards(1)),
            columns_decided=tuple(decided), turns=self.turns,
        )
        self.record = record
        self._after_discard = None
        decided_match = sheet is not None and sheet.match_over
        self.phase = _MATCH_OVER if decided_match else _HAND_OVER
        return record

    def end_match(self) -> None:
        """Mark the finished hand as the match's last (MATCH_OVER): for a match that ended
        it by its hand limit (:class:`~hgin_env.match.Match`), not by its sheet."""
        if not self.is_over:
            raise ValueError("the hand is still running: only a finished hand ends a match")
        self.phase = _MATCH_OVER

    # ------------------------------------------------------------------ misc
    def forget_cached(self) -> None:
        """Forget what is computed once per state (the legal moves, the deadwood after each
        discard): for a caller that edits the state from outside (a sampled world's hands, a
        rebuilt past decision's acting player)."""
        self._after_discard = None
        self._legal = None

    def clone(self) -> Self:
        return copy.deepcopy(self)

    def card_count_ok(self) -> bool:
        """All 52 cards are somewhere exactly once (for invariant checks)."""
        seen = self.hands[0] | self.hands[1]
        count = self.hands[0].bit_count() + self.hands[1].bit_count()
        for c in self.stock + self.discard_pile:
            seen |= 1 << c
        count += len(self.stock) + len(self.discard_pile)
        if self.is_over and self.record is not None and self.record.knock_discard is not None:
            seen |= 1 << self.record.knock_discard
            count += 1
        return count == NUM_CARDS and seen == (1 << NUM_CARDS) - 1

    def describe(self) -> str:
        """One-line summary (for logs)."""
        return (f"hand {self.hand_number} dealer {self.dealer} phase {self.phase.name} "
                f"player {self.current_player} hand [{format_cards(self.hand_cards(self.current_player))}] "
                f"top {format_cards([self.discard_top]) if self.discard_pile else '-'} "
                f"stock {len(self.stock)}")


def build_deck(non_dealer: Iterable[int] | str, dealer: Iterable[int] | str,
               upcard: int | str, stock: Iterable[int] | str = ()) -> list[int]:
    """A stacked deck for ``Hand(deck=...)`` or ``Match(deck=...)``: the two hands, the upcard, then the stock's
    top cards in drawing order; the remaining cards follow in id order."""
    nd, d = as_card_ids(non_dealer), as_card_ids(dealer)
    up = as_card_ids(upcard)[0] if isinstance(upcard, str) else int(upcard)
    top = list(as_card_ids(stock))
    if len(nd) != 10 or len(d) != 10:
        raise ValueError("each hand needs 10 cards")
    used = list(nd) + list(d) + [up] + top
    if len(set(used)) != len(used):
        raise ValueError("a card appears twice in the stacked deck")
    deal = [c for pair in zip(nd, d, strict=True) for c in pair]
    rest = [c for c in range(NUM_CARDS) if c not in set(used)]
    return deal + [up] + top + rest
