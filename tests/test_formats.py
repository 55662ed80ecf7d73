"""Three-hand and partnership formats (RULES.md §13) against the independent models of
``tests/brute_formats.py``, the duel ``Match`` against a duel dealt hand by hand, and the
format rules."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import greedy_action

from hgin_env import actions as A
from hgin_env.game import Hand, Phase, draw_first_dealer
from hgin_env.match import Match, SeatHand, draw_deal, first_dealer_of, partnership_tables, round_score
from hgin_env.rules import FORMATS, PROFILES, Rules, get_rules
from hgin_env.scoring import Scoreboard
from hgin_env.sheets import Sheet

try:
    from tests import brute_formats as B
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    import brute_formats as B

FORMAT_PROFILES = ["hollywood_three_hand", "gin_three_hand", "hollywood_partnership",
                   "gin_partnership"]


def _policy(match: Match, rng: np.random.Generator, greedy: bool) -> int:
    """Greedy (knock when legal, else lowest deadwood) or random that takes a legal knock."""
    game = match.current_game
    if greedy:
        return greedy_action(game, rng)
    legal = game.legal_actions()
    knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK or a == A.BIG_GIN]
    options = knocks or legal
    return int(options[rng.integers(len(options))])


def _is_knock(action: int) -> bool:
    return A.KNOCK <= action < A.DRAW_STOCK or action == A.BIG_GIN


def _random_format_rules(rng: np.random.Generator, profile: str) -> Rules:
    """A format profile with a small random target and column count, so that thousands
    of hands cover many whole matches (and some short sessions and shutout bonuses)."""
    base = PROFILES[profile]
    changes: dict = {"target": int(rng.integers(10, 90)), "max_hands": 0}
    if base.columns > 1:
        changes["columns"] = int(rng.integers(1, 4))
        changes["short_session"] = bool(rng.random() < 0.2)
    if rng.random() < 0.3:
        changes["shutout_game_bonus"] = 300
    return base.replace(**changes)


def _assert_sheet(sheet: Sheet, ref: B.RefSheetState) -> None:
    assert sheet.columns.tolist() == ref.totals
    assert sheet.column_winners == ref.winners
    assert sheet.wins == ref.wins
    assert sheet.boxes.tolist() == ref.hands_in_column
    assert sheet.settlement.tolist() == ref.settlement
    assert sheet.decided_order == ref.decided_order
    assert sheet.match_over == ref.over
    assert sheet.match_winner == ref.winner


def _ref_sheet(results: list, rows: int, rules: Rules) -> B.RefSheetState:
    return B.ref_sheet(results, rows, rules.columns, rules.target, rules.box_bonus,
                       rules.game_bonus, rules.shutout_game_bonus, rules.short_session)


# --------------------------------------------------------------------------- sheets
@pytest.mark.parametrize("rows", [2, 3])
def test_sheet_against_model_on_random_sequences(rows):
    """3000 random result sequences per row count (columns 1..4, random target, bonuses,
    short session), checked after every result."""
    rng = np.random.default_rng(rows)
    for case in range(3000):
        rules = Rules(columns=int(rng.integers(1, 5)), target=int(rng.integers(1, 120)),
                      box_bonus=int(rng.integers(0, 30)), game_bonus=int(rng.integers(0, 150)),
                      shutout_game_bonus=None if rng.random() < 0.5 else int(rng.integers(0, 300)),
                      short_session=bool(rng.random() < 0.25))
        sheet = Sheet(rules, rows)
        results: list = []
        while not sheet.match_over and len(results) < 200:
            if rng.random() < 0.2:
                results.append(None)
                sheet.record_void()
            else:
                row = int(rng.integers(rows))
                # Zero points happen (a partnership round cannot score 0, but a sheet
                # must still count the win); small values make shutouts and ties likely.
                points = int(rng.integers(0, 40 if rng.random() < 0.5 else 130))
                results.append((row, points))
                sheet.record(row, points)
            _assert_sheet(sheet, _ref_sheet(results, rows, rules))
        assert sheet.to_dict()["columns"] == sheet.columns.tolist(), case


def test_sheet_with_two_rows_agrees_with_the_duel_scoreboard():
    """The N-row sheet and the two-player Scoreboard keep the same columns, winners and
    settlement (only the draw rule of an even column split differs: RULES.md §13)."""
    rng = np.random.default_rng(7)
    for _ in range(1000):
        rules = Rules(columns=int(rng.integers(1, 4)), target=int(rng.integers(1, 120)),
                      box_bonus=int(rng.integers(0, 30)), game_bonus=int(rng.integers(0, 150)),
                      shutout_game_bonus=None if rng.random() < 0.5 else 250)
        sheet, board = Sheet(rules, 2), Scoreboard(rules)
        while not board.match_over:
            row, points = int(rng.integers(2)), int(rng.integers(0, 60))
            assert sheet.record(row, points) == board.record(row, points)
            assert sheet.columns.tolist() == board.columns.tolist()
            assert sheet.settlement.tolist() == board.settlement.tolist()
            assert sheet.column_winners == board.column_winners
        assert sheet.match_over
        if rules.columns % 2 == 1:
            assert sheet.match_winner == board.match_winner


def test_sheet_rejects_bad_input():
    sheet = Sheet("gin_three_hand", 3)
    with pytest.raises(ValueError, match="row"):
        sheet.record(3, 10)
    with pytest.raises(ValueError, match="points"):
        sheet.record(0, -1)
    with pytest.raises(ValueError, match="size"):
        Sheet(None, 1)
    with pytest.raises(ValueError, match="labels"):
        Sheet(None, 3, ("a", "b"))
    sheet.record(1, 100)
    with pytest.raises(ValueError, match="over"):
        sheet.record(0, 5)
    assert sheet.match_winner == 1
    # 004 bonuses: game 200 on a shutout (both others at 0), box 20 per hand won.
    assert sheet.settlement.tolist() == [[0], [220], [0]]
    assert "player" not in str(sheet) and "row_1" in str(sheet)


def test_three_hand_tie_breaks():
    """Most columns; tie -> larger sum of frozen totals; tie again -> draw."""
    rules = PROFILES["hollywood_three_hand"].replace(columns=2, target=10)
    sheet = Sheet(rules, 3)
    sheet.record(1, 5)
    sheet.record(0, 10)  # player 0 takes column I with 10
    sheet.record(1, 10)  # player 1 takes column II (I already frozen at 10/5/0)
    assert sheet.match_over and sheet.columns_won == [1, 1, 0]
    assert sheet.totals == [10, 15, 0] and sheet.match_winner == 1
    draw = Sheet(rules, 3)
    draw.record(1, 0)
    draw.record(0, 10)
    draw.record(1, 10)
    assert draw.totals == [10, 10, 0] and draw.match_winner is None


# --------------------------------------------------------------------------- three-hand
def test_three_hand_matches_against_model():
    """Dealer and sitter sequence, who acts, hand winners, per-player sheets, rewards and
    returns of whole matches, checked hand by hand against the model (1500 hands)."""
    rng = np.random.default_rng(3)
    hands = matches = 0
    while hands < 1500:
        rules = _random_format_rules(rng, ["hollywood_three_hand", "gin_three_hand"][matches % 2])
        greedy = matches % 3 != 0
        match = Match(rules, seed=int(rng.integers(2**31)))
        dealer = match.sitting_out  # the first dealer is the match's own seeded draw
        assert dealer in (0, 1, 2) and match.num_players == 3 and match.num_tables == 1
        results: list = []
        while not match.is_over:
            sitter, non_dealer, other = B.three_hand_seating(dealer)
            players = (non_dealer, other)
            assert match.sitting_out == sitter and match.table_of(sitter) is None
            assert match.seat_view(sitter) is None and match.tables[0].dealer == sitter
            knocker, steps = None, 0
            while True:
                seat = match.current_seat
                if steps == 0:
                    assert seat == non_dealer  # first card and first option on the upcard
                assert seat in players
                assert match.legal_action_mask(sitter).sum() == 0
                assert match.legal_action_mask(seat).sum() == len(match.legal_actions())
                game, player = match.seat_view(seat)
                assert game.current_player == player
                action = _policy(match, rng, greedy)
                if _is_knock(action):
                    knocker = seat
                events = match.apply(action)
                steps += 1
                assert match.card_count_ok()
                if events:
                    break
                assert not match.last_rewards.any()
            assert len(events) == 1 and isinstance(events[0], SeatHand)
            hand = events[0]
            result = hand.record.result
            if result.winner is None:
                winner = None
            else:
                winner = knocker if result.winner == "knocker" else (
                    players[1] if knocker == players[0] else players[0])
            assert (hand.seats, hand.dealer, hand.sitting_out) == (players, sitter, sitter)
            assert (hand.winner, hand.knocker, hand.points) == (winner, knocker, hand.record.points)
            results.append(None if winner is None else (winner, hand.points))
            assert match.last_rewards.tolist() == B.three_hand_rewards(players, winner, hand.points)
            ref = _ref_sheet(results, 3, rules)
            _assert_sheet(match.sheet, ref)
            assert match.is_over == ref.over
            dealer = B.three_hand_next_dealer(dealer, players, winner)
            hands += 1
        expected = [0.0, 0.0, 0.0]
        if ref.winner is not None:
            expected = [1.0 if s == ref.winner else -0.5 for s in range(3)]
        assert match.match_winner == ref.winner and match.returns().tolist() == expected
        assert match.current_seat is None and match.legal_actions() == []
        matches += 1
    assert matches >= 30


# --------------------------------------------------------------------------- partnership
def test_partnership_matches_against_model():
    """Partner pairing, dealing team, turn-by-turn table alternation, round scores, team
    sheets, rewards and returns, checked round by round against the model (1500 hands)."""
    rng = np.random.default_rng(4)
    hands = matches = 0
    while hands < 1500:
        rules = _random_format_rules(rng, ["hollywood_partnership", "gin_partnership"][matches % 2])
        greedy = matches % 3 != 0
        match = Match(rules, seed=int(rng.integers(2**31)))
        first_team = match.dealing_team
        assert first_team in (0, 1) and match.num_players == 4 and match.num_tables == 2
        assert [match.partner_of(s) for s in range(4)] == [2, 3, 0, 1]
        results: list = []
        round_number = 0
        while not match.is_over:
            opponent = B.partnership_opponents(round_number)
            dealing = B.partnership_dealing_team(first_team, round_number)
            assert match.round_number == round_number and match.dealing_team == dealing
            for seat in range(4):  # seat 0 and its opponent at one table, 2 and its at the other
                index = match.table_of(seat)
                assert match.tables[index].seats in ((seat, opponent[seat]), (opponent[seat], seat))
                assert match.table_of(opponent[seat]) == index
                assert match.table_of(match.partner_of(seat)) != index
            key = {s: (0 if s in (0, opponent[0]) else 1) for s in range(4)}  # seat -> table
            running = [True, True]
            knocker: list[int | None] = [None, None]
            first_actor: list[int | None] = [None, None]
            last_seat: list[int | None] = [None, None]
            must_change: list[bool] = [False, False]  # left mid-table: next actor differs
            prev_table = None
            round_hands: list[tuple[int | None, int]] = [(None, 0), (None, 0)]
            while True:
                seat = match.current_seat
                t = key[seat]
                assert running[t]
                assert match.seat_context(seat)["partner_running"] == running[1 - t]
                if prev_table is None:
                    assert t == key[0]  # each round starts at seat 0's table
                if first_actor[t] is None:
                    first_actor[t] = seat
                    assert B.team_of(seat) != dealing  # the non-dealer acts first
                if must_change[t]:
                    assert seat != last_seat[t], "a table was left in the middle of a turn"
                    must_change[t] = False
                if prev_table is not None and prev_table == t and running[1 - t]:
                    assert seat == last_seat[t], "a table kept playing after its turn ended"
                for other in range(4):
                    if other != seat:
                        assert match.legal_action_mask(other).sum() == 0
                action = _policy(match, rng, greedy)
                if _is_knock(action):
                    knocker[t] = seat
                events = match.apply(action)
                assert match.card_count_ok()
                last_seat[t] = seat
                hand_events = [e for e in events if isinstance(e, SeatHand)]
                if hand_events:
                    hand = hand_events[0]
                    running[t] = False
                    res = hand.record.result
                    winner = None if res.winner is None else (
                        knocker[t] if res.winner == "knocker" else opponent[knocker[t]])
                    assert hand.winner == winner and hand.round == round_number
                    assert B.team_of(hand.dealer) == dealing and hand.table == t
                    round_hands[t] = (winner, hand.points)
                if running[t] and running[1 - t] and match.current_seat is not None \
                        and key[match.current_seat] != t:
                    must_change[t] = True
                prev_table = t
                if not any(running):
                    break
                assert not match.last_rewards.any()
            rnd = events[-1]
            assert rnd is match.round_history[-1] and rnd.number == round_number
            team, points = B.partnership_round(round_hands)
            assert (rnd.winner, rnd.points, rnd.dealing_team) == (team, points, dealing)
            assert round_score(rnd.team_points) == (team, points)
            rewards = match.last_rewards
            assert rewards[0] == rewards[2] and rewards[1] == rewards[3] and rewards.sum() == 0
            assert rewards[0] == (0 if team is None else (points if team == 0 else -points))
            results.append(None if team is None else (team, points))
            ref = _ref_sheet(results, 2, rules)
            _assert_sheet(match.sheet, ref)
            assert match.is_over == ref.over
            round_number += 1
            hands += 2
        expected = [0.0] * 4
        if ref.winner is not None:
            expected = [1.0 if B.team_of(s) == ref.winner else -1.0 for s in range(4)]
        assert match.match_winner == ref.winner and match.returns().tolist() == expected
        matches += 1
    assert matches >= 20


def test_seat_context():
    m = Match("gin_partnership", seed=2, first_dealer=1)
    ctx = m.seat_context(2)
    assert (ctx["table"], ctx["opponent"], ctx["partner"], ctx["row"]) == (1, 3, 0, 0)
    assert ctx["partner_running"] and ctx["dealer"] == 3 and ctx["round"] == 0
    t = Match("gin_three_hand", seed=2, first_dealer=0)
    assert t.seat_context(0)["table"] is None and t.seat_context(0)["sitting_out"] == 0
    assert t.seat_context(1)["opponent"] == 2 and t.seat_context(2)["dealer"] == 0
    d = Match("hollywood", seed=2, first_dealer=0)
    assert d.seat_context(1) == {"seat": 1, "format": "duel", "table": 0, "opponent": 0,
                                 "dealer": 0, "sitting_out": None, "partner": None,
                                 "partner_running": None, "row": 1, "round": None, "hand": 1}


def test_partnership_tables_and_round_score_examples():
    assert partnership_tables(0) == ((0, 1), (2, 3))
    assert partnership_tables(1) == ((0, 3), (2, 1))
    assert round_score((30, 12)) == (0, 18)  # one hand each: the difference
    assert round_score((0, 45)) == (1, 45)  # team 1 won both (or one and a dead hand)
    assert round_score((20, 20)) == (None, 0)  # net 0: nobody's win


# --------------------------------------------------------------------------- duel
@pytest.mark.parametrize("profile", ["hollywood", "hollywood_classic", "gin_classic", "oklahoma",
                                     pytest.param(PROFILES["hollywood"].replace(max_hands=3),
                                                  id="hollywood_max_hands_3")])
def test_duel_match_replays_game_exactly(profile):
    """Same seed and actions: the duel ``Match`` goes through the same states and results as
    a duel dealt here hand by hand from the rules: the seed's generator draws the first
    dealer, then each hand's deck (a permutation, nothing more); every ``Hand`` records onto
    one ``Scoreboard``; ``Rules.next_dealer`` names the next dealer and ``Rules.match_end``
    the end."""
    rules = get_rules(profile)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        deals = np.random.default_rng(seed)
        board = Scoreboard(rules)
        game = Hand(rules, draw_first_dealer(rules.first_dealer, deals, 2),
                    deals.permutation(52).tolist(), hand_number=1, scoreboard=board)
        hand_history = []
        match = Match(profile, seed=seed)
        assert match.num_players == 2 and match.sitting_out is None
        end = None
        while end is None:
            shown = match.current_game
            assert shown.hand_number == game.hand_number == match.hand_number
            assert (shown.hands, shown.stock, shown.discard_pile) == (game.hands, game.stock,
                                                                      game.discard_pile)
            assert (match.current_seat, shown.phase, shown.dealer) == (game.current_player,
                                                                       game.phase, game.dealer)
            assert match.legal_actions() == game.legal_actions()
            action = greedy_action(game, rng) if seed % 2 else _policy(match, rng, False)
            before = len(hand_history)
            record = game.apply(action)
            events = match.apply(action)
            if record is None:
                assert events == [] and len(match.hand_history) == before
                continue
            hand_history.append(record)
            hand = events[0]
            assert hand.record.to_dict() == record.to_dict() and hand.winner == record.winner
            signed = np.zeros(2)
            if record.winner is not None:
                signed[record.winner], signed[1 - record.winner] = record.points, -record.points
            assert match.last_rewards.tolist() == signed.tolist()
            end = rules.match_end(board.match_over, len(hand_history))
            if end == "truncated":  # the hand limit ends the match on its last hand
                game.end_match()
            elif end is None:  # the next hand, dealt at once
                assert not match.is_over
                loser = None if record.winner is None else 1 - record.winner
                game = Hand(rules, rules.next_dealer(game.dealer, record.winner, loser),
                            deals.permutation(52).tolist(), hand_number=len(hand_history) + 1,
                            scoreboard=board)
        assert match.is_over and match.truncated == (end == "truncated")
        assert match.match_winner == board.match_winner
        assert [h.record for h in match.hand_history] == hand_history
        assert match.sheet.to_dict() == board.to_dict()
        assert match.current_game.phase == game.phase == Phase.MATCH_OVER
        w = board.match_winner
        assert match.returns().tolist() == ([0.0, 0.0] if w is None else
                                            [1.0 if p == w else -1.0 for p in (0, 1)])


# --------------------------------------------------------------------------- rules
def test_format_rules_and_profiles():
    assert Rules().format == "duel" and Rules().num_players == 2
    for name in FORMAT_PROFILES:
        rules = PROFILES[name]
        assert rules.format in FORMATS and Rules.from_dict(rules.to_dict()) == rules
    assert PROFILES["gin_three_hand"].num_players == 3
    assert PROFILES["gin_partnership"].num_players == 4
    old = Rules().to_dict()
    del old["format"]  # a dict saved before formats existed
    assert Rules.from_dict(old) == Rules()
    with pytest.raises(ValueError, match="format"):
        Rules(format="five_hand")
    with pytest.raises(ValueError, match="dealer_rotation.*three_hand"):
        Rules(format="three_hand")  # default rotation "alternate" is not three-hand's rule
    with pytest.raises(ValueError, match="dead_hand_same_dealer"):
        Rules(format="three_hand", dealer_rotation="loser")
    with pytest.raises(ValueError, match="dealer_rotation.*partnership"):
        PROFILES["gin_partnership"].replace(dealer_rotation="loser")
    with pytest.raises(ValueError, match="dead_hand_same_dealer.*partnership"):
        PROFILES["gin_partnership"].replace(dead_hand_same_dealer=True)
    # Options that make sense combine with a format.
    PROFILES["hollywood_three_hand"].replace(oklahoma=True, short_session=True, knock_limit=5)


def test_only_the_duel_plays_a_single_hand_or_a_stacked_deck():
    """A format's whole match is a ``Match`` of Hands; playing one of its hands alone is a
    ``Hand``: ``single_hand`` and ``deck`` are the duel's options only."""
    three = Match("gin_three_hand", seed=0)
    assert three.num_players == 3 and type(three.current_game) is Hand
    with pytest.raises(ValueError, match="single_hand and deck are options of the duel only, "
                                         "not of format='three_hand'"):
        Match("gin_three_hand", single_hand=True)  # one of its hands is a Hand
    with pytest.raises(ValueError, match="options of the duel only.*partnership"):
        Match("gin_partnership", deck=list(range(52)))
    hand = Hand("gin_three_hand", dealer=1, deck=list(range(52)))
    assert hand.rules.format == "three_hand" and not hand.is_over


def test_format_tables_are_hands_dealt_from_the_match_generator():
    """A format's table is a Hand (no generator, no sheet of its own) dealt from the
    match's generator; its record names no columns (the match's sheet decides them, and a
    partnership's round names them)."""
    for rules in ("gin_three_hand", "gin_partnership"):
        match = Match(rules, seed=3)
        assert all(type(t.game) is Hand and t.game.scoreboard is None for t in match.tables)
        rng = np.random.default_rng(3)
        first_dealer_of(match.rules, rng)
        assert match.tables[0].game.deck == draw_deal(rng, match.format).tolist()
        while not match.hand_history:
            match.apply(greedy_action(match.current_game, rng))
        assert match.hand_history[0].record.columns_decided == ()


def test_duel_hands_are_dealt_by_draw_deal_onto_the_match_sheet():
    """``draw_deal`` draws a permutation of the 52 cards, and a format's table one integer
    more (the duel not). The duel deals each hand with it, as a ``Hand`` recording onto the
    match's sheet: the records name the columns they decided, in the sheet's order."""
    for fmt, extra in (("duel", False), ("three_hand", True), ("partnership", True)):
        rng, expected = np.random.default_rng(5), np.random.default_rng(5)
        assert draw_deal(rng, fmt).tolist() == expected.permutation(52).tolist()
        if extra:
            expected.integers(2**32)
        assert rng.bit_generator.state == expected.bit_generator.state, fmt
    match = Match("hollywood", seed=3)
    deals, play = np.random.default_rng(3), np.random.default_rng(0)
    first_dealer_of(match.rules, deals)
    decided = []
    while not match.is_over:
        game = match.current_game
        assert type(game) is Hand and game.scoreboard is match.sheet
        assert game.hand_number == len(match.hand_history) + 1
        assert game.deck == draw_deal(deals, "duel").tolist()
        while match.current_game is game and not match.is_over:
            finished = match.apply(greedy_action(game, play))
        decided += finished[0].record.columns_decided
    assert len(match.hand_history) > 3 and match.sheet.match_over
    assert decided == match.sheet.decided_order and len(decided) == match.rules.columns


def test_match_input_validation_and_seeding():
    with pytest.raises(ValueError, match="first_dealer.*team"):
        Match("gin_partnership", first_dealer=2)
    with pytest.raises(ValueError, match="first_dealer.*seat"):
        Match("gin_three_hand", first_dealer=3)
    with pytest.raises(ValueError, match="seat"):
        Match("gin_three_hand").table_of(5)
    with pytest.raises(ValueError, match="no teams"):
        Match("gin_three_hand").team_of(0)
    assert Match("gin_three_hand", first_dealer=2).sitting_out == 2
    assert Match("gin_partnership", first_dealer=1).dealing_team == 1
    dealers = {Match("hollywood_three_hand", seed=s).sitting_out for s in range(40)}
    teams = {Match("hollywood_partnership", seed=s).dealing_team for s in range(40)}
    assert dealers == {0, 1, 2} and teams == {0, 1}  # cutting reaches every seat / team
    for name in FORMAT_PROFILES:  # same seed and actions -> same match
        runs = []
        for _ in range(2):
            rng = np.random.default_rng(9)
            m = Match(PROFILES[name].replace(target=20), seed=11)
            while not m.is_over:
                m.apply(_policy(m, rng, True))
            runs.append((m.to_dict(), [h.to_dict() for h in m.hand_history]))
        assert runs[0] == runs[1]
    m = Match("hollywood_three_hand", seed=1)
    with pytest.raises(ValueError, match="illegal action"):
        m.apply(A.DRAW_STOCK)  # the first upcard is offered first
    m = Match("gin_three_hand", seed=1)
    with pytest.raises(ValueError, match="illegal action"):
        m.apply(A.PASS)  # 004: no first-upcard offer, the non-dealer draws at once
    m.apply(A.DRAW_STOCK)


def test_truncation_caps_hands_and_rounds():
    m = Match(PROFILES["gin_partnership"].replace(max_hands=2), seed=3)
    rng = np.random.default_rng(0)
    while not m.is_over:
        m.apply(_policy(m, rng, False))
    assert len(m.round_history) <= 2 and (m.truncated or m.sheet.match_over)
    if m.truncated:
        assert m.match_winner is None and not m.returns().any()
    with pytest.raises(ValueError, match="over"):
        m.apply(A.PASS)


def test_one_end_of_match_rule_and_one_outcome():
    """``Rules.match_end`` is the end of every path (Match, BatchGame) and
    ``match.match_outcome`` the outcome of Match.returns and the batched engine."""
    from hgin_env.match import match_outcome
    from hgin_env.rules import get_rules

    capped = get_rules("hollywood").replace(max_hands=3)
    assert capped.match_end(True, 0) == "over" and capped.match_end(True, 3) == "over"
    assert capped.match_end(False, 3) == "truncated" and capped.match_end(False, 2) is None
    assert get_rules("hollywood").replace(max_hands=0).match_end(False, 10**6) is None
    assert match_outcome(2, (1,)) == (-1.0, 1.0)
    assert match_outcome(3, (2,)) == (-0.5, -0.5, 1.0)
    assert match_outcome(4, (1, 3)) == (-1.0, 1.0, -1.0, 1.0)
    assert match_outcome(4, ()) == (0.0,) * 4
