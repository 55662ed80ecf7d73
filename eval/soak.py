"""Soak test (a script, not a test): random legal play through the engine, invariants checked
after every action.

    python -m eval.soak --hands 1000000 --workers 2
    python -m eval.soak --hands 5000 --profiles gin_three_hand hollywood_partnership
    python -m eval.soak --batched --hands 1000000     # the batched engine (eval/soak_batched.py)

Every profile's format is soaked through the one match loop, ``hgin_env.loop.run_match``
(a check runs after every move; three-hand and partnership add the seating checks).

Half the matches use uniform random legal actions; the other half take a legal knock
whenever there is one, so showdowns, lay-offs, undercuts and column closes happen often.
Checked after every action: all 52 cards are somewhere exactly once, hand sizes fit the
phase, a legal action exists while the game runs, no decided column ever changes, a column
is decided exactly when a total reaches the target, and every settled hand's points follow
from its deadwoods (RULES.md §9). Every match must end (no hand cap).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import signal
import sys
import time

import numpy as np
from tqdm import tqdm

from hgin_env import actions as A
from hgin_env.compiled import ENGINE_VARIABLE, ENGINES, resolve_engine
from hgin_env.game import HandRecord, Phase
from hgin_env.loop import run_match
from hgin_env.match import Match, SeatHand, Table
from hgin_env.rules import PROFILES, Rules

from .soak_checks import HARD_CAP_HANDS, SoakReport, check_sheet, freeze_decided


def _check_result(rec: HandRecord, rules: Rules) -> str | None:
    """A settled hand's points follow from its deadwoods (RULES.md §9); a dead hand scores 0."""
    r = rec.result
    if r.kind == "dead":
        return None if rec.points == 0 else "dead hand scored"
    k, d = r.knocker_deadwood, r.defender_deadwood
    if r.kind == "gin":
        expected = rules.gin_bonus + d
    elif r.kind == "big_gin":
        expected = (rules.big_gin_bonus or 0) + d
    elif r.kind == "knock":
        expected = d - k if k < d else -1
    else:
        expected = k - d + rules.undercut_bonus if d <= k else -1
    if k > rec.knock_limit:
        return f"knocked with {k} over the limit {rec.knock_limit}"
    if expected * rec.multiplier != rec.points:
        return f"hand {rec.number} {r.kind} K={k} D={d} scored {rec.points}, expected {expected}"
    return None


def _check_table(table: Table) -> str | None:
    game = table.game
    if not game.card_count_ok():
        return f"table {table.index}: cards not conserved"
    if game.hands[0] & game.hands[1]:
        return f"table {table.index}: a card in both hands"
    if game.is_over:
        return None
    sizes = [game.hands[0].bit_count(), game.hands[1].bit_count()]
    want = [10, 10]
    if game.phase == Phase.DISCARD:
        want[game.current_player] = 11
    if sizes != want:
        return f"table {table.index}: hand sizes {sizes} in phase {game.phase.name}"
    if not game.legal_actions():
        return f"table {table.index}: no legal action while the hand runs"
    return None


def _check_seating(match: Match, previous: SeatHand | None, rounds_seen: int) -> str | None:
    """Three-hand: the sitter is the dealer; the loser of the last hand deals next, the
    same dealer after a dead hand. Partnership: the round's pairing and dealing team."""
    if match.is_over:
        return None
    if match.format == "three_hand":
        sitter = match.sitting_out
        table = match.tables[0]
        if set(table.seats) | {sitter} != {0, 1, 2} or table.non_dealer != (sitter + 1) % 3:
            return f"three-hand seats {table.seats} with sitter {sitter}"
        if previous is not None:
            want = previous.dealer if previous.winner is None else previous.loser
            if sitter != want:
                return f"after hand {previous.number} seat {sitter} deals, expected {want}"
    if match.format == "partnership":
        r = match.round_number
        pairs = [(0, 1), (2, 3)] if r % 2 == 0 else [(0, 3), (2, 1)]
        if [t.seats for t in match.tables] != pairs:
            return f"round {r}: tables {[t.seats for t in match.tables]}, expected {pairs}"
        first = match.round_history[0].dealing_team if match.round_history else match.dealing_team
        if r != rounds_seen or match.dealing_team != (first if r % 2 == 0 else 1 - first):
            return f"round {r}: dealing team {match.dealing_team}"
        if any(t.dealer % 2 != match.dealing_team for t in match.tables):
            return f"round {r}: a table's dealer is not of the dealing team"
    return None


class _Violation(Exception):
    """Raised by the soak's checks to stop the match where the invariant broke."""


def soak_matches(seeds: list[int], rules: Rules, prefer_knock: bool) -> SoakReport:
    """Random legal matches of any format through :func:`hgin_env.loop.run_match`, checked after every
    move: every table's cards and hand sizes, the hand's §9 score, the sheet's frozen
    columns, zero-sum rewards (partners equal), the seating (three-hand, partnership), and
    that no seat but the acting one has a legal action."""
    report = SoakReport()
    for seed in seeds:
        problem = _soak_match(seed, rules, prefer_knock, report)
        if problem:
            report.violations.append(f"{rules.name} seed {seed} action {report.actions}: {problem}")
        report.matches += 1
    return report


def _soak_match(seed: int, rules: Rules, prefer_knock: bool, report: SoakReport) -> str | None:
    """One soaked match (counted into ``report``): the first violation, or None."""
    rng = np.random.default_rng(seed)
    match = Match(rules, seed=seed)
    frozen: dict[int, tuple[int, ...]] = {}
    previous: SeatHand | None = None

    def policy(obs: dict) -> int:
        # The engine's own order of legal actions (not the mask's): a seed soaks the same
        # moves as the soak always did.
        legal = match.legal_actions()
        if prefer_knock:
            knocks = [a for a in legal if A.is_knock(a)]
            legal = knocks or legal
        if match.sitting_out == match.current_seat:
            raise _Violation(f"seat {match.current_seat} acts while sitting out")
        return legal[rng.integers(len(legal))]

    def check(seat: int, obs: dict, action: int, finished: list) -> None:
        nonlocal previous
        report.actions += 1
        problem = None
        for event in finished:
            if not isinstance(event, SeatHand):
                continue
            report.hands += 1
            previous = event
            if event.kind != "dead":
                report.showdowns += 1
            problem = problem or _check_result(event.record, rules)
            if event.winner is not None and event.winner not in event.seats:
                problem = f"hand {event.number} won by seat {event.winner} not at the table"
        if finished:  # only a move that finishes a hand or round pays (Match.apply)
            rewards = match.last_rewards
            if rewards.sum() != 0 or (match.format == "partnership" and
                                      (rewards[0] != rewards[2] or rewards[1] != rewards[3])):
                problem = problem or f"rewards {rewards.tolist()} not zero-sum"
            problem = problem or check_sheet(match.sheet, rules.target, frozen)
            freeze_decided(match.sheet, frozen)
            if len(match.hand_history) >= HARD_CAP_HANDS:
                problem = f"match did not end in {HARD_CAP_HANDS} hands"
            problem = problem or _check_seating(match, previous, len(match.round_history))
        for t in match.tables:
            problem = problem or _check_table(t)
        if match.format != "duel":  # the duel's one table has one current player by itself
            acting = match.current_seat
            for other in range(match.num_players):
                if other != acting and match.legal_action_mask(other).any():
                    problem = problem or f"seat {other} has legal actions while {acting} acts"
        if problem:
            raise _Violation(problem)

    problem = _check_seating(match, previous, 0)
    if problem is None:
        try:
            run_match(match, [policy] * match.num_players, on_move=check)
        except _Violation as v:
            return str(v)
    if problem is None and match.is_over and \
            (not match.sheet.match_over or abs(match.returns().sum()) > 1e-9):
        problem = "match over without a finished sheet or with non-zero-sum returns"
    return problem


def _worker_init() -> None:
    """Workers die quietly on the pool's SIGTERM (they inherit the parent's summary handler,
    which would print a KeyboardInterrupt traceback from every worker)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _worker(args: tuple[list[int], str, bool]) -> SoakReport:
    seeds, profile, prefer_knock = args
    rules = PROFILES[profile].replace(max_hands=0, name=profile)
    return soak_matches(seeds, rules, prefer_knock)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=1_000_000, help="stop after at least this many hands")
    parser.add_argument("--workers", type=int, default=mp.cpu_count(), help="processes")
    parser.add_argument("--profiles", nargs="+", default=sorted(PROFILES),
                        help="rule profiles to cycle through (default: all)")
    parser.add_argument("--chunk", type=int, default=4, help="matches per task")
    parser.add_argument("--seed", type=int, default=0, help="first match seed")
    parser.add_argument("--batched", action="store_true",
                        help="soak the batched engine (BatchGame) instead, in one process: the "
                             "hands are split evenly over the two-player profiles")
    parser.add_argument("--games", type=int, default=512, help="--batched: games stepped together")
    parser.add_argument("--engine", choices=ENGINES, default=None,
                        help=f"--batched: the batched engine's implementation (default: ${ENGINE_VARIABLE}, else "
                             f"the compiled one where numba is installed)")
    args = parser.parse_args(argv)
    if args.hands < 1 or args.workers < 1 or args.chunk < 1 or args.games < 1:
        parser.error("--hands, --workers, --chunk and --games must be >= 1")
    unknown = sorted(set(args.profiles) - set(PROFILES))
    if unknown:
        parser.error(f"unknown profile(s) {unknown}; known: {sorted(PROFILES)}")
    if args.batched:
        return _main_batched(args, parser)

    total = SoakReport()
    start = time.perf_counter()

    # A finite task list (Pool consumes it eagerly): far more matches than needed, since
    # every match has at least one hand; the pool is stopped once enough hands are done.
    n_tasks = max(1, args.hands // args.chunk + 1)
    tasks = [(list(range(args.seed + i * args.chunk, args.seed + (i + 1) * args.chunk)),
              args.profiles[(i // 2) % len(args.profiles)], i % 2 == 1) for i in range(n_tasks)]

    # SIGTERM (e.g. a time limit) still prints the summary of what was checked so far.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    interrupted = False
    try:
        with (mp.Pool(args.workers, initializer=_worker_init) as pool,
              tqdm(total=args.hands, unit="hand", smoothing=0.05) as bar):
            for report in pool.imap_unordered(_worker, tasks):
                total.merge(report)
                bar.update(report.hands)
                bar.set_postfix(matches=total.matches, violations=len(total.violations))
                if total.hands >= args.hands:
                    pool.terminate()
                    break
    except KeyboardInterrupt:
        interrupted = True
    elapsed = time.perf_counter() - start
    if interrupted:
        print("interrupted: summary of the matches finished so far")
    return _report(total, elapsed)


def _report(total: SoakReport, elapsed: float) -> int:
    """Print the soak's counts and violations; the exit code is 1 when there are any."""
    print(f"hands {total.hands}  matches {total.matches}  actions {total.actions}  "
          f"showdowns {total.showdowns}")
    print(f"elapsed {elapsed:.0f} s  hands/s {total.hands / elapsed:.0f}  actions/s {total.actions / elapsed:.0f}")
    print(f"violations {len(total.violations)}")
    for v in total.violations[:20]:
        print("  " + v)
    return 1 if total.violations else 0


def _main_batched(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .soak_batched import soak_batched, two_player_profiles

    duel = two_player_profiles()
    chosen = duel if args.profiles == sorted(PROFILES) else args.profiles
    others = [p for p in chosen if p not in duel]
    if others:
        parser.error(f"--batched plays two-player profiles; {others} are not (two-player: {duel})")
    engine = resolve_engine(args.engine)
    total = SoakReport()
    start = time.perf_counter()
    quota = -(-args.hands // len(chosen))
    with tqdm(total=quota * len(chosen), unit="hand", smoothing=0.05) as bar:
        for k, profile in enumerate(chosen):
            bar.set_postfix(profile=profile, violations=len(total.violations))
            total.merge(soak_batched(profile, quota, games=args.games, seed=args.seed + k, progress=bar,
                                     engine=engine))
    elapsed = time.perf_counter() - start
    print(f"batched ({engine} engine): profiles {' '.join(chosen)}  games {args.games}")
    return _report(total, elapsed)


if __name__ == "__main__":
    sys.exit(main())
