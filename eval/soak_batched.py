"""Soak of the batched engine (``python -m eval.soak --batched``): random legal play through
:class:`hgin_env.batch.BatchGame`, the scalar soak's invariants checked after every step,
as whole-batch array checks.

Every step of N games (half of them take a legal knock whenever there is one, so
showdowns, lay-offs, undercuts and column closes happen often) is checked for:

* the 52 cards: both hands, the discard pile and the rest of the deal's stock are
  disjoint and make up the deck; the pile's mask holds ``pile_len`` cards;
* hand sizes fit the phase (11 for the player about to discard, 10 otherwise);
* a legal action exists in every game;
* rewards (``"points"`` mode) are zero-sum and pay the hand's points to its winner;
* each settled hand's points follow from the deadwoods (RULES.md §9): the knocker's
  deadwood is computed here from its hand before the knock and must be within the knock
  limit; gin pays the gin bonus + the defender's deadwood; a knock pays at most the
  defender's unmelded deadwood minus the knocker's (lay-offs only lower it); an undercut
  pays at least the undercut bonus; a dead hand scores 0 and ends at the dead-hand stock;
* the sheet: no decided column ever changes, a column is decided exactly when a total
  reaches the target (the scalar soak's check), a finished match has a finished sheet;
* every match ends (a match still running after ``HARD_CAP_HANDS`` hands is a violation).

The scalar soak (``python -m eval.soak``) checks the same through ``run_match``; the
differential test proves the two engines equal step by step; this one runs the batched
engine alone for many more hands.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hgin_env import actions as A
from hgin_env.batch import HAND_KINDS, BatchGame
from hgin_env.batch.tables import _BIT
from hgin_env.cards import NUM_CARDS
from hgin_env.game import Phase
from hgin_env.melds import min_deadwood_batch
from hgin_env.rules import PROFILES, Rules

from .soak_checks import HARD_CAP_HANDS, SoakReport, check_sheet, freeze_decided

_FULL = np.uint64((1 << NUM_CARDS) - 1)
_KNOCKS = np.zeros(A.NUM_ACTIONS, dtype=bool)
_KNOCKS[A.KNOCK:A.KNOCK + NUM_CARDS] = True
_KNOCKS[A.BIG_GIN] = True
_KIND = {k: i for i, k in enumerate(HAND_KINDS)}


def two_player_profiles() -> list[str]:
    """The profiles the batched engine plays (two-player duels)."""
    return sorted(name for name, rules in PROFILES.items() if rules.format == "duel")


def _count(masks: np.ndarray) -> np.ndarray:
    return np.bitwise_count(masks).astype(np.int64)


@dataclass
class _Showdown:
    """What is known before a knock: the knocker's deadwood after its discard, the
    defender's unmelded deadwood (before lay-offs), the limit and the multiplier."""

    knocker: np.ndarray
    k: np.ndarray
    d_raw: np.ndarray
    limit: np.ndarray
    multiplier: np.ndarray


def _before_knocks(batch: BatchGame, actions: np.ndarray) -> tuple[np.ndarray, _Showdown]:
    """The games where ``actions`` knock (or lay down big gin), and their :class:`_Showdown`."""
    g = np.flatnonzero(((actions >= A.KNOCK) & (actions < A.DRAW_STOCK)) | (actions == A.BIG_GIN))
    p = batch.current_player[g]
    hand = batch.hands[g, p]
    a = actions[g]
    big = a == A.BIG_GIN
    kept = np.where(big, hand, hand & ~_BIT[np.where(big, 0, a - A.KNOCK)])
    if g.size:
        k = min_deadwood_batch(kept).astype(np.int64)
        d = min_deadwood_batch(batch.hands[g, 1 - p]).astype(np.int64)
    else:
        k = d = np.zeros(0, dtype=np.int64)
    return g, _Showdown(p.copy(), k, d, batch.knock_limit[g].copy(), batch.multiplier[g].copy())


def _check_state(batch: BatchGame) -> list[tuple[int, str]]:
    """Array checks of every game's state: cards, sizes, a legal action, hand count."""
    problems: list[tuple[int, str]] = []
    n = batch.n
    h0, h1 = batch.hands[:, 0], batch.hands[:, 1]
    in_stock = np.arange(NUM_CARDS)[None, :] >= batch.stock_pos[:, None]
    stock = np.bitwise_or.reduce(np.where(in_stock, _BIT[batch.decks], np.uint64(0)), axis=1)
    pile = batch.pile_mask
    parts = (h0, h1, pile, stock)
    total = sum(_count(m) for m in parts)
    union = h0 | h1 | pile | stock
    bad = (total != NUM_CARDS) | (union != _FULL)
    for i in np.flatnonzero(bad):
        problems.append((int(i), "cards not conserved (hands, pile and stock overlap or miss a card)"))
    for i in np.flatnonzero(_count(pile) != batch.pile_len):
        problems.append((int(i), f"pile mask holds {_count(pile[i:i + 1])[0]} cards, pile_len {batch.pile_len[i]}"))
    sizes = np.stack([_count(h0), _count(h1)], axis=1)
    want = np.full((n, 2), 10)
    disc = batch.phase == int(Phase.DISCARD)
    want[np.flatnonzero(disc), batch.current_player[disc]] = 11
    for i in np.flatnonzero((sizes != want).any(axis=1)):
        problems.append((int(i), f"hand sizes {sizes[i].tolist()} in phase {Phase(int(batch.phase[i])).name}"))
    for i in np.flatnonzero(~batch.legal_action_masks().any(axis=1)):
        problems.append((int(i), "no legal action while the hand runs"))
    for i in np.flatnonzero(batch.hand_number >= HARD_CAP_HANDS):
        problems.append((int(i), f"match did not end in {HARD_CAP_HANDS} hands"))
    return problems


def _check_hand(rules: Rules, kind: str, points: int, winner: int, s: _Showdown, j: int) -> str | None:
    """One settled hand against §9 (the bounds that hold whatever the lay-offs were)."""
    k, d, m, knocker = int(s.k[j]), int(s.d_raw[j]), int(s.multiplier[j]), int(s.knocker[j])
    if k > int(s.limit[j]):
        return f"knocked with {k} over the limit {int(s.limit[j])}"
    if kind == "gin":
        ok = k == 0 and winner == knocker and points == (rules.gin_bonus + d) * m
    elif kind == "big_gin":
        ok = k == 0 and winner == knocker and points == ((rules.big_gin_bonus or 0) + d) * m
    elif kind == "knock":
        ok = k > 0 and winner == knocker and points % m == 0 and m <= points <= (d - k) * m
    elif kind == "undercut":
        ok = k > 0 and winner == 1 - knocker and points % m == 0 and \
            (k - min(k, d) + rules.undercut_bonus) * m <= points <= (k + rules.undercut_bonus) * m
    else:
        ok = False
    return None if ok else f"{kind} K={k} D<={d} x{m} won by {winner} (knocker {knocker}) scored {points}"


def soak_batched(profile: str, hands: int, games: int = 512, seed: int = 0,
                 progress: object | None = None, engine: str | None = None) -> SoakReport:
    """Random legal play of ``games`` matches of ``profile`` (no hand cap) through the
    batched engine (``engine``: "numba", "numpy", default the compiled one where installed)
    until ``hands`` hands have ended, every step checked (module docstring). ``progress`` is
    a tqdm-like bar updated with the hands played."""
    rules = PROFILES[profile].replace(max_hands=0, name=profile)
    if rules.format != "duel":
        raise ValueError(f"the batched engine plays two-player profiles; {profile!r} is {rules.format!r}")
    batch = BatchGame(games, rules, seed=seed, reward="points", engine=engine)
    rng = np.random.default_rng([seed, 1])
    prefer_knock = np.arange(games) % 2 == 1
    frozen: list[dict[int, tuple[int, ...]]] = [{} for _ in range(games)]
    report = SoakReport()

    def violation(i: int, what: str) -> None:
        report.violations.append(f"{profile} game {i} match seed {int(batch.match_seeds[i])} "
                                 f"step {report.actions // games}: {what}")

    for i, what in _check_state(batch):
        violation(i, what)
    while report.hands < hands and len(report.violations) < 20:
        masks = batch.legal_action_masks()
        r = rng.random((games, A.NUM_ACTIONS), dtype=np.float32)
        knock_rows = prefer_knock & (masks & _KNOCKS).any(axis=1)
        allowed = masks.copy()
        allowed[knock_rows] &= _KNOCKS
        r[~allowed] = -1.0
        actions = r.argmax(axis=1)
        g, showdown = _before_knocks(batch, actions)
        boards = list(batch.boards)  # a finished match's board is replaced by the step
        stock_before = batch.stock_size().copy()
        turns_before = batch.turns.copy()
        result = batch.step(actions)
        report.actions += games
        ended = np.flatnonzero(result.hand_over)
        report.hands += ended.size
        report.matches += len(result.finished)
        if progress is not None:
            progress.update(int(ended.size))  # type: ignore[attr-defined]
        if np.abs(result.rewards.sum(axis=1)).max() > 1e-5:
            for i in np.flatnonzero(np.abs(result.rewards.sum(axis=1)) > 1e-5):
                violation(int(i), f"rewards {result.rewards[i].tolist()} not zero-sum")
        row_of = {int(i): j for j, i in enumerate(g)}
        for i in ended.tolist():
            kind = HAND_KINDS[int(result.hand_kind[i])]
            points = int(result.hand_points[i])
            if kind == "dead":  # ended by a discard at the dead-hand stock (or the turn cap)
                due = stock_before[i] <= rules.dead_hand_stock or \
                    (rules.max_turns and turns_before[i] >= rules.max_turns)
                problem = None if points == 0 and i not in row_of and due else \
                    f"dead hand with {points} points, stock {stock_before[i]}, turns {turns_before[i]}"
            else:
                report.showdowns += 1
                winner = int(result.hand_winner[i])
                problem = None if i in row_of else f"{kind} without a knock"
                problem = problem or _check_hand(rules, kind, points, winner, showdown, row_of[i])
                paid = result.rewards[i, winner] * 100
                if problem is None and abs(paid - points) > 1e-3:
                    problem = f"winner paid {paid / 100} for {points} points"
            board = boards[i]
            problem = problem or check_sheet(board, rules.target, frozen[i])
            freeze_decided(board, frozen[i])
            if i in result.finished:
                if not board.match_over or result.finished[i]["match_winner"] != board.match_winner:
                    problem = problem or "match ended without a finished sheet"
                frozen[i] = {}
            if problem:
                violation(i, problem)
        for i, what in _check_state(batch):
            violation(i, what)
    return report
