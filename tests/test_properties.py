"""Property tests (hypothesis): conservation of cards, frozen columns, matches end."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hgin_env.match import Match
from hgin_env.rules import PROFILES, Rules, profile_names
from hgin_env.scoring import Scoreboard

profiles = st.sampled_from(profile_names("duel"))  # formats: test_format_properties.py


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), profile=profiles,
       choices=st.lists(st.integers(0, 10**6), min_size=50, max_size=400))
def test_52_cards_conserved_through_any_legal_play(seed, profile, choices):
    match = Match(rules=profile, seed=seed)
    for choice in choices:
        if match.is_over:
            break
        legal = match.legal_actions()
        match.apply(legal[choice % len(legal)])
        game = match.current_game  # the next hand once one ends
        assert match.card_count_ok() and game.card_count_ok()
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
    match = Match(rules=PROFILES[profile].replace(max_hands=0), seed=seed)  # no safety cap
    rng = np.random.default_rng(seed)
    steps = 0
    while not match.is_over:
        legal = match.legal_actions()
        # Uniform over legal actions, except that a legal knock is taken (pure uniform play
        # is checked by the soak script and test_env; it takes hundreds of hands a match).
        knocks = [a for a in legal if 52 <= a < 104]
        match.apply((knocks or legal)[rng.integers(len(knocks or legal))])
        steps += 1
        assert steps < 2_000_000
    assert match.sheet.match_over and match.match_winner is not None


# ---------------------------------------------------------------- batched play, bad actions
_BAD_VALUES = st.sampled_from(["neg", "big", "illegal", "nan", "float"])


def _corrupt(actions: np.ndarray, masks: np.ndarray, rows: list[int], kind: str):
    bad = actions.copy()
    for i in rows:
        if kind == "neg":
            bad[i] = -2 - i
        elif kind == "big":
            bad[i] = 108 + i
        else:
            illegal = np.flatnonzero(~masks[i])
            bad[i] = illegal[i % len(illegal)]
    if kind == "nan":
        out = bad.astype(np.float64)
        out[rows] = np.nan
        return out
    if kind == "float":
        return bad.astype(np.float64) + 0.5
    return bad


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), profile=profiles,
       plan=st.lists(st.tuples(st.booleans(), st.lists(st.integers(0, 5), min_size=1, max_size=3),
                               _BAD_VALUES, st.lists(st.booleans(), min_size=6, max_size=6)),
                     min_size=5, max_size=40))
def test_bad_actions_mixed_into_batched_play_change_nothing(seed, profile, plan):
    """A refused batched step leaves masks, observations, episode lengths and returns
    bit-identical; a row that does not move (``NO_MOVE``) keeps its observation."""
    from agents.batched import BatchedRandom
    from hgin_env.actions import NO_MOVE
    from hgin_env.batch.vector import LearnerBatch

    core = LearnerBatch(6, [BatchedRandom(seed=seed)], rules=profile, reward="points", seed=seed)
    batch = core.batch
    rng = np.random.default_rng(seed)
    for refuse, rows, kind, stay in plan:
        masks = core.action_masks().copy()
        obs = core.observations().copy()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        if refuse:
            state = (batch.hands.copy(), core.episode_length.copy(), core.episode_return.copy(),
                     batch.rng.bit_generator.state, core.rng.bit_generator.state)
            try:
                core.step(_corrupt(actions, masks, sorted(set(rows)), kind))
            except (TypeError, ValueError):
                pass
            else:
                raise AssertionError(f"accepted bad actions ({kind} in rows {rows})")
            assert np.array_equal(core.action_masks(), masks) and np.array_equal(core.observations(), obs)
            assert np.array_equal(batch.hands, state[0]) and np.array_equal(core.episode_length, state[1])
            assert np.array_equal(core.episode_return, state[2])
            assert batch.rng.bit_generator.state == state[3] and core.rng.bit_generator.state == state[4]
        else:  # the engine itself: rows marked NO_MOVE stay exactly as they were
            actions[np.array(stay)] = NO_MOVE
            batch.step(actions)
            still = np.array(stay)
            assert np.array_equal(batch.observations()[still], obs[still])
            assert np.array_equal(batch.legal_action_masks()[still], masks[still])
            core._play_opponents()  # the learners act again in every match
