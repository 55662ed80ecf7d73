"""The state machine, stepped move by move on stacked decks (pgx style)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import play_greedy, play_random

from hgin_env import actions as A
from hgin_env.cards import parse_card, parse_cards
from hgin_env.game import Hand, Phase, build_deck
from hgin_env.match import Match
from hgin_env.rules import PROFILES, Rules, get_rules, profile_names
from hgin_env.scoring import Scoreboard

# RULES.md §10 worked example (000 §06): A holds 4♥5♥6♥ 9♣9♦9♠ A♣2♣3♣ K♦ and draws 7♥.
GIN_HAND = "4H 5H 6H 9C 9D 9S AC 2C 3C KD"
DEFENDER_18 = "JS JH JC 5D 6D 7D 8S 4S 3H 3D"  # deadwood 8 + 4 + 3 + 3 = 18


def c(text: str) -> int:
    return parse_card(text)


def gin_match(**kw) -> Match:
    deck = build_deck(GIN_HAND, DEFENDER_18, "QC", "7H")
    return Match(deck=deck, first_dealer=0, single_hand=True, **kw)


def gin_game(**kw) -> Hand:
    """The one hand of :func:`gin_match` (recording onto its match's sheet)."""
    return gin_match(**kw).current_game


def test_first_upcard_offer_then_forced_stock_draw_then_gin():
    g = gin_game()
    assert (g.phase, g.current_player, g.dealer) == (Phase.FIRST_UPCARD, 1, 0)
    assert g.legal_actions() == [A.TAKE_DISCARD, A.PASS]
    assert len(g.stock) == 31 and g.discard_top == c("QC")
    g.apply(A.PASS)  # non-dealer passes
    assert (g.phase, g.current_player) == (Phase.FIRST_UPCARD, 0)
    g.apply(A.PASS)  # dealer passes: the non-dealer must draw from the stock
    assert (g.phase, g.current_player) == (Phase.DRAW, 1)
    assert g.legal_actions() == [A.DRAW_STOCK]
    g.apply(A.DRAW_STOCK)
    assert g.phase == Phase.DISCARD and c("7H") in g.hand_cards(1)
    legal = set(g.legal_actions())
    # Discarding K♦ leaves gin; discarding 4♥ leaves K♦ alone (10): both knocks are legal.
    assert {A.KNOCK + c("KD"), A.KNOCK + c("4H")} <= legal
    assert A.KNOCK + c("9C") not in legal
    record = g.apply(A.KNOCK + c("KD"))
    assert record is not None and record.kind == "gin"
    assert record.points == 25 + 18 and record.winner == 1 and record.knocker == 1
    assert g.phase == Phase.HAND_OVER and g.is_over
    assert g.scoreboard.columns[1].tolist() == [43, 0, 0]
    assert g.card_count_ok()


def test_taken_card_cannot_be_discarded_or_knocked_with():
    g = gin_game()
    g.apply(A.TAKE_DISCARD)  # non-dealer takes the upcard Q♣
    assert g.phase == Phase.DISCARD and g.taken_card == c("QC")
    legal = g.legal_actions()
    assert A.DISCARD + c("QC") not in legal and A.KNOCK + c("QC") not in legal
    assert A.KNOCK + c("KD") in legal  # deadwood 10 after discarding K♦ (Q♣ stays)
    assert g.known_cards[1] == 1 << c("QC")
    g.apply(A.DISCARD + c("KD"))
    assert (g.phase, g.current_player) == (Phase.DRAW, 0)
    assert g.legal_actions() == [A.DRAW_STOCK, A.TAKE_DISCARD]
    assert g.discarded[1] == 1 << c("KD")


def test_dealer_takes_upcard_after_non_dealer_passes():
    g = gin_game()
    g.apply(A.PASS)
    g.apply(A.TAKE_DISCARD)
    assert (g.phase, g.current_player) == (Phase.DISCARD, 0)
    g.apply(A.DISCARD + c("8S"))
    # Then the non-dealer plays a normal turn.
    assert (g.phase, g.current_player) == (Phase.DRAW, 1)
    assert g.legal_actions() == [A.DRAW_STOCK, A.TAKE_DISCARD]


@pytest.mark.parametrize("profile", ["gin_classic", "gin_three_hand", "gin_partnership"])
def test_source_004_profiles_have_no_first_upcard_offer(profile):
    assert PROFILES[profile].first_upcard_offer is False
    assert all(PROFILES[name].first_upcard_offer for name in PROFILES
               if name not in ("gin_classic", "gin_three_hand", "gin_partnership"))


def test_without_offer_the_non_dealer_starts_with_a_normal_draw():
    # 004: "the player who did not deal starts, taking a card from the discard pile or the
    # stock": no pass, no dealer option.
    g = gin_game(rules="gin_classic")
    assert (g.phase, g.current_player, g.dealer) == (Phase.DRAW, 1, 0)
    assert g.legal_actions() == [A.DRAW_STOCK, A.TAKE_DISCARD]
    with pytest.raises(ValueError, match="illegal action"):
        g.apply(A.PASS)
    g.apply(A.DRAW_STOCK)
    assert g.phase == Phase.DISCARD and c("7H") in g.hand_cards(1)
    record = g.apply(A.KNOCK + c("KD"))
    assert record is not None and record.kind == "gin" and record.winner == 1
    assert g.passed_upcard == [False, False]
    # Taking the upcard is the other legal start; the dealer then plays a normal turn.
    g = gin_game(rules="gin_classic")
    g.apply(A.TAKE_DISCARD)
    assert g.phase == Phase.DISCARD and g.taken_card == c("QC")
    g.apply(A.DISCARD + c("KD"))
    assert (g.phase, g.current_player) == (Phase.DRAW, 0)
    assert g.legal_actions() == [A.DRAW_STOCK, A.TAKE_DISCARD]


def test_no_offer_never_allows_pass_in_a_whole_match(rng):
    match = Match(rules=PROFILES["hollywood"].replace(first_upcard_offer=False), seed=2)
    hands = 0
    while not match.is_over:
        g = match.current_game
        if g.turns == 0 and g.phase != Phase.DISCARD:
            assert g.phase == Phase.DRAW and g.current_player != g.dealer
            hands += 1
        assert A.PASS not in g.legal_actions() and A.PASS not in match.legal_actions()
        assert g.phase != Phase.FIRST_UPCARD
        match.apply(int(rng.choice(match.legal_actions())))
    assert hands == len(match.hand_history) and hands > 1


def test_oklahoma_is_one_running_score_and_the_sheet_an_option(rng):
    assert PROFILES["oklahoma"].columns == 1
    g = play_random(Match(rules="oklahoma", seed=5), rng, prefer_knock=True)
    assert g.sheet.columns.shape == (2, 1)
    assert int(g.sheet.columns[g.match_winner, 0]) >= 100
    sheet = PROFILES["oklahoma"].replace(columns=3)
    assert sheet.oklahoma and sheet.columns == 3
    g = play_random(Match(rules=sheet, seed=5), rng, prefer_knock=True)
    assert g.sheet.columns.shape == (2, 3) and g.sheet.match_over


def test_illegal_action_names_it_and_the_legal_set():
    g = gin_game()
    with pytest.raises(ValueError, match=r"illegal action 104 \(draw\).*legal: 105 \(take\), 106 \(pass\)"):
        g.apply(A.DRAW_STOCK)
    with pytest.raises(ValueError, match="illegal action"):
        g.apply(999)


def _discard_until_dead(match: Match) -> None:
    """Always draw from the stock and throw the drawn card (never knock), to the end of
    the match's first hand."""
    while not match.hand_history:
        g = match.current_game
        if g.phase == Phase.FIRST_UPCARD:
            match.apply(A.PASS)
        elif g.phase == Phase.DRAW:
            match.apply(A.DRAW_STOCK)
        else:
            before = set(g.legal_actions())
            drawn = [a for a in before if a < A.KNOCK]
            match.apply(drawn[0])


def test_dead_hand_when_two_stock_cards_remain():
    match = gin_match()
    _discard_until_dead(match)
    rec = match.hand_history[0].record
    assert rec.kind == "dead" and rec.winner is None and rec.points == 0
    g = match.current_game  # the one hand: the match is over, its hand HAND_OVER
    assert match.is_over and g.phase == Phase.HAND_OVER
    assert len(g.stock) == 2 and match.sheet.dead_hands == 1
    assert match.sheet.wins == [0, 0] and g.card_count_ok()


@pytest.mark.parametrize("profile,same_dealer", [("hollywood", False), ("hollywood_classic", True),
                                                 ("hollywood_winner_deals", True), ("gin_classic", True)])
def test_dealer_after_dead_hand(profile, same_dealer):
    deck = build_deck(GIN_HAND, DEFENDER_18, "QC", "7H")
    match = Match(rules=profile, deck=deck, first_dealer=0, seed=1)
    _discard_until_dead(match)
    assert match.hand_number == 2 and match.current_game.hand_number == 2
    assert match.current_game.dealer == (0 if same_dealer else 1)


@pytest.mark.parametrize("profile,next_dealer", [
    ("hollywood", 1),  # alternate: dealer 0 -> 1
    ("hollywood_classic", 0),  # loser deals: player 0 lost
    ("hollywood_winner_deals", 1),  # winner deals: player 1 won
])
def test_dealer_rotation_after_a_win(profile, next_dealer):
    deck = build_deck(GIN_HAND, DEFENDER_18, "QC", "7H")
    match = Match(rules=profile, deck=deck, first_dealer=0, seed=3)
    for a in (A.PASS, A.PASS, A.DRAW_STOCK, A.KNOCK + c("KD")):
        match.apply(a)
    assert match.hand_history[0].record.winner == 1
    g = match.current_game  # the second hand, dealt at once
    assert match.hand_number == 2 and g.hand_number == 2 and g.dealer == next_dealer
    assert g.phase == Phase.FIRST_UPCARD and g.current_player == 1 - next_dealer


def test_oklahoma_knock_limit_and_spade_doubling():
    deck = build_deck(GIN_HAND, DEFENDER_18, "7S", "7H")
    g = Match(rules="oklahoma", deck=deck, first_dealer=0, single_hand=True).current_game
    assert (g.knock_limit, g.multiplier) == (7, 2)
    g.apply(A.PASS)
    g.apply(A.PASS)
    g.apply(A.DRAW_STOCK)
    legal = g.legal_actions()
    assert A.KNOCK + c("KD") in legal and A.KNOCK + c("4H") not in legal  # 10 > 7
    rec = g.apply(A.KNOCK + c("KD"))
    assert rec.points == (25 + 18) * 2
    ace = Match(rules=PROFILES["oklahoma"].replace(oklahoma_ace_gin_only=True),
                deck=build_deck(GIN_HAND, DEFENDER_18, "AD"), first_dealer=0).current_game
    assert ace.knock_limit == 0 and ace.multiplier == 1
    face = Match(rules="oklahoma", deck=build_deck(GIN_HAND, DEFENDER_18, "QD"),
                 first_dealer=0).current_game
    assert face.knock_limit == 10


def test_straight_gin_allows_only_gin():
    deck = build_deck(GIN_HAND, DEFENDER_18, "QC", "7H")
    g = Match(rules="straight_gin", deck=deck, first_dealer=0, single_hand=True).current_game
    for a in (A.PASS, A.PASS, A.DRAW_STOCK):
        g.apply(a)
    knocks = [a for a in g.legal_actions() if A.KNOCK <= a < A.DRAW_STOCK]
    assert knocks == [A.KNOCK + c("KD")]


def test_big_gin_option():
    # 11 cards all melded after drawing 7H: 4H..7H, 9s, A23C, plus K♦ replaced by 8H.
    hand = "4H 5H 6H 9C 9D 9S AC 2C 3C 8H"
    rules = Rules(big_gin_bonus=31)
    g = Match(rules=rules, deck=build_deck(hand, DEFENDER_18, "QC", "7H"), first_dealer=0,
              single_hand=True).current_game
    for a in (A.PASS, A.PASS, A.DRAW_STOCK):
        g.apply(a)
    assert A.BIG_GIN in g.legal_actions()
    rec = g.apply(A.BIG_GIN)
    assert rec.kind == "big_gin" and rec.points == 31 + 18 and rec.knock_discard is None
    assert g.card_count_ok()
    plain = Match(deck=build_deck(hand, DEFENDER_18, "QC", "7H"), first_dealer=0).current_game
    for a in (A.PASS, A.PASS, A.DRAW_STOCK):
        plain.apply(a)
    assert A.BIG_GIN not in plain.legal_actions()


def test_public_knowledge_tracking():
    g = gin_game()
    g.apply(A.TAKE_DISCARD)
    g.apply(A.DISCARD + c("QC") if False else A.DISCARD + c("KD"))
    g.apply(A.TAKE_DISCARD)  # dealer takes K♦
    assert g.known_cards[0] == 1 << c("KD")
    g.apply(A.DISCARD + c("8S"))
    assert g.discarded[0] == 1 << c("8S")


def test_replay_reproduces_match(rng):
    g = play_random(Match(seed=7), rng, prefer_knock=True)
    again = Match(None, seed=7)
    for action in g.action_history:
        again.apply(action)
    assert again.is_over
    assert again.sheet.columns.tolist() == g.sheet.columns.tolist()
    assert [h.record.to_dict() for h in again.hand_history] == \
        [h.record.to_dict() for h in g.hand_history]


def test_same_seed_same_deal_and_first_dealer():
    a, b = Match(seed=99).current_game, Match(seed=99).current_game
    assert a.hands == b.hands and a.stock == b.stock and a.dealer == b.dealer
    assert Match(seed=100).current_game.hands != a.hands


def test_cut_for_first_dealer_is_seeded():
    dealers = {Match(rules="hollywood_classic", seed=s).current_game.dealer for s in range(20)}
    assert dealers == {0, 1}
    assert Match(rules="hollywood_classic", seed=5).current_game.dealer == \
        Match(rules="hollywood_classic", seed=5).current_game.dealer


def test_stacked_deck_validation():
    with pytest.raises(ValueError, match="52 cards"):
        Match(deck=list(range(51)))
    with pytest.raises(ValueError, match="twice"):
        build_deck(GIN_HAND, GIN_HAND, "QC")
    with pytest.raises(ValueError, match=r"first_dealer for format='duel' must be None or a seat "
                                         r"in 0\.\.1, got 2"):
        Match(first_dealer=2)


@pytest.mark.parametrize("profile", profile_names("duel"))
def test_every_profile_plays_to_the_end(profile, rng):
    for seed in range(3):
        g = play_greedy(Match(rules=profile, seed=seed), rng)
        assert g.current_game.phase == Phase.MATCH_OVER and g.sheet.match_over and not g.truncated
        assert g.card_count_ok()
        if profile == "hollywood_short":
            assert len(g.sheet.decided_order) >= 1
        else:
            assert all(w is not None for w in g.sheet.column_winners)


def test_single_game_profile_settlement(rng):
    g = play_random(Match(rules="gin_classic", seed=4), rng, prefer_knock=True)
    b = g.sheet
    w = b.column_winners[0]
    loser_total = int(b.columns[1 - w, 0])
    bonus = 200 if loser_total == 0 else 100
    assert b.settlement[w, 0] == bonus + 20 * b.boxes[w, 0]
    assert b.settlement[1 - w, 0] == 20 * b.boxes[1 - w, 0]
    assert g.match_winner == w


def test_max_hands_truncates():
    g = Match(rules=Rules(max_hands=3), seed=0)
    play_random(g, np.random.default_rng(0))
    assert g.truncated and g.current_game.phase == Phase.MATCH_OVER and len(g.hand_history) == 3
    assert g.match_winner is None or g.sheet.match_over


def test_parse_cards_helper_consistency():
    assert parse_cards(GIN_HAND)[0] == c("4H")


def test_hand_of_endless_discard_swaps_is_dead_at_max_turns():
    # Both players keep taking the other's discard and never touch the stock.
    match = Match(deck=build_deck(GIN_HAND, DEFENDER_18, "QC"), first_dealer=0, single_hand=True)
    match.apply(A.TAKE_DISCARD)
    while not match.is_over:
        g = match.current_game
        if g.phase == Phase.DRAW:
            match.apply(A.TAKE_DISCARD)
        else:
            match.apply(min(a for a in g.legal_actions() if a < A.KNOCK))
    rec = match.hand_history[-1].record
    assert rec.kind == "dead" and rec.turns == Rules().max_turns
    assert len(match.current_game.stock) == 31
    with pytest.raises(ValueError, match="max_turns"):
        Rules(max_turns=-1)


def test_rules_version_2_and_old_rule_dicts_load_with_the_offer():
    from agents.ppo import SHIPPED_POLICY, read_meta
    from hgin_env.rules import RULES_VERSION

    assert RULES_VERSION == 2
    # The shipped policy (hollywood, unchanged by version 2) is stamped with this version.
    meta = read_meta(SHIPPED_POLICY)
    assert meta["rules_version"] == RULES_VERSION and meta["rules"]["name"] == "hollywood"
    # A rules dict saved before the option existed loads with the first-upcard offer.
    old = PROFILES["hollywood"].to_dict()
    del old["first_upcard_offer"]
    assert Rules.from_dict(old) == PROFILES["hollywood"]
    with pytest.raises(ValueError, match="first_upcard_offer"):
        Rules(first_upcard_offer=0)


@pytest.mark.parametrize("seed", range(6))
def test_a_hand_dealt_from_the_duels_deck_plays_as_the_duels_first_hand(seed):
    """``Hand`` is the duel's hand: dealt the deck a duel ``Match`` draws, given the same
    actions and a sheet, it reaches the same states and the same record as the match's first
    hand."""
    match = Match(seed=seed)
    deck = np.random.default_rng(seed)
    dealer = int(deck.integers(2))  # the match's first draw: its first dealer
    hand = Hand(match.rules, dealer, deck.permutation(52).tolist(), scoreboard=Scoreboard(match.rules))
    rng = np.random.default_rng(seed)
    while match.hand_number == 1:
        game = match.current_game
        assert (hand.hands, hand.stock, hand.discard_pile, hand.phase, hand.current_player) == \
            (game.hands, game.stock, game.discard_pile, game.phase, game.current_player)
        assert hand.legal_actions() == game.legal_actions() == match.legal_actions()
        action = hand.legal_actions()[rng.integers(len(hand.legal_actions()))]
        ended = hand.apply(action)
        finished = match.apply(action)
        assert ended == (finished[0].record if finished else None)
    assert ended is not None and hand.record == ended == match.hand_history[0].record
    assert hand.phase == Phase.HAND_OVER and hand.is_over and hand.card_count_ok()
    assert hand.scoreboard is not None
    assert hand.scoreboard.columns.tolist() == match.sheet.columns.tolist()
    with pytest.raises(ValueError, match="over"):
        hand.apply(A.DRAW_STOCK)


def test_a_hand_without_a_sheet_records_nothing_and_stops():
    hand = Hand("hollywood", 0, build_deck(GIN_HAND, DEFENDER_18, "QC", "7H"))
    for action in (A.PASS, A.PASS, A.DRAW_STOCK):
        assert hand.apply(action) is None and hand.record is None
    record = hand.apply(A.KNOCK + c("KD"))  # the gin of test_first_upcard_offer_...
    assert record is not None and record.kind == "gin" and record.points == 25 + 18
    assert record.columns_decided == () and hand.record is record and hand.card_count_ok()
    assert hand.phase == Phase.HAND_OVER and hand.scoreboard is None and hand.hand_number == 1


def test_a_hand_refuses_a_bad_dealer_or_deck():
    rules = get_rules(None)
    with pytest.raises(ValueError, match="dealer must be 0 or 1"):
        Hand(rules, 2, list(range(52)))
    with pytest.raises(ValueError, match="dealer must be 0 or 1"):
        Hand(rules, True, list(range(52)))
    with pytest.raises(ValueError, match="52 cards"):
        Hand(rules, 0, list(range(51)))
    with pytest.raises(ValueError, match="deck="):
        Hand(rules, 0, None)
