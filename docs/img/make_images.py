"""Regenerate docs/img/table.png and docs/img/showdown.png (expert vs simple, seed 7).

Run from the repository root: PYTHONPATH=. .venv/bin/python docs/img/make_images.py
"""
from PIL import Image

from agents import make_agent
from hgin_env.game import Game
from hgin_env.observation import encode
from hgin_env.render_image import table_image

names = ["player_0 (expert)", "player_1 (simple)"]


def small(img, path):
    img.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)


def play(stop):
    g = Game(seed=7)
    ag = [make_agent("expert", seed=1), make_agent("simple", seed=1)]
    while not g.is_over:
        p = g.current_player
        if stop(g, None):
            return g, None
        r = g.apply(int(ag[p]({"observation": encode(g, p), "action_mask": g.legal_action_mask()})))
        if r is not None and stop(g, r):
            return g, r
    return g, None


g, _ = play(lambda g, r: r is None and g.hand_number >= 5 and g.phase == 2 and g.current_player == 0
            and len(g.stock) < 20)
small(table_image(g, names=names), "docs/img/table.png")
g, r = play(lambda g, r: r is not None and bool(r.result.layoffs) and r.kind == "knock"
            and any(w is not None for w in g.scoreboard.column_winners))
small(table_image(g, showdown=r, names=names), "docs/img/showdown.png")
