"""A batched engine: N two-player Hollywood Gin matches as arrays, stepped by one call.

Why: a learner needs thousands of decisions per second, and per-game Python (one
``Game.apply`` plus one ``encode`` per decision) costs microseconds of interpreter time
each. Here the state of N matches lives in numpy arrays (hands as 52-bit masks in
``uint64``, each deal's card order, the discard pile as a stack, phase, counters), and one
``step(actions)`` applies N actions with a handful of vectorised operations, in the spirit
of pgx and EnvPool but with numpy on a CPU.

What stays scalar, on purpose: what happens a few times per hand, not per decision. The
showdown is the exact :func:`hgin_env.scoring.settle`, the column bookkeeping is the
exact :class:`hgin_env.scoring.Scoreboard` (one per match), and each deal is drawn from
that match's own ``numpy.random.Generator`` with the same calls ``Game`` makes. So match
``i`` with seed ``match_seeds[i]`` and the same actions *is* ``Game(rules, seed=...)``:
the differential test (``tests/test_batch.py``, ``python -m eval.differential``) replays
both and compares masks, observations, hand results and scoreboards at every step.

Finished matches restart at once with a fresh seed drawn from the batch's generator
(``match_seeds`` records it), so every game always has a player to act:
``current_player[i]`` names it, ``legal_action_masks()`` and ``observations()`` are that
player's, and ``step`` returns what each game's action led to (:class:`StepResult`).

    batch = BatchGame(1024, rules="hollywood", seed=0)
    obs, masks = batch.observations(), batch.legal_action_masks()
    result = batch.step(actions)          # int array [N]; anything else is refused
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import actions as A
from ..cards import NUM_CARDS, NUM_RANKS, RANK_VALUES, mask_to_cards
from ..game import Phase
from ..melds import deadwood_without_batch, min_deadwood_batch
from ..observation import (
    DEADWOOD_FRACTIONS,
    KNOCK_LIMIT_SCALE,
    STOCK_SCALE,
    ObservationLayout,
    scoreboard_context,
)
from ..rewards import SheetChange, check_match_bonus, check_mode, step_rewards
from ..rules import Rules, get_rules
from ..scoring import Scoreboard, settle

_BIT = np.array([1 << c for c in range(NUM_CARDS)], dtype=np.uint64)
_FIRST_UPCARD = int(Phase.FIRST_UPCARD)
_DRAW = int(Phase.DRAW)
_DISCARD = int(Phase.DISCARD)
#: Hand kinds in :attr:`StepResult.hand_kind` (0 = no hand ended in that game).
HAND_KINDS = ("", "dead", "knock", "gin", "big_gin", "undercut")
_DUEL_ROWS = ((0,), (1,))  # the sheet rows' seats
_KIND_CODE = {k: i for i, k in enumerate(HAND_KINDS)}
_NO_DW = np.int16(10_000)  # "no such discard" in the after-discard table
#: The observation's value of every deadwood (``encode``'s: clipped at 100 -> 1.0).
_FRACTION = np.array(DEADWOOD_FRACTIONS, dtype=np.float32)
#: The observation's value of every entry of the after-discard table (``_NO_DW`` = 1.0).
_DD_VALUE = np.ones(int(_NO_DW) + 1, dtype=np.float32)
_DD_VALUE[:341] = _FRACTION
#: The six bit slices of the observation, in the order ``observations`` stacks them.
_BIT_SLICES = ("hand", "discard_top", "discard_rest", "opponent_known", "opponent_discards", "own_discards")

#: What :meth:`BatchGame.privileged_observations` holds, in order (name, width): facts the
#: acting player cannot see. They exist for a training critic only (PerfectDou's "perfect
#: training, imperfect execution"); they are never part of an observation, so no policy
#: that plays from observations can read them.
PRIVILEGED_SLICES = (("opponent_hand", NUM_CARDS), ("next_stock_card", NUM_CARDS), ("opponent_deadwood", 1))
PRIVILEGED_SIZE = sum(width for _, width in PRIVILEGED_SLICES)


def _bits(masks: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """52-bit masks (uint64, any shape) -> uint8 0/1 array with a trailing axis of 52."""
    m = np.ascontiguousarray(masks, dtype=np.uint64)
    b = np.unpackbits(m.view(np.uint8).reshape(m.shape + (8,)), axis=-1, bitorder="little")
    return b[..., :NUM_CARDS]


def cards_of_masks(masks: np.ndarray, count: int) -> np.ndarray:
    """Card ids of each mask (all holding exactly ``count`` cards), ascending: int64 [n, count]."""
    n = masks.shape[0]
    if n == 0:
        return np.zeros((0, count), dtype=np.int64)
    _, cols = np.nonzero(_bits(masks))
    return cols.reshape(n, count)


@dataclass
class StepResult:
    """What one ``BatchGame.step`` did in each game (arrays of length N).

    Rewards are zero-sum per player, in the reward mode of the batch (``"match"``: ±1 at
    match end, ``"columns"``: ±1/C per column decided, ``"points"``: hand points/100).
    A match that ends is already replaced by a fresh one when ``step`` returns; its final
    scoreboard is in ``finished`` (game index -> summary dict).
    """

    rewards: np.ndarray  # float32 [N, 2]
    hand_over: np.ndarray  # bool [N]
    match_over: np.ndarray  # bool [N]: the match ended (terminated or truncated)
    truncated: np.ndarray  # bool [N]: cut by Rules.max_hands
    hand_kind: np.ndarray  # int8 [N]: index into HAND_KINDS (0 = hand goes on)
    hand_winner: np.ndarray  # int8 [N]: -1 none / dead
    knocker: np.ndarray  # int8 [N]: -1 none / dead
    hand_points: np.ndarray  # int32 [N]
    match_winner: np.ndarray  # int8 [N]: -1 none (running, truncated or drawn)
    finished: dict[int, dict]


class BatchGame:
    """N independent two-player matches stepped together (see the module docstring).

    ``seeds`` fixes each first match's seed (else they are drawn from ``seed``); later
    matches of game ``i`` take seeds drawn from the batch generator, recorded in
    ``match_seeds``. ``reward`` is ``"match"``, ``"columns"`` or ``"points"`` and
    ``match_bonus`` the dense modes' match bonus, paid by :func:`hgin_env.rewards.step_rewards`
    as the scalar environment pays them.
    """

    def __init__(self, n: int, rules: Rules | str | dict | None = None, seed: int | None = None,
                 reward: str = "match", seeds: list[int] | np.ndarray | None = None, match_bonus: float = 0.0):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        check_mode(reward)
        self.match_bonus = check_match_bonus(match_bonus)
        self.n = n
        self.rules = get_rules(rules)
        if self.rules.num_players != 2:
            raise ValueError(f"BatchGame plays two-player matches; rules {self.rules.name!r} have "
                             f"format {self.rules.format!r}")
        self.reward_mode = reward
        self.layout = ObservationLayout(self.rules.columns)
        self._slices = self.layout.slices
        self.rng = np.random.default_rng(seed)
        self.arange = np.arange(n)
        # Per-game state.
        self.hands = np.zeros((n, 2), dtype=np.uint64)
        self.known = np.zeros((n, 2), dtype=np.uint64)  # taken from the pile, still held
        self.discarded = np.zeros((n, 2), dtype=np.uint64)
        self.passed = np.zeros((n, 2), dtype=bool)
        self.decks = np.zeros((n, NUM_CARDS), dtype=np.int64)  # this deal's card order
        self.stock_pos = np.zeros(n, dtype=np.int64)  # next stock card is decks[i, stock_pos]
        self.pile = np.zeros((n, NUM_CARDS), dtype=np.int64)  # discard pile, bottom first
        self.pile_len = np.zeros(n, dtype=np.int64)
        self.pile_mask = np.zeros(n, dtype=np.uint64)
        self.dealer = np.zeros(n, dtype=np.int64)
        self.current_player = np.zeros(n, dtype=np.int64)
        self.phase = np.zeros(n, dtype=np.int64)
        self.knock_limit = np.zeros(n, dtype=np.int64)
        self.multiplier = np.ones(n, dtype=np.int64)
        self.taken = np.full(n, -1, dtype=np.int64)
        self.forced = np.zeros(n, dtype=bool)
        self.turns = np.zeros(n, dtype=np.int64)
        self.hand_number = np.zeros(n, dtype=np.int64)
        # Match state: the exact scalar scoreboard per match, mirrored for observations.
        self.boards: list[Scoreboard] = []
        self.rngs: list[np.random.Generator] = []
        self.match_seeds = np.zeros(n, dtype=np.int64)
        self.matches_started = np.zeros(n, dtype=np.int64)
        c = self.rules.columns
        ctx = self._slices["own_columns"].start
        self._ctx_slice = slice(ctx, self.layout.size)
        self.context = np.zeros((n, 2, self.layout.size - ctx), dtype=np.float32)
        #: Per match: hands won by kind [player, knock/gin/big_gin/undercut], dead hands.
        self.kind_counts = np.zeros((n, 2, 4), dtype=np.int64)
        self.dead_hands = np.zeros(n, dtype=np.int64)
        self.points_won = np.zeros((n, 2), dtype=np.int64)  # hand points each player scored
        self.columns = np.zeros((n, 2, c), dtype=np.int64)
        # Derived per-state caches (for the acting player), refreshed after every step.
        self._after = np.full((n, NUM_CARDS), _NO_DW, dtype=np.int16)  # deadwood after discarding c
        self._dw_now = np.zeros(n, dtype=np.int16)
        self._take_dw = np.full(n, _NO_DW, dtype=np.int16)
        # Reused work: each player's 10-card deadwood (set at the deal and at each discard,
        # from the after-discard table), and the take computation (hand + face-up card minus
        # each held card), which is the after-discard table if the card is then taken.
        self._dw10 = np.zeros((n, 2), dtype=np.int16)
        self._take_rows = np.zeros((n, 10), dtype=np.int16)
        self._take_cards = np.zeros((n, 10), dtype=np.int64)
        self._after_ready = np.zeros(n, dtype=bool)
        self._can_take = np.zeros(n, dtype=bool)
        self._mask = np.zeros((n, A.NUM_ACTIONS), dtype=bool)
        self._obs = np.zeros((n, self.layout.size), dtype=np.float32)
        self._obs_fresh = False
        self._mask_fresh = False
        self._big_gin = self.rules.big_gin_bonus is not None
        # Where the layout puts the six bit slices back to back, one block write fills them.
        starts = [self._slices[name].start for name in _BIT_SLICES]
        self._bit_block = slice(starts[0], starts[0] + 6 * NUM_CARDS) \
            if starts == [starts[0] + k * NUM_CARDS for k in range(6)] else None
        if seeds is None:
            seeds = self.rng.integers(2**63 - 1, size=n)
        seeds = np.asarray(seeds, dtype=np.int64)
        if seeds.shape != (n,):
            raise ValueError(f"seeds must hold {n} values")
        for i in range(n):
            self.boards.append(Scoreboard(self.rules))
            self.rngs.append(np.random.default_rng(int(seeds[i])))
        self.match_seeds[:] = seeds
        all_games = self.arange
        for i in all_games:
            self.dealer[i] = self._first_dealer(self.rngs[i])
        self._deal(all_games)
        for i in all_games:
            self._update_context(int(i))
        self._refresh()

    # ------------------------------------------------------------------ dealing
    def _first_dealer(self, rng: np.random.Generator) -> int:
        """The same draws as ``Game._choose_first_dealer``."""
        if self.rules.first_dealer == "random":
            return int(rng.integers(2))
        while True:
            a, b = rng.choice(NUM_CARDS, size=2, replace=False)
            ra, rb = a % NUM_RANKS, b % NUM_RANKS
            if ra != rb:
                return 0 if ra < rb else 1

    def _deal(self, idx: np.ndarray) -> None:
        """Deal a new hand in games ``idx`` (each from its own generator, as ``Game._deal``)."""
        if idx.size == 0:
            return
        decks = np.stack([self.rngs[i].permutation(NUM_CARDS) for i in idx])
        self.decks[idx] = decks
        dealer = self.dealer[idx]
        first = np.bitwise_or.reduce(_BIT[decks[:, 0:20:2]], axis=1)  # the non-dealer's cards
        second = np.bitwise_or.reduce(_BIT[decks[:, 1:20:2]], axis=1)
        self.hands[idx, 1 - dealer] = first
        self.hands[idx, dealer] = second
        self._dw10[idx] = min_deadwood_batch(self.hands[idx])
        up = decks[:, 20]
        self.pile[idx, 0] = up
        self.pile_len[idx] = 1
        self.pile_mask[idx] = _BIT[up]
        self.stock_pos[idx] = 21
        self.hand_number[idx] += 1
        r = self.rules
        if r.oklahoma:
            rank = up % NUM_RANKS
            limit = np.asarray(RANK_VALUES)[rank]
            if r.oklahoma_ace_gin_only:
                limit = np.where(rank == 0, 0, limit)
            self.knock_limit[idx] = limit
            self.multiplier[idx] = np.where(up // NUM_RANKS == 3, r.spade_multiplier, 1)
        else:
            self.knock_limit[idx] = r.knock_limit
            self.multiplier[idx] = 1
        self.current_player[idx] = 1 - dealer
        # As ``Game._deal``: without the offer (004) the non-dealer starts with a normal draw.
        self.phase[idx] = _FIRST_UPCARD if r.first_upcard_offer else _DRAW
        self.taken[idx] = -1
        self.forced[idx] = False
        self.known[idx] = 0
        self.discarded[idx] = 0
        self.passed[idx] = False
        self.turns[idx] = 0

    def _new_match(self, i: int) -> None:
        seed = int(self.rng.integers(2**63 - 1))
        self.match_seeds[i] = seed
        self.matches_started[i] += 1
        self.rngs[i] = np.random.default_rng(seed)
        self.boards[i] = Scoreboard(self.rules)
        self.kind_counts[i] = 0
        self.dead_hands[i] = 0
        self.points_won[i] = 0
        self.hand_number[i] = 0
        self.dealer[i] = self._first_dealer(self.rngs[i])
        self._update_context(i)

    def restart_all(self) -> None:
        """Abandon every running match and start fresh ones, their seeds drawn from the
        batch's generator (as a finished match's successor is): with a restored generator
        state, the deal stream continues where it was saved (``train.ppo --resume``)."""
        for i in range(self.n):
            self._new_match(i)
        self._deal(self.arange)
        self._after_ready[:] = False
        self._refresh()

    def _update_context(self, i: int) -> None:
        board = self.boards[i]
        for p in (0, 1):
            self.context[i, p] = scoreboard_context(board, p)
        self.columns[i] = board.columns

    # ------------------------------------------------------------------ derived state
    def _refresh(self, idx: np.ndarray | None = None) -> None:
        """Deadwood tables of each acting player (of games ``idx``, default all): now, after
        each discard, after taking the face-up card."""
        if idx is None:
            idx = self.arange
        self._obs_fresh = False
        self._mask_fresh = False
        if idx.size == 0:
            return
        p = self.current_player[idx]
        hand = self.hands[idx, p]
        phase = self.phase[idx]
        disc = phase == _DISCARD
        # Deadwood now: the cached 10-card value, computed only for 11-card hands.
        dw = self._dw10[idx, p]
        sel = np.flatnonzero(disc)
        if sel.size:
            dw[sel] = min_deadwood_batch(hand[sel])
        self._dw_now[idx] = dw
        # Discard phase: deadwood after discarding each of the 11 cards (after a take the
        # step has filled it from the take computation).
        ready = self._after_ready[idx]
        self._after[idx[~ready]] = _NO_DW
        sel = np.flatnonzero(disc & ~ready)
        if sel.size:
            h = hand[sel]
            cards = cards_of_masks(h, 11)
            self._after[idx[sel, None], cards] = deadwood_without_batch(h, cards)
        self._after_ready[idx] = False
        # Draw phases: best deadwood after taking the face-up card and discarding another.
        self._take_dw[idx] = _NO_DW
        can = ~disc & (self.pile_len[idx] > 0) & ~self.forced[idx]
        self._can_take[idx] = can
        sel = np.flatnonzero(can)
        if sel.size:
            g = idx[sel]
            h = hand[sel]
            top = self.pile[g, self.pile_len[g] - 1]
            cards = cards_of_masks(h, 10)
            rows = deadwood_without_batch(h | _BIT[top], cards)
            self._take_rows[g] = rows
            self._take_cards[g] = cards
            self._take_dw[g] = rows.min(axis=1)

    def legal_action_masks(self) -> np.ndarray:
        """bool [N, 108]: the legal actions of each game's acting player (a view; do not keep)."""
        if self._mask_fresh:
            return self._mask
        m = self._mask
        m.fill(False)
        phase = self.phase
        up = phase == _FIRST_UPCARD
        m[up, A.TAKE_DISCARD] = True
        m[up, A.PASS] = True
        draw = phase == _DRAW
        m[draw, A.DRAW_STOCK] = True
        m[draw & self._can_take, A.TAKE_DISCARD] = True
        disc = np.flatnonzero(phase == _DISCARD)
        if disc.size:
            after = self._after[disc]
            held = after < _NO_DW
            taken = self.taken[disc]
            has_taken = taken >= 0
            held[has_taken, taken[has_taken]] = False
            m[disc, A.DISCARD:A.DISCARD + NUM_CARDS] = held
            m[disc, A.KNOCK:A.KNOCK + NUM_CARDS] = held & (after <= self.knock_limit[disc, None])
            if self._big_gin:
                m[disc, A.BIG_GIN] = self._dw_now[disc] == 0
        self._mask_fresh = True
        return m

    def observations(self) -> np.ndarray:
        """float32 [N, 394]: each acting player's observation, as ``observation.encode``
        builds it (a view of an internal buffer, overwritten by the next step)."""
        if self._obs_fresh:
            return self._obs
        s = self._slices
        o = self._obs
        ar = self.arange
        p = self.current_player
        q = 1 - p
        top_card = self.pile[ar, np.maximum(self.pile_len - 1, 0)]
        top = np.where(self.pile_len > 0, _BIT[top_card], np.uint64(0))
        masks = np.empty((self.n, 6), dtype=np.uint64)
        masks[:, 0] = self.hands[ar, p]
        masks[:, 1] = top
        masks[:, 2] = self.pile_mask & ~top
        masks[:, 3] = self.known[ar, q]
        masks[:, 4] = self.discarded[ar, q]
        masks[:, 5] = self.discarded[ar, p]
        bits = _bits(masks)
        if self._bit_block is not None:
            o[:, self._bit_block] = bits.reshape(self.n, 6 * NUM_CARDS)
        else:
            for k, name in enumerate(_BIT_SLICES):
                o[:, s[name]] = bits[:, k]
        o[:, s["discard_deadwood"]] = _DD_VALUE[self._after]
        o[:, s["deadwood"].start] = _FRACTION[self._dw_now]
        o[:, s["take_deadwood"].start] = _DD_VALUE[self._take_dw]
        o[:, s["stock_size"].start] = (NUM_CARDS - self.stock_pos) / STOCK_SCALE
        o[:, s["phase"]] = 0.0
        o[ar, s["phase"].start + self.phase] = 1.0
        o[:, s["knock_limit"].start] = self.knock_limit / KNOCK_LIMIT_SCALE
        o[:, s["doubled"].start] = self.multiplier > 1
        o[:, s["is_dealer"].start] = self.dealer == p
        o[:, s["opponent_passed"].start] = self.passed[ar, q]
        o[:, self._ctx_slice] = self.context[ar, p]
        self._obs_fresh = True
        return o

    # ------------------------------------------------------------------ stepping
    def step(self, actions: np.ndarray, checked: bool = False) -> StepResult:
        """Apply one action per game (the acting player's).

        ``actions`` is an integer array of shape (N,); an action of ``NO_MOVE`` (-1) leaves
        that game as it is (used to move only the games where a given seat or agent acts).
        Anything else that is not a legal action id (a float, a bool, a string, NaN, another
        shape, out of range, illegal in its row) raises ``TypeError``/``ValueError`` naming
        the rows and values (:func:`hgin_env.actions.as_actions`), and no game moves.
        ``checked=True`` says the caller checked them already (the vector envs check the
        learners' and the opponents' actions once each, where they arrive): an int64 array
        of legal ids or ``NO_MOVE``, trusted as it is.
        """
        n = self.n
        a = actions if checked else A.as_actions(actions, n, self.legal_action_masks(), allow_no_move=True)
        moved = self.arange if a.min() >= 0 else np.flatnonzero(a >= 0)
        p = self.current_player
        rewards = np.zeros((n, 2), dtype=np.float32)
        hand_kind = np.zeros(n, dtype=np.int8)
        hand_winner = np.full(n, -1, dtype=np.int8)
        knocker = np.full(n, -1, dtype=np.int8)
        hand_points = np.zeros(n, dtype=np.int32)
        match_over = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        match_winner = np.full(n, -1, dtype=np.int8)
        finished: dict[int, dict] = {}

        # Pass on the first upcard.
        g = np.flatnonzero(a == A.PASS)
        if g.size:
            pg = p[g]
            self.passed[g, pg] = True
            nondealer = pg != self.dealer[g]
            self.current_player[g] = np.where(nondealer, self.dealer[g], 1 - self.dealer[g])
            dealer_passed = g[~nondealer]
            self.phase[dealer_passed] = _DRAW
            self.forced[dealer_passed] = True
        # Draw from the stock.
        g = np.flatnonzero(a == A.DRAW_STOCK)
        if g.size:
            card = self.decks[g, self.stock_pos[g]]
            self.stock_pos[g] += 1
            self.hands[g, p[g]] |= _BIT[card]
            self.taken[g] = -1
            self.forced[g] = False
            self.phase[g] = _DISCARD
            self.turns[g] += 1
        # Take the discard (or the first upcard).
        g = np.flatnonzero(a == A.TAKE_DISCARD)
        if g.size:
            self.pile_len[g] -= 1
            card = self.pile[g, self.pile_len[g]]
            bit = _BIT[card]
            self.pile_mask[g] &= ~bit
            self.hands[g, p[g]] |= bit
            self.known[g, p[g]] |= bit
            self.taken[g] = card
            self.phase[g] = _DISCARD
            self.turns[g] += 1
            # The after-discard table of the 11 cards is what the take computation found.
            self._after[g] = _NO_DW
            self._after[g[:, None], self._take_cards[g]] = self._take_rows[g]
            self._after[g, card] = self._dw10[g, p[g]]
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
            self.hands[g, pg] &= notbit
            self.known[g, pg] &= notbit
            d = g[~is_knock]
            if d.size:
                dcard = card[~is_knock]
                pd = pg[~is_knock]
                self._dw10[d, pd] = self._after[d, dcard]  # the 10 cards kept
                bit = _BIT[dcard]
                self.discarded[d, pd] |= bit
                self.pile[d, self.pile_len[d]] = dcard
                self.pile_len[d] += 1
                self.pile_mask[d] |= bit
                stock = NUM_CARDS - self.stock_pos[d]
                dead = stock <= self.rules.dead_hand_stock
                if self.rules.max_turns:
                    dead |= self.turns[d] >= self.rules.max_turns
                go_on = d[~dead]
                self.current_player[go_on] = 1 - pd[~dead]
                self.phase[go_on] = _DRAW
                self.taken[go_on] = -1
                ended += d[dead].tolist()
            ended += g[is_knock].tolist()
        big = np.flatnonzero(a == A.BIG_GIN)
        ended += big.tolist()
        if ended:
            self._end_hands(sorted(ended), a, rewards, hand_kind, hand_winner, knocker, hand_points,
                            match_over, truncated, match_winner, finished)
        self._refresh(moved)
        return StepResult(rewards=rewards, hand_over=hand_kind > 0, match_over=match_over,
                          truncated=truncated, hand_kind=hand_kind, hand_winner=hand_winner,
                          knocker=knocker, hand_points=hand_points, match_winner=match_winner,
                          finished=finished)

    def _end_hands(self, ended: list[int], a: np.ndarray, rewards: np.ndarray, hand_kind: np.ndarray,
                   hand_winner: np.ndarray, knocker: np.ndarray, hand_points: np.ndarray,
                   match_over: np.ndarray, truncated: np.ndarray, match_winner: np.ndarray,
                   finished: dict[int, dict]) -> None:
        """Showdowns (exact ``settle``), scoreboards and the next deal, game by game: a few
        games per step end a hand."""
        rules = self.rules
        columns = rules.columns
        deal: list[int] = []
        for i in ended:
            board = self.boards[i]
            action = int(a[i])
            if action >= A.KNOCK:  # knock or big gin: showdown
                k = int(self.current_player[i])
                result = settle(mask_to_cards(int(self.hands[i, k])),
                                mask_to_cards(int(self.hands[i, 1 - k])), rules,
                                knock_limit=int(self.knock_limit[i]), multiplier=int(self.multiplier[i]))
                winner = k if result.winner == "knocker" else 1 - k
                decided = board.record(winner, result.points)  # the columns this hand decided
                knocker[i] = k
                hand_winner[i] = winner
                hand_points[i] = result.points
                hand_kind[i] = _KIND_CODE[result.kind]
                self.kind_counts[i, winner, _KIND_CODE[result.kind] - 2] += 1
                self.points_won[i, winner] += result.points
                paid = (float(result.points), -float(result.points)) if winner == 0 else \
                    (-float(result.points), float(result.points))
            else:
                board.record_dead()
                winner = None
                paid, decided = (0.0, 0.0), []
                hand_kind[i] = _KIND_CODE["dead"]
                self.dead_hands[i] += 1
            outcome = None
            if board.match_over:
                match_over[i] = True
                mw = board.match_winner
                outcome = (0.0, 0.0)
                if mw is not None:
                    match_winner[i] = mw
                    outcome = (1.0, -1.0) if mw == 0 else (-1.0, 1.0)
            elif rules.max_hands and self.hand_number[i] >= rules.max_hands:
                match_over[i] = True
                truncated[i] = True
                outcome = (0.0, 0.0)
            if winner is not None or outcome is not None:  # the one reward function of every path
                change = SheetChange(row_seats=_DUEL_ROWS, points=paid, columns_won=(winner,) * len(decided),
                                     num_columns=columns, outcome=outcome)
                rewards[i] += step_rewards(self.reward_mode, change, self.match_bonus)
            if match_over[i]:
                finished[i] = self._summary(i, bool(truncated[i]))
                self._new_match(i)
            else:
                self.dealer[i] = self._next_dealer(int(self.dealer[i]), winner)
                self._update_context(i)
            deal.append(i)
        self._deal(np.array(deal, dtype=np.int64))

    def _next_dealer(self, dealer: int, winner: int | None) -> int:
        """As ``Game._next_dealer``."""
        r = self.rules
        if winner is None:
            return dealer if r.dead_hand_same_dealer else 1 - dealer
        if r.dealer_rotation == "loser":
            return 1 - winner
        if r.dealer_rotation == "winner":
            return winner
        return 1 - dealer

    def _summary(self, i: int, truncated: bool) -> dict:
        """The finished match, per player (``by_player[p]`` is player p's side)."""
        board = self.boards[i]
        kinds = ("knock", "gin", "big_gin", "undercut")
        return {
            "seed": int(self.match_seeds[i]),
            "match_winner": board.match_winner,
            "truncated": truncated,
            "hands": int(self.hand_number[i]),
            "dead_hands": int(self.dead_hands[i]),
            "columns": board.columns.tolist(),
            "columns_won": list(board.columns_won),
            "hand_kinds": [{k: int(self.kind_counts[i, p, j]) for j, k in enumerate(kinds)
                            if self.kind_counts[i, p, j]} for p in (0, 1)],
            "points": self.points_won[i].tolist(),
            "scoreboard": board.to_dict(),
        }

    def privileged_observations(self) -> np.ndarray:
        """float32 [N, PRIVILEGED_SIZE]: for each acting player, what it cannot see
        (:data:`PRIVILEGED_SLICES`): the opponent's hand as 0/1 per card, the next stock card
        one-hot (all zero when the stock is empty), the opponent's deadwood / 100. A new array
        each call; for a training critic, never for a policy."""
        ar = self.arange
        q = 1 - self.current_player
        out = np.zeros((self.n, PRIVILEGED_SIZE), dtype=np.float32)
        out[:, :NUM_CARDS] = _bits(self.hands[ar, q])
        has_stock = np.flatnonzero(self.stock_pos < NUM_CARDS)
        out[has_stock, NUM_CARDS + self.decks[has_stock, self.stock_pos[has_stock]]] = 1.0
        out[:, 2 * NUM_CARDS] = _FRACTION[self._dw10[ar, q]]
        return out

    # ------------------------------------------------------------------ queries
    def stock_size(self) -> np.ndarray:
        return NUM_CARDS - self.stock_pos

    def discard_top(self) -> np.ndarray:
        """Top card of each pile, -1 when empty."""
        top = self.pile[self.arange, np.maximum(self.pile_len - 1, 0)]
        return np.where(self.pile_len > 0, top, -1)
