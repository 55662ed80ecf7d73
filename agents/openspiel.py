"""OpenSpiel's ``gin_rummy`` in hgin_env's terms, and its ``SimpleGinRummyBot`` as an agent.

Why here: an agent may import only ``hgin_env``, and ``make_agent("openspiel:simple")``
must build the bot from a name, so the vocabulary the bot needs (cards, melds, game
parameters) lives in this module and :mod:`arena.openspiel` (deals, whole hands played at
either engine's table, the cross-engine check) builds on it. ``pyspiel`` (the optional
extra ``openspiel``: ``pip install -e ".[openspiel]"``) is imported on first use only, and
never by the engine.

The two numberings:

* cards: ours are ``suit * 13 + rank`` with suits C, D, H, S; OpenSpiel's the same with
  suits s, c, d, h, so ``openspiel_suit = (our_suit + 1) % 4``;
* actions: OpenSpiel's 0..51 discard a card, 52 draws the upcard (our *take*), 53 draws
  from the stock, 54 passes, 55 knocks (its discard and its melds follow as separate
  actions: a card, then meld ids 56..240, then a pass), where ours is one action
  ``knock c`` and the engine plays the showdown.

Players: OpenSpiel's player 0 is the one who acts first, our non-dealer; a hand dealt by
our player 1 (``Match(first_dealer=1)``) keeps the player numbers the same in both engines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from hgin_env import actions as A
from hgin_env.cards import NUM_CARDS, NUM_RANKS, RANK_VALUES
from hgin_env.melds import deadwood_after_discard_mask
from hgin_env.rules import PROFILES, Rules

from .base import SeededAgent, register_agent_prefix
from .spec import register_batched
from .view import ObsView, parse

#: The optional extra that installs OpenSpiel, as an error message names it.
INSTALL_HINT = 'pip install -e ".[openspiel]" (the open-spiel package)'

# OpenSpiel's gin_rummy action ids (open_spiel/games/gin_rummy/gin_rummy.h).
OS_DRAW_UPCARD = 52
OS_DRAW_STOCK = 53
OS_PASS = 54
OS_KNOCK = 55
OS_MELD_BASE = 56
OS_NUM_MELDS = 185
#: OpenSpiel ends a hand, scoring 0, at this many draws of the upcard (kMaxNumDrawUpcardActions).
OS_MAX_UPCARD_DRAWS = 50
#: OpenSpiel's observation tensor has 10 slots for the knock card: it refuses a higher one.
OS_MAX_KNOCK_CARD = 10
#: Our profile whose single hands OpenSpiel's default parameters play (``rules_from_params({})``).
OPENSPIEL_PROFILE = "hollywood"


def pyspiel_module() -> Any:
    """``pyspiel``, imported on first use; a clear ``ImportError`` where it is missing."""
    try:
        import pyspiel
    except ImportError as exc:  # the optional extra is not installed
        raise ImportError(f"OpenSpiel's pyspiel is not installed: {INSTALL_HINT}") from exc
    return pyspiel


# --------------------------------------------------------------------------- cards
def to_openspiel_card(card: int) -> int:
    """Our card id -> OpenSpiel's (suits s, c, d, h)."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card} is outside 0..51")
    suit, rank = divmod(int(card), NUM_RANKS)
    return ((suit + 1) % 4) * NUM_RANKS + rank


def from_openspiel_card(card: int) -> int:
    """OpenSpiel's card id -> ours (suits C, D, H, S)."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"OpenSpiel card id {card} is outside 0..51")
    suit, rank = divmod(int(card), NUM_RANKS)
    return ((suit + 3) % 4) * NUM_RANKS + rank


# --------------------------------------------------------------------------- melds
def openspiel_meld_id(meld: Iterable[int]) -> int:
    """OpenSpiel's id (0..184, before ``OS_MELD_BASE``) of a meld of OUR card ids: a set of
    3 or 4, or a run of 3 to 5 (OpenSpiel has no longer run: see :func:`split_meld`).

    Its order (``GinRummyUtils::MeldToInt``): sets by rank, five per rank (the four 3-card
    sets by their missing suit, then the 4-card set); then runs by length, suit and lowest
    rank."""
    cards = sorted(to_openspiel_card(c) for c in meld)
    ranks = [c % NUM_RANKS for c in cards]
    suits = [c // NUM_RANKS for c in cards]
    if len(set(ranks)) == 1 and len(cards) in (3, 4) and len(set(suits)) == len(cards):
        if len(cards) == 4:
            return ranks[0] * 5 + 4
        return ranks[0] * 5 + (set(range(4)) - set(suits)).pop()
    if len(set(suits)) == 1 and 3 <= len(cards) <= 5 and ranks == list(range(ranks[0], ranks[0] + len(cards))):
        offset = {3: 65, 4: 109, 5: 149}[len(cards)]
        return offset + suits[0] * (NUM_RANKS - len(cards) + 1) + ranks[0]
    raise ValueError(f"not an OpenSpiel meld (a set of 3-4, a run of 3-5): {sorted(meld)}")


@lru_cache(maxsize=1)
def _melds_by_id() -> tuple[tuple[int, ...], ...]:
    out: dict[int, tuple[int, ...]] = {}
    for rank in range(NUM_RANKS):
        suits = [s * NUM_RANKS + rank for s in range(4)]
        out[openspiel_meld_id(suits)] = tuple(suits)
        for left_out in suits:
            meld = tuple(c for c in suits if c != left_out)
            out[openspiel_meld_id(meld)] = meld
    for length in (3, 4, 5):
        for suit in range(4):
            for low in range(NUM_RANKS - length + 1):
                meld = tuple(suit * NUM_RANKS + r for r in range(low, low + length))
                out[openspiel_meld_id(meld)] = meld
    assert sorted(out) == list(range(OS_NUM_MELDS))
    return tuple(out[i] for i in range(OS_NUM_MELDS))


def meld_of_openspiel_id(meld_id: int) -> tuple[int, ...]:
    """The meld (OUR card ids, increasing) of an OpenSpiel meld id 0..184."""
    if not 0 <= meld_id < OS_NUM_MELDS:
        raise ValueError(f"OpenSpiel meld id {meld_id} is outside 0..{OS_NUM_MELDS - 1}")
    return _melds_by_id()[meld_id]


def split_meld(meld: Sequence[int]) -> list[tuple[int, ...]]:
    """A meld as OpenSpiel can lay it: a run longer than 5 becomes consecutive runs of 3..5
    (as even as possible, e.g. 6 -> 3 + 3, 7 -> 4 + 3); anything else stays as it is. The
    outer ends, where cards are laid off, stay the same."""
    cards = sorted(int(c) for c in meld)
    if len(cards) <= 5:
        return [tuple(cards)]
    pieces = -(-len(cards) // 5)
    sizes = [len(cards) // pieces + (1 if i < len(cards) % pieces else 0) for i in range(pieces)]
    out, start = [], 0
    for size in sizes:
        out.append(tuple(cards[start:start + size]))
        start += size
    return out


def meld_actions(melds: Iterable[Sequence[int]]) -> list[int]:
    """OpenSpiel's actions that lay these melds (of our card ids), long runs split."""
    return [OS_MELD_BASE + openspiel_meld_id(piece) for meld in melds for piece in split_meld(meld)]


# --------------------------------------------------------------------------- rules
def rules_from_params(params: Mapping[str, Any] | None = None) -> Rules:
    """Our rules for one hand of OpenSpiel's ``gin_rummy`` with these game parameters (its
    defaults where missing): the default profile (:data:`OPENSPIEL_PROFILE`) with its knock
    card, gin and undercut bonuses; ``oklahoma`` as ours with OpenSpiel's "ace means gin"
    and no spade doubling. What still differs is in docs/openspiel.md (the rules table)."""
    params = dict(params or {})
    known = {"oklahoma", "knock_card", "gin_bonus", "undercut_bonus", "num_ranks", "num_suits", "hand_size"}
    unknown = set(params) - known
    if unknown:
        raise ValueError(f"unknown OpenSpiel gin_rummy parameter(s) {sorted(unknown)}; known: {sorted(known)}")
    for name, value in (("num_ranks", 13), ("num_suits", 4), ("hand_size", 10)):
        if params.get(name, value) != value:
            raise ValueError(f"hgin_env plays only {name}={value}, not {params[name]!r}")
    knock = params.get("knock_card", 10)
    if not isinstance(knock, int) or not 0 <= knock <= OS_MAX_KNOCK_CARD:
        raise ValueError(f"OpenSpiel's knock_card must be an int in 0..{OS_MAX_KNOCK_CARD}, not {knock!r}")
    changes: dict[str, Any] = {"knock_limit": knock, "gin_bonus": params.get("gin_bonus", 25),
                               "undercut_bonus": params.get("undercut_bonus", 25)}
    if params.get("oklahoma", False):
        changes.update(oklahoma=True, oklahoma_ace_gin_only=True, spade_multiplier=1)
    base = PROFILES[OPENSPIEL_PROFILE]
    rules = base.replace(**changes)
    return base if rules == base else rules


def openspiel_params(rules: Rules) -> dict[str, Any]:
    """OpenSpiel's game parameters for a hand of these rules; ``ValueError`` naming the option
    where OpenSpiel cannot play such a hand. Options of the match (columns, target, dealing,
    bonuses settled when a column closes) do not change a hand and are not asked about."""
    def refuse(option: str, why: str) -> None:
        raise ValueError(f"OpenSpiel's gin_rummy cannot play {option}={getattr(rules, option)!r}: {why}")

    if rules.format != "duel":
        refuse("format", "it has two players at one table")
    if rules.big_gin_bonus is not None:
        refuse("big_gin_bonus", "it has no big gin")
    if not rules.first_upcard_offer:
        refuse("first_upcard_offer", "it always offers the first upcard")
    if rules.dead_hand_stock != 2:
        refuse("dead_hand_stock", "its wall is at 2 stock cards")
    if rules.oklahoma and (not rules.oklahoma_ace_gin_only or rules.spade_multiplier != 1):
        refuse("oklahoma", "its Oklahoma plays an ace upcard as gin only and never doubles a spade "
                           "(oklahoma_ace_gin_only=True, spade_multiplier=1)")
    if not rules.oklahoma and rules.knock_limit > OS_MAX_KNOCK_CARD:
        refuse("knock_limit", f"its knock card is at most {OS_MAX_KNOCK_CARD}")
    return {"oklahoma": rules.oklahoma, "knock_card": 10 if rules.oklahoma else rules.knock_limit,
            "gin_bonus": rules.gin_bonus, "undercut_bonus": rules.undercut_bonus}


def load_openspiel_game(params: Mapping[str, Any] | None = None) -> Any:
    """``pyspiel.load_game("gin_rummy", params)``, one game object per parameter set."""
    rules_from_params(params)  # the same checks, with our messages, before OpenSpiel's
    return _load(tuple(sorted((params or {}).items())))


@lru_cache(maxsize=32)
def _load(items: tuple[tuple[str, Any], ...]) -> Any:
    return pyspiel_module().load_game("gin_rummy", dict(items))


def new_openspiel_state(params: Mapping[str, Any] | None = None) -> Any:
    """A fresh state of ``load_openspiel_game(params)``, nothing dealt: a copy of one kept
    per game (OpenSpiel builds a new one in milliseconds, a copy in microseconds)."""
    return _initial_state(load_openspiel_game(params)).clone()


_INITIAL_STATES: dict[str, Any] = {}


def _initial_state(game: Any) -> Any:
    key = str(game)  # the game's name with its parameters (pyspiel games do not hash)
    if key not in _INITIAL_STATES:
        _INITIAL_STATES[key] = game.new_initial_state()
    return _INITIAL_STATES[key]


# --------------------------------------------------------------------------- the bot as an agent
def _fillers(exclude: int, count: int, prefer: int) -> list[int]:
    """``count`` OpenSpiel card ids for cards outside ``exclude`` (a mask of our ids), those
    in ``prefer`` first (the cards the player has not seen), in id order."""
    free = [c for c in range(NUM_CARDS) if not exclude >> c & 1]
    free.sort(key=lambda c: (not prefer >> c & 1, c))
    if len(free) < count:
        raise ValueError("not enough free cards to stand in for the opponent's hand")
    return [to_openspiel_card(c) for c in free[:count]]


def _cards(mask: int) -> list[int]:
    return [c for c in range(NUM_CARDS) if mask >> c & 1]


def bot_state(view: ObsView, game: Any) -> tuple[Any, int]:
    """An OpenSpiel state in which the player of ``view`` faces the same decision, and that
    player's number there: its own hand, the same face-up card, the same phase.

    The opponent's hand and the history are stand-ins (cards the player has not seen), so
    the state holds nothing the player does not know; the bot reads only its own hand, the
    upcard, the knock card, the stock size (whether it is at the wall, which our stock never
    reaches at a decision) and the legal actions."""
    hand = view.hand
    top = view.discard_top
    state = _initial_state(game).clone()

    def deal(p0: list[int], p1: list[int], upcard: int) -> None:
        for card in [*p0, *p1, upcard]:
            state.apply_action(card)

    if view.phase == "first_upcard":
        others = _fillers(hand | 1 << top, 10, view.unseen)
        own = [to_openspiel_card(c) for c in _cards(hand)]
        if not view.is_dealer:
            deal(own, others, to_openspiel_card(top))
            return state, 0
        deal(others, own, to_openspiel_card(top))
        state.apply_action(OS_PASS)  # the non-dealer passed
        return state, 1
    if view.phase == "draw":
        ten, upcard, draw = hand, top, None
    elif view.phase == "discard":
        legal = set(int(a) for a in view.legal)
        taken = [c for c in _cards(hand) if A.DISCARD + c not in legal]
        if taken:  # the card taken from the pile may not be discarded: it was the upcard
            ten, upcard, draw = hand & ~(1 << taken[0]), taken[0], OS_DRAW_UPCARD
        else:  # from the stock: any card of the hand was the one drawn
            drawn = _cards(hand)[-1]
            ten, draw = hand & ~(1 << drawn), drawn
            upcard = top if top >= 0 else _cards(~hand & (1 << NUM_CARDS) - 1)[0]
    else:
        raise ValueError(f"no decision to make in phase {view.phase!r}")
    # Both players pass the first upcard (a stand-in), player 0 draws ``upcard`` from the stock
    # and throws it: player 1 (the bot) then draws, from a 10-card hand, with ``upcard`` face up.
    stand_ins = _fillers(hand | 1 << upcard, 11, view.unseen)
    deal(stand_ins[:10], [to_openspiel_card(c) for c in _cards(ten)], stand_ins[10])
    for action in (OS_PASS, OS_PASS, OS_DRAW_STOCK, to_openspiel_card(upcard), to_openspiel_card(upcard)):
        state.apply_action(action)
    if draw == OS_DRAW_UPCARD:
        state.apply_action(OS_DRAW_UPCARD)
    elif draw is not None:
        state.apply_action(OS_DRAW_STOCK)
        state.apply_action(to_openspiel_card(draw))
    return state, 1


def lowest_deadwood_action(hand: int, legal: Iterable[int]) -> int:
    """The bot's own rule on our legal actions, for a move it picks that our rules forbid:
    knock where a knock is legal, with the discard that leaves the least deadwood (the highest
    card among equals), else discard that way."""
    legal = sorted(int(a) for a in legal)
    after = deadwood_after_discard_mask(hand)
    for lo, hi in ((A.KNOCK, A.KNOCK + NUM_CARDS), (A.DISCARD, A.DISCARD + NUM_CARDS)):
        options = [a for a in legal if lo <= a < hi]
        if options:
            return min(options, key=lambda a: (after[a - lo], -RANK_VALUES[(a - lo) % NUM_RANKS], -(a - lo)))
    raise ValueError(f"no discard or knock among the legal actions {legal}")


class OpenSpielBotAgent(SeededAgent):
    """OpenSpiel's ``SimpleGinRummyBot`` on our observation dicts (``openspiel:simple``).

    Each decision builds an OpenSpiel state from the observation (:func:`bot_state`) and
    asks the bot; its answer is mapped to our action. Where the bot picks a move our rules
    forbid (a knock whose discard is the card it just took from the pile: OpenSpiel allows
    it), the agent plays :func:`lowest_deadwood_action` instead and counts it in
    ``fallbacks``. Our engine plays the showdown, so the bot's lay-offs never come up here.
    """

    name = "openspiel:simple"

    def __init__(self, seed: int | None = None, columns: int | None = None, layout: Any = None):
        super().__init__(seed=seed, columns=columns, layout=layout)
        pyspiel_module()  # fail at construction, not at the first decision
        self.fallbacks = 0
        self._bots: dict[tuple[int, int], Any] = {}

    def _bot(self, game: Any, player: int) -> Any:
        key = (game.knock_card(), player)
        if key not in self._bots:
            self._bots[key] = pyspiel_module().make_simple_gin_rummy_bot(game.get_parameters(), player)
        return self._bots[key]

    def __call__(self, observation: dict) -> int:
        view = parse(observation, self.layout)
        legal = [int(a) for a in view.legal]
        if not legal:
            raise ValueError("no legal action in the observation's action mask")
        if len(legal) == 1:  # e.g. the stock draw after both players passed the upcard
            return legal[0]
        if view.knock_limit > OS_MAX_KNOCK_CARD:
            raise ValueError(f"OpenSpiel's bot plays knock limits up to {OS_MAX_KNOCK_CARD}, "
                             f"not {view.knock_limit}")
        game = load_openspiel_game({"knock_card": view.knock_limit})
        state, player = bot_state(view, game)
        bot = self._bot(game, player)
        bot.restart()
        choice = bot.step(state)
        if choice == OS_KNOCK:  # the bot names its discard at the next step
            state.apply_action(OS_KNOCK)
            action = A.KNOCK + from_openspiel_card(bot.step(state))
        elif choice == OS_DRAW_UPCARD:
            action = A.TAKE_DISCARD
        elif choice == OS_DRAW_STOCK:
            action = A.DRAW_STOCK
        elif choice == OS_PASS:
            action = A.PASS
        else:
            action = A.DISCARD + from_openspiel_card(choice)
        bot.restart()
        if action in legal:
            return action
        self.fallbacks += 1
        return lowest_deadwood_action(view.hand, legal)


def _openspiel_agent(arg: str, seed: int | None = None, **kwargs: Any) -> OpenSpielBotAgent:
    if arg != "simple":
        raise ValueError(f"unknown OpenSpiel bot {arg!r}; known: openspiel:simple")
    return OpenSpielBotAgent(seed=seed, **kwargs)


def _batched_openspiel_agent(arg: str, seed: int | None = None, layout: Any = None) -> Any:
    from .openspiel_bot import make_batched_bot  # the bot without pyspiel (it imports this module)

    return make_batched_bot(arg, seed=seed, layout=layout)


register_agent_prefix("openspiel", _openspiel_agent)
register_batched("openspiel", _batched_openspiel_agent)

__all__ = ["INSTALL_HINT", "OPENSPIEL_PROFILE", "OS_DRAW_STOCK", "OS_DRAW_UPCARD", "OS_KNOCK",
           "OS_MAX_UPCARD_DRAWS", "OS_MELD_BASE", "OS_PASS", "OpenSpielBotAgent", "bot_state",
           "from_openspiel_card", "load_openspiel_game", "lowest_deadwood_action", "meld_actions",
           "meld_of_openspiel_id", "new_openspiel_state", "openspiel_meld_id", "openspiel_params", "pyspiel_module",
           "rules_from_params", "split_meld", "to_openspiel_card"]
