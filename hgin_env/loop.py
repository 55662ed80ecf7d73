"""THE match loop: policies on observation dicts, playing a :class:`~hgin_env.match.Match`.

It sits above the engine (it needs the observer, which the engine does not know) and
below everything that plays matches: the tournament, the soak, ``hgin play``, the web
table's agents and imitation recording all call :func:`run_match`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .actions import as_action
from .match import Match, RoundResult, SeatHand
from .observation import observe

Finished = list[SeatHand | RoundResult]


def run_match(match: Match, policies: Sequence[Callable[[dict], int]],
               on_finished: Callable[[Finished], None] | None = None,
               on_move: Callable[[int, dict, int, Finished], None] | None = None) -> Match:
    """Play ``match`` to its end: the acting seat's policy gets that seat's observation dict
    (:func:`hgin_env.observation.observe`, nothing else) and returns an action id.
    ``policies[seat]`` plays each seat (one agent may sit at several; a human is a policy
    that prompts). Returns the match.

    Hooks, called after each move: ``on_move(seat, obs, action, finished)`` for every move
    (checks, recording decisions, printing), then ``on_finished`` with what the move
    finished (hands, partnership rounds) when it finished something. A policy's answer is
    checked once, here: a non-integer raises ``TypeError``, an out-of-range or illegal id
    ``ValueError`` naming it and the legal actions. An exception from a policy or a hook
    stops the match where it stands (after the last applied move), which is how a caller
    ends one early; resuming is calling ``run_match`` again on the same match.
    """
    if len(policies) != match.num_players:
        raise ValueError(f"format={match.format!r} needs {match.num_players} policies, got {len(policies)}")
    while not match.is_over:
        seat = match.current_seat
        assert seat is not None
        obs = observe(match, seat)
        action = as_action(policies[seat](obs))
        finished = match.apply(action)
        if on_move is not None:
            on_move(seat, obs, action, finished)
        if finished and on_finished is not None:
            on_finished(finished)
    return match
