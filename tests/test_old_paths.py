"""The module paths before hgin_env's folders still import for one release, with a
DeprecationWarning naming the new path, and give the same objects; the public paths keep
working without a warning."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

OLD_PATHS = {
    "hgin_env.env": ("hgin_env.envs.aec", "raw_env"),
    "hgin_env.adapters": ("hgin_env.envs.single_agent", "SingleAgentEnv"),
    "hgin_env.rllib_adapter": ("hgin_env.envs.rllib", "RLlibObservationWrapper"),
    "hgin_env.vector": ("hgin_env.batch.vector", "HollywoodVectorEnv"),
    "hgin_env.render_image": ("hgin_env.render.image", "table_image"),
}


@pytest.mark.parametrize("old", sorted(OLD_PATHS))
def test_old_module_path_warns_and_forwards(old):
    new, name = OLD_PATHS[old]
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)


def test_public_paths_need_no_shim():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        from hgin_env import hollywood_gin_v0
        from hgin_env.batch import BatchGame
        from hgin_env.render import render_table

    assert hollywood_gin_v0.raw_env is importlib.import_module("hgin_env.envs.aec").raw_env
    assert BatchGame.__module__ == "hgin_env.batch.core" and callable(render_table)


def test_game_displays_in_notebooks_through_the_render_layer():
    from hgin_env.game import Game
    from hgin_env.render.text import game_html

    game = Game(seed=1)
    assert Game._repr_html_ is game_html and "<table" in game._repr_html_()
