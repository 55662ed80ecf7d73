"""The fixed action ids shared by the engine, the environment and the agents.

| id        | action                                                        |
|-----------|---------------------------------------------------------------|
| 0..51     | discard card ``id`` (end the turn)                            |
| 52..103   | knock, discarding card ``id - 52`` face down                  |
| 104       | draw the top card of the stock                                |
| 105       | take the top card of the discard pile (or the first upcard)   |
| 106       | pass on the first upcard                                      |
| 107       | big gin: lay down all 11 cards (only if ``Rules.big_gin_bonus``) |
"""

from __future__ import annotations

from .cards import NUM_CARDS, format_card, parse_card

DISCARD = 0
KNOCK = 52
DRAW_STOCK = 104
TAKE_DISCARD = 105
PASS = 106
BIG_GIN = 107
NUM_ACTIONS = 108

#: Every kind of move as a half-open range of action ids, in id order.
MOVE_KINDS: dict[str, tuple[int, int]] = {
    "discard": (DISCARD, DISCARD + NUM_CARDS),
    "knock": (KNOCK, KNOCK + NUM_CARDS),
    "draw": (DRAW_STOCK, DRAW_STOCK + 1),
    "take": (TAKE_DISCARD, TAKE_DISCARD + 1),
    "pass": (PASS, PASS + 1),
    "big_gin": (BIG_GIN, BIG_GIN + 1),
}
#: The first action id of each kind, in id order (for ``np.add.reduceat`` over a mask or policy).
KIND_STARTS: tuple[int, ...] = tuple(start for start, _ in MOVE_KINDS.values())


def is_discard(action: int) -> bool:
    return DISCARD <= action < DISCARD + NUM_CARDS


def is_knock(action: int) -> bool:
    """A knock (or gin) action: 52..103."""
    return KNOCK <= action < KNOCK + NUM_CARDS


def move_kind(action: int) -> str:
    """The kind of an action id: ``discard``, ``knock``, ``draw``, ``take``, ``pass`` or ``big_gin``."""
    for kind, (start, stop) in MOVE_KINDS.items():
        if start <= action < stop:
            return kind
    raise ValueError(f"action {action!r} is not an action id (0..{NUM_ACTIONS - 1})")


def discard_action(card: int) -> int:
    return DISCARD + card


def knock_action(card: int) -> int:
    return KNOCK + card


def action_card(action: int) -> int | None:
    """The card a discard or knock action names, else None."""
    if is_discard(action):
        return action - DISCARD
    if is_knock(action):
        return action - KNOCK
    return None


def describe_action(action: int) -> str:
    """Text of an action, the same words ``parse_action`` accepts: ``7H``, ``knock 7H``..."""
    if not 0 <= action < NUM_ACTIONS:
        return f"<invalid action {action}>"
    if action < KNOCK:
        return format_card(action - DISCARD)
    if action < DRAW_STOCK:
        return "knock " + format_card(action - KNOCK)
    return {DRAW_STOCK: "draw", TAKE_DISCARD: "take", PASS: "pass", BIG_GIN: "big gin"}[action]


def parse_action(text: str) -> int:
    """Parse ``draw``, ``take``, ``pass``, ``big gin``, a card (discard) or ``knock <card>``."""
    words = text.strip().lower().split()
    if not words:
        raise ValueError("empty move")
    simple = {"draw": DRAW_STOCK, "stock": DRAW_STOCK, "take": TAKE_DISCARD,
              "pass": PASS, "biggin": BIG_GIN}
    joined = "".join(words)
    if joined in simple:
        return simple[joined]
    if words[0] == "knock" and len(words) == 2:
        return KNOCK + parse_card(words[1])
    if words[0] == "discard" and len(words) == 2:
        return DISCARD + parse_card(words[1])
    if len(words) == 1:
        return DISCARD + parse_card(words[0])
    raise ValueError(f"unknown move {text!r}")
