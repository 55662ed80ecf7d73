"""Agents against each other: agent specs, and one whole match played through the one
match loop (``hgin_env.loop.run_match``) with each agent in its seats.

Why a package of its own: playing matches is what training (periodic evaluation), the
tournament, checkpoint selection, the exploitability probe and the web table all need.
``arena`` sits below ``train`` and the ``eval`` scripts, so every import points down:
``hgin_env`` <- ``agents`` <- ``arena`` <- ``train`` <- ``eval`` scripts.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.spec import make_agent, split_label
from hgin_env.loop import run_match
from hgin_env.match import Match, SeatHand
from hgin_env.observation import ObservationLayout
from hgin_env.rules import Rules, get_rules


# --------------------------------------------------------------------------- agent specs
@dataclass(frozen=True)
class AgentSpec:
    """A picklable recipe for an agent: a ``make_agent`` name, keyword arguments, a label.

    Worker processes rebuild the agent from it, so any registered name works
    (``"random"``, ``"simple"``, ``"expert"``, ``"ppo:PATH"`` once registered).
    """

    name: str
    kwargs: tuple[tuple[str, Any], ...] = ()
    label: str = ""

    @property
    def display(self) -> str:
        return self.label or self.name

    def build(self, rules: Rules | int) -> Any:
        """The agent for ``rules``, given their observation layout when its factory accepts
        a ``layout`` (else ``columns``, for the duel). An int is a duel's number of columns."""
        layout = ObservationLayout(rules) if isinstance(rules, int) else ObservationLayout.for_rules(rules)
        return _make_with_layout(self.name, layout, dict(self.kwargs))


def _make_with_layout(name: str, layout: ObservationLayout, kwargs: dict[str, Any]) -> Any:
    try:
        return make_agent(name, seed=None, layout=layout, **kwargs)
    except TypeError as exc:  # a registered factory without a ``layout`` argument
        if "layout" not in str(exc) or layout.format != "duel":
            raise
    try:
        return make_agent(name, seed=None, columns=layout.columns, **kwargs)
    except TypeError as exc:  # nor a ``columns`` argument
        if "columns" not in str(exc) or layout.columns != 3:
            raise
        return make_agent(name, seed=None, **kwargs)


def as_spec(agent: str | AgentSpec | tuple[str, dict]) -> AgentSpec:
    """Accept ``"expert"``, ``"label=expert"``, ``("expert", {kwargs})`` or an AgentSpec."""
    if isinstance(agent, AgentSpec):
        return agent
    if isinstance(agent, tuple):
        text, kwargs = agent
        label, name = split_label(text)
        return AgentSpec(name, tuple(sorted(kwargs.items())), label)
    if isinstance(agent, str):
        label, name = split_label(agent)
        return AgentSpec(name, (), label)
    raise TypeError(f"an agent spec must be a name, (name, kwargs) or AgentSpec, not {type(agent)}")


def derive_seed(*parts: int) -> int:
    """A seed drawn from several integers (each agent's reset seed of a match)."""
    return int(np.random.SeedSequence([int(p) % (2**63) for p in parts]).generate_state(1)[0])


def reset_agent(agent: Any, seed: int) -> None:
    """Reset an agent for a new match, with ``seed`` where its ``reset`` takes one."""
    reset = getattr(agent, "reset", None)
    if reset is None:
        return
    try:
        has_seed = "seed" in inspect.signature(reset).parameters
    except (TypeError, ValueError):
        has_seed = False
    if has_seed:
        reset(seed=seed)
    else:
        reset()


# --------------------------------------------------------------------------- one match
def seatings(format: str) -> list[tuple[int, ...]]:
    """Agent A's seats in each seating of a seed (agent B takes the other seats), so that
    every agent plays every seat on the same deals: duel (0,), (1,); partnership A's team
    at seats (0, 2) then (1, 3) (an agent partners itself); three-hand A alone at each seat
    against two copies of B, then B alone at each seat (A at the two others)."""
    if format == "duel":
        return [(0,), (1,)]
    if format == "partnership":
        return [(0, 2), (1, 3)]
    if format == "three_hand":
        return [(0,), (1,), (2,), (1, 2), (0, 2), (0, 1)]
    raise ValueError(f"unknown format {format!r}")


#: A side's hand counts in a match row (``a_hands_won``, ``b_points``, ...), in column order.
STAT_KEYS = ("hands_won", "knock_wins", "gin_wins", "undercut_wins", "knocks", "points")


def match_row(seed: int, a_seat: int, a_seats: Sequence[int], rules: Rules, label_a: str, label_b: str, *,
              sheet_row: Callable[[int], int], columns: Any, column_winners: Sequence[int | None],
              columns_won: Sequence[int], match_winner: int | None, hands: int, dead_hands: int, truncated: bool,
              stats: dict[str, dict[str, int]]) -> dict[str, Any]:
    """The CSV row of one finished match, from A's and B's view: the one definition behind
    :func:`play_match` and the batched runner (:mod:`arena.batched_play`). ``sheet_row(seat)``
    names a seat's row of the sheet; a side's column total is the mean over its rows (its two
    seats in three-hand when it sits at two, its team in a partnership)."""
    side_of = {seat: ("a" if seat in a_seats else "b") for seat in range(rules.num_players)}
    rows_of = {side: sorted({sheet_row(seat) for seat, x in side_of.items() if x == side}) for side in "ab"}
    side_of_row = {row: side for side in "ab" for row in rows_of[side]}
    columns = np.asarray(columns)
    row: dict[str, Any] = {"seed": seed, "agent_a": label_a, "agent_b": label_b, "a_seat": a_seat}
    if rules.format != "duel":
        row["a_seats"] = "-".join(map(str, a_seats))
    for seat in range(rules.num_players):
        row[f"player_{seat}"] = label_a if side_of[seat] == "a" else label_b
    for j in range(rules.columns):
        for side in "ab":
            row[f"{side}_col{j + 1}"] = int(round(float(np.mean([columns[r, j] for r in rows_of[side]]))))
        w = column_winners[j]
        row[f"col{j + 1}_winner"] = "" if w is None else (label_a if side_of_row[w] == "a" else label_b)
    row["a_columns_won"] = sum(columns_won[r] for r in rows_of["a"])
    row["b_columns_won"] = sum(columns_won[r] for r in rows_of["b"])
    row["winner"] = "draw" if match_winner is None else (label_a if side_of_row[match_winner] == "a" else label_b)
    row["winner_side"] = "" if match_winner is None else side_of_row[match_winner]
    row["hands"] = hands
    row["dead_hands"] = dead_hands
    row["truncated"] = truncated
    for side in "ab":
        for key in STAT_KEYS:
            row[f"{side}_{key}"] = int(stats[side][key])
    return row


def play_match(agent_a: Any, agent_b: Any, seed: int, a_seat: int, rules: Rules | str | dict | None,
               label_a: str = "a", label_b: str = "b", luck: Any = None) -> dict[str, Any]:
    """Play one whole match (``hgin_env.loop.run_match``, the one match loop), agent A in the seats of
    seating ``a_seat`` (:func:`seatings`; in the duel A's seat), B in the others; returns
    one CSV row (from A's and B's view).

    Agents get ``{"observation", "action_mask"}`` of the acting seat and nothing else. In a
    format a column total of an agent is the mean over its sheet rows (its two seats in
    three-hand when it sits at two; its team in a partnership).
    """
    rules = get_rules(rules)
    a_seats = seatings(rules.format)[a_seat]
    side_of = {seat: ("a" if seat in a_seats else "b") for seat in range(rules.num_players)}
    players = [agent_a if side_of[seat] == "a" else agent_b for seat in range(rules.num_players)]
    reset_agent(agent_a, derive_seed(seed, 1))
    reset_agent(agent_b, derive_seed(seed, 2))
    stats = {side: dict.fromkeys(STAT_KEYS, 0) for side in "ab"}
    dead = 0

    def count(finished: list) -> None:
        nonlocal dead
        for hand in finished:
            if not isinstance(hand, SeatHand):
                continue
            if hand.knocker is None:
                dead += 1
                continue
            winner = side_of[hand.winner]
            stats[side_of[hand.knocker]]["knocks"] += 1
            stats[winner]["hands_won"] += 1
            stats[winner]["points"] += hand.points
            kind = hand.kind
            if kind in ("gin", "big_gin"):
                stats[winner]["gin_wins"] += 1
            elif kind == "undercut":
                stats[winner]["undercut_wins"] += 1
            else:
                stats[winner]["knock_wins"] += 1

    start = time.perf_counter()
    match = Match(rules, seed=seed)
    if luck is not None:
        luck.start(match, a_seats, seed)
    run_match(match, players, count, on_move=None if luck is None else luck.on_move)
    board = match.sheet
    row = match_row(seed, a_seat, a_seats, rules, label_a, label_b, sheet_row=match.sheet_row,
                    columns=board.columns, column_winners=board.column_winners, columns_won=board.columns_won,
                    match_winner=match.match_winner, hands=len(match.hand_history), dead_hands=dead,
                    truncated=bool(match.truncated), stats=stats)
    if luck is not None:
        row.update(luck.finish())
    row["seconds"] = round(time.perf_counter() - start, 4)
    return row
