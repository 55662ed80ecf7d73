"""The scalar encoders: a player's observation vector of one :class:`~hgin_env.game.Hand`, on
either engine, bit for bit the same.

Two implementations of one function: the Python reference (:func:`_encode_python`) and the
compiled path (:func:`hgin_env.card_kernels.encode_table_row` writes the table part in one
call). Which one runs is passed in (``encode(..., engine=...)``, ``observe(..., engine=...)``,
``raw_env(engine=...)``), as ``BatchGame(engine=...)`` picks the batched engine's; without
one, the process's choice (:data:`DEFAULT_ENGINE`, fixed at import: ``HGIN_ENGINE``, else
compiled where numba is installed) runs. The differential passes "numpy" so that the
compiled batched engine is checked against independent code.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ..cards import NUM_CARDS
from ..codes import Phase
from ..compiled import resolve_engine
from ..game import Hand
from ..melds import cached_after_discard, cached_deadwood
from .context import game_context_bytes
from .layout import (
    _CARD_SLICES,
    _SCALARS,
    DEADWOOD_FRACTIONS,
    KNOCK_LIMIT_SCALE,
    STOCK_SCALE,
    _slices,
    context_start,
)

#: An encoder: (game, player, out=None) -> the observation vector (``out`` if given).
Encoder = Callable[..., np.ndarray]


def mask_bits(mask: int) -> np.ndarray:
    """The 52 bits of a hand mask as a uint8 vector (card id order)."""
    return np.unpackbits(np.frombuffer(mask.to_bytes(7, "little"), dtype=np.uint8),
                         bitorder="little")[:NUM_CARDS]


@lru_cache(maxsize=1 << 14)
def take_deadwood(hand: int, card: int) -> int:
    """Best deadwood reachable by adding ``card`` and discarding any other card."""
    after = cached_after_discard(hand | 1 << card)
    return min(dw for c, dw in after.items() if c != card)


def _byte_floats() -> list[bytes]:
    """For each byte value: its 8 bits, low bit first, as float32 bytes (for :func:`encode`)."""
    bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")
    return [row.astype(np.float32).tobytes() for row in bits]


_BYTE_FLOATS = _byte_floats()
_BYTE_FLOAT_OF = _BYTE_FLOATS.__getitem__
_BIT_OF = {c: 1 << c for c in range(NUM_CARDS)}.__getitem__
_ONES_52 = np.ones(NUM_CARDS, dtype=np.float32).tobytes()
_PACK_52 = struct.Struct(f"<{NUM_CARDS}f").pack
_PACK_SCALARS = struct.Struct("<10f").pack
_DISCARD = Phase.DISCARD
_HAND_OVER = Phase.HAND_OVER
_DRAWING = (Phase.FIRST_UPCARD, Phase.DRAW)
_PHASE_ONE_HOT = {Phase.FIRST_UPCARD: (1.0, 0.0, 0.0), Phase.DRAW: (0.0, 1.0, 0.0),
                  Phase.DISCARD: (0.0, 0.0, 1.0)}
_NO_PHASE = (0.0, 0.0, 0.0)
_FRACTION = DEADWOOD_FRACTIONS
#: What the compiled path passes to the kernel: the starts of the table slices (in
#: ``card_kernels.write_table_row``'s order), the stock and knock-limit scales, the deadwood
#: numbers; the table part ends where the match context starts.
_OFFSETS = np.array([_slices(3)[name].start for name in (*_CARD_SLICES, *(n for n, _ in _SCALARS))],
                    dtype=np.int64)
_SCALES = np.array([STOCK_SCALE, KNOCK_LIMIT_SCALE], dtype=np.float64)
_FRACTIONS = np.array(DEADWOOD_FRACTIONS, dtype=np.float32)
_TABLE_SIZE = context_start(3)


def _check_packed_order() -> None:
    """:func:`encode` writes the vector as one byte string: the card slices are back to back
    (52 bits each, 39 bytes for the six bit slices), then the scalars, then the context."""
    sl = _slices(3)
    starts = [sl[name].start for name in _CARD_SLICES]
    assert starts == [i * NUM_CARDS for i in range(len(_CARD_SLICES))]
    offset = sl["deadwood"].start
    assert offset == len(_CARD_SLICES) * NUM_CARDS
    for name, size in _SCALARS:
        assert sl[name] == slice(offset, offset + size), name
        offset += size
    assert offset == 10 + sl["deadwood"].start and offset == context_start(3)


def _encode_python(game: Hand, player: int, out: np.ndarray | None = None) -> np.ndarray:
    """:func:`encode`'s reference path (the engine "numpy"): built as one float32 byte
    string (C-level joins of precomputed per-byte floats) and turned into an array once.
    The compiled mirror of its table part is :func:`hgin_env.card_kernels.encode_table_row`."""
    opp = 1 - player
    hand = game.hands[player]
    pile = game.discard_pile
    if pile:
        top_card = pile[-1]
        top = 1 << top_card
        rest = sum(map(_BIT_OF, pile)) & ~top  # pile cards are distinct: the sum is their union
    else:
        top = rest = 0
    discarded = game.discarded
    bits = (hand | top << 52 | rest << 104 | game.known_cards[opp] << 156 | discarded[opp] << 208
            | discarded[player] << 260)
    parts = list(map(_BYTE_FLOAT_OF, bits.to_bytes(39, "little")))

    phase = game.phase
    acting = game.current_player == player and phase < _HAND_OVER  # not game.is_over
    if acting and phase == _DISCARD:
        dd = [1.0] * NUM_CARDS
        for c, dw in game.deadwood_after_discard().items():
            dd[c] = _FRACTION[dw]
        parts.append(_PACK_52(*dd))
    else:
        parts.append(_ONES_52)
    take = 1.0
    if acting and pile and phase in _DRAWING and not game.forced_stock_draw:
        take = _FRACTION[take_deadwood(hand, top_card)]
    p0, p1, p2 = _PHASE_ONE_HOT.get(phase, _NO_PHASE)
    parts.append(_PACK_SCALARS(
        _FRACTION[cached_deadwood(hand)], take, len(game.stock) / STOCK_SCALE, p0, p1, p2,
        game.knock_limit / KNOCK_LIMIT_SCALE, float(game.multiplier > 1), float(game.dealer == player),
        float(game.passed_upcard[opp])))
    parts.append(game_context_bytes(game, player))
    vec = np.frombuffer(b"".join(parts), dtype=np.float32)
    if out is None:
        return vec.copy()
    out[:] = vec
    return out


def _compiled_encoder() -> Encoder:
    """:func:`encode`'s compiled path (the engine "numba"): the table part written by one
    kernel call, the match context copied from its cache. Built on first use, so that the
    reference path never imports numba."""
    from ..card_kernels import encode_table_row

    def encode_compiled(game: Hand, player: int, out: np.ndarray | None = None) -> np.ndarray:
        opp = 1 - player
        pile = game.discard_pile
        if pile:
            top_card = pile[-1]
            rest = sum(map(_BIT_OF, pile)) & ~(1 << top_card)
        else:
            top_card, rest = -1, 0
        context = game_context_bytes(game, player)
        vec = np.empty(_TABLE_SIZE + len(context) // 4, dtype=np.float32) if out is None else out
        phase = game.phase
        encode_table_row(
            vec, _OFFSETS, _SCALES, _FRACTIONS, game.hands[player], top_card, rest, game.known_cards[opp],
            game.discarded[opp], game.discarded[player], int(phase),
            game.current_player == player and phase < _HAND_OVER, phase in _DRAWING and not game.forced_stock_draw,
            len(game.stock), game.knock_limit, game.multiplier > 1, game.dealer == player, game.passed_upcard[opp])
        vec[_TABLE_SIZE:] = np.frombuffer(context, dtype=np.float32)
        return vec

    return encode_compiled


#: The encoders built so far, by engine name (the compiled one on first use).
_ENCODERS: dict[str, Encoder] = {"numpy": _encode_python}


def encoder(engine: str | None = None) -> Encoder:
    """The encode function of ``engine`` ("numba": the compiled path, "numpy": the Python
    reference; None: :func:`~hgin_env.compiled.resolve_engine`'s choice). An unknown engine,
    or "numba" without numba, raises ``ValueError`` naming the problem."""
    name = resolve_engine(engine)
    fn = _ENCODERS.get(name)
    if fn is None:
        fn = _ENCODERS[name] = _compiled_encoder()
    return fn


#: The engine :func:`encode` runs when none is passed, chosen once at import (``HGIN_ENGINE``,
#: else compiled where numba is installed): a choice per call would cost an environment
#: lookup per observation.
DEFAULT_ENGINE = resolve_engine()
_DEFAULT_ENCODE = encoder(DEFAULT_ENGINE)


def encode(game: Hand, player: int, out: np.ndarray | None = None, engine: str | None = None) -> np.ndarray:
    """The observation vector of ``player`` (reads public state and that player's hand).

    ``engine``: "numba" (compiled), "numpy" (the Python reference) or None
    (:data:`DEFAULT_ENGINE`); both give the same vector bit for bit
    (tests/test_compiled_engine.py)."""
    return (_DEFAULT_ENCODE if engine is None else encoder(engine))(game, player, out)


_check_packed_order()
