"""The engine's numeric codes, each defined once: the action ids, the phases of a hand, the
kinds of a finished hand and the "no such discard" deadwood.

Why one module: the scalar engine (:mod:`hgin_env.game`), the numpy reference of the
batched step (:mod:`hgin_env.batch.tables`), its compiled mirror
(:mod:`hgin_env.batch.kernels`, :mod:`hgin_env.card_kernels`) and the loggers all read these
numbers; a copy in any one of them would drift silently (a compiled kernel freezes the value
it saw). The kernels import the plain ``int`` names below, which Numba freezes into the
machine code as constants; Python code may use the :class:`Phase` enum, whose members equal
them. This module imports nothing, so every layer may import it.
"""

from __future__ import annotations

from enum import IntEnum

# --------------------------------------------------------------------------- action ids
#: 0..51: discard card ``id`` (end the turn).
DISCARD = 0
#: 52..103: knock, discarding card ``id - 52`` face down.
KNOCK = 52
#: Draw the top card of the stock.
DRAW_STOCK = 104
#: Take the top card of the discard pile (or the first upcard).
TAKE_DISCARD = 105
#: Pass on the first upcard.
PASS = 106
#: Big gin: lay down all 11 cards (only if ``Rules.big_gin_bonus``).
BIG_GIN = 107
NUM_ACTIONS = 108
#: In a batch of actions (``BatchGame.step``): this row does not move.
NO_MOVE = -1


# --------------------------------------------------------------------------- phases
class Phase(IntEnum):
    """The phase of a hand (``Game.phase``; the batched tables' ``phase`` array holds the same
    numbers)."""

    FIRST_UPCARD = 0  # take or pass the first upcard
    DRAW = 1  # draw from the stock or take the discard
    DISCARD = 2  # discard, knock (or big gin)
    HAND_OVER = 3  # a single-hand game has ended (a batched table waiting for its next deal)
    MATCH_OVER = 4


#: The phases as plain ints (for the compiled kernels, and fast: an enum member's attribute
#: lookup is slow on Python 3.11).
PHASE_FIRST_UPCARD = int(Phase.FIRST_UPCARD)
PHASE_DRAW = int(Phase.DRAW)
PHASE_DISCARD = int(Phase.DISCARD)
PHASE_HAND_OVER = int(Phase.HAND_OVER)
PHASE_MATCH_OVER = int(Phase.MATCH_OVER)

# --------------------------------------------------------------------------- hand kinds
#: The kinds of a finished hand (``HandResult.kind``), numbered as the batched engine reports
#: them (``StepResult.hand_kind``; 0 = no hand ended in that row).
HAND_KINDS = ("", "dead", "knock", "gin", "big_gin", "undercut")
KIND_CODE = {k: i for i, k in enumerate(HAND_KINDS)}
DEAD_KIND = KIND_CODE["dead"]
KNOCK_KIND = KIND_CODE["knock"]
GIN_KIND = KIND_CODE["gin"]
BIG_GIN_KIND = KIND_CODE["big_gin"]
UNDERCUT_KIND = KIND_CODE["undercut"]
#: The kinds of a hand that scores (every kind but a dead hand), in code order: the columns of
#: the episode summaries and the training logs.
SCORED_KINDS = HAND_KINDS[KNOCK_KIND:]

# --------------------------------------------------------------------------- deadwood
#: "No such discard": the deadwood in an after-discard row for a card not held (and the take
#: deadwood where no card can be taken); above every real deadwood (at most 98).
NO_DW = 10_000
