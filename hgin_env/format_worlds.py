"""Determinization in the three-hand and partnership formats: whole match states (a
:class:`~hgin_env.batch.load.MatchState`, loadable into a batched row) consistent with
what one seat knows when it is about to act.

Built **from the seat's observation dict only** (plus what the seat remembers of its own
moves at its table: its pickups still held, its pass of the upcard, the turn count), like
the duel's :class:`~hgin_env.determinize.InfoSet`, which it reuses: the table part of a
format vector is the duel's, slice for slice at the same offsets, so
``InfoSet.from_observation`` reads the seat's table from it unchanged and samples it the
same way (the opponent's unseen cards, the stock order). What this module adds is the
match around that table, read from the format context slices:

* **three-hand**: who sits out (the dealer), hence the table's seats and which seat plays
  which part; the three sheet rows (column totals, decided columns, wins) and the hands
  played. The seat's table *is* the whole deal (the sitter holds no cards), so a world is
  exact up to the duel's sampling; nothing else is hidden.
* **partnership**: the round (hence the two tables' seats), the dealing team (from the
  seat's ``is_dealer``), the points each team won in the round's finished hands, the two
  team rows of the sheet, and whether the partner's hand still runs. The other table has
  its own deck and the seat sees nothing of it, so its state is not a posterior but a
  stand-in with the same public facts. If the partner's hand is over, the table is a
  finished hand (its points are already in the round points the seat observes). If it
  runs, it is a fresh deal from the world's generator, dealt by the dealing team, played
  forward by a greedy rule for both players (take the discard when it lowers the deadwood,
  else draw; throw the card that leaves the least deadwood; never knock, never past the
  last drawable card) until it has had as many turns as the seat's own table (the tables
  alternate turn by turn), and stopped at a draw. **Limits**: its hands are greedy, not
  the partner's and its opponent's real play; a partner close to knocking or an opponent
  close to gin are not modelled beyond that; the turn count is the seat's table's, which
  may differ by one from the real one, and the stock at the other table is whatever that
  play left. The critic that values a world sees these stand-in hands among its
  privileged features (partner_hand ...): a search valued by it is as good as this
  stand-in.

Nothing hidden from the seat is read: :meth:`FormatInfoSet.from_observation` takes the
observation dict, :meth:`FormatInfoSet.from_match` only calls
:func:`hgin_env.observation.observe` and copies three facts of the seat's own moves, and
a sample is drawn from the ``FormatInfoSet`` and the generator alone, so two matches that
differ only in cards hidden from the seat give the same worlds for the same seed
(``tests/test_format_worlds.py``).

Not observed, so not reconstructed: the sheet's box counts, settlements and void results
and the order in which columns were decided (as in the duel), a partnership's round scores
so far (summaries only), the number of dead hands before this one beyond the three-hand
hand counter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import actions as A
from .cards import NUM_CARDS
from .codes import Phase
from .determinize import InfoSet
from .game import Hand
from .match import THREE_HAND_DEALER_PART, Match, new_sheet, partnership_tables, three_hand_seats
from .melds import deadwood_after_discard_mask, deadwood_of_mask
from .observation import ObservationLayout, observe
from .rules import Rules, get_rules
from .sheets import Sheet

#: Formats this module determinizes (the duel's is :mod:`hgin_env.determinize`).
FORMATS = ("three_hand", "partnership")


@dataclass(frozen=True)
class FormatInfoSet:
    """What one seat of a three-hand or partnership match knows when it is about to act
    (see the module docstring). Seats and sheet rows are absolute (as the match numbers
    them)."""

    rules: Rules
    seat: int
    #: The seat's table, as a duel's information set (its ``seat`` is the player index there).
    table: InfoSet
    #: The seat's table's index, and every table's seats.
    table_index: int
    seats: tuple[tuple[int, int], ...]
    #: Per sheet row (a seat in three-hand, a team in a partnership): column totals and wins;
    #: per column the row that won it (None: open).
    columns: tuple[tuple[int, ...], ...]
    wins: tuple[int, ...]
    column_winners: tuple[int | None, ...]
    hands_played: int
    #: Three-hand: the seat sitting out.
    sitting_out: int | None = None
    #: Partnership: the round, the dealing team, each team's points in the round's finished
    #: hands, whether the partner's hand still runs.
    round_number: int = 0
    dealing_team: int = 0
    round_points: tuple[int, int] = (0, 0)
    partner_running: bool = True

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_observation(cls, observation: dict, rules: Rules | str | dict | None, *,
                         own_known: int | None = None, own_passed: bool | None = None,
                         turns: int | None = None) -> FormatInfoSet:
        """The information set of the seat whose observation dict this is (it must act);
        ``own_known``, ``own_passed``, ``turns`` as :meth:`InfoSet.from_observation`'s."""
        rules = get_rules(rules)
        if rules.format not in FORMATS:
            raise ValueError(f"FormatInfoSet is for {FORMATS}, not format={rules.format!r} "
                             f"(the duel's is hgin_env.determinize.InfoSet)")
        layout = ObservationLayout.for_rules(rules)
        vec = np.asarray(observation["observation"])
        if vec.shape != (layout.size,):
            raise ValueError(f"observation has shape {vec.shape}, the {rules.format} layout has {layout.size}")
        seat = int(layout.get(vec, "seat").argmax())
        target = rules.target
        c = rules.columns
        if rules.format == "three_hand":
            sitting_out = (seat + int(layout.get(vec, "sitting_out").argmax())) % 3
            opponent_v = layout.get(vec, "opponent_seat")
            if sitting_out == seat or not opponent_v.any():
                raise ValueError(f"seat {seat} sits this hand out: it has no decision to determinize")
            seats = three_hand_seats(sitting_out)
            player = seats.index(seat)
            if seats[1 - player] != (seat + int(opponent_v.argmax())) % 3:
                raise ValueError("the observation's opponent is not the table's other seat")
            dealer_part = player == THREE_HAND_DEALER_PART
            totals = layout.counts(vec, "seat_columns", target)
            won = layout.flags(vec, "seat_won")
            seat_wins = layout.counts(vec, "seat_wins")
            rows = [(seat + r) % 3 for r in range(3)]  # the slices run me, the next seat, the one after
            columns: list[tuple[int, ...]] = [()] * 3
            wins = [0] * 3
            winners: list[int | None] = [None] * c
            for r, s in enumerate(rows):
                columns[s] = tuple(totals[r * c:(r + 1) * c])
                wins[s] = seat_wins[r]
                for j in range(c):
                    if won[r * c + j]:
                        winners[j] = s
            table = InfoSet.from_observation(observation, rules, seat=player,
                                             own_known=own_known, own_passed=own_passed, turns=turns)
            if table.is_dealer != dealer_part:
                raise ValueError("the observation's is_dealer disagrees with the seat's part at the table")
            return cls(rules=rules, seat=seat, table=table, table_index=0, seats=(seats,),
                       columns=tuple(columns), wins=tuple(wins), column_winners=tuple(winners),
                       hands_played=layout.count(vec, "hand_number"), sitting_out=sitting_out)
        round_number = layout.count(vec, "round_number")
        tables = partnership_tables(round_number)
        index = 0 if seat in tables[0] else 1
        player = tables[index].index(seat)  # the team-0 seat is player 0
        table = InfoSet.from_observation(observation, rules, seat=player,
                                         own_known=own_known, own_passed=own_passed, turns=turns)
        team = seat % 2
        # One team deals at both tables, and a table's dealer is its player of that team.
        dealing_team = team if table.is_dealer else 1 - team
        own, other = layout.counts(vec, "round_points")
        points = [0, 0]
        points[team], points[1 - team] = own, other
        columns = [(), ()]
        columns[team] = tuple(layout.counts(vec, "own_columns", target))
        columns[1 - team] = tuple(layout.counts(vec, "opponent_columns", target))
        wins = [0, 0]
        wins[team], wins[1 - team] = layout.counts(vec, "wins")
        winners = [team if a else (1 - team if b else None)
                   for a, b in zip(layout.flags(vec, "won_by_me"), layout.flags(vec, "won_by_opponent"),
                                   strict=True)]
        partner_running = layout.flag(vec, "partner_running")
        return cls(rules=rules, seat=seat, table=table, table_index=index, seats=tables,
                   columns=tuple(columns), wins=tuple(wins), column_winners=tuple(winners),
                   hands_played=2 * round_number + (0 if partner_running else 1),
                   round_number=round_number, dealing_team=dealing_team, round_points=(points[0], points[1]),
                   partner_running=partner_running)

    @classmethod
    def from_match(cls, match: Match, seat: int) -> FormatInfoSet:
        """The information set of ``seat`` (who must act) in ``match``: its observation dict
        (:func:`~hgin_env.observation.observe`) and its own moves at its table."""
        if match.is_over or match.current_seat != seat:
            raise ValueError(f"seat {seat} is not to act (the acting seat is {match.current_seat})")
        game, player = match.seat_view(seat)
        return cls.from_observation(observe(match, seat), match.rules, own_known=game.known_cards[player],
                                    own_passed=game.passed_upcard[player], turns=game.turns)

    # ------------------------------------------------------------------ sampling
    def sample(self, rng: np.random.Generator, decline_weight: float = 1.0, model: str = "uniform"):
        """One whole match state (:class:`~hgin_env.batch.load.MatchState`) consistent with
        this information set: the seat's table as :meth:`InfoSet.sample` draws it, the
        match around it from the observed context, and in a partnership the other table's
        stand-in (module docstring)."""
        from .batch.load import MatchState

        game = self.table.sample(rng, decline_weight, model)
        sheet = self._sheet()
        if self.rules.format == "three_hand":
            return MatchState(rules=self.rules, games=(game,), seats=self.seats, sheet=sheet,
                              hands_played=self.hands_played, hand_number=self.hands_played + 1,
                              sitting_out=self.sitting_out)
        other = self._other_table(rng)
        games = (game, other) if self.table_index == 0 else (other, game)
        return MatchState(rules=self.rules, games=games, seats=self.seats, sheet=sheet,
                          hands_played=self.hands_played, hand_number=2 * self.round_number + 2,
                          round_number=self.round_number, dealing_team=self.dealing_team,
                          round_points=self.round_points, current_table=self.table_index)

    def opponent_hand(self, world) -> int:
        """The seat's opponent's hand in a sampled ``world`` (for behaviour weights)."""
        return world.games[self.table_index].hands[1 - self.table.seat]

    def _sheet(self) -> Sheet:
        sheet = new_sheet(self.rules)
        for row, totals in enumerate(self.columns):
            sheet.columns[row] = totals
        sheet.wins = list(self.wins)
        sheet.column_winners = list(self.column_winners)
        sheet.decided_order = [j for j, w in enumerate(self.column_winners) if w is not None]
        return sheet

    def _other_table(self, rng: np.random.Generator) -> Hand:
        """The partner's table: a fresh deal from ``rng``, finished if the partner's hand is
        over, else played forward greedily to the seat's table's turn count (docstring)."""
        deck = rng.permutation(NUM_CARDS)
        rng.integers(2**32)  # once the seed of a table's game; still drawn, so each seed samples the same worlds
        game = Hand(self.rules, dealer=self.dealing_team, deck=deck.tolist())
        if not self.partner_running:
            game.phase = Phase.HAND_OVER  # its hand is over; what it held no longer matters
            game.forget_cached()
            return game
        last = self.rules.dead_hand_stock + 1  # a discard at this stock or below would end the hand
        while game.turns < self.table.turns or game.phase == Phase.DISCARD:
            if game.phase != Phase.DISCARD and len(game.stock) <= last:
                break
            game.apply(_greedy_action(game))
        return game


def _greedy_action(game: Hand) -> int:
    """The other table's stand-in play (never ends the hand): pass the upcard unless it
    lowers the deadwood, take the discard when it does, else draw; throw the card that
    leaves the least deadwood, face up."""
    hand = game.hands[game.current_player]
    legal = game.legal_actions()
    if game.phase == Phase.DISCARD:
        after = deadwood_after_discard_mask(hand)
        cards = [a - A.DISCARD for a in legal if A.DISCARD <= a < A.KNOCK]
        return A.DISCARD + min(cards, key=lambda c: (after[c], -c))
    top = game.discard_pile[-1] if game.discard_pile else -1
    if A.TAKE_DISCARD in legal and top >= 0:
        after = deadwood_after_discard_mask(hand | 1 << top)
        if min(dw for c, dw in after.items() if c != top) < deadwood_of_mask(hand):
            return A.TAKE_DISCARD
    return A.PASS if A.PASS in legal else A.DRAW_STOCK
