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

import operator
from typing import Any

import numpy as np

from .cards import NUM_CARDS, format_card, parse_card

# The ids are numbers every layer shares (the compiled kernels too), defined once in codes.py.
from .codes import BIG_GIN, DISCARD, DRAW_STOCK, KNOCK, NO_MOVE, NUM_ACTIONS, PASS, TAKE_DISCARD  # noqa: F401

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
    if words[0] == "knock":
        if len(words) != 2:
            raise ValueError("knock needs the card it discards face down, e.g. 'knock 7H'")
        return KNOCK + parse_card(words[1])
    if words[0] == "discard" and len(words) == 2:
        return DISCARD + parse_card(words[1])
    if len(words) == 1:
        return DISCARD + parse_card(words[0])
    raise ValueError(f"unknown move {text!r}")


# ---------------------------------------------------------------------- validation
# The one check of actions, for one game (the AEC env, the single-agent adapter) and for a
# batch (BatchGame, the vector envs): integers only, in range, legal. Nothing is converted
# silently (105.9 is not 105, "105" is not 105, True is not 1) and a refusal names the
# offending values, so a caller's bug never turns into a quietly different game.

def as_action(action: Any) -> int:
    """``action`` as an action id: Python and numpy integers only (``operator.index``), in
    ``0 .. NUM_ACTIONS - 1``. Anything else raises ``TypeError`` (str, float, bool, None) or
    ``ValueError`` (out of bounds), naming the value; nothing is converted silently."""
    if isinstance(action, (bool, np.bool_)):
        raise TypeError(f"action must be an integer action id, got the bool {action!r}")
    try:
        a = operator.index(action)
    except TypeError:
        raise TypeError(f"action must be an integer action id, got {action!r} "
                        f"({type(action).__name__})") from None
    if not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action {a} is out of bounds: action ids are 0..{NUM_ACTIONS - 1}")
    return a


def _rows(rows: np.ndarray, values: np.ndarray, limit: int = 8) -> str:
    shown = ", ".join(f"row {int(i)}: {v!r}" for i, v in zip(rows[:limit], values[:limit].tolist(), strict=True))
    more = f" (and {rows.size - limit} more)" if rows.size > limit else ""
    return shown + more


def as_actions(actions: Any, n: int, legal: np.ndarray | None = None, allow_no_move: bool = False) -> np.ndarray:
    """A batch of ``n`` actions, checked: an integer array of shape ``(n,)`` (no floats, bools,
    strings or NaN; no other shape, nothing flattened), every id in ``0 .. NUM_ACTIONS - 1``
    (or ``NO_MOVE`` where ``allow_no_move``) and, given ``legal`` (bool ``[n, NUM_ACTIONS]``),
    legal in its row. Returns it as int64; raises ``TypeError``/``ValueError`` naming the
    rows and values, before anything is applied."""
    a = np.asarray(actions)
    if a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and a.size and not np.isfinite(a).all():
            rows = np.flatnonzero(~np.isfinite(a.reshape(-1)))
            raise ValueError(f"actions must be finite integer action ids; got {_rows(rows, a.reshape(-1)[rows])}")
        raise TypeError(f"actions must be an integer array (one action id per game), got dtype "
                        f"{a.dtype} ({np.ravel(a)[:4].tolist()}...)")
    if a.shape != (n,):
        raise ValueError(f"actions must have shape ({n},) (one per game), got shape {a.shape}")
    low = NO_MOVE if allow_no_move else 0
    out = (a < low) | (a >= NUM_ACTIONS)
    if out.any():
        rows = np.flatnonzero(out)
        allowed = f"{NO_MOVE} (no move) or " if allow_no_move else ""
        raise ValueError(f"actions out of bounds (ids are {allowed}0..{NUM_ACTIONS - 1}): {_rows(rows, a[rows])}")
    a = a.astype(np.int64, copy=False)
    if legal is not None:
        moved = a >= 0
        ok = legal[np.arange(n), np.maximum(a, 0)] | ~moved
        if not ok.all():
            rows = np.flatnonzero(~ok)
            first = int(rows[0])
            names = ", ".join(f"{x} ({describe_action(int(x))})" for x in np.flatnonzero(legal[first]))
            raise ValueError(f"illegal actions: {_rows(rows, a[rows])}; legal in row {first}: {names}")
    return a
