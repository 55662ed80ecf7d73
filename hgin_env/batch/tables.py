"""The batched engine's bottom layer: T two-player tables as numpy arrays, each playing
one hand of :class:`~hgin_env.game.Game` at a time (the duel's core).

A table knows only its two players (0 and 1), its deal and its hand: hands as 52-bit
masks in ``uint64``, the deal's card order, the discard pile as a stack, phase, counters,
and the deadwood tables of the acting player that the masks and observations read. Who
sits at a table, who deals, which table acts and what a hand's result does to a sheet is
the match layer's (:mod:`hgin_env.batch.formats`, :class:`hgin_env.batch.BatchGame`): in a
duel table ``i`` is match ``i``; a three-hand match has one table, a partnership two.

Every transition is one vectorised pass over the tables that move; what happens once per
hand (the showdown) is the exact scalar :func:`hgin_env.scoring.settle`.
"""

from __future__ import annotations

import numpy as np

from .. import actions as A
from ..cards import CARD_VALUES, NUM_CARDS, NUM_RANKS, RANK_VALUES, mask_to_cards
from ..codes import HAND_KINDS, NO_DW, PHASE_DISCARD, PHASE_DRAW, PHASE_FIRST_UPCARD
from ..compiled import resolve_engine
from ..melds import deadwood_without_batch, min_deadwood_batch
from ..observation import DEADWOOD_FRACTIONS, KNOCK_LIMIT_SCALE, STOCK_SCALE, ObservationLayout
from ..rules import Rules
from ..scoring import HandResult, settle
from .state import TableState

_BIT = np.array([1 << c for c in range(NUM_CARDS)], dtype=np.uint64)
_NO_DW = np.int16(NO_DW)  # "no such discard" in the after-discard table, at the table's dtype
#: The observation's value of every deadwood (``encode``'s: clipped at 100 -> 1.0).
FRACTION = np.array(DEADWOOD_FRACTIONS, dtype=np.float32)
#: The observation's value of every entry of the after-discard table (``_NO_DW`` = 1.0).
_DD_VALUE = np.ones(int(_NO_DW) + 1, dtype=np.float32)
_DD_VALUE[:341] = FRACTION
#: The six bit slices of the observation, in the order ``observations`` stacks them.
_BIT_SLICES = ("hand", "discard_top", "discard_rest", "opponent_known", "opponent_discards", "own_discards")
#: The other slices the compiled observation writes, in the order its offsets take them
#: (``kernels.table_observations``); ``own_columns`` starts the match's context.
_OBS_SCALARS = ("discard_deadwood", "deadwood", "take_deadwood", "stock_size", "phase", "knock_limit", "doubled",
                "is_dealer", "opponent_passed", "own_columns")



def bits(masks: np.ndarray) -> np.ndarray:
    """52-bit masks (uint64, any shape) -> uint8 0/1 array with a trailing axis of 52."""
    m = np.ascontiguousarray(masks, dtype=np.uint64)
    b = np.unpackbits(m.view(np.uint8).reshape(m.shape + (8,)), axis=-1, bitorder="little")
    return b[..., :NUM_CARDS]


def cards_of_masks(masks: np.ndarray, count: int) -> np.ndarray:
    """Card ids of each mask (all holding exactly ``count`` cards), ascending: int64 [n, count]."""
    n = masks.shape[0]
    if n == 0:
        return np.zeros((0, count), dtype=np.int64)
    # One flat scan of the 0/1 bytes seen as bools (several times faster than a 2-D
    # ``nonzero`` of the uint8 array), then each row's offset off.
    flat = np.flatnonzero(bits(masks).view(bool))
    return flat.reshape(n, count) - (np.arange(n) * NUM_CARDS)[:, None]


_CARD_VALUE = np.array(CARD_VALUES, dtype=np.int16)


def deadwood_of_eleven(hands: np.ndarray, after: np.ndarray) -> np.ndarray:
    """The minimum deadwood of 11-card hands (int16 [k]) from their after-discard tables
    (``after[i, c]``: the deadwood of the hand without card c, ``_NO_DW`` for cards not held).

    Why it is exact: if the best arrangement of the 11 cards leaves a card c unmelded, its
    deadwood is the best of the 10 others plus c's value, so it is ``min_c(after[c] +
    value(c))``; otherwise all 11 cards meld (deadwood 0), which needs a meld of 4 or more
    (11 cards in melds of 3 cannot be), one of whose cards leaves the rest melded: the
    table holds a 0. Only the rows with a 0 (a gin discard) are solved again to tell the two
    apart (:func:`~hgin_env.melds.min_deadwood_batch`): few, against every discard-phase row.
    """
    held = after < _NO_DW
    out = np.where(held, after + _CARD_VALUE, _NO_DW).min(axis=1).astype(np.int16)
    gin = np.flatnonzero((np.where(held, after, _NO_DW).min(axis=1) == 0) & (out > 0))
    if gin.size:
        out[gin] = min_deadwood_batch(hands[gin])
    return out


class TableBatch:
    """T two-player tables, one hand each (see the module docstring). The arrays are
    indexed by table; ``current_player[t]`` is the player (0 or 1) to act at table ``t``."""

    def __init__(self, tables: int, rules: Rules, layout: ObservationLayout, engine: str | None = None):
        t = tables
        #: "numba" (the compiled kernels, :mod:`hgin_env.batch.kernels`) or "numpy" (this
        #: module's methods, the reference); see :func:`hgin_env.compiled.resolve_engine`.
        self.engine = resolve_engine(engine)
        self.rules = rules
        self.layout = layout
        self._slices = layout.slices
        self.table_range = np.arange(t)
        #: THE table state (:class:`~hgin_env.batch.state.TableState`): the numpy methods
        #: below read it as the kernels do (``st = self.state``); readers outside the engine
        #: may use the read-only attributes of the same names (``batch.hands is
        #: batch.state.hands``, :func:`_state_field`).
        self.state = TableState.zeros(t)
        # The numpy reference's reused work: the take computation (hand + face-up card minus
        # each held card), which is the after-discard table if the card is then taken.
        self._take_rows = np.zeros((t, 10), dtype=np.int16)
        self._take_cards = np.zeros((t, 10), dtype=np.int64)
        self._after_ready = np.zeros(t, dtype=bool)
        self._big_gin = rules.big_gin_bonus is not None
        # Where the layout puts the six bit slices back to back, one block write fills them.
        starts = [self._slices[name].start for name in _BIT_SLICES]
        self._bit_block = slice(starts[0], starts[0] + 6 * NUM_CARDS) \
            if starts == [starts[0] + k * NUM_CARDS for k in range(6)] else None
        self._kernels = None
        if self.engine == "numba":
            self._setup_kernels()

    #: What :meth:`_setup_kernels` derives (the module, the kernels' view of the state, the
    #: rules as ints): not copied or pickled but derived again, so that a copy's views are of
    #: its own arrays.
    _KERNEL_FIELDS = ("_kernels", "_kernel_state", "_deal_rules", "_step_rules", "_ended", "_settled",
                      "_obs_offsets")

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in self._KERNEL_FIELDS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._kernels = None
        if self.engine == "numba":
            self._setup_kernels()

    def _setup_kernels(self) -> None:
        """The compiled engine's view of the state (:meth:`TableState.for_kernels`), the rules
        as ints, the showdown results, the observation offsets."""
        from . import kernels

        self._kernels = kernels
        r = self.rules
        self._kernel_state = self.state.for_kernels()
        self._deal_rules = np.array([r.oklahoma, r.oklahoma_ace_gin_only, r.spade_multiplier, r.knock_limit,
                                     r.first_upcard_offer], dtype=np.int64)
        self._step_rules = np.array([r.dead_hand_stock, r.max_turns, r.gin_bonus, r.undercut_bonus,
                                     -1 if r.big_gin_bonus is None else r.big_gin_bonus], dtype=np.int64)
        n = self.table_range.size
        self._ended = np.zeros(n, dtype=np.int64)
        #: Per table: the showdown of the hand the last step ended (kind code, knocker wins, points).
        self._settled = np.zeros((n, 3), dtype=np.int64)
        s = self._slices
        self._obs_offsets = np.array([s[name].start for name in _BIT_SLICES + _OBS_SCALARS], dtype=np.int64)

    # ------------------------------------------------------------------ dealing
    def deal_tables(self, idx: np.ndarray, decks: np.ndarray, dealer: np.ndarray) -> None:
        """Deal a hand at tables ``idx`` from ``decks`` (int [k, 52]) with ``dealer`` (the
        player, 0 or 1, with the dealer's part), exactly as ``Game._deal`` deals a deck:
        cards 0..19 alternately to the non-dealer and the dealer, 20 the upcard, the rest
        the stock in drawing order. The caller refreshes the derived state."""
        st = self.state
        if idx.size == 0:
            return
        if self._kernels is not None:
            self._kernels.deal_tables(np.ascontiguousarray(idx, dtype=np.int64),
                                      np.ascontiguousarray(decks, dtype=np.int64),
                                      np.ascontiguousarray(dealer, dtype=np.int64), self._kernel_state,
                                      self._deal_rules)
            return
        st.decks[idx] = decks
        st.dealer[idx] = dealer
        first = np.bitwise_or.reduce(_BIT[decks[:, 0:20:2]], axis=1)  # the non-dealer's cards
        second = np.bitwise_or.reduce(_BIT[decks[:, 1:20:2]], axis=1)
        st.hands[idx, 1 - dealer] = first
        st.hands[idx, dealer] = second
        st.dw10[idx] = min_deadwood_batch(st.hands[idx])
        up = decks[:, 20]
        st.pile[idx, 0] = up
        st.pile_len[idx] = 1
        st.pile_mask[idx] = _BIT[up]
        st.stock_pos[idx] = 21
        r = self.rules
        if r.oklahoma:
            rank = up % NUM_RANKS
            limit = np.asarray(RANK_VALUES)[rank]
            if r.oklahoma_ace_gin_only:
                limit = np.where(rank == 0, 0, limit)
            st.knock_limit[idx] = limit
            st.multiplier[idx] = np.where(up // NUM_RANKS == 3, r.spade_multiplier, 1)
        else:
            st.knock_limit[idx] = r.knock_limit
            st.multiplier[idx] = 1
        st.current_player[idx] = 1 - dealer
        # As ``Game._deal``: without the offer (004) the non-dealer starts with a normal draw.
        st.phase[idx] = PHASE_FIRST_UPCARD if r.first_upcard_offer else PHASE_DRAW
        st.taken[idx] = -1
        st.forced[idx] = False
        st.known[idx] = 0
        st.discarded[idx] = 0
        st.passed[idx] = False
        st.turns[idx] = 0
        self._after_ready[idx] = False

    # ------------------------------------------------------------------ derived state
    def refresh_tables(self, idx: np.ndarray) -> None:
        """Deadwood tables of the acting player of tables ``idx``: now, after each discard,
        after taking the face-up card."""
        st = self.state
        if idx.size == 0:
            return
        if self._kernels is not None:
            self._kernels.refresh_tables(np.ascontiguousarray(idx, dtype=np.int64), self._kernel_state)
            return
        p = st.current_player[idx]
        hand = st.hands[idx, p]
        phase = st.phase[idx]
        disc = phase == PHASE_DISCARD
        # Discard phase: deadwood after discarding each of the 11 cards (after a take the
        # step has filled it from the take computation).
        ready = self._after_ready[idx]
        st.after[idx[~ready]] = _NO_DW
        sel = np.flatnonzero(disc & ~ready)
        if sel.size:
            h = hand[sel]
            cards = cards_of_masks(h, 11)
            st.after[idx[sel, None], cards] = deadwood_without_batch(h, cards)
        self._after_ready[idx] = False
        # Deadwood now: the cached 10-card value; an 11-card hand's from its after-discard
        # table (below).
        dw = st.dw10[idx, p]
        sel = np.flatnonzero(disc)
        if sel.size:
            dw[sel] = deadwood_of_eleven(hand[sel], st.after[idx[sel]])
        st.dw_now[idx] = dw
        # Draw phases: best deadwood after taking the face-up card and discarding another.
        st.take_dw[idx] = _NO_DW
        can = (phase < PHASE_DISCARD) & (st.pile_len[idx] > 0) & ~st.forced[idx]
        st.can_take[idx] = can
        sel = np.flatnonzero(can)
        if sel.size:
            g = idx[sel]
            h = hand[sel]
            top = st.pile[g, st.pile_len[g] - 1]
            cards = cards_of_masks(h, 10)
            rows = deadwood_without_batch(h | _BIT[top], cards)
            self._take_rows[g] = rows
            self._take_cards[g] = cards
            st.take_dw[g] = rows.min(axis=1)

    def table_masks(self, t: np.ndarray | None, m: np.ndarray) -> None:
        """Fill ``m`` (bool [k, 108], all False) with the legal actions of the acting player
        of tables ``t`` (None: every table, in order)."""
        st = self.state
        if self._kernels is not None:
            tables = self.table_range if t is None else np.ascontiguousarray(t, dtype=np.int64)
            self._kernels.table_masks(tables, m, self._kernel_state, self._big_gin)
            return
        if t is None:
            phase, can_take, after, taken = st.phase, st.can_take, st.after, st.taken
            limit, dw_now = st.knock_limit, st.dw_now
        else:
            phase, can_take, after, taken = st.phase[t], st.can_take[t], st.after[t], st.taken[t]
            limit, dw_now = st.knock_limit[t], st.dw_now[t]
        up = phase == PHASE_FIRST_UPCARD
        m[up, A.TAKE_DISCARD] = True
        m[up, A.PASS] = True
        draw = phase == PHASE_DRAW
        m[draw, A.DRAW_STOCK] = True
        m[draw & can_take, A.TAKE_DISCARD] = True
        disc = np.flatnonzero(phase == PHASE_DISCARD)
        if disc.size:
            after = after[disc]
            held = after < _NO_DW
            taken = taken[disc]
            has_taken = taken >= 0
            held[has_taken, taken[has_taken]] = False
            m[disc, A.DISCARD:A.DISCARD + NUM_CARDS] = held
            m[disc, A.KNOCK:A.KNOCK + NUM_CARDS] = held & (after <= limit[disc, None])
            if self._big_gin:
                m[disc, A.BIG_GIN] = dw_now[disc] == 0

    def table_observations(self, o: np.ndarray, t: np.ndarray | None) -> None:
        """Write the table slices (``hand`` .. ``opponent_passed``) of the acting player of
        table ``t[k]`` (None: every table, in order) into row k of ``o``, as
        ``observation.encode`` builds them."""
        st = self.state
        s = self._slices
        if t is None:  # every table (a duel, three-hand): whole arrays, no gathers
            t = self.table_range
            pile_len, pile_mask, after, dw_now, take_dw, stock_pos = (
                st.pile_len, st.pile_mask, st.after, st.dw_now, st.take_dw, st.stock_pos)
            phase, limit, multiplier, dealer = st.phase, st.knock_limit, st.multiplier, st.dealer
        else:
            pile_len, pile_mask, after, dw_now, take_dw, stock_pos = (
                st.pile_len[t], st.pile_mask[t], st.after[t], st.dw_now[t], st.take_dw[t],
                st.stock_pos[t])
            phase, limit, multiplier, dealer = st.phase[t], st.knock_limit[t], st.multiplier[t], st.dealer[t]
        p = st.current_player[t]
        k = p.shape[0]
        q = 1 - p
        top_card = st.pile[t, np.maximum(pile_len - 1, 0)]
        top = np.where(pile_len > 0, _BIT[top_card], np.uint64(0))
        masks = np.empty((k, 6), dtype=np.uint64)
        masks[:, 0] = st.hands[t, p]
        masks[:, 1] = top
        masks[:, 2] = pile_mask & ~top
        masks[:, 3] = st.known[t, q]
        masks[:, 4] = st.discarded[t, q]
        masks[:, 5] = st.discarded[t, p]
        b = bits(masks)
        if self._bit_block is not None:
            o[:, self._bit_block] = b.reshape(k, 6 * NUM_CARDS)
        else:
            for j, name in enumerate(_BIT_SLICES):
                o[:, s[name]] = b[:, j]
        o[:, s["discard_deadwood"]] = _DD_VALUE[after]
        o[:, s["deadwood"].start] = FRACTION[dw_now]
        o[:, s["take_deadwood"].start] = _DD_VALUE[take_dw]
        o[:, s["stock_size"].start] = (NUM_CARDS - stock_pos) / STOCK_SCALE
        o[:, s["phase"]] = 0.0
        o[np.arange(k), s["phase"].start + phase] = 1.0
        o[:, s["knock_limit"].start] = limit / KNOCK_LIMIT_SCALE
        o[:, s["doubled"].start] = multiplier > 1
        o[:, s["is_dealer"].start] = dealer == p
        o[:, s["opponent_passed"].start] = st.passed[t, q]

    def observe_tables(self, o: np.ndarray, tables: np.ndarray, matches: np.ndarray, seats: np.ndarray,
                       context: np.ndarray) -> None:
        """The compiled engine's observation rows (numpy: :meth:`table_observations` and a
        copy of the context): row k of ``o`` is the acting player's observation at table
        ``tables[k]``, followed by ``context[i, seats[i]]`` with ``i = matches[k]``."""
        self._kernels.table_observations(o, tables, matches, seats, context, self._obs_offsets, self._kernel_state)

    # ------------------------------------------------------------------ stepping
    def step_tables(self, a: np.ndarray) -> list[int]:
        """Apply ``a[t]`` (a legal action id, or -1: the table waits) at every table and
        refresh the derived state of the tables that moved on; returns the tables whose hand
        the action ended, ascending (:meth:`apply_tables`): the caller settles them
        (:meth:`settle_table`), deals, and refreshes them."""
        if self._kernels is not None:
            n_ended = self._kernels.apply_tables(a, self._kernel_state, self._step_rules, self._ended, self._settled)
            return self._ended[:n_ended].tolist()
        ended = self.apply_tables(a)
        moved = np.flatnonzero(a >= 0)
        self.refresh_tables(np.setdiff1d(moved, ended, assume_unique=True) if ended else moved)
        return ended

    def apply_tables(self, a: np.ndarray) -> list[int]:
        """Apply ``a[t]`` (a legal action id, or -1: the table waits) at every table; returns
        the tables whose hand the action ended (a knock, big gin, or a discard at the
        dead-hand stock or the turn cap), ascending. The caller settles and redeals them."""
        st = self.state
        p = st.current_player
        # Pass on the first upcard.
        g = np.flatnonzero(a == A.PASS)
        if g.size:
            pg = p[g]
            st.passed[g, pg] = True
            nondealer = pg != st.dealer[g]
            st.current_player[g] = np.where(nondealer, st.dealer[g], 1 - st.dealer[g])
            dealer_passed = g[~nondealer]
            st.phase[dealer_passed] = PHASE_DRAW
            st.forced[dealer_passed] = True
        # Draw from the stock.
        g = np.flatnonzero(a == A.DRAW_STOCK)
        if g.size:
            card = st.decks[g, st.stock_pos[g]]
            st.stock_pos[g] += 1
            st.hands[g, p[g]] |= _BIT[card]
            st.taken[g] = -1
            st.forced[g] = False
            st.phase[g] = PHASE_DISCARD
            st.turns[g] += 1
        # Take the discard (or the first upcard).
        g = np.flatnonzero(a == A.TAKE_DISCARD)
        if g.size:
            st.pile_len[g] -= 1
            card = st.pile[g, st.pile_len[g]]
            bit = _BIT[card]
            st.pile_mask[g] &= ~bit
            st.hands[g, p[g]] |= bit
            st.known[g, p[g]] |= bit
            st.taken[g] = card
            st.phase[g] = PHASE_DISCARD
            st.turns[g] += 1
            # The after-discard table of the 11 cards is what the take computation found.
            st.after[g] = _NO_DW
            st.after[g[:, None], self._take_cards[g]] = self._take_rows[g]
            st.after[g, card] = st.dw10[g, p[g]]
            self._after_ready[g] = True
        # Discard or knock: the card leaves the hand.
        g = np.flatnonzero((a >= 0) & (a < A.DRAW_STOCK))
        ended: list[int] = []
        if g.size:
            ag = a[g]
            is_knock = ag >= A.KNOCK
            card = np.where(is_knock, ag - A.KNOCK, ag - A.DISCARD)
            notbit = ~_BIT[card]
            pg = p[g]
            st.hands[g, pg] &= notbit
            st.known[g, pg] &= notbit
            d = g[~is_knock]
            if d.size:
                dcard = card[~is_knock]
                pd = pg[~is_knock]
                st.dw10[d, pd] = st.after[d, dcard]  # the 10 cards kept
                bit = _BIT[dcard]
                st.discarded[d, pd] |= bit
                st.pile[d, st.pile_len[d]] = dcard
                st.pile_len[d] += 1
                st.pile_mask[d] |= bit
                stock = NUM_CARDS - st.stock_pos[d]
                dead = stock <= self.rules.dead_hand_stock
                if self.rules.max_turns:
                    dead |= st.turns[d] >= self.rules.max_turns
                go_on = d[~dead]
                st.current_player[go_on] = 1 - pd[~dead]
                st.phase[go_on] = PHASE_DRAW
                st.taken[go_on] = -1
                ended += d[dead].tolist()
            ended += g[is_knock].tolist()
        ended += np.flatnonzero(a == A.BIG_GIN).tolist()
        ended.sort()
        return ended

    def settle_table(self, t: int, action: int) -> HandResult | None:
        """The showdown of the hand that ``action`` ended at table ``t`` (the exact
        :func:`~hgin_env.scoring.settle`; its ``winner`` is "knocker" or "defender", the
        knocker being ``current_player[t]``), or None for a dead hand."""
        st = self.state
        if action < A.KNOCK:
            return None
        if self._kernels is not None:  # settled by the step's kernel
            kind, knocker_wins, points = self._settled[t].tolist()
            return HandResult(kind=HAND_KINDS[kind], winner="knocker" if knocker_wins else "defender", points=points)
        k = int(st.current_player[t])
        return settle(mask_to_cards(int(st.hands[t, k])), mask_to_cards(int(st.hands[t, 1 - k])),
                      self.rules, knock_limit=int(st.knock_limit[t]), multiplier=int(st.multiplier[t]))


def _state_field(name: str) -> property:
    """``batch.<name>``: the record's array of that name, for readers outside the engine (the
    soak, the search, the tests). Read-only, so that nothing rebinds an array behind the
    record's back: the engine itself reads ``self.state``."""
    return property(lambda self: getattr(self.state, name), doc=f"``state.{name}`` (:class:`TableState`).")


for _name in TableState._fields:
    setattr(TableBatch, _name, _state_field(_name))
