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
    ``stop(match, record)``: before a move (record None) or after a hand's last move."""
    match = Match(seed=7)
    ag = [make_agent("expert", seed=1), make_agent("simple", seed=1)]

    def check(seat, obs, action, finished):
        r = finished[0].record if finished else None
        if r is not None and stop(match, r):
            raise _Found(r)
        if not match.is_over and stop(match, None):
            raise _Found(None)

    if stop(match, None):
        return match, None
    try:
        run_match(match, ag, on_move=check)
    except _Found as found:
        return match, found.record
    return match, None


def dealing(match):
    """The hand being played (the next one's deal after a hand's last move)."""
    return match.current_game


m, _ = play(lambda m, r: r is None and dealing(m).hand_number >= 5 and dealing(m).phase == 2
            and dealing(m).current_player == 0 and len(dealing(m).stock) < 20)
small(table_image(m, names=names), "docs/img/table.png")
m, r = play(lambda m, r: r is not None and bool(r.result.layoffs) and r.kind == "knock"
            and any(w is not None for w in m.sheet.column_winners))
small(table_image(m, showdown=r, names=names), "docs/img/showdown.png")
