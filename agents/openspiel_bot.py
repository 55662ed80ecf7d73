"""OpenSpiel's ``SimpleGinRummyBot`` over a whole batch, without pyspiel: the training
opponent of the peer benchmark (``make_batched_agent("openspiel:simple")``).

Why a second form of the bot: :class:`agents.openspiel.OpenSpielBotAgent` asks the real bot
on a pyspiel state rebuilt for every decision (about a millisecond each), far too slow for
a training opponent. The bot's rules are short (open_spiel/bots/gin_rummy/
simple_gin_rummy_bot.cc, OpenSpiel 2.0.2):

* draw: take the upcard if the 11 cards with it allow a knock (``MinDeadwood <= knock
  card``) or the upcard is in the hand's "best meld group"; else pass the first upcard or
  draw from the stock;
* discard: knock if ``MinDeadwood(11 cards) <= knock card``; the discard (after a knock
  too) is the highest card (by rank, then OpenSpiel's card id) of the best group's
  deadwood, or, for an 11-card gin, the first card (by OpenSpiel id) whose removal leaves
  gin.

The decisions hinge on *which* best meld group OpenSpiel picks among equals: the first, in
the order of its depth-first enumeration (``GinRummyUtils::AllMeldGroups``), whose melded
points are the most (a strict ``>``). The same group decides ``MinDeadwood`` of 11 cards,
which drops that group's highest deadwood card (its shortcut, docs/openspiel.md fault 1).
So the reference below translates ``gin_rummy_utils.cc`` literally (the melds in its order,
the paths of its search) on OpenSpiel's card ids; :mod:`agents.openspiel_bot_kernels` is
the same algorithm compiled (numba, an explicit stack instead of recursion). A search
order has no array form, hence a per-row reference rather than a numpy one.

Where the bot picks a move our rules forbid (a knock or discard of the card just taken
from the pile), both forms play :func:`agents.openspiel.lowest_deadwood_action` as the
scalar agent does. ``tests/test_openspiel_bot.py`` checks both forms against decisions of
the real bot stored from real play (no pyspiel needed), and ``tests/test_openspiel.py``
re-asks the live bot on those states.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hgin_env import actions as A
from hgin_env.cards import NUM_CARDS, NUM_RANKS
from hgin_env.codes import PHASE_DISCARD, PHASE_FIRST_UPCARD
from hgin_env.compiled import resolve_engine
from hgin_env.observation import ObservationLayout

from .base import SeededAgent
from .openspiel import OS_MAX_KNOCK_CARD, from_openspiel_card, lowest_deadwood_action, to_openspiel_card

#: OpenSpiel's hand size (``hand_size_``): an 11-card hand has just drawn.
HAND_SIZE = 10


# --------------------------------------------------------------------------- gin_rummy_utils.cc, literally
def _rank(card: int) -> int:
    return card % NUM_RANKS


def _suit(card: int) -> int:
    return card // NUM_RANKS


def card_value(card: int) -> int:
    """``CardValue``: ace 1 .. ten 10, faces 10 (OpenSpiel's card id; the same for ours)."""
    return min(10, _rank(card) + 1)


def all_melds(cards: list[int]) -> list[list[int]]:
    """``AllMelds``: its rank melds (``RankMelds``: 4-card sweep, then 3-card sweep over the
    cards by rank), then its suit melds (``SuitMelds``: lengths 5, 4, 3 over the cards by
    suit), in its order. Cards are OpenSpiel ids."""
    melds: list[list[int]] = []
    if len(cards) < 3:
        return melds
    by_rank = sorted(cards, key=lambda c: (_rank(c), c))
    for i in range(len(by_rank) - 3):
        if _rank(by_rank[i]) == _rank(by_rank[i + 3]):
            c = by_rank
            melds += [c[i:i + 4], [c[i], c[i + 1], c[i + 3]], [c[i], c[i + 2], c[i + 3]]]
    for i in range(len(by_rank) - 2):
        if _rank(by_rank[i]) == _rank(by_rank[i + 2]):
            melds.append(by_rank[i:i + 3])
    by_suit = sorted(cards, key=lambda c: (_suit(c), c))
    for length in (5, 4, 3):
        for i in range(len(by_suit) - length + 1):
            lo, hi = by_suit[i], by_suit[i + length - 1]
            if lo == hi - (length - 1) and _suit(lo) == _suit(hi):
                melds.append(by_suit[i:i + length])
    return melds


def best_meld_group(cards: list[int]) -> list[list[int]]:
    """``BestMeldGroup``: the first meld group, in ``AllMeldGroups``' depth-first order
    (every meld, then every meld of the list that shares no card with it, and so on; a path
    that cannot grow is a group), whose melded points beat every earlier one."""
    best_value, best = 0, []

    def paths(meld: list[int], melds: list[list[int]], path: list[list[int]]) -> None:
        nonlocal best_value, best
        path.append(meld)
        children = [m for m in melds if not set(m) & set(meld)]
        if not children:
            value = sum(card_value(c) for m in path for c in m)
            if value > best_value:
                best_value, best = value, list(path)
        for child in children:
            paths(child, children, path)
        path.pop()

    melds = all_melds(cards)
    for meld in melds:
        paths(meld, melds, [])
    return best


def best_deadwood(cards: list[int]) -> list[int]:
    """``GetBestDeadwood``: the cards outside :func:`best_meld_group`."""
    melded = {c for m in best_meld_group(cards) for c in m}
    return [c for c in cards if c not in melded]


def _highest(cards: list[int]) -> int:
    """The last card in ``RankComparator`` order (rank, then OpenSpiel id)."""
    return max(cards, key=lambda c: (_rank(c), c))


def min_deadwood(cards: list[int]) -> int:
    """``MinDeadwood``: the best group's deadwood; of 11 cards, less its highest card."""
    dead = best_deadwood(cards)
    if len(cards) == HAND_SIZE + 1 and dead:
        dead.remove(_highest(dead))
    return sum(card_value(c) for c in dead)


def bot_discard(cards: list[int]) -> int:
    """``GetDiscard`` of 11 cards (OpenSpiel ids, increasing, as the bot reads its hand)."""
    dead = best_deadwood(cards)
    if dead:
        return _highest(dead)
    for i, card in enumerate(cards):  # an 11-card gin: a discard that keeps gin
        if min_deadwood(cards[:i] + cards[i + 1:]) == 0:
            return card
    raise AssertionError("an 11-card gin has a discard that keeps gin")


def bot_move(hand: int, top: int, phase: int, knock_card: int, legal: np.ndarray) -> tuple[int, bool]:
    """The bot's move (our action id) for one row, and whether it is the fallback for a move
    our rules forbid: ``hand`` a mask of our card ids, ``top`` the face-up card (ours, -1
    for none), ``phase`` our phase code, ``legal`` our mask."""
    moves = np.flatnonzero(legal)
    if moves.size == 1:
        return int(moves[0]), False
    cards = sorted(to_openspiel_card(c) for c in range(NUM_CARDS) if hand >> c & 1)
    if phase < PHASE_DISCARD and top < 0:  # nothing face up: OpenSpiel's legal_actions.back()
        action = A.PASS if phase == PHASE_FIRST_UPCARD else A.DRAW_STOCK
    elif phase < PHASE_DISCARD:
        up = to_openspiel_card(top)
        with_up = sorted(cards + [up])
        take = min_deadwood(with_up) <= knock_card or up not in best_deadwood(with_up)
        action = A.TAKE_DISCARD if take else A.PASS if phase == PHASE_FIRST_UPCARD else A.DRAW_STOCK
    else:
        card = from_openspiel_card(bot_discard(cards))
        action = (A.KNOCK if min_deadwood(cards) <= knock_card else A.DISCARD) + card
    if legal[action]:
        return action, False
    return lowest_deadwood_action(hand, moves), True


# --------------------------------------------------------------------------- the batched agent
def _masks(bits: np.ndarray) -> np.ndarray:
    """Rows of 52 card flags -> 52-bit masks (card c is bit c), as int64."""
    return (bits.astype(np.int64) << np.arange(NUM_CARDS, dtype=np.int64)).sum(axis=1)


class BatchedOpenSpielBot(SeededAgent):
    """``SimpleGinRummyBot`` on a batch: ``act(observations[N, D], masks[N, 108])``, each
    row's move as :class:`agents.openspiel.OpenSpielBotAgent` plays it, without pyspiel.

    ``engine`` (:func:`hgin_env.compiled.resolve_engine`): "numba" runs
    :func:`agents.openspiel_bot_kernels.bot_act`, "numpy" the reference above row by row.
    The bot is deterministic: ``seed`` only keeps the batched interface. It plays the duel's
    layout and knock limits up to OpenSpiel's 10 (a higher one raises ``ValueError``)."""

    name = "openspiel:simple"

    def __init__(self, seed: int | None = None, columns: int | None = None,
                 layout: ObservationLayout | None = None, engine: str | None = None):
        super().__init__(seed=seed, columns=columns, layout=layout)
        if self.layout.format != "duel":
            raise ValueError(f"OpenSpiel's bot plays the duel, not format={self.layout.format!r}")
        self.engine = resolve_engine(engine)
        self.fallbacks = 0

    def compiled_form(self) -> Any:
        """Its form for the compiled opponent loop (:mod:`agents.opponent_loop`), None on
        the numpy engine: the starts of what :meth:`read` reads, the knock limit's scale and
        the highest limit the bot plays."""
        if self.engine != "numba":
            return None
        from .openspiel_bot_kernels import READ_SLICES
        from .opponent_loop import BOT, CompiledForm

        offsets = np.array([self.layout.slice(name).start for name in READ_SLICES], dtype=np.int64)
        params = np.array([self.layout.scale("knock_limit"), OS_MAX_KNOCK_CARD], dtype=np.float64)
        return CompiledForm(BOT, self, self.layout.size, offsets, params)

    def read(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, ...]:
        """What the bot reads of each row: hand mask, face-up card (-1: none), phase code,
        knock limit, and the legal mask; bad shapes and knock limits raise ``ValueError``."""
        obs = np.asarray(observations)
        legal = np.asarray(masks)
        if obs.ndim != 2 or obs.shape[1] != self.layout.size:
            raise ValueError(f"observations must have shape (N, {self.layout.size}), got {obs.shape}")
        if legal.shape != (obs.shape[0], A.NUM_ACTIONS):
            raise ValueError(f"masks must have shape ({obs.shape[0]}, {A.NUM_ACTIONS}), got {legal.shape}")
        legal = np.ascontiguousarray(legal, dtype=bool)
        empty = np.flatnonzero(~legal.any(axis=1))
        if empty.size:
            raise ValueError(f"row {int(empty[0])} has no legal action in its mask")
        lay = self.layout
        hand = _masks(lay.get(obs, "hand") > 0.5)
        top_bits = lay.get(obs, "discard_top") > 0.5
        top = np.where(top_bits.any(axis=1), top_bits.argmax(axis=1), -1).astype(np.int64)
        phase = lay.get(obs, "phase").argmax(axis=1).astype(np.int64)
        knock = np.rint(lay.get(obs, "knock_limit")[:, 0].astype(np.float64)
                        * lay.scale("knock_limit")).astype(np.int64)
        if (knock > OS_MAX_KNOCK_CARD).any():
            raise ValueError(f"OpenSpiel's bot plays knock limits up to {OS_MAX_KNOCK_CARD}, not {int(knock.max())}")
        return hand, top, phase, knock, legal

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        hand, top, phase, knock, legal = self.read(observations, masks)
        if self.engine == "numba":
            from .openspiel_bot_kernels import bot_act

            out = np.empty(hand.shape[0], dtype=np.int64)
            fallbacks = np.zeros(1, dtype=np.int64)
            bot_act(hand, top, phase, knock, legal, out, fallbacks)
            self.fallbacks += int(fallbacks[0])
            return out
        moves = [bot_move(int(h), int(t), int(p), int(k), m)
                 for h, t, p, k, m in zip(hand, top, phase, knock, legal, strict=True)]
        self.fallbacks += sum(fell_back for _, fell_back in moves)
        return np.array([move for move, _ in moves], dtype=np.int64)


def make_batched_bot(arg: str, seed: int | None = None, layout: Any = None) -> BatchedOpenSpielBot:
    """The batched form of ``openspiel:ARG`` (only ``simple``)."""
    if arg != "simple":
        raise ValueError(f"unknown OpenSpiel bot {arg!r}; known: openspiel:simple")
    return BatchedOpenSpielBot(seed=seed, layout=layout)


__all__ = ["BatchedOpenSpielBot", "all_melds", "best_deadwood", "best_meld_group", "bot_discard", "bot_move",
           "card_value", "make_batched_bot", "min_deadwood"]
