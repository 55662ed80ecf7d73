"""Helpers shared by the tests."""

from __future__ import annotations

import numpy as np

from hgin_env import actions as A
from hgin_env.game import Hand
from hgin_env.match import Match


def play_random(game: Hand | Match, rng: np.random.Generator, prefer_knock: bool = False) -> Hand | Match:
    """Play uniformly random legal actions until the hand or match is over.

    With ``prefer_knock`` a legal knock is always taken (random play otherwise almost never
    knocks, so matches run to hundreds of dead hands).
    """
    while not game.is_over:
        legal = game.legal_actions()
        if prefer_knock:
            knocks = [a for a in legal if 52 <= a < 104]
            if knocks:
                legal = knocks
        game.apply(legal[rng.integers(len(legal))])
    return game


def greedy_action(state: Hand | Match, rng: np.random.Generator) -> int:
    """A quick engine-side player for tests: knock when legal, else keep deadwood lowest
    (in a match, as the acting player of the hand being played)."""
    from hgin_env import actions as A
    from hgin_env.melds import cached_deadwood
    from hgin_env.observation import take_deadwood

    game = state.current_game if isinstance(state, Match) else state
    legal = game.legal_actions()
    knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
    if knocks:
        return knocks[rng.integers(len(knocks))]
    hand = game.hands[game.current_player]
    if A.TAKE_DISCARD in legal:
        if take_deadwood(hand, game.discard_pile[-1]) < cached_deadwood(hand):
            return A.TAKE_DISCARD
        return A.DRAW_STOCK if A.DRAW_STOCK in legal else A.PASS
    if legal == [A.DRAW_STOCK]:
        return A.DRAW_STOCK
    after = game.deadwood_after_discard()
    best = min(after[a] for a in legal if a < A.KNOCK)
    options = [a for a in legal if a < A.KNOCK and after[a] == best]
    return options[rng.integers(len(options))]


def play_greedy(game: Hand | Match, rng: np.random.Generator) -> Hand | Match:
    while not game.is_over:
        game.apply(greedy_action(game, rng))
    return game


def same_state(a: object, b: object, path: str = "env") -> None:
    """Assert that two object graphs hold the same state, field by field (numpy arrays by
    value, random generators by their state). Private fields of the engine (``Hand``) are
    derived-value caches and are skipped; the env's own private fields are compared."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), path
    elif isinstance(a, np.random.Generator):
        assert a.bit_generator.state == b.bit_generator.state, path
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), f"{path}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            same_state(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same_state(x, y, f"{path}[{i}]")
    elif hasattr(a, "__dict__") and type(a).__module__.startswith(("hgin_env", "gymnasium")):
        skip_private = isinstance(a, Hand)
        da = {k: v for k, v in vars(a).items() if not (skip_private and k.startswith("_"))}
        db = {k: v for k, v in vars(b).items() if not (skip_private and k.startswith("_"))}
        same_state(da, db, path)
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def swap_hidden(game: Hand, rng: np.random.Generator) -> Hand:
    """The same state for the acting player with the opponent's unseen cards and the stock
    reshuffled: the two states differ only in what the player cannot see."""
    other = game.clone()
    me = game.current_player
    opp = 1 - me
    known = game.known_cards[opp]
    pool = [c for c in range(52) if (game.hands[opp] & ~known) >> c & 1] + list(game.stock)
    pool = rng.permutation(pool).tolist()
    n_hidden = (game.hands[opp] & ~known).bit_count()
    hand = known
    for c in pool[:n_hidden]:
        hand |= 1 << c
    other.hands[opp] = hand
    other.stock = pool[n_hidden:]
    other.forget_cached()
    return other


def random_matches(n: int, seed: int, rules: str) -> list[Match]:
    """Matches of ``rules`` played at random to a random point (every phase; later hands
    and rounds, sheets with points, a partnership table whose hand is over, included): a
    legal knock is taken half the time, so hands end early and often."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        match = Match(rules, seed=int(rng.integers(1 << 30)))
        for _ in range(int(rng.integers(0, 300))):
            legal = match.legal_actions()
            knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
            match.apply(int(rng.choice(knocks if knocks and rng.random() < 0.5 else legal)))
            if match.is_over:
                break
        if not match.is_over:
            out.append(match)
    return out


def swap_hidden_match(match: Match, rng: np.random.Generator) -> Match:
    """The same match for its acting seat with everything that seat cannot see reshuffled:
    at its table the opponent's unseen cards and the stock (:func:`swap_hidden`); in a
    partnership the other table too (the seat sees nothing of it but whether it runs)."""
    other = match.clone()
    seat = match.current_seat
    mine = match.table_of(seat)
    for table in other.tables:
        if table.index == mine or table.running:
            table.game = swap_hidden(table.game, rng)
    return other


def batched_states(batch, players: list, player_of, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(observations, masks) of every step of ``batch`` played ``steps`` times by batched
    ``players``: ``player_of(step)`` gives the index of the player acting in each row."""
    obs_all, mask_all = [], []
    for step in range(steps):
        obs, masks = batch.observations().copy(), batch.legal_action_masks().copy()
        obs_all.append(obs)
        mask_all.append(masks)
        acting = player_of(step)
        actions = np.empty(batch.n, dtype=np.int64)
        for k, player in enumerate(players):
            rows = np.flatnonzero(acting == k)
            if rows.size:
                actions[rows] = player.act(obs[rows], masks[rows])
        batch.step(actions)
    return np.concatenate(obs_all), np.concatenate(mask_all)


def simple_states(n: int = 48, steps: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(observations, masks) of ``steps`` steps of ``n`` Simple-vs-Simple matches in a batch."""
    from agents.batched import BatchedSimple
    from hgin_env.batch import BatchGame

    return batched_states(BatchGame(n, seed=seed), [BatchedSimple(seed=seed)],
                          lambda step: np.zeros(n, dtype=np.int64), steps)
