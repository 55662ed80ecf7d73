"""agents.spec: one grammar for agent specs and one registry of both forms of each kind."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agents.spec import (
    known_agents,
    make_agent,
    make_batched_agent,
    parse_mixture,
    parse_options,
    split_kind,
    split_label,
    split_weight,
)

ROOT = Path(__file__).resolve().parents[1]


def test_the_grammar() -> None:
    assert split_label("strong=expert") == ("strong", "expert")
    assert split_label("expert") == ("expert", "expert")
    assert split_label("search:rollouts=64") == ("search:rollouts=64", "search:rollouts=64")  # options, no label
    assert split_label("s=search:rollouts=64") == ("s", "search:rollouts=64")
    assert split_kind("ppo:runs/x.zip") == ("ppo", "runs/x.zip") and split_kind("expert") == ("expert", "")
    assert split_weight("expert:0.3") == ("expert", 0.3) and split_weight("ppo:a/b.zip:0.2") == ("ppo:a/b.zip", 0.2)
    assert split_weight("ppo:a/b.zip") == ("ppo:a/b.zip", 1.0) and split_weight("simple") == ("simple", 1.0)
    assert parse_mixture("simple:0.5, expert:0.5") == (["simple", "expert"], [0.5, 0.5])
    assert parse_options("temperature=0.5;rollouts=64,policy=ppo:", "search") == {
        "temperature": 0.5, "rollouts": 64, "policy": "ppo:"}
    with pytest.raises(ValueError, match="no opponents"):
        parse_mixture(" , ")
    with pytest.raises(ValueError, match=r"search spec 'rollouts': 'rollouts' is not key=value"):
        parse_options("rollouts", "search")


def test_every_kind_builds_both_forms_and_unknown_specs_are_refused_alike() -> None:
    for name in ("random", "simple", "expert"):
        assert type(make_batched_agent(name)).__name__ == f"Batched{name.capitalize()}"
        assert callable(make_agent(name, seed=0))
    assert type(make_batched_agent("ppo:")).__name__ == "BatchedPolicy"
    assert type(make_batched_agent("search:rollouts=4")).__name__ == "RowByRow"
    assert "ppo:ARG" in known_agents() and "rllib:ARG" in known_agents() and "expert" in known_agents()
    for bad in ("nonesuch", "nonesuch:arg", "expert2"):
        for build in (make_agent, make_batched_agent):
            with pytest.raises(ValueError, match=rf"^unknown agent {bad!r}; known: \["):
                build(bad)
    with pytest.raises(ValueError, match="non-empty text"):
        make_agent("")


def test_no_other_module_parses_specs_or_imports_a_loader_to_build_one() -> None:
    """The batched registry has no hard-coded kinds: agents/batched.py imports neither the
    PPO nor the RLlib loader (the circle batched <-> rllib_agent is gone), and the code
    outside agents.spec does not split ``label=`` or a mixture's weights itself."""
    tree = ast.parse((ROOT / "agents" / "batched.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"ppo", "rllib_agent", "agents.ppo", "agents.rllib_agent"}
    for path in ("arena/matches.py", "train/ppo.py", "train/envs.py", "hgin_web/games.py"):
        text = (ROOT / path).read_text(encoding="utf-8")
        assert 'partition("=")' not in text and 'rpartition(":")' not in text and 'startswith("ppo' not in text, path
