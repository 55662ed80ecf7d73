"""THE observer: the observation dict every agent gets, of a ``Hand`` player or a
:class:`~hgin_env.match.Match` seat of any format (:func:`observe`), and a seat's vector
(:func:`encode_seat`: its table's, then the match context)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..actions import NUM_ACTIONS
from ..game import Hand
from .cache import CONTEXT_CACHE
from .context import format_context
from .encoders import encode
from .layout import _size, _slices, context_start

if TYPE_CHECKING:
    from ..match import Match


#: Private parts of a table vector, zeroed for a seat sitting out (it holds no cards).
_SITTER_ZERO = ("hand", "opponent_known", "opponent_discards", "own_discards", "deadwood",
                "phase", "opponent_passed")


def encode_seat(match: Match, seat: int, engine: str | None = None) -> np.ndarray:
    """The observation vector of ``seat`` in a :class:`~hgin_env.match.Match` of any format,
    in the layout ``ObservationLayout.for_rules(match.rules)``.

    Duel: exactly :func:`encode`. Three-hand and partnership: the seat's own table as in
    the duel (a seat sitting out sees only the table's public cards: the discard pile, the
    stock size, the knock limit; ``is_dealer`` = 1 since the sitter dealt), the sheet's
    ``own_*``/``opponent_*`` slices for its row (its team's, in a partnership) against its
    opponent's row (its current opponent; the other team), then the format slices. Only
    what the seat could know: its own cards and public facts; never its partner's cards.
    ``engine``: the table part's encoder (:func:`~hgin_env.observation.encoders.encode`).
    """
    if match.format == "duel":
        return encode(match.tables[0].game, seat, engine=engine)
    rules = match.rules
    columns = rules.columns
    layout = _slices(columns, match.format)
    vec = np.zeros(_size(columns, match.format), dtype=np.float32)
    start = context_start(columns)
    view = match.seat_view(seat)
    if view is None:  # sitting out (three-hand): the public cards of the table
        vec[:start] = encode(match.tables[0].game, 0, engine=engine)[:start]
        for name in _SITTER_ZERO:
            vec[layout[name]] = 0.0
        for name in ("discard_deadwood", "take_deadwood", "is_dealer"):
            vec[layout[name]] = 1.0
    else:
        game, player = view
        vec[:start] = encode(game, player, engine=engine)[:start]
    key = len(match.hand_history)  # the context changes only when a hand ends
    context = CONTEXT_CACHE.get(match, seat, key)
    if context is None:
        context = format_context(match, seat, view is None)
        CONTEXT_CACHE.put(match, seat, key, context)
    vec[start:] = context
    return vec


def observation_dict(vector: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    """THE observation dict's shape, written here only: ``{"observation": float32 vector,
    "action_mask": int8[108]}``. :func:`observe` builds it from the engine; the batched
    agents' row-by-row adapter and the RLlib adapter build it from vectors made elsewhere."""
    return {"observation": vector, "action_mask": mask}


def observe(state: Hand | Match, who: int, engine: str | None = None) -> dict[str, np.ndarray]:
    """THE observation dict every agent gets, built here only: ``{"observation": vector,
    "action_mask": int8[108]}`` of player ``who`` of a ``Hand`` (a duel's hand, a
    search world, a format's table) or seat ``who`` of a
    :class:`~hgin_env.match.Match` (any format). The mask is all zeros unless ``who`` acts
    (a waiting or sitting-out seat, or a finished game or match).

    The env, :meth:`Match.observation <hgin_env.match.Match.observation>` (so
    ``run_match``), determinization and search rollouts all call this, so the dict an
    agent sees cannot differ between them. ``engine``: the encoder's (None: the process's
    choice, :data:`~hgin_env.observation.encoders.DEFAULT_ENGINE`).
    """
    if not isinstance(state, Hand):  # a Match (a Hand is observed as it is)
        if state.format != "duel":  # three-hand, partnership: the seat's table plus the match context
            return observation_dict(encode_seat(state, who, engine), state.legal_action_mask(who))
        # The duel: exactly its hand's dict, whose context rows are the match's sheet
        # (encode_seat would say the same); the last hand once the match is over.
        state = state.current_game
    # A bytearray filled in Python and viewed once is faster than np.zeros + fancy indexing
    # for ~10 legal actions, and the array owns a fresh buffer (callers may keep it).
    mask = bytearray(NUM_ACTIONS)
    if who == state.current_player and not state.is_over:
        for a in state.legal_actions():
            mask[a] = 1
    return observation_dict(encode(state, who, engine=engine), np.frombuffer(mask, dtype=np.int8))
