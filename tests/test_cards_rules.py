"""Card notation, rule options and profiles."""

from __future__ import annotations

import pytest

from hgin_env.cards import (
    card_value,
    cards_to_mask,
    format_cards,
    mask_to_cards,
    parse_card,
    parse_cards,
)
from hgin_env.rules import PROFILES, Rules, get_rules


def test_card_ids_and_text_round_trip():
    assert parse_card("AC") == 0 and parse_card("KS") == 51
    assert parse_card("TD") == parse_card("10D") == parse_card("10♦") == 13 + 9
    assert parse_card("a♠") == 39
    assert format_cards(range(52)).split()[:3] == ["AC", "2C", "3C"]
    for c in range(52):
        assert parse_card(format_cards([c])) == c
        assert parse_card(format_cards([c], symbols=True)) == c
    assert parse_cards("4H 5H, 6H") == (29, 30, 31)


@pytest.mark.parametrize("bad", ["", "1C", "ZZ", "11H", "AX", "KDD", "10"])
def test_unknown_card_text_raises(bad):
    with pytest.raises(ValueError, match="card"):
        parse_card(bad)


def test_duplicates_and_range_rejected():
    with pytest.raises(ValueError, match="duplicate"):
        parse_cards("AC AC")
    with pytest.raises(ValueError, match="outside"):
        cards_to_mask([52])


def test_values_and_masks():
    assert [card_value(parse_card(t)) for t in "AC 2D 9H TS JC QD KH".split()] == [1, 2, 9, 10, 10, 10, 10]
    m = cards_to_mask("AC KS 5H")
    assert mask_to_cards(m) == (0, 30, 51)


def test_default_profile_is_rules_md_000():
    r = Rules()
    assert r == PROFILES["hollywood"] == get_rules(None) == get_rules("hollywood")
    assert (r.knock_limit, r.gin_bonus, r.undercut_bonus, r.columns, r.target) == (10, 25, 25, 3, 100)
    assert (r.box_bonus, r.game_bonus, r.big_gin_bonus) == (0, 0, None)
    assert r.dealer_rotation == "alternate" and not r.dead_hand_same_dealer


def test_profiles_match_rules_md_table():
    p = PROFILES
    assert p["hollywood_classic"].dealer_rotation == "loser" and p["hollywood_classic"].box_bonus == 25
    assert p["hollywood_classic"].game_bonus == 100 and p["hollywood_classic"].dead_hand_same_dealer
    assert p["hollywood_winner_deals"].dealer_rotation == "winner"
    assert p["hollywood_winner_deals"].undercut_bonus == 10
    assert p["gin_us_uk"].columns == 1 and p["gin_us_uk"].gin_bonus == 20
    assert p["gin_us_uk"].undercut_bonus == 10
    g = p["gin_classic"]
    assert (g.columns, g.game_bonus, g.shutout_game_bonus, g.box_bonus) == (1, 100, 200, 20)
    assert p["oklahoma"].oklahoma and p["straight_gin"].knock_limit == 0
    assert p["hollywood_short"].short_session


@pytest.mark.parametrize("option,value", [
    ("knock_limit", -1), ("gin_bonus", -5), ("columns", 0), ("target", 0),
    ("dealer_rotation", "random"), ("first_dealer", "oldest"), ("big_gin_bonus", -1),
    ("knock_limit", 2.5), ("short_session", "yes"), ("dead_hand_stock", 40),
])
def test_invalid_options_name_the_option(option, value):
    with pytest.raises(ValueError, match=option):
        Rules(**{option: value})


def test_rules_replace_and_dicts():
    r = Rules().replace(knock_limit=5)
    assert r.knock_limit == 5 and r.name == "custom"
    assert Rules.from_dict(r.to_dict()) == r
    with pytest.raises(ValueError, match="unknown rule option"):
        Rules().replace(knok_limit=3)
    with pytest.raises(ValueError, match="unknown rules profile"):
        get_rules("holywood")
    with pytest.raises(ValueError, match="oklahoma_ace_gin_only"):
        Rules(oklahoma_ace_gin_only=True)
