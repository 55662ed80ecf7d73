"""Regenerate docs/img/table.png and docs/img/showdown.png (expert vs simple, seed 7).

Run from the repository root: PYTHONPATH=. .venv/bin/python docs/img/make_images.py
"""
from PIL import Image

from agents import make_agent
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.render.image import table_image

names = ["player_0 (expert)", "player_1 (simple)"]


def small(img, path):
    img.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)


class _Found(Exception):
    """Stops the match at the wanted state (run_match ends when a hook raises)."""

    def __init__(self, record):
        super().__init__()
        self.record = record


def play(stop):
    """Expert v simple (seed 7) through run_match, stopped at the first state where
    ``stop(game, record)``: before a move (record None) or after a hand's last move."""
    match = Match(seed=7)
    g = match.duel_game
    ag = [make_agent("expert", seed=1), make_agent("simple", seed=1)]

    def check(seat, obs, action, finished):
        r = finished[0].record if finished else None
        if r is not None and stop(g, r):
            raise _Found(r)
        if not g.is_over and stop(g, None):
            raise _Found(None)

    if stop(g, None):
        return g, None
    try:
        run_match(match, ag, on_move=check)
    except _Found as found:
        return g, found.record
    return g, None


g, _ = play(lambda g, r: r is None and g.hand_number >= 5 and g.phase == 2 and g.current_player == 0
            and len(g.stock) < 20)
small(table_image(g, names=names), "docs/img/table.png")
g, r = play(lambda g, r: r is not None and bool(r.result.layoffs) and r.kind == "knock"
            and any(w is not None for w in g.scoreboard.column_winners))
small(table_image(g, showdown=r, names=names), "docs/img/showdown.png")
