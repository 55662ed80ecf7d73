"""What a new user copies first: the README's examples, input checks of the batched deadwood,
the scoreboard's types."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hgin_env.cards import cards_to_mask, parse_cards
from hgin_env.melds import min_deadwood, min_deadwood_batch
from hgin_env.scoring import Scoreboard

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: The README, then every docs page: where a user copies examples from.
PAGES = [README, *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md")))]


def _python_block(marker: str) -> str:
    """The first ```python block of the README or a docs page that contains ``marker``."""
    for page in PAGES:
        for block in re.findall(r"```python\n(.*?)```", page, flags=re.S):
            if marker in block:
                return block
    raise AssertionError(f"no python block with {marker!r} in the README or docs/")


def _doc(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def test_min_deadwood_batch_checks_its_input() -> None:
    hands = ["4H 5H 6H 9C 9D 9S AC 2C 3C KD", "3S 4S 5S 9C 9D 9S AC 2C 3C 2H"]
    masks = np.array([cards_to_mask(h) for h in hands], dtype=np.uint64)
    assert min_deadwood_batch(masks).tolist() == [min_deadwood(h) for h in hands]
    assert min_deadwood_batch([int(m) for m in masks]).tolist() == [10, 2]  # Python ints are fine
    assert min_deadwood_batch(masks.astype(np.int64)).tolist() == [10, 2]
    assert min_deadwood_batch(np.zeros((0,), np.uint64)).shape == (0,)
    ids = np.array([parse_cards(h) for h in hands])  # card ids, not masks: the common mistake
    with pytest.raises(ValueError, match="card ids, it seems"):
        min_deadwood_batch(ids)
    with pytest.raises(ValueError, match="card ids, it seems"):
        min_deadwood_batch(list(parse_cards(hands[0])))
    with pytest.raises(TypeError, match="got dtype float64"):
        min_deadwood_batch(masks.astype(np.float64))
    with pytest.raises(TypeError, match="got dtype bool"):
        min_deadwood_batch(np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="cannot be negative"):
        min_deadwood_batch(np.array([-1, 5]))
    with pytest.raises(ValueError, match="bit 52 set"):
        min_deadwood_batch([1 << 52])
    with pytest.raises(ValueError, match="do not fit in 64 bits"):
        min_deadwood_batch([1 << 70])
    with pytest.raises(ValueError, match=r"at most 11 cards; the hand at index \(1,\) has 12"):
        min_deadwood_batch([7, (1 << 12) - 1])


def test_scoreboard_columns_is_an_array_and_its_dict_holds_lists() -> None:
    board = Scoreboard()
    board.record(0, 30)
    board.record(0, 43)
    assert isinstance(board.columns, np.ndarray) and board.columns.dtype == np.int64
    assert board.columns.shape == (2, 3) and board.columns[0, 1] == 43
    assert board.columns.tolist() == [[73, 43, 0], [0, 0, 0]]
    assert board.to_dict()["columns"] == [[73, 43, 0], [0, 0, 0]]  # JSON-ready, as in env infos
    assert "columns.tolist()" in _doc("engine.md") and "# -> [[73, 43, 0], [0, 0, 0]]" in _doc("engine.md")


def test_readme_shows_how_to_run_hgin_and_the_pictures() -> None:
    assert ".venv/bin/hgin play" in README and "make play" in README
    assert "download.pytorch.org/whl/cpu" in README and 'pip install -e ".[train,fast]"' in README
    for image in re.findall(r"!\[[^\]]*\]\((docs/img/[^)]+)\)", README):
        assert (ROOT / image).is_file(), image
    assert "docs/img/table.png" in README and 'render_mode="rgb_array"' in _doc("environment.md")
    assert "min_deadwood_batch" in _python_block("card ids, it seems")
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^play: ", makefile, flags=re.M) and "$(VENV)/bin/hgin play" in makefile


def test_examples_teach_the_batched_env_and_both_agent_forms() -> None:
    """What the examples teach (tests/test_doc_examples.py runs them and checks their output):
    docs/training.md's SB3 example uses one torch thread, a seed, a progress bar and the batched
    vector env (not the one-game adapter); the README's agents block shows a single agent on
    an observation dict and a batched agent on arrays."""
    code = _python_block("CardAwarePolicy")
    assert "torch.set_num_threads(1)" in code and "seed=0" in code and "progress_bar=True" in code
    assert "BatchedVecEnv(" in code and "SingleAgentEnv" not in code
    code = _python_block("make_batched_agent(")
    assert ".act(" in code and "expert(observation)" in code and "# prints" in code
    assert "# prints" in _python_block("env.action_space(agent).seed(")


def test_readme_lists_every_action_id() -> None:
    """The README's one-paragraph action list ends where the action space does (107, big gin)."""
    from hgin_env import actions as A

    paragraph = next(p for p in README.split("\n\n") if "Actions 0..51" in p)
    assert f"{A.NUM_ACTIONS - 1} lays down big gin" in " ".join(paragraph.split())
    assert f"action_mask\": int8[{A.NUM_ACTIONS}]" in paragraph


def test_make_test_extras_are_named_wherever_the_install_is_described() -> None:
    """The README's and Getting started's ``make test`` rows and the pip line name every extra
    the Makefile installs for it."""
    extras = re.search(r"^EXTRAS_test := (\S+)$", (ROOT / "Makefile").read_text(), flags=re.M).group(1).split(",")
    started = _doc("getting_started.md")
    for text in (README, started):
        row = next(line for line in text.splitlines() if line.startswith("| `make test` |"))
        assert all(f"`{extra}`" in row for extra in extras), (row, extras)
    assert f'pip install -e ".[{",".join(extras)}]"' in started


def test_make_says_what_it_installs_before_the_quiet_pip_runs(tmp_path: Path) -> None:
    """``make demo`` on a fresh machine prints a line naming what is installed (and that it
    takes a while) before each ``pip install -q``, not pip commands alone."""
    plan = subprocess.run(["make", "-n", "demo", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    lines = plan.stdout.splitlines()
    # Each install command (not its fallback's continuation line) comes right after its line.
    installs = [i for i, line in enumerate(lines) if "pip install -q" in line and "--upgrade" not in line
                and not line[:1].isspace()]
    assert len(installs) == 2  # CPU torch, then the package with the demo's extras
    for i in installs:
        assert lines[i - 1].startswith('echo "== installing'), lines[i - 1:i + 1]
    assert any("first run: setting up" in line and "a minute or two" in line for line in lines)
    assert any("installing CPU torch" in line for line in lines)
    assert any("installing hgin_env with the extras [train,fast] that make demo needs" in line for line in lines)
