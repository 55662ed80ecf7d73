"""Rules: every option of the game in one frozen, validated dataclass, and the named profiles.

The default (``Rules()`` == ``PROFILES["hollywood"]``) is the friendly full profile of
RULES.md (source 000). A one-game variant (gin to 100) is the same machinery with one
column: a player's first win already scores in column I, which is then the only contest.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

#: Bump when a change alters what a given seed and action sequence produce; stored in
#: checkpoints and saved matches, which are refused when it differs.
#: 2: ``gin_classic``, ``gin_three_hand`` and ``gin_partnership`` have no first-upcard offer
#: (source 004); ``oklahoma`` keeps one running score (``columns=1``, source 001).
RULES_VERSION = 2

DEALER_ROTATIONS = ("alternate", "loser", "winner")
FIRST_DEALER = ("random", "cut")
#: Match formats (RULES.md §13): two players, three players (the dealer sits out), or two
#: teams of two at two tables.
FORMATS = ("duel", "three_hand", "partnership")
#: Seats per format.
FORMAT_PLAYERS = {"duel": 2, "three_hand": 3, "partnership": 4}
#: The dealing rule each multi-player format fixes (RULES.md §13), as the values of
#: ``dealer_rotation`` and ``dead_hand_same_dealer`` it needs.
FORMAT_DEALING = {
    "three_hand": ("loser", True),  # 004: the loser deals; a dead hand is redealt
    "partnership": ("alternate", False),  # the dealing team alternates every round
}


@dataclass(frozen=True)
class Rules:
    """All options of a match. Invalid values raise ``ValueError`` naming the option."""

    #: Highest deadwood a player may knock with (0 = only gin ends a hand: straight gin).
    knock_limit: int = 10
    #: Oklahoma: the knock limit of each hand is the value of the first upcard (A=1, faces=10).
    oklahoma: bool = False
    #: Oklahoma house rule: an ace upcard means gin only (knock limit 0).
    oklahoma_ace_gin_only: bool = False
    #: Oklahoma: a spade as first upcard multiplies that hand's score (2 = doubled).
    spade_multiplier: int = 2
    #: The first upcard is offered (RULES.md §3): the non-dealer, then the dealer, may take
    #: it or pass. False (source 004): the non-dealer starts with a normal draw, from the
    #: stock or the upcard; nobody passes.
    first_upcard_offer: bool = True
    gin_bonus: int = 25
    undercut_bonus: int = 25
    #: Bonus for big gin (all 11 cards melded after the draw, no discard); None = not allowed.
    big_gin_bonus: int | None = None
    #: Number of Hollywood columns (3); 1 gives a single game to ``target``.
    columns: int = 3
    #: Points that decide a column (or the single game).
    target: int = 100
    #: Settlement when a column closes: per hand won within the column ("box" / "line").
    box_bonus: int = 0
    #: Settlement when a column closes: to the column's winner.
    game_bonus: int = 0
    #: Game bonus instead of ``game_bonus`` when the loser scored nothing in the column.
    shutout_game_bonus: int | None = None
    #: Short session: the match stops as soon as one column is decided; the player with the
    #: larger sum of running column totals wins (ties go to that column's winner).
    short_session: bool = False
    #: Who deals the next hand: "alternate", "loser" (of the last hand) or "winner".
    dealer_rotation: str = "alternate"
    #: After a dead hand the same dealer deals again (else the usual rotation applies).
    dead_hand_same_dealer: bool = False
    #: How the first dealer is chosen: "random", or "cut" (each cuts a card, lowest deals).
    first_dealer: str = "random"
    #: A hand is dead when this many stock cards remain after a discard.
    dead_hand_stock: int = 2
    #: A hand is dead after this many turns (draws) without a knock, 0 = no cap. Stock draws
    #: end a hand after 29 turns, but players who keep taking each other's discards never
    #: touch the stock: without a cap such a hand (e.g. two deterministic agents) never ends.
    max_turns: int = 100
    #: Safety cap on hands per match (a match of legal play ends long before; 0 = no cap).
    max_hands: int = 1000
    #: "duel" (two players), "three_hand" or "partnership" (RULES.md §13). In a
    #: partnership ``max_hands`` caps rounds (two hands each).
    format: str = "duel"
    name: str = field(default="custom", compare=False)

    def __post_init__(self) -> None:
        def need(ok: bool, option: str, message: str) -> None:
            if not ok:
                value = getattr(self, option)
                raise ValueError(f"invalid rule option {option}={value!r}: {message}")

        for opt in ("knock_limit", "gin_bonus", "undercut_bonus", "box_bonus", "game_bonus",
                    "spade_multiplier", "columns", "target", "dead_hand_stock", "max_hands", "max_turns"):
            value = getattr(self, opt)
            need(isinstance(value, int) and not isinstance(value, bool), opt, "must be an int")
        for opt in ("oklahoma", "oklahoma_ace_gin_only", "short_session", "dead_hand_same_dealer",
                    "first_upcard_offer"):
            need(isinstance(getattr(self, opt), bool), opt, "must be True or False")
        need(0 <= self.knock_limit <= 100, "knock_limit", "must be in 0..100")
        need(self.gin_bonus >= 0, "gin_bonus", "must be >= 0")
        need(self.undercut_bonus >= 0, "undercut_bonus", "must be >= 0")
        need(self.big_gin_bonus is None or (isinstance(self.big_gin_bonus, int)
                                            and not isinstance(self.big_gin_bonus, bool)
                                            and self.big_gin_bonus >= 0),
             "big_gin_bonus", f"must be None (no big gin) or an int >= 0, not a "
                              f"{type(self.big_gin_bonus).__name__}")
        need(1 <= self.columns <= 9, "columns", "must be in 1..9")
        need(self.target >= 1, "target", "must be >= 1")
        need(self.box_bonus >= 0, "box_bonus", "must be >= 0")
        need(self.game_bonus >= 0, "game_bonus", "must be >= 0")
        need(self.shutout_game_bonus is None or (isinstance(self.shutout_game_bonus, int)
                                                 and not isinstance(self.shutout_game_bonus, bool)
                                                 and self.shutout_game_bonus >= 0),
             "shutout_game_bonus", f"must be None or an int >= 0, not a "
                                   f"{type(self.shutout_game_bonus).__name__}")
        need(self.spade_multiplier >= 1, "spade_multiplier", "must be >= 1")
        need(self.dealer_rotation in DEALER_ROTATIONS, "dealer_rotation",
             f"must be one of {DEALER_ROTATIONS}")
        need(self.first_dealer in FIRST_DEALER, "first_dealer", f"must be one of {FIRST_DEALER}")
        # The stock starts with 31 cards; the dead-hand threshold must leave play possible.
        need(0 <= self.dead_hand_stock <= 30, "dead_hand_stock", "must be in 0..30")
        need(self.max_hands >= 0, "max_hands", "must be >= 0")
        need(self.max_turns >= 0, "max_turns", "must be >= 0 (0 = no cap)")
        need(not (self.oklahoma_ace_gin_only and not self.oklahoma), "oklahoma_ace_gin_only",
             "needs oklahoma=True")
        need(self.format in FORMATS, "format", f"must be one of {FORMATS}")
        if self.format in FORMAT_DEALING:
            rotation, same = FORMAT_DEALING[self.format]
            rule = ("the loser of a hand deals the next, a dead hand is redealt by the same "
                    "dealer" if self.format == "three_hand" else
                    "the dealing team alternates every round, dead hands included")
            need(self.dealer_rotation == rotation, "dealer_rotation",
                 f"format={self.format!r} deals by its own rule ({rule}): "
                 f"needs dealer_rotation={rotation!r}")
            need(self.dead_hand_same_dealer == same, "dead_hand_same_dealer",
                 f"format={self.format!r} deals by its own rule ({rule}): "
                 f"needs dead_hand_same_dealer={same!r}")

    def replace(self, **changes: object) -> Rules:
        """A copy with some options changed (validated again)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown rule option(s): {sorted(unknown)}")
        if "name" not in changes:
            changes["name"] = "custom"
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Rules:
        """Inverse of ``to_dict``. Dicts saved before formats existed have no ``format``
        key and load as the duel (the dataclass default)."""
        unknown = set(data) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown rule option(s): {sorted(unknown)}")
        return cls(**data)

    @property
    def settles_columns(self) -> bool:
        return bool(self.box_bonus or self.game_bonus or self.shutout_game_bonus)

    @property
    def num_players(self) -> int:
        """Seats at the match: 2 (duel), 3 (three-hand) or 4 (partnership)."""
        return FORMAT_PLAYERS[self.format]

    def next_dealer(self, dealer: int, winner: int | None, loser: int | None) -> int:
        """Who deals the next hand after ``dealer`` dealt one that ``winner`` won from
        ``loser`` (both None: a dead hand), by ``dealer_rotation`` and
        ``dead_hand_same_dealer`` (RULES.md §4, §13): the one rule of a duel's ``Match``
        (seats 0 and 1 are its hands' players) and of a three-hand one (seats; its format fixes "loser" and a dead
        hand redealt by the same dealer). "alternate" hands the deal to the other of two
        players: a partnership's dealing team alternates by its round instead."""
        if winner is None:
            return dealer if self.dead_hand_same_dealer else 1 - dealer
        if self.dealer_rotation == "loser":
            assert loser is not None
            return loser
        if self.dealer_rotation == "winner":
            return winner
        return 1 - dealer

    def match_end(self, sheet_over: bool, played: int, single_hand: bool = False) -> str | None:
        """THE end-of-match rule of every format and path (``Match``, the batched
        engine): "over" when the sheet says the match is over (``sheet_over``: every column
        decided, or the sheet's draw) or when the episode is one hand (``single_hand``, the
        batched engine's ``single_hand=True``: OpenSpiel's game, a dead hand included),
        "truncated" when ``max_hands`` caps ``played`` (hands in a duel or three-hand,
        rounds in a partnership), else None (the match goes on)."""
        if sheet_over or single_hand:
            return "over"
        if self.max_hands and played >= self.max_hands:
            return "truncated"
        return None


PROFILES: dict[str, Rules] = {
    "hollywood": Rules(name="hollywood"),
    "hollywood_classic": Rules(
        name="hollywood_classic", dealer_rotation="loser", dead_hand_same_dealer=True,
        first_dealer="cut", box_bonus=25, game_bonus=100),
    "hollywood_winner_deals": Rules(
        name="hollywood_winner_deals", dealer_rotation="winner", dead_hand_same_dealer=True,
        undercut_bonus=10),
    "gin_us_uk": Rules(name="gin_us_uk", columns=1, gin_bonus=20, undercut_bonus=10),
    "gin_classic": Rules(
        name="gin_classic", columns=1, dealer_rotation="loser", dead_hand_same_dealer=True,
        game_bonus=100, shutout_game_bonus=200, box_bonus=20, first_upcard_offer=False),
    # 001 variants: one running score to 100; ``.replace(columns=3)`` plays it on the
    # Hollywood sheet.
    "oklahoma": Rules(name="oklahoma", oklahoma=True, columns=1),
    "straight_gin": Rules(name="straight_gin", knock_limit=0),
    "hollywood_short": Rules(name="hollywood_short", short_session=True),
    # RULES.md §13: 001's Hollywood sheet (box 25, game 100, first dealer by cutting) per
    # player or per team; 004's one game to 100 with its game/shutout/box bonuses and no
    # first-upcard offer.
    "hollywood_three_hand": Rules(
        name="hollywood_three_hand", format="three_hand", dealer_rotation="loser",
        dead_hand_same_dealer=True, first_dealer="cut", box_bonus=25, game_bonus=100),
    "hollywood_partnership": Rules(
        name="hollywood_partnership", format="partnership", first_dealer="cut",
        box_bonus=25, game_bonus=100),
    "gin_three_hand": Rules(
        name="gin_three_hand", format="three_hand", columns=1, dealer_rotation="loser",
        dead_hand_same_dealer=True, game_bonus=100, shutout_game_bonus=200, box_bonus=20,
        first_upcard_offer=False),
    "gin_partnership": Rules(
        name="gin_partnership", format="partnership", columns=1, game_bonus=100,
        shutout_game_bonus=200, box_bonus=20, first_upcard_offer=False),
}


def profile_names(format: str | None = None) -> list[str]:
    """Sorted profile names, all of them or those of one format ("duel", ...)."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; known: {FORMATS}")
    return sorted(n for n, r in PROFILES.items() if format is None or r.format == format)


def get_rules(rules: Rules | str | dict | None = None) -> Rules:
    """Rules from a Rules object, a profile name, a dict of options, or None (default)."""
    if rules is None:
        return PROFILES["hollywood"]
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        if rules not in PROFILES:
            raise ValueError(f"unknown rules profile {rules!r}; known: {sorted(PROFILES)}")
        return PROFILES[rules]
    if isinstance(rules, dict):
        return Rules.from_dict(rules)
    raise ValueError(f"rules must be a Rules, a profile name or a dict, not {type(rules)}")
