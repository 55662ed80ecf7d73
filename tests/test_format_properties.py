"""Property tests (hypothesis) of ``hgin_env.match.Match`` for every format and profile:
cards conserved per table at every step, zero-sum rewards per hand and round (partners
identical), only the acting seat has a mask, and every match ends."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hgin_env import actions as A
from hgin_env.match import Match
from hgin_env.rules import PROFILES, profile_names


def _check_step(match: Match) -> None:
    assert match.card_count_ok()
    for table in match.tables:
        hands = table.game.hands
        assert hands[0] & hands[1] == 0
    rewards = match.last_rewards
    assert rewards.sum() == 0
    if match.format == "partnership":
        assert rewards[0] == rewards[2] and rewards[1] == rewards[3]
    if match.format == "three_hand" and rewards.any():
        assert rewards[match.hand_history[-1].sitting_out] == 0
    acting = match.current_seat
    for seat in range(match.num_players):
        mask = match.legal_action_mask(seat)
        assert mask.sum() == (len(match.legal_actions()) if seat == acting else 0)
    if match.sitting_out is not None and not match.is_over:
        assert acting != match.sitting_out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), profile=st.sampled_from(profile_names()),
       choices=st.lists(st.integers(0, 10**6), min_size=50, max_size=600))
def test_cards_conserved_and_rewards_zero_sum_through_any_legal_play(seed, profile, choices):
    match = Match(PROFILES[profile], seed=seed)
    for choice in choices:
        if match.is_over:
            break
        legal = match.legal_actions()
        match.apply(legal[choice % len(legal)])
        _check_step(match)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), profile=st.sampled_from(profile_names()),
       target=st.sampled_from([25, 50]))
def test_every_match_ends_with_zero_sum_returns(seed, profile, target):
    match = Match(PROFILES[profile].replace(max_hands=0, target=target), seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    while not match.is_over:
        legal = match.legal_actions()
        # A legal knock is taken (pure uniform play runs to hundreds of dead hands).
        knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
        match.apply((knocks or legal)[rng.integers(len(knocks or legal))])
        _check_step(match)
        steps += 1
        assert steps < 2_000_000
    assert match.sheet.match_over and not match.truncated and match.current_seat is None
    returns = match.returns()
    assert abs(returns.sum()) < 1e-12
    if match.match_winner is not None:
        assert sorted(returns[list(match.winning_seats)]) == [1.0] * len(match.winning_seats)
