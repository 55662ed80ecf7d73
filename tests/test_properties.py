"""Property tests (hypothesis): conservation of cards, frozen columns, matches end."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hgin_env.game import Game
from hgin_env.rules import PROFILES, Rules, profile_names
from hgin_env.scoring import Scoreboard

profiles = st.sampled_from(profile_names("duel"))  # formats: test_format_properties.py


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), profile=profiles,
       choices=st.lists(st.integers(0, 10**6), min_size=50, max_size=400))
def test_52_cards_conserved_through_any_legal_play(seed, profile, choices):
    game = Game(rules=profile, seed=seed)
    for choice in choices:
        if game.is_over:
            break
        legal = game.legal_actions()
        game.apply(legal[choice % len(legal)])
        assert game.card_count_ok()
        for p in (0, 1):
            assert game.hands[p] & game.hands[1 - p] == 0


@settings(max_examples=200, deadline=None)
@given(wins=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 150)), max_size=60),
       columns=st.integers(1, 5), target=st.integers(1, 200), short=st.booleans())
def test_scores_never_added_to_a_decided_column(wins, columns, target, short):
    board = Scoreboard(Rules(columns=columns, target=target, short_session=short))
    for player, points in wins:
        if board.match_over:
            break
        frozen = {j: board.columns[:, j].copy() for j, w in enumerate(board.column_winners) if w is not None}
        decided = board.record(player, points)
        for j, before in frozen.items():
            assert (board.columns[:, j] == before).all()
        for j in decided:
            assert board.column_winners[j] == player and board.columns[player, j] >= target
        for j, w in enumerate(board.column_winners):
            assert (w is None) == bool((board.columns[:, j] < target).all())
        # Columns open in order: a player's totals are only in its first `wins` columns.
        for p in (0, 1):
            assert not board.columns[p, board.wins[p]:].any()


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), profile=profiles)
def test_every_match_of_random_legal_play_ends(seed, profile):
    game = Game(rules=PROFILES[profile].replace(max_hands=0), seed=seed)  # no safety cap
    rng = np.random.default_rng(seed)
    steps = 0
    while not game.is_over:
        legal = game.legal_actions()
        # Uniform over legal actions, except that a legal knock is taken (pure uniform play
        # is checked by the soak script and test_env; it takes hundreds of hands a match).
        knocks = [a for a in legal if 52 <= a < 104]
        game.apply((knocks or legal)[rng.integers(len(knocks or legal))])
        steps += 1
        assert steps < 2_000_000
    assert game.scoreboard.match_over and game.match_winner is not None
