"""The OpenSpiel bridge: one deal in both engines, and whole hands of OpenSpiel's
``gin_rummy`` with our agents or OpenSpiel's bots in the seats.

* :class:`Deal` is one hand's cards (both hands, the upcard, the stock in drawing order):
  from a :class:`~hgin_env.game.Hand` about to play, or from an OpenSpiel state's
  chance outcomes, and back to either (``deal.game(rules)``, ``deal.openspiel_state()``).
* :func:`play_openspiel_hand` plays a deal at OpenSpiel's table under its rules: each seat is
  an :class:`AgentSeat` (any ``make_agent`` agent) or a :class:`BotSeat` (OpenSpiel's
  ``SimpleGinRummyBot``). An agent sees the observation dict of a ``Hand`` that follows the
  OpenSpiel state move by move (the *mirror*), exactly as in our environment; its moves are
  translated, and the parts of the hand our engine plays for it (laying melds, laying off)
  are played from what the table shows. :mod:`arena.crosscheck` plays the same deals the
  other way round, our engine leading, to compare the two.

The card, meld and rules vocabulary is :mod:`agents.openspiel`; the rules that still differ
are in docs/openspiel.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.openspiel import (
    OS_DRAW_STOCK,
    OS_DRAW_UPCARD,
    OS_KNOCK,
    OS_MAX_UPCARD_DRAWS,
    OS_PASS,
    from_openspiel_card,
    load_openspiel_game,
    meld_actions,
    meld_of_openspiel_id,
    new_openspiel_state,
    pyspiel_module,
    rules_from_params,
    to_openspiel_card,
)
from hgin_env import actions as A
from hgin_env.cards import NUM_CARDS, NUM_RANKS, RANK_VALUES, cards_to_mask
from hgin_env.game import Hand, Phase
from hgin_env.match import Match
from hgin_env.melds import best_melds, deadwood_after_discard_mask, min_deadwood
from hgin_env.observation import observe
from hgin_env.rules import Rules, get_rules
from hgin_env.scoring import Scoreboard, defender_reply

HAND_SIZE = 10


# --------------------------------------------------------------------------- deals
@dataclass(frozen=True)
class Deal:
    """One hand's cards in OUR ids: player 0 (the non-dealer, who acts first) and player 1
    (the dealer), the upcard, and the stock in drawing order (all 31 when nothing is drawn)."""

    hands: tuple[tuple[int, ...], tuple[int, ...]]
    upcard: int
    stock: tuple[int, ...]

    def __post_init__(self) -> None:
        if any(len(h) != HAND_SIZE for h in self.hands):
            raise ValueError(f"each hand of a deal needs {HAND_SIZE} cards")
        cards = [*self.hands[0], *self.hands[1], self.upcard, *self.stock]
        if sorted(cards) != list(range(NUM_CARDS)):
            raise ValueError("a deal must hold each of the 52 cards once")

    @classmethod
    def from_game(cls, game: Hand) -> Deal:
        """The deal of the hand ``game`` is about to play (no move made in it yet)."""
        fresh = game.phase == (Phase.FIRST_UPCARD if game.rules.first_upcard_offer else Phase.DRAW)
        if not fresh or game.turns or any(game.passed_upcard) or game.discard_pile != [game.upcard]:
            raise ValueError("a deal is taken at the start of a hand, before its first move")
        dealer = game.dealer
        return cls((game.hand_cards(1 - dealer), game.hand_cards(dealer)), game.upcard,
                   tuple(reversed(game.stock)))

    @classmethod
    def from_seed(cls, seed: int, rules: Rules | str | dict | None = None) -> Deal:
        """The deal of ``Match(rules, seed, single_hand=True, first_dealer=1)``: our engine's
        shuffle for that seed."""
        return cls.from_game(Match(rules, seed=seed, single_hand=True, first_dealer=1).current_game)

    @classmethod
    def from_openspiel(cls, state: Any) -> Deal:
        """The deal of an OpenSpiel ``gin_rummy`` state from its chance outcomes: the 21 that
        deal, then each stock card drawn so far; the cards still in its stock follow in id
        order (any order is a continuation of that state)."""
        dealt = [from_openspiel_card(pa.action) for pa in state.full_history() if pa.player < 0]
        if len(dealt) < 2 * HAND_SIZE + 1:
            raise ValueError(f"the OpenSpiel state has dealt {len(dealt)} of its 21 cards")
        rest = sorted(set(range(NUM_CARDS)) - set(dealt))
        return cls((tuple(dealt[:HAND_SIZE]), tuple(dealt[HAND_SIZE:2 * HAND_SIZE])), dealt[2 * HAND_SIZE],
                   tuple(dealt[2 * HAND_SIZE + 1:]) + tuple(rest))

    @property
    def deck(self) -> list[int]:
        """The deck ``Hand(deck=...)`` deals this from (cards alternate, non-dealer first)."""
        return [c for pair in zip(*self.hands, strict=True) for c in pair] + [self.upcard, *self.stock]

    def game(self, rules: Rules | str | dict | None = None) -> Hand:
        """One hand of ours dealt from this deal, onto an empty scoreboard (as a one-hand
        duel's): player 1 deals, so the players are numbered as in OpenSpiel."""
        rules = get_rules(rules)
        return Hand(rules, dealer=1, deck=self.deck, scoreboard=Scoreboard(rules))

    def chance_outcomes(self) -> list[int]:
        """OpenSpiel's chance outcomes for this deal (its card ids): player 0's 10 cards, player
        1's, the upcard, then one per stock draw in order."""
        return [to_openspiel_card(c) for c in (*self.hands[0], *self.hands[1], self.upcard, *self.stock)]

    def openspiel_state(self, params: Mapping[str, Any] | None = None) -> Any:
        """A fresh OpenSpiel state with this deal dealt (the 21 chance outcomes applied): the
        first upcard is on offer to player 0. Stock draws are answered with
        ``deal.stock`` in order (:func:`answer_chance`)."""
        state = new_openspiel_state(params)
        for card in self.chance_outcomes()[:2 * HAND_SIZE + 1]:
            state.apply_action(card)
        return state


def answer_chance(state: Any, deal: Deal) -> None:
    """Apply the stock card an OpenSpiel chance node draws: the next one of ``deal.stock``."""
    drawn = sum(1 for pa in state.full_history() if pa.player < 0) - (2 * HAND_SIZE + 1)
    state.apply_action(to_openspiel_card(deal.stock[drawn]))


def phase_name(state: Any) -> str:
    """The phase of an OpenSpiel state in lower case: ``first_upcard``, ``draw``, ``discard``,
    ``knock``, ``layoff``, ``wall``, ``deal``, ``game_over``."""
    return state.current_phase().name.lower()


def laid_melds(state: Any, player: int) -> list[tuple[int, ...]]:
    """The melds ``player`` has laid on the OpenSpiel table, in OUR card ids."""
    return [meld_of_openspiel_id(m) for m in state.layed_melds()[player]]


def hand_of(state: Any, player: int) -> tuple[int, ...]:
    """The cards ``player`` holds in an OpenSpiel state, in OUR ids (increasing)."""
    return tuple(sorted(from_openspiel_card(c) for c in state.hands()[player]))


# --------------------------------------------------------------------------- showdown moves
def knocker_actions(hand: Sequence[int]) -> list[int]:
    """A knocker's melds on OpenSpiel's table, then its pass: the minimum-deadwood
    arrangement of the 10 cards it keeps (what the table shows it, and no more: our engine's
    own showdown picks the knocker's arrangement knowing the defender's cards)."""
    melds, _ = best_melds(tuple(hand))
    return [*meld_actions(melds), OS_PASS]


def _runs_of_layoffs(layoffs: Sequence[tuple[int, int]], knocker_melds: Sequence[Sequence[int]]) -> list[list[int]]:
    """The laid-off cards grouped by where they go: one group per meld end (a set's 4th card
    is a group of one)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for card, index in layoffs:
        meld = knocker_melds[index]
        side = 1 if card > max(meld) else 0
        groups.setdefault((index, side), []).append(card)
    return list(groups.values())


def defender_plan(knocker_melds: Sequence[Sequence[int]], hand: Sequence[int],
                  gin: bool) -> tuple[list[int], list[tuple[int, ...]], int]:
    """The defender's best reply as OpenSpiel can lay it: cards to lay off (in order), its own
    melds, its deadwood (:func:`~hgin_env.scoring.defender_reply`, our one search).

    OpenSpiel lays off at most two cards on one end of a run (``GinRummyUtils::AllLayoffs``
    extends a run by earlier lay-offs only next to its original ends). Three or more cards
    off one end are a run of their own, so the reply melds them instead: the same deadwood."""
    dw, layoffs, own = defender_reply(knocker_melds, hand, gin=gin)
    long = {c for group in _runs_of_layoffs(layoffs, knocker_melds) if len(group) >= 3 for c in group}
    if not long:
        return [c for c, _ in layoffs], list(own), dw
    laid = [c for c, _ in layoffs if c not in long]
    melds, dw_own = best_melds(tuple(c for c in hand if c not in laid))
    assert dw_own == dw, "melding the long lay-off runs must keep the deadwood"
    return laid, [tuple(m) for m in melds], dw_own


# --------------------------------------------------------------------------- seats
class BotSeat:
    """OpenSpiel's ``SimpleGinRummyBot`` in one seat of OpenSpiel's table."""

    name = "openspiel:simple"

    def __init__(self) -> None:
        self._bots: dict[tuple[tuple, int], Any] = {}
        self._bot: Any = None

    def start(self, player: int, game: Any) -> None:
        key = (tuple(sorted(game.get_parameters().items())), player)
        if key not in self._bots:
            self._bots[key] = pyspiel_module().make_simple_gin_rummy_bot(game.get_parameters(), player)
        self._bot = self._bots[key]
        self._bot.restart()

    def act(self, state: Any, mirror: Hand | None) -> int:
        return int(self._bot.step(state))


@dataclass
class SeatCounts:
    """What an :class:`AgentSeat` had to do differently from our rules, per kind."""

    #: knocks the agent chose that OpenSpiel refused (its 11-card deadwood shortcut): discarded
    refused_knocks: int = 0
    #: knocks at OpenSpiel's wall (stock at 2), a move our rules do not have
    wall_knocks: int = 0


class AgentSeat:
    """Any of our agents in one seat of OpenSpiel's table.

    Decisions on the upcard, the draw and the discard are the agent's own, on the mirror's
    observation dict. The rest is played from the table: as the knocker, the melds of its
    minimum-deadwood arrangement; as the defender, its best lay-offs and melds; at
    OpenSpiel's wall, a knock whenever OpenSpiel allows one (as OpenSpiel's bot does), with
    the discard that leaves the least deadwood."""

    def __init__(self, agent: Any, name: str = "agent") -> None:
        self.agent = agent
        self.name = name
        self.counts = SeatCounts()
        self.player = 0
        self._plan: list[int] = []

    def start(self, player: int, game: Any) -> None:
        self.player = player
        self._plan = []

    def act(self, state: Any, mirror: Hand | None) -> int:
        legal = state.legal_actions()
        phase = phase_name(state)
        while self._plan:
            action = self._plan.pop(0)
            if action in legal:
                return action
            if not (phase == "layoff" and action < NUM_CARDS):
                raise RuntimeError(f"{self.name}'s planned OpenSpiel action {action} is not legal in {phase}")
            # A lay-off OpenSpiel refuses (see defender_plan): the card stays in the hand.
        if phase in ("first_upcard", "draw", "discard"):
            return self._decide(state, mirror, legal)
        if phase == "wall":
            if OS_KNOCK in legal:
                self.counts.wall_knocks += 1
                return OS_KNOCK
            return OS_PASS
        hand = hand_of(state, self.player)
        if phase == "knock":
            if len(hand) == HAND_SIZE + 1:  # after a wall knock: the discard is ours to pick
                after = deadwood_after_discard_mask(cards_to_mask(hand))
                options = [from_openspiel_card(a) for a in legal if a < NUM_CARDS]
                card = min(options, key=lambda c: (after[c], -RANK_VALUES[c % NUM_RANKS], -c))
                self._plan = knocker_actions([c for c in hand if c != card])
                return to_openspiel_card(card)
            self._plan = knocker_actions(hand)
            return self._plan.pop(0)
        if phase == "layoff":
            gin = state.finished_layoffs()  # set before the defender acts only against gin
            layoffs, own, _ = defender_plan(laid_melds(state, 1 - self.player), hand, gin)
            after_layoffs = [] if gin else [*(to_openspiel_card(c) for c in layoffs), OS_PASS]
            self._plan = [*after_layoffs, *meld_actions(own), OS_PASS]
            return self.act(state, mirror)
        raise RuntimeError(f"{self.name} has no move in OpenSpiel's phase {phase!r}")

    def _decide(self, state: Any, mirror: Hand | None, legal: list[int]) -> int:
        if mirror is None or mirror.is_over or mirror.current_player != self.player:
            raise RuntimeError(f"{self.name} cannot see the table: the mirror game stopped following "
                               "OpenSpiel's hand")
        action = int(self.agent(observe(mirror, self.player)))
        if action == A.TAKE_DISCARD:
            return OS_DRAW_UPCARD
        if action == A.DRAW_STOCK:
            return OS_DRAW_STOCK
        if action == A.PASS:
            return OS_PASS
        card = A.action_card(action)
        if card is None:
            raise ValueError(f"{self.name} played {A.describe_action(action)}, which OpenSpiel has no move for")
        if A.is_knock(action):
            if OS_KNOCK in legal:
                self._plan = [to_openspiel_card(card), *knocker_actions([c for c in mirror.hand_cards(self.player)
                                                                         if c != card])]
                return OS_KNOCK
            self.counts.refused_knocks += 1  # OpenSpiel's 11-card shortcut: the card is thrown
        return to_openspiel_card(card)


# --------------------------------------------------------------------------- one hand
@dataclass
class HandOutcome:
    """How a hand at OpenSpiel's table ended, as OpenSpiel scored it."""

    returns: tuple[float, float]
    #: who knocked (None: nobody)
    knocker: int | None
    #: ``gin``, ``knock`` (the knocker scores), ``undercut``, ``tie`` (equal deadwood: 0 in
    #: OpenSpiel); nobody knocked: ``wall`` (the wall was passed), ``draw_cap`` (the 50th
    #: upcard draw), ``repeat`` (the same card taken and thrown twice in a row)
    kind: str
    deadwood: tuple[int, int]
    #: the defender's deadwood had it laid its melds (the bot lays none against gin)
    defender_min_deadwood: int | None = None
    moves: int = 0
    #: the mirror's moves: why it stopped following, if it did before the showdown
    mirror_stopped: str = ""


def _follow(mirror: Hand, phase: str, action: int) -> str:
    """Apply an OpenSpiel move to the mirror game; a reason when it cannot (else "")."""
    if mirror.is_over or phase not in ("first_upcard", "draw", "discard"):
        return ""
    if action == OS_KNOCK:
        return "knock"  # the showdown is OpenSpiel's; the mirror is not needed any more
    ours = {OS_DRAW_UPCARD: A.TAKE_DISCARD, OS_DRAW_STOCK: A.DRAW_STOCK, OS_PASS: A.PASS}.get(action)
    if ours is None:
        ours = A.DISCARD + from_openspiel_card(action)
    if ours not in mirror.legal_actions():
        return f"{A.describe_action(ours)} is not a legal move of ours"
    mirror.apply(ours)
    return ""


def outcome_of(state: Any) -> HandOutcome:
    """The :class:`HandOutcome` of a finished OpenSpiel hand."""
    returns = tuple(float(r) for r in state.returns())
    knocked = state.knocked()
    deadwood = tuple(int(d) for d in state.deadwood())
    knocker = 0 if knocked[0] else 1 if knocked[1] else None
    if knocker is None:
        # Nobody knocked: the wall was passed, or the upcard was drawn OS_MAX_UPCARD_DRAWS times
        # (a first-upcard take counts there too), or a player took and threw the same card twice.
        takes = sum(1 for a in state.history() if a == OS_DRAW_UPCARD)
        kind = "wall" if state.stock_size() == 2 else "draw_cap" if takes >= OS_MAX_UPCARD_DRAWS else "repeat"
        return HandOutcome(returns, None, kind, deadwood)
    if deadwood[knocker] == 0:
        kind = "gin"
    else:
        kind = "knock" if returns[knocker] > 0 else "undercut" if returns[knocker] < 0 else "tie"
    defender = 1 - knocker
    own = tuple(c for m in laid_melds(state, defender) for c in m) + hand_of(state, defender)
    layoffs = tuple(from_openspiel_card(c) for c in state.layoffs())
    defender_min = min_deadwood(tuple(c for c in own if c not in layoffs))
    return HandOutcome(returns, knocker, kind, deadwood, defender_min_deadwood=defender_min)


def play_openspiel_hand(deal: Deal, seats: Sequence[AgentSeat | BotSeat],
                        params: Mapping[str, Any] | None = None) -> HandOutcome:
    """Play one deal at OpenSpiel's table under its rules (``params``: its game parameters),
    ``seats[p]`` playing OpenSpiel's player ``p`` (0 acts first, as our non-dealer)."""
    if len(seats) != 2:
        raise ValueError(f"a hand has two seats, not {len(seats)}")
    game = load_openspiel_game(params)
    state = deal.openspiel_state(params)
    mirror: Hand | None = deal.game(rules_from_params(params))
    stopped = ""
    for player, seat in enumerate(seats):
        seat.start(player, game)
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            answer_chance(state, deal)
            continue
        seat = seats[state.current_player()]
        phase = phase_name(state)
        action = seat.act(state, mirror)
        if action not in state.legal_actions():
            raise RuntimeError(f"{seat.name} chose OpenSpiel action {action} "
                               f"({state.action_to_string(state.current_player(), action)}), not legal in {phase}")
        if mirror is not None:
            why = _follow(mirror, phase, action)
            if why:
                stopped, mirror = why, None
        state.apply_action(action)
        moves += 1
    outcome = outcome_of(state)
    outcome.moves = moves
    outcome.mirror_stopped = "" if stopped == "knock" else stopped
    return outcome


__all__ = ["HAND_SIZE", "AgentSeat", "BotSeat", "Deal", "HandOutcome", "SeatCounts",
           "answer_chance", "defender_plan", "hand_of", "knocker_actions", "laid_melds", "outcome_of",
           "phase_name", "play_openspiel_hand"]
