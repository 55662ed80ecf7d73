"""States from real play and the real ``SimpleGinRummyBot``'s move at each, for the tests of
its batched forms (``tests/test_openspiel_bot.py``) on machines without pyspiel.

``python tests/openspiel_bot_states.py tests/data/openspiel_bot_states.npz`` records them
(needs the ``openspiel`` extra): single hands of OpenSpiel's rules (``rules_from_params``:
the defaults, knock cards 7 and 0, and ``oklahoma=true``) in our engine, ``openspiel:simple``
(:class:`agents.openspiel.OpenSpielBotAgent`, the bot asked through pyspiel) against
``random``, ``simple`` and ``expert`` on both seats. Every decision of either seat is kept
with the bot's move there, so the opponents' states (odd hands of a random player) are
asked too. ``tests/test_openspiel.py`` asks the live bot again on some of them.
"""

from __future__ import annotations

import sys

import numpy as np

#: (OpenSpiel parameters, hands) of the recorded play; hand h uses seed h.
CASES: list[tuple[dict, int]] = [({}, 90), ({"knock_card": 7}, 15), ({"knock_card": 0}, 10),
                                  ({"oklahoma": True}, 15)]
OPPONENTS = ("random", "simple", "expert")


def record() -> dict[str, np.ndarray]:
    """Observations, masks and the bot's moves at every decision of the hands of ``CASES``."""
    from agents import make_agent
    from agents.openspiel import rules_from_params
    from hgin_env.match import Match
    from hgin_env.observation import observe

    bot = make_agent("openspiel:simple")
    obs, masks, moves = [], [], []
    for params, hands in CASES:
        rules = rules_from_params(params)
        for seed in range(hands):
            opponent = make_agent(OPPONENTS[seed % len(OPPONENTS)], seed=seed)
            bot_seat = seed // len(OPPONENTS) % 2
            game = Match(rules, seed=seed, single_hand=True, first_dealer=seed % 2).current_game
            while not game.is_over:
                player = game.current_player
                observation = observe(game, player)
                move = bot(observation)
                obs.append(observation["observation"])
                masks.append(observation["action_mask"])
                moves.append(move)
                if game.apply(move if player == bot_seat else opponent(observation)) is not None:
                    break
    return {"observations": np.array(obs, dtype=np.float32), "masks": np.array(masks, dtype=bool),
            "moves": np.array(moves, dtype=np.int64), "fallbacks": np.array(bot.fallbacks)}


if __name__ == "__main__":
    data = record()
    np.savez_compressed(sys.argv[1], **data)
    print(f"{len(data['moves'])} states, {int(data['fallbacks'])} fallbacks -> {sys.argv[1]}")
