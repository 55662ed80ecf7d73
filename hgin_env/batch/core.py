"""A batched engine: N matches of any format as arrays, stepped by one call.

Why: a learner needs thousands of decisions per second, and per-game Python (one
``Match.apply`` plus one observation per decision) costs microseconds of interpreter time
each. Here the state of N matches lives in arrays and one ``step(actions)`` applies N
actions in one call, in the spirit of pgx and EnvPool on a CPU: by default through the
compiled kernels (:mod:`hgin_env.batch.kernels`, one pass of plain loops per table), with
the numpy methods of :mod:`hgin_env.batch.tables` (a handful of vectorised operations) as
the reference and the fallback without numba (``engine=``, ``HGIN_ENGINE``).

The layers, bottom up:

- :mod:`hgin_env.batch.state`: THE table state record (:class:`~hgin_env.batch.state.TableState`):
  hands as 52-bit masks in ``uint64``, each deal's card order, the discard pile as a stack,
  phase, counters, the derived deadwood tables;
- :mod:`hgin_env.batch.tables`: T two-player tables, one hand each (the duel's core), on
  that record: every transition of a hand as one vectorised pass (the numpy reference), or
  the kernels' one call;
- :mod:`hgin_env.batch.formats`: the seating of each format (which seats play at which
  table, who deals or sits out, which table acts, what a hand puts on the sheet), from the
  same definitions as the scalar :class:`~hgin_env.match.Match`;
- :class:`BatchGame` (here): N matches (generators, sheets, tallies, the acting seat),
  the step, the observations, masks and rewards of each match's acting seat.

What stays scalar, on purpose: what happens a few times per hand, not per decision. The
showdown is the exact :func:`hgin_env.scoring.settle`, the sheet is the exact
:class:`~hgin_env.sheets.Sheet` (the duel's ``Scoreboard``) of each match, and each deal is
drawn from that match's own ``numpy.random.Generator`` with the same calls ``Match`` makes.
So match ``i`` with seed ``match_seeds[i]`` and the same actions *is*
``Match(rules, seed=...)``: the differential check
(``tests/test_batch.py``, ``python -m eval.differential``) replays both and compares masks,
observations, rewards, hand results and sheets at every step.

Finished matches restart at once with a fresh seed drawn from the batch's generator
(``match_seeds`` records it), so every match always has a seat to act: ``current_seat[i]``
names it (in a duel it is ``current_player``, the table's player), ``legal_action_masks()``
and ``observations()`` are that seat's (the layout of
``ObservationLayout.for_rules(rules)``), and ``step`` returns what each match's action led
to (:class:`StepResult`).

    batch = BatchGame(1024, rules="hollywood_three_hand", seed=0)
    obs, masks = batch.observations(), batch.legal_action_masks()
    result = batch.step(actions)          # int array [N]; anything else is refused
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import actions as A
from ..cards import NUM_CARDS
from ..codes import DEAD_KIND, HAND_KINDS, KIND_CODE, KNOCK_KIND, PHASE_HAND_OVER, SCORED_KINDS
from ..match import match_outcome, new_sheet
from ..melds import min_deadwood_batch
from ..observation import KNOCK_LIMIT_SCALE, STOCK_SCALE, ObservationLayout
from ..rewards import SheetChange, check_match_bonus, check_mode, step_rewards
from ..rules import Rules, get_rules
from ..sheets import Sheet
from .formats import SEATINGS, Deal, SheetEntry, record_entry
from .tables import FRACTION, TableBatch, bits, cards_of_masks

__all__ = ["HAND_KINDS", "PRIVILEGED_SIZE", "PRIVILEGED_SLICES", "BatchGame", "StepResult", "cards_of_masks",
           "privileged_size", "privileged_slices"]

#: What :meth:`BatchGame.privileged_observations` holds in a duel, in order (name, width):
#: facts the acting player cannot see. They exist for a training critic only (PerfectDou's
#: "perfect training, imperfect execution"); they are never part of an observation, so no
#: policy that plays from observations can read them. Three-hand has the same (a seat
#: sitting out holds no cards); a partnership adds the other table's (:func:`privileged_slices`).
PRIVILEGED_SLICES = (("opponent_hand", NUM_CARDS), ("next_stock_card", NUM_CARDS), ("opponent_deadwood", 1))
PRIVILEGED_SIZE = sum(width for _, width in PRIVILEGED_SLICES)
#: A partnership's privileged facts after the duel's: the partner's hand and deadwood, and
#: its opponent's, at the other table (all zero once that table's hand is over).
_PARTNER_SLICES = (("partner_hand", NUM_CARDS), ("partner_opponent_hand", NUM_CARDS),
                   ("partner_deadwood", 1), ("partner_opponent_deadwood", 1))


def privileged_slices(format: str = "duel") -> tuple[tuple[str, int], ...]:
    """The privileged features of a format, in order (name, width): every hidden hand the
    acting seat's format has, the next stock card and the hidden hands' deadwood / 100."""
    return PRIVILEGED_SLICES + (_PARTNER_SLICES if format == "partnership" else ())


def privileged_size(format: str = "duel") -> int:
    """Columns of :func:`privileged_slices`: 105 (duel, three-hand), 211 (partnership)."""
    return sum(width for _, width in privileged_slices(format))


_NO_TABLES = np.zeros(0, dtype=np.int64)


@dataclass
class StepResult:
    """What one ``BatchGame.step`` did in each match (arrays of length N; seats and sheet
    rows as the format numbers them).

    Rewards are per seat ([N, seats]) in the batch's reward mode (the AEC env's: ``"match"``
    ±1 at match end, three-hand +1 / −1/2 each; ``"columns"`` per column decided;
    ``"points"`` the hand's or, in a partnership, the round's points / 100). A match that
    ends is already replaced by a fresh one when ``step`` returns; its final sheet is in
    ``finished`` (match index -> summary dict).
    """

    rewards: np.ndarray  # float32 [N, seats]
    hand_over: np.ndarray  # bool [N]: a hand of the match ended
    match_over: np.ndarray  # bool [N]: the match ended (terminated or truncated)
    truncated: np.ndarray  # bool [N]: cut by Rules.max_hands
    hand_kind: np.ndarray  # int8 [N]: index into HAND_KINDS (0 = hand goes on)
    hand_winner: np.ndarray  # int8 [N]: the winning seat, -1 none / dead
    knocker: np.ndarray  # int8 [N]: the knocking seat, -1 none / dead
    hand_points: np.ndarray  # int32 [N]
    match_winner: np.ndarray  # int8 [N]: the winning sheet row (a seat, or a team), -1 none
    finished: dict[int, dict]
    #: bool [N]: a partnership round ended (its score is on the sheet); False elsewhere.
    round_over: np.ndarray | None = None


class BatchGame(TableBatch):
    """N independent matches of one rules profile, any format, stepped together (see the
    module docstring). Its tables' arrays (:class:`~hgin_env.batch.tables.TableBatch`) are
    its attributes, indexed by table: in a duel and three-hand table ``i`` is match ``i``,
    in a partnership match ``i`` plays at tables ``2i`` and ``2i + 1``.

    ``seeds`` fixes each first match's seed (else they are drawn from ``seed``); later
    matches of game ``i`` take seeds drawn from the batch generator, recorded in
    ``match_seeds``. ``reward`` is ``"match"``, ``"columns"`` or ``"points"`` and
    ``match_bonus`` the dense modes' match bonus, paid by :func:`hgin_env.rewards.step_rewards`
    as the scalar environment pays them.
    """

    def __init__(self, n: int, rules: Rules | str | dict | None = None, seed: int | None = None,
                 reward: str = "match", seeds: list[int] | np.ndarray | None = None, match_bonus: float = 0.0,
                 engine: str | None = None, single_hand: bool = False):
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"n must be an int >= 1, got {n!r}")
        check_mode(reward)
        self.match_bonus = check_match_bonus(match_bonus)
        rules = get_rules(rules)
        if single_hand and rules.format != "duel":
            raise ValueError(f"single_hand is an option of the duel only, not of format={rules.format!r}")
        #: One hand per match (``Match(single_hand=True)``, OpenSpiel's game): the hand's
        #: winner wins the match (±1 in the "match" reward mode), a dead hand is a draw.
        self.single_hand = bool(single_hand)
        self.n = n = int(n)
        self.reward_mode = reward
        self.format = rules.format
        self.num_players = rules.num_players
        seating_cls = SEATINGS[self.format]
        super().__init__(n * seating_cls.tables_per_match, rules, ObservationLayout.for_rules(rules), engine)
        self.arange = np.arange(n)
        self.seating = seating_cls(n, rules, self.engine)
        self._one_table = seating_cls.one_table
        rows = 2 if self.format == "partnership" else self.num_players
        self._row_seats = tuple(self.seating.row_seats(r) for r in range(rows))
        #: The seat that acts in each match (a duel's is its table's ``current_player``).
        self.current_seat = self.state.current_player if self.format == "duel" else np.zeros(n, dtype=np.int64)
        # Match state: the exact scalar sheet per match, mirrored for observations.
        self.rng = np.random.default_rng(seed)
        self.boards: list[Sheet] = []
        self.rngs: list[np.random.Generator] = []
        self.match_seeds = np.zeros(n, dtype=np.int64)
        self.matches_started = np.zeros(n, dtype=np.int64)
        #: Hands dealt in each match so far (``Hand.hand_number``), and hands finished.
        self.hand_number = np.zeros(n, dtype=np.int64)
        self.hands_played = np.zeros(n, dtype=np.int64)
        seats, c = self.num_players, rules.columns
        rows = 2 if self.format == "partnership" else seats
        ctx = self._slices["own_columns"].start
        self._ctx_slice = slice(ctx, self.layout.size)
        #: Per match and seat: the observation's part after the table slices.
        self.context = np.zeros((n, seats, self.layout.size - ctx), dtype=np.float32)
        self.columns = np.zeros((n, rows, c), dtype=np.int64)  # the sheets' running totals
        # Tallies of the match so far, per seat: hands played and dead, hands won by kind
        # (knock/gin/big_gin/undercut) by the seat and by its opponent at the table, points.
        self.kind_counts = np.zeros((n, seats, 4), dtype=np.int64)
        self.opponent_kind_counts = np.zeros((n, seats, 4), dtype=np.int64)
        self.points_won = np.zeros((n, seats), dtype=np.int64)
        self.points_lost = np.zeros((n, seats), dtype=np.int64)
        self.seat_hands = np.zeros((n, seats), dtype=np.int64)
        self.seat_dead_hands = np.zeros((n, seats), dtype=np.int64)
        self.dead_hands = np.zeros(n, dtype=np.int64)
        self._mask = np.zeros((n, A.NUM_ACTIONS), dtype=bool)
        self._obs = np.zeros((n, self.layout.size), dtype=np.float32)
        self._obs_fresh = False
        self._mask_fresh = False
        if seeds is None:
            seeds = self.rng.integers(2**63 - 1, size=n)
        seeds = np.asarray(seeds, dtype=np.int64)
        if seeds.shape != (n,):
            raise ValueError(f"seeds must hold {n} values")
        self.match_seeds[:] = seeds
        deals: list[Deal] = []
        for i in range(n):
            self.boards.append(new_sheet(rules))
            self.rngs.append(np.random.default_rng(int(seeds[i])))
            deals += self.seating.start(i, self.rngs[i])
        self._deal(deals)
        self.update_contexts(self.arange)
        self._after_step(self.table_range)

    # ------------------------------------------------------------------ matches
    def _deal(self, deals: list[Deal]) -> None:
        if not deals:
            return
        tables = np.array([d.table for d in deals], dtype=np.int64)
        self.deal_tables(tables, np.stack([d.deck for d in deals]),
                         np.array([d.dealer for d in deals], dtype=np.int64))
        per = self.seating.tables_per_match
        np.add.at(self.hand_number, tables // per, 1)

    def _new_match(self, i: int) -> list[Deal]:
        seed = int(self.rng.integers(2**63 - 1))
        self.match_seeds[i] = seed
        self.matches_started[i] += 1
        self.rngs[i] = np.random.default_rng(seed)
        self.boards[i] = new_sheet(self.rules)
        for tally in (self.kind_counts, self.opponent_kind_counts, self.points_won, self.points_lost,
                      self.seat_hands, self.seat_dead_hands):
            tally[i] = 0
        self.dead_hands[i] = 0
        self.hand_number[i] = 0
        self.hands_played[i] = 0
        return self.seating.start(i, self.rngs[i])

    def restart_all(self) -> None:
        """Abandon every running match and start fresh ones, their seeds drawn from the
        batch's generator (as a finished match's successor is): with a restored generator
        state, the deal stream continues where it was saved (``train.ppo --resume``)."""
        deals: list[Deal] = []
        for i in range(self.n):
            deals += self._new_match(i)
        self._deal(deals)
        self.update_contexts(self.arange)
        self._after_step(self.table_range)

    def update_contexts(self, idx: np.ndarray) -> None:
        """Recompute the observation contexts and column totals of matches ``idx`` (after
        their sheet or seating changed) from the seating."""
        self.context[idx], self.columns[idx] = self.seating.contexts(idx, [self.boards[i] for i in idx], self.state,
                                                                     self.hands_played)

    def _after_step(self, tables: np.ndarray) -> None:
        """Refresh the derived state of ``tables`` and each match's acting seat."""
        st = self.state
        self.refresh_tables(tables)
        self._obs_fresh = False
        self._mask_fresh = False
        if self.format != "duel":
            t = self.seating.acting_table
            self.current_seat[:] = self.seating.table_seats[t, st.current_player[t]]

    @property
    def acting_table(self) -> np.ndarray:
        """The table that acts next in each match (in a duel and three-hand, table i)."""
        return self.seating.acting_table

    @property
    def table_seats(self) -> np.ndarray:
        """int [tables, 2]: the seat of each table's players 0 and 1."""
        return self.seating.table_seats

    # ------------------------------------------------------------------ queries
    def legal_action_masks(self) -> np.ndarray:
        """bool [N, 108]: the legal actions of each match's acting seat (a view; do not keep)."""
        if self._mask_fresh:
            return self._mask
        if self._kernels is not None and not self._obs_fresh:
            self._compiled_views()
            return self._mask
        if self._kernels is None:  # the compiled masks write every entry
            self._mask.fill(False)
        self.table_masks(None if self._one_table else self.seating.acting_table, self._mask)
        self._mask_fresh = True
        return self._mask

    def observations(self) -> np.ndarray:
        """float32 [N, layout.size]: each acting seat's observation, as
        ``observation.encode_seat`` builds it (a view of an internal buffer, overwritten by
        the next step)."""
        if self._obs_fresh:
            return self._obs
        if self._kernels is not None:
            if not self._mask_fresh:
                self._compiled_views()
                return self._obs
            tables = self.table_range if self._one_table else self.seating.acting_table
            self.observe_tables(self._obs, tables, self.arange, self.current_seat, self.context)
        else:
            self.table_observations(self._obs, None if self._one_table else self.seating.acting_table)
            self._obs[:, self._ctx_slice] = self.context[self.arange, self.current_seat]
        self._obs_fresh = True
        return self._obs

    def _compiled_views(self) -> None:
        """The compiled engine's observations and masks of every acting seat, in one kernel
        call (``kernels.table_views``): whichever the caller asks first brings both."""
        tables = self.table_range if self._one_table else self.seating.acting_table
        self._kernels.table_views(self._obs, self._mask, tables, self.arange, self.current_seat, self.context,
                                  self._obs_offsets, self._kernel_state, self._big_gin)
        self._obs_fresh = self._mask_fresh = True

    def observations_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(observations, masks) of the acting seats of matches ``rows`` only (new arrays,
        the rows of :meth:`observations` and :meth:`legal_action_masks`): what a loop that
        moves a few matches at a time needs (a three-hand learner sitting a hand out waits
        while its two opponents play the whole hand), at the cost of those rows."""
        if self._obs_fresh and self._mask_fresh:
            return self._obs[rows], self._mask[rows]
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        t = rows if self._one_table else self.seating.acting_table[rows]
        obs = np.empty((rows.size, self.layout.size), dtype=np.float32)
        if self._kernels is not None:  # both in one call; the compiled masks write every entry
            masks = np.empty((rows.size, A.NUM_ACTIONS), dtype=bool)
            self._kernels.table_views(obs, masks, np.ascontiguousarray(t, dtype=np.int64), rows, self.current_seat,
                                      self.context, self._obs_offsets, self._kernel_state, self._big_gin)
            return obs, masks
        self.table_observations(obs, t)
        obs[:, self._ctx_slice] = self.context[rows, self.current_seat[rows]]
        masks = np.zeros((rows.size, A.NUM_ACTIONS), dtype=bool)
        self.table_masks(t, masks)
        return obs, masks

    # ------------------------------------------------------------------ stepping
    def step(self, actions: np.ndarray, checked: bool = False) -> StepResult:
        """Apply one action per match (its acting seat's).

        ``actions`` is an integer array of shape (N,); an action of ``NO_MOVE`` (-1) leaves
        that match as it is (used to move only the matches where a given seat or agent
        acts). Anything else that is not a legal action id (a float, a bool, a string, NaN,
        another shape, out of range, illegal in its row) raises ``TypeError``/``ValueError``
        naming the rows and values (:func:`hgin_env.actions.as_actions`), and no match moves.
        ``checked=True`` says the caller checked them already (the vector envs check the
        learners' and the opponents' actions once each, where they arrive): an int64 array
        of legal ids or ``NO_MOVE``, trusted as it is.
        """
        st = self.state
        n = self.n
        a = actions if checked else A.as_actions(actions, n, self.legal_action_masks(), allow_no_move=True)
        moved = self.arange if a.min() >= 0 else np.flatnonzero(a >= 0)
        if self._one_table:
            table_actions = a
            player_before = None
        else:
            acting = self.seating.acting_table[moved]
            table_actions = np.full(self.table_range.size, -1, dtype=np.int64)
            table_actions[acting] = a[moved]
            player_before = st.current_player[acting]
        ended = self.step_tables(table_actions)  # the tables that moved on are refreshed
        if not self._one_table:
            # Only the acting table of a match moves, so its hand is over iff that table ended.
            going = slice(None)
            if ended:
                over = np.zeros(table_actions.size, dtype=bool)
                over[ended] = True
                going = ~over[acting]
            self.seating.after_moves(moved[going], player_before[going], st)
        return self.close_step(ended, table_actions)

    def step_kernel_arguments(self) -> tuple:
        """What a compiled loop that steps this batch itself passes to
        :func:`~hgin_env.batch.kernels.table_views` and
        :func:`~hgin_env.batch.kernels.step_matches` (the table state record's kernel view,
        the rules as ints, the ended tables' and showdowns' buffers, the observation offsets,
        big gin, the contexts, the acting seats and tables, the seats at each table, whether
        a duel, whether a partnership, the observation size): views of this batch's arrays,
        which the kernels update in place. Only on the compiled engine."""
        if self._kernels is None:
            raise ValueError(f"a compiled loop needs the compiled engine, not engine={self.engine!r}")
        seating = self.seating
        return (self._kernel_state, self._step_rules, self._ended, self._settled, self._obs_offsets, self._big_gin,
                self.context, self.current_seat, seating.acting_table, seating.table_seats, self.format == "duel",
                self.format == "partnership", self.layout.size)

    def close_step(self, ended: list[int], table_actions: np.ndarray) -> StepResult:
        """The end of a step whose tables moved already (``step_tables``, and a partnership's
        ``after_moves`` for the matches whose hand goes on): the hands that ended (``ended``,
        by ``table_actions[t]``) are settled, put on the sheets and dealt again, and the
        derived state and the acting seats are refreshed. :meth:`step` ends here, and so does
        a compiled loop that steps the tables itself (``agents.opponent_loop``: the opponents'
        moves of a :class:`~hgin_env.batch.vector.LearnerBatch`) and returns to Python for
        what happens once per hand."""
        n = self.n
        out = StepResult(
            rewards=np.zeros((n, self.num_players), dtype=np.float32), hand_over=np.zeros(n, dtype=bool),
            match_over=np.zeros(n, dtype=bool), truncated=np.zeros(n, dtype=bool),
            hand_kind=np.zeros(n, dtype=np.int8), hand_winner=np.full(n, -1, dtype=np.int8),
            knocker=np.full(n, -1, dtype=np.int8), hand_points=np.zeros(n, dtype=np.int32),
            match_winner=np.full(n, -1, dtype=np.int8), finished={},
            round_over=np.zeros(n, dtype=bool))
        dealt = self._end_hands(ended, table_actions, out) if ended else []
        self._after_step(np.array(sorted(set(ended).union(dealt)), dtype=np.int64) if ended else _NO_TABLES)
        return out

    def _end_hands(self, ended: list[int], a: np.ndarray, out: StepResult) -> list[int]:
        """Showdowns (exact ``settle``), sheets and the next deals, hand by hand: a few
        matches per step end a hand. Returns the tables dealt."""
        st = self.state
        per = self.seating.tables_per_match
        deals: list[Deal] = []
        changed: list[int] = []
        for t in ended:
            i = t // per
            seats = self.seating.table_seats[t]
            result = self.settle_table(t, int(a[t]))
            played = self.seat_hands[i]
            played[seats] += 1
            if result is None:
                winner = loser = None
                points = 0
                out.hand_kind[i] = DEAD_KIND
                self.dead_hands[i] += 1
                self.seat_dead_hands[i, seats] += 1
            else:
                k = int(st.current_player[t])
                w = k if result.winner == "knocker" else 1 - k
                winner, loser, points = int(seats[w]), int(seats[1 - w]), result.points
                code = KIND_CODE[result.kind]
                out.knocker[i] = seats[k]
                out.hand_winner[i] = winner
                out.hand_points[i] = points
                out.hand_kind[i] = code
                self.kind_counts[i, winner, code - KNOCK_KIND] += 1
                self.opponent_kind_counts[i, loser, code - KNOCK_KIND] += 1
                self.points_won[i, winner] += points
                self.points_lost[i, loser] += points
            out.hand_over[i] = True
            self.hands_played[i] += 1
            entry = self.seating.hand_over(i, t, winner, loser, points, st)
            changed.append(i)
            if entry is None:  # a partnership table waits for the other one
                st.phase[t] = PHASE_HAND_OVER
                continue
            board = self.boards[i]
            decided = record_entry(board, entry)
            out.round_over[i] = self.format == "partnership"
            outcome = mw = None
            end = self.rules.match_end(board.match_over, self._rounds_played(i), self.single_hand)
            if end == "over":
                out.match_over[i] = True
                mw = winner if self.single_hand else board.match_winner  # a duel's sheet row is its seat
                outcome = match_outcome(self.num_players, () if mw is None else self._row_seats[mw])
                if mw is not None:
                    out.match_winner[i] = mw
            elif end == "truncated":
                out.match_over[i] = out.truncated[i] = True
                outcome = match_outcome(self.num_players, ())
            if entry.row is not None or outcome is not None:  # the one reward function of every path
                out.rewards[i] += step_rewards(self.reward_mode, self._sheet_change(entry, decided, outcome),
                                               self.match_bonus)
            if out.match_over[i]:
                out.finished[i] = self._summary(i, bool(out.truncated[i]), mw)
                deals += self._new_match(i)
            else:
                deals += self.seating.next_deals(i, entry, self.rngs[i], st)
        self._deal(deals)
        if changed:
            self.update_contexts(np.unique(np.array(changed, dtype=np.int64)))
        return [d.table for d in deals]

    def _rounds_played(self, i: int) -> int:
        """What ``Rules.max_hands`` caps: hands (duel, three-hand) or rounds (partnership)."""
        if self.format == "partnership":
            return int(self.seating.round_number[i]) + 1
        return int(self.hands_played[i])

    def _sheet_change(self, entry: SheetEntry, decided: list[int],
                      outcome: tuple[float, ...] | None) -> SheetChange:
        """The step's :class:`~hgin_env.rewards.SheetChange` for ``entry``: the hand's
        points between its two seats (a seat sitting out 0), or a partnership round's net
        to each partner; the columns it decided (``decided``); the match outcome if it ended."""
        points = [0.0] * self.num_players
        if entry.row is not None:
            if entry.winner_seat is not None:  # a hand: its winner and loser
                points[entry.winner_seat], points[entry.loser_seat] = float(entry.points), -float(entry.points)
            else:  # a partnership round: every seat of the scoring team, the others pay
                for s in range(self.num_players):
                    points[s] = float(entry.points) if s % 2 == entry.row else -float(entry.points)
        return SheetChange(row_seats=self._row_seats, points=tuple(points),
                           columns_won=(entry.row,) * len(decided), num_columns=self.rules.columns,
                           outcome=outcome)

    def _summary(self, i: int, truncated: bool, winner: int | None) -> dict:
        """The finished match, per seat (``by_player[p]``-style lists, seat-indexed) and
        per sheet row; ``winner`` is the winning sheet row (None: a draw, or truncated)."""
        board = self.boards[i]
        kinds = SCORED_KINDS

        def kind_dicts(counts: np.ndarray) -> list[dict[str, int]]:
            return [{k: int(counts[p, j]) for j, k in enumerate(kinds) if counts[p, j]}
                    for p in range(self.num_players)]

        out = {
            "seed": int(self.match_seeds[i]),
            "format": self.format,
            "match_winner": winner,
            "truncated": truncated,
            "hands": int(self.hands_played[i]),
            "dead_hands": int(self.dead_hands[i]),
            "columns": board.columns.tolist(),
            "columns_won": list(board.columns_won),
            "hand_kinds": kind_dicts(self.kind_counts[i]),
            "opponent_hand_kinds": kind_dicts(self.opponent_kind_counts[i]),
            "points": self.points_won[i].tolist(),
            "opponent_points": self.points_lost[i].tolist(),
            "seat_hands": self.seat_hands[i].tolist(),
            "seat_dead_hands": self.seat_dead_hands[i].tolist(),
            "scoreboard": board.to_dict(),
        }
        if self.format == "partnership":
            out["team_points"] = self.seating.team_points[i].tolist()
            out["rounds"] = int(self.seating.round_number[i]) + 1
        return out

    def privileged_observations(self) -> np.ndarray:
        """float32 [N, size of :func:`privileged_slices`]: for each acting seat, what it
        cannot see: its opponent's hand as 0/1 per card, the next stock card one-hot (all
        zero when the stock is empty), the opponent's deadwood / 100; in a partnership then
        the partner's and the partner's opponent's hands and deadwoods (zero once their
        hand is over). A new array each call; for a training critic, never for a policy."""
        return self.seat_privileged(np.arange(self.n), self.current_seat)

    def seat_tables(self, rows: np.ndarray, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(table, player) of ``seats[k]`` in match ``rows[k]``: the table it plays at and its
        player index there; player -1 for a three-hand seat sitting the hand out."""
        rows = np.asarray(rows, dtype=np.int64)
        seats = np.asarray(seats, dtype=np.int64)
        per = self.seating.tables_per_match
        t = per * rows
        if per == 2:  # partnership: the first table, unless the seat plays at the second
            t = np.where((self.seating.table_seats[t] == seats[:, None]).any(axis=1), t, t + 1)
        ts = self.seating.table_seats[t]
        player = np.where(ts[:, 0] == seats, 0, np.where(ts[:, 1] == seats, 1, -1))
        return t, player

    def seat_observations(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """float32 [k, layout.size]: the observation of seat ``seats[k]`` of match ``rows[k]``,
        whether it acts or not, as ``observation.encode_seat`` builds it: the acting seat's
        row of :meth:`observations`; a waiting seat's own table (its discard and take
        deadwoods only when it is its table's player to act, as ``encode`` gives them), a
        seat sitting out the table's public cards, each with its own context. A new array,
        vectorised (a search asks once per decision, not per step)."""
        st = self.state
        rows = np.asarray(rows, dtype=np.int64)
        seats = np.asarray(seats, dtype=np.int64)
        if rows.shape != seats.shape or rows.ndim != 1:
            raise ValueError(f"rows and seats must be 1-d of one length, got {rows.shape} and {seats.shape}")
        if seats.size and (seats.min() < 0 or seats.max() >= self.num_players):
            raise ValueError(f"seats must be in 0..{self.num_players - 1}, got {seats.tolist()}")
        k = rows.size
        s = self._slices
        t, p = self.seat_tables(rows, seats)
        out = np.zeros((k, self.layout.size), dtype=np.float32)
        sitting = p < 0
        pp = np.where(sitting, 0, p)
        q = 1 - pp
        pile_len = st.pile_len[t]
        top_card = st.pile[t, np.maximum(pile_len - 1, 0)]
        top = np.where(pile_len > 0, np.uint64(1) << top_card.astype(np.uint64), np.uint64(0))
        masks = np.zeros((k, 6), dtype=np.uint64)
        masks[:, 0] = st.hands[t, pp]
        masks[:, 1] = top
        masks[:, 2] = st.pile_mask[t] & ~top
        masks[:, 3] = st.known[t, q]
        masks[:, 4] = st.discarded[t, q]
        masks[:, 5] = st.discarded[t, pp]
        masks[sitting, 0] = 0  # a seat sitting out holds nothing and saw only the pile
        masks[sitting, 3:] = 0
        b = bits(masks)
        for j, name in enumerate(("hand", "discard_top", "discard_rest", "opponent_known", "opponent_discards",
                                  "own_discards")):
            out[:, s[name]] = b[:, j]
        out[:, s["discard_deadwood"]] = 1.0
        out[:, s["deadwood"].start] = np.where(sitting, 0.0, FRACTION[min_deadwood_batch(masks[:, 0])])
        out[:, s["take_deadwood"].start] = 1.0
        out[:, s["stock_size"].start] = (NUM_CARDS - st.stock_pos[t]) / STOCK_SCALE
        phase = st.phase[t]
        live = np.flatnonzero((phase < PHASE_HAND_OVER) & ~sitting)
        out[live, s["phase"].start + phase[live]] = 1.0
        out[:, s["knock_limit"].start] = st.knock_limit[t] / KNOCK_LIMIT_SCALE
        out[:, s["doubled"].start] = st.multiplier[t] > 1
        out[:, s["is_dealer"].start] = np.where(sitting, True, st.dealer[t] == pp)
        out[:, s["opponent_passed"].start] = np.where(sitting, False, st.passed[t, q])
        # The player to act at its table (the acting seat, or in a partnership the next to act
        # at the waiting table) sees its discard and take deadwoods, as ``encode`` gives them
        # to a table's current player: the table's derived state holds them for every table.
        current = np.flatnonzero(~sitting & (st.current_player[t] == pp) & (phase < PHASE_HAND_OVER))
        if current.size:
            block = np.zeros((current.size, self.layout.size), dtype=np.float32)
            self.table_observations(block, t[current])
            out[current, :self._ctx_slice.start] = block[:, :self._ctx_slice.start]
        out[:, self._ctx_slice] = self.context[rows, seats]
        return out

    def seat_privileged(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """float32 [k, size of :func:`privileged_slices`]: :meth:`privileged_observations`
        for seat ``seats[k]`` of match ``rows[k]``, whether it acts or not (equal to it for
        the acting seat): its opponent's hand and deadwood (the opponent's last ten-card
        deadwood while it holds eleven) and its table's next stock card, all zero for a
        seat sitting out or a finished table; in a partnership then the partner's table."""
        st = self.state
        rows = np.asarray(rows, dtype=np.int64)
        seats = np.asarray(seats, dtype=np.int64)
        t, p = self.seat_tables(rows, seats)
        k = rows.size
        out = np.zeros((k, privileged_size(self.format)), dtype=np.float32)
        mine = np.flatnonzero((p >= 0) & (st.phase[t] != PHASE_HAND_OVER))
        tm, q = t[mine], 1 - p[mine]
        out[mine, :NUM_CARDS] = bits(st.hands[tm, q])
        pos = st.stock_pos[tm]
        has_stock = np.flatnonzero(pos < NUM_CARDS)
        out[mine[has_stock], NUM_CARDS + st.decks[tm[has_stock], pos[has_stock]]] = 1.0
        out[mine, 2 * NUM_CARDS] = FRACTION[st.dw10[tm, q]]
        if self.format == "partnership":
            other = t ^ 1
            partner = (seats + 2) % 4
            pp = np.where(self.seating.table_seats[other, 0] == partner, 0, 1)
            running = np.flatnonzero(st.phase[other] != PHASE_HAND_OVER)
            o, pr = other[running], pp[running]
            base = 2 * NUM_CARDS + 1
            out[running, base:base + NUM_CARDS] = bits(st.hands[o, pr])
            out[running, base + NUM_CARDS:base + 2 * NUM_CARDS] = bits(st.hands[o, 1 - pr])
            out[running, base + 2 * NUM_CARDS] = FRACTION[st.dw10[o, pr]]
            out[running, base + 2 * NUM_CARDS + 1] = FRACTION[st.dw10[o, 1 - pr]]
        return out

    def stock_size(self) -> np.ndarray:
        """Cards left in the stock of each table."""
        st = self.state
        return NUM_CARDS - st.stock_pos

    def discard_top(self) -> np.ndarray:
        """Top card of each table's pile, -1 when empty."""
        st = self.state
        top = st.pile[self.table_range, np.maximum(st.pile_len - 1, 0)]
        return np.where(st.pile_len > 0, top, -1)
