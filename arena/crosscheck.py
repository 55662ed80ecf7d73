"""The cross-engine check: hands played in lockstep in our engine and in OpenSpiel's
``gin_rummy`` from the same deal, comparing every legal-move set and every hand result.

Our engine leads: agents play a :class:`~hgin_env.game.Hand` and each move is repeated at
OpenSpiel's table (a knock as OpenSpiel's knock, discard, melds and pass; the defender's
lay-offs and melds as our showdown chose them). Before each move the set of moves OpenSpiel
allows, in our action ids, is compared with ours; when the hand ends its points and both
deadwoods are compared. Every difference must fall into one of :data:`CATEGORIES`, each a
rule that differs (docs/openspiel.md has the table) or a fault of OpenSpiel's with a
reproducer; anything else is *unexplained*, and the check's target is none.

``python -m eval.crosscheck --hands N`` runs it at scale; the suite runs a few hundred hands.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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
    pyspiel_module,
    rules_from_params,
    to_openspiel_card,
)
from agents.spec import make_agent
from hgin_env import actions as A
from hgin_env.cards import NUM_CARDS, format_card, format_cards
from hgin_env.game import Hand
from hgin_env.match import Match
from hgin_env.observation import ObservationLayout, observe

from .matches import derive_seed, reset_agent
from .openspiel import Deal, answer_chance, defender_plan, hand_of, phase_name


@dataclass(frozen=True)
class Category:
    """One explained kind of difference: ``rule`` (the rules differ) or ``openspiel`` (a
    fault of OpenSpiel's)."""

    kind: str
    text: str


#: Every explained difference. The rules table of docs/openspiel.md gives each its rule.
CATEGORIES: dict[str, Category] = {
    "take_and_discard": Category("rule", "OpenSpiel lets a player throw (or knock with) the card it "
                                         "just took from the discard pile; ours does not (RULES.md §4.3)"),
    "wall": Category("rule", "at 2 stock cards our hand is dead after the discard; OpenSpiel's wall "
                             "lets the next player take the upcard to knock"),
    "equal_deadwood": Category("rule", "a knock with deadwood equal to the defender's: our undercut "
                                       "(25 to the defender), OpenSpiel's 0 for both"),
    "upcard_draw_cap": Category("rule", "OpenSpiel ends a hand, 0 for both, at the 50th draw of the "
                                        "upcard; ours at 100 turns (RULES.md §7.3)"),
    "min_deadwood_shortcut": Category("openspiel", "OpenSpiel refuses a legal knock: its 11-card "
                                                   "minimum deadwood throws the highest deadwood card of "
                                                   "one best arrangement instead of trying every discard"),
}

#: The agents whose play drives the check (each hand pairs two of them, every pair in turn):
#: random play reaches odd states and long hands, the others knock, go gin and undercut.
DEFAULT_AGENTS = ("random", "simple", "expert", "openspiel:simple")


@dataclass
class Difference:
    """One difference found: its category (``unexplained`` if none fits) and what it was."""

    category: str
    seed: int
    detail: str


@dataclass
class CrosscheckReport:
    """Counts of a cross-check run."""

    hands: int = 0
    #: decisions whose legal-move sets were compared
    legal_sets: int = 0
    #: ... and those where both engines allowed the same moves
    equal_sets: int = 0
    #: hands whose results (points, both deadwoods) were compared, and those that agreed
    results: int = 0
    equal_results: int = 0
    moves: int = 0
    #: differences per category (``unexplained`` included), one per decision or hand
    by_category: Counter = field(default_factory=Counter)
    #: the first differences of each category (``examples`` per category)
    found: list[Difference] = field(default_factory=list)
    examples: int = 3

    @property
    def unexplained(self) -> int:
        return self.by_category.get("unexplained", 0)

    def add(self, diff: Difference) -> None:
        self.by_category[diff.category] += 1
        if sum(1 for d in self.found if d.category == diff.category) < self.examples:
            self.found.append(diff)

    def merge(self, other: CrosscheckReport) -> None:
        for name in ("hands", "legal_sets", "equal_sets", "results", "equal_results", "moves"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for d in other.found:
            if sum(1 for x in self.found if x.category == d.category) < self.examples:
                self.found.append(d)
        self.by_category.update(other.by_category)

    def lines(self) -> list[str]:
        """The report as text lines: totals, then counts by category."""
        out = [f"hands {self.hands}, moves {self.moves}",
               f"legal-move sets compared {self.legal_sets}, equal {self.equal_sets}",
               f"hand results compared {self.results}, equal {self.equal_results}",
               "differences by category:"]
        for name in [*CATEGORIES, "unexplained"]:
            kind = CATEGORIES[name].kind if name in CATEGORIES else "-"
            out.append(f"  {name:<22} {kind:<9} {self.by_category.get(name, 0)}")
        for d in self.found:
            out.append(f"  e.g. {d.category} (seed {d.seed}): {d.detail}")
        return out


# --------------------------------------------------------------------------- OpenSpiel's moves
def openspiel_moves(state: Any) -> set[int]:
    """The moves an OpenSpiel state allows its player, in OUR action ids (a knock with each
    discard OpenSpiel would then accept)."""
    legal = state.legal_actions()
    phase = phase_name(state)
    if phase in ("first_upcard", "draw"):
        names = {OS_DRAW_UPCARD: A.TAKE_DISCARD, OS_DRAW_STOCK: A.DRAW_STOCK, OS_PASS: A.PASS}
        return {names[a] for a in legal}
    if phase != "discard":
        raise ValueError(f"OpenSpiel's phase {phase!r} has no move of ours")
    moves = {A.DISCARD + from_openspiel_card(a) for a in legal if a < NUM_CARDS}
    if OS_KNOCK in legal:
        knocked = state.child(OS_KNOCK)
        moves |= {A.KNOCK + from_openspiel_card(a) for a in knocked.legal_actions() if a < NUM_CARDS}
    return moves


def _shortcut_refuses(state: Any, knock_card: int) -> bool:
    """Whether OpenSpiel's own 10-card minimum deadwood allows a knock its 11-card one refuses."""
    utils = pyspiel_module().gin_rummy.GinRummyUtils(13, 4, 10)
    hand = list(state.hands()[state.current_player()])
    best10 = min(utils.min_deadwood(hand[:i] + hand[i + 1:]) for i in range(len(hand)))
    return utils.min_deadwood(hand) > knock_card >= best10


def _explain_sets(game: Hand, state: Any, ours: set[int], theirs: set[int]) -> list[tuple[str, str]]:
    """(category, detail) for each kind of difference between two legal-move sets."""
    found: list[tuple[str, str]] = []
    hand = format_cards(game.hand_cards(game.current_player))
    taken = game.taken_card
    only_theirs, only_ours = theirs - ours, ours - theirs
    same_card = {a for a in only_theirs if taken >= 0 and A.action_card(a) == taken}
    if same_card:
        found.append(("take_and_discard", f"hand {hand}, took {format_card(taken)}: OpenSpiel also allows "
                                          + ", ".join(A.describe_action(a) for a in sorted(same_card))))
    knocks = {a for a in only_ours if A.is_knock(a)}
    if knocks and OS_KNOCK not in state.legal_actions() and _shortcut_refuses(state, state.knock_card()):
        found.append(("min_deadwood_shortcut", f"hand {hand}: OpenSpiel refuses "
                                               + ", ".join(A.describe_action(a) for a in sorted(knocks))))
        only_ours = only_ours - knocks
    rest = (only_theirs - same_card) | only_ours
    if rest:
        found.append(("unexplained", f"hand {hand} phase {game.phase.name}: only ours "
                                     f"{sorted(A.describe_action(a) for a in ours - theirs)}, only OpenSpiel's "
                                     f"{sorted(A.describe_action(a) for a in theirs - ours)}"))
    return found


# --------------------------------------------------------------------------- one hand
def openspiel_actions(action: int) -> list[int]:
    """OpenSpiel's actions for one move of ours (a knock: the knock and its discard; the
    showdown's melds come from our result)."""
    if action == A.TAKE_DISCARD:
        return [OS_DRAW_UPCARD]
    if action == A.DRAW_STOCK:
        return [OS_DRAW_STOCK]
    if action == A.PASS:
        return [OS_PASS]
    card = A.action_card(action)
    if card is None:
        raise ValueError(f"{A.describe_action(action)} has no OpenSpiel move")
    return [OS_KNOCK, to_openspiel_card(card)] if A.is_knock(action) else [to_openspiel_card(card)]


def lockstep_hand(seed: int, players: Sequence[Any], params: Mapping[str, Any] | None = None,
                  report: CrosscheckReport | None = None) -> CrosscheckReport:
    """Play the hand of ``Match(rules, seed, single_hand=True, first_dealer=1)`` (the rules of
    ``params``, :func:`~agents.openspiel.rules_from_params`) with ``players[p]`` as player p in
    both engines at once, adding what it compares and finds to ``report``."""
    report = CrosscheckReport() if report is None else report
    rules = rules_from_params(params)
    load_openspiel_game(params)
    game = Match(rules, seed=seed, single_hand=True, first_dealer=1).current_game
    deal = Deal.from_game(game)
    state = deal.openspiel_state(params)
    report.hands += 1

    def differ(category: str, detail: str) -> None:
        report.add(Difference(category, seed, detail))

    def play(actions: Sequence[int], what: str) -> bool:
        for a in actions:
            if state.is_terminal() or a not in state.legal_actions():
                differ("unexplained", f"OpenSpiel refuses {what}: action {a} in phase {phase_name(state)}")
                return False
            state.apply_action(a)
            if state.is_chance_node():
                answer_chance(state, deal)
        return True

    record = None
    while not game.is_over:
        if state.is_terminal():
            takes = sum(1 for a in state.history() if a == OS_DRAW_UPCARD)  # a first-upcard take too
            if takes >= OS_MAX_UPCARD_DRAWS and game.action_history[-1] == A.TAKE_DISCARD:
                differ("upcard_draw_cap", f"OpenSpiel ended the hand at its {OS_MAX_UPCARD_DRAWS}th draw of "
                                          f"the upcard in the draw phase, our turn {game.turns}")
            else:
                differ("unexplained", f"OpenSpiel's hand is over, ours is at turn {game.turns}")
            return report
        p = game.current_player
        if state.current_player() != p:
            differ("unexplained", f"OpenSpiel's player {state.current_player()} acts, ours is {p}")
            return report
        ours, theirs = set(game.legal_actions()), openspiel_moves(state)
        report.legal_sets += 1
        if ours == theirs:
            report.equal_sets += 1
        else:
            for category, detail in _explain_sets(game, state, ours, theirs):
                differ(category, detail)
        action = int(players[p](observe(game, p)))
        report.moves += 1
        refused = A.is_knock(action) and OS_KNOCK not in state.legal_actions()
        record = game.apply(action)
        if refused:  # counted above (min_deadwood_shortcut): OpenSpiel cannot follow this hand
            return report
        if not play(openspiel_actions(action), A.describe_action(action)):
            return report
    assert record is not None
    if record.knocker is None:  # dead: after the last discard OpenSpiel is at its wall
        if phase_name(state) == "wall":
            if OS_KNOCK in state.legal_actions():
                upcard = format_card(from_openspiel_card(state.upcard()))
                differ("wall", f"player {state.current_player()} may take {upcard} and knock at OpenSpiel's "
                               f"wall, holding {format_cards(hand_of(state, state.current_player()))}")
            state.apply_action(OS_PASS)
    else:
        result, knocker = record.result, record.knocker
        gin = result.kind in ("gin", "big_gin")
        if not play([*meld_actions(result.knocker_melds), OS_PASS], "the knocker's melds"):
            return report
        laid, own, dw = defender_plan(result.knocker_melds, record.final_hands[1 - knocker], gin)
        if dw != result.defender_deadwood:
            differ("unexplained", f"the defender's reply as OpenSpiel lays it leaves {dw}, "
                                  f"ours {result.defender_deadwood}")
            return report
        layoffs = [] if gin else [*(to_openspiel_card(c) for c in laid), OS_PASS]
        if not play([*layoffs, *meld_actions(own), OS_PASS], "the defender's lay-offs and melds"):
            return report
    if not state.is_terminal():
        differ("unexplained", f"OpenSpiel's hand goes on in phase {phase_name(state)} after ours ended")
        return report
    _compare_results(record, state, differ, report)
    return report


def _compare_results(record: Any, state: Any, differ: Callable[[str, str], None], report: CrosscheckReport) -> None:
    report.results += 1
    ours = [0, 0]
    if record.winner is not None:
        ours[record.winner], ours[1 - record.winner] = record.points, -record.points
    theirs = [int(r) for r in state.returns()]
    result = record.result
    deadwood = [int(d) for d in state.deadwood()]
    if record.knocker is not None:
        k = record.knocker
        expected = [0, 0]
        expected[k], expected[1 - k] = result.knocker_deadwood, result.defender_deadwood
        if deadwood != expected:
            differ("unexplained", f"deadwood ours {expected}, OpenSpiel's {deadwood}")
            return
    if ours == theirs:
        report.equal_results += 1
    elif result.kind == "undercut" and result.knocker_deadwood == result.defender_deadwood and theirs == [0, 0]:
        differ("equal_deadwood", f"both at {result.knocker_deadwood}: ours {ours}, OpenSpiel's {theirs}")
    else:
        differ("unexplained", f"{result.kind}: points ours {ours}, OpenSpiel's {theirs}")


# --------------------------------------------------------------------------- many hands
def pairings(names: Sequence[str], hands: int) -> list[tuple[str, str]]:
    """The agents of each hand: every ordered pair of ``names`` in turn."""
    pairs = [(a, b) for a in names for b in names]
    return [pairs[i % len(pairs)] for i in range(hands)]


def crosscheck(hands: int, seed: int = 0, agents: Sequence[str] = DEFAULT_AGENTS,
               params: Mapping[str, Any] | None = None,
               on_hand: Callable[[CrosscheckReport], None] | None = None) -> CrosscheckReport:
    """Lockstep hands on seeds ``seed .. seed + hands - 1``, each with the agents of
    :func:`pairings` (reset per hand from the seed); ``on_hand`` is called after each."""
    if hands < 0:
        raise ValueError(f"hands must be >= 0, not {hands}")
    rules = rules_from_params(params)
    layout = ObservationLayout.for_rules(rules)
    built = {name: make_agent(name, seed=seed, layout=layout) for name in dict.fromkeys(agents)}
    report = CrosscheckReport()
    for i, (a, b) in enumerate(pairings(list(built), hands)):
        players = [built[a], built[b]]
        for side, agent in enumerate(players):
            reset_agent(agent, derive_seed(seed + i, side + 1))
        lockstep_hand(seed + i, players, params, report)
        if on_hand is not None:
            on_hand(report)
    return report


__all__ = ["CATEGORIES", "DEFAULT_AGENTS", "Category", "CrosscheckReport", "Difference", "crosscheck",
           "lockstep_hand", "openspiel_actions", "openspiel_moves", "pairings"]
