"""What a new user copies first: the README's examples, input checks of the batched deadwood,
the scoreboard's types."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hgin_env.cards import cards_to_mask, parse_cards
from hgin_env.melds import min_deadwood, min_deadwood_batch
from hgin_env.scoring import Scoreboard

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _python_block(marker: str) -> str:
    """The README's first ```python block that contains ``marker``."""
    for block in re.findall(r"```python\n(.*?)```", README, flags=re.S):
        if marker in block:
            return block
    raise AssertionError(f"no python block with {marker!r} in the README")


def test_readme_env_loop_prints_the_same_every_run() -> None:
    code = _python_block("env.action_space(agent).seed(")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.strip()
    shown = re.search(r"# prints (.*)\n", code)
    assert shown is not None and shown.group(1).strip() == runs[0].stdout.strip()


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
    assert "columns.tolist()" in README and "# [[73, 43, 0], [0, 0, 0]]" in README


def test_readme_shows_how_to_run_hgin_and_the_pictures() -> None:
    assert ".venv/bin/hgin play" in README and "make play" in README
    assert "download.pytorch.org/whl/cpu" in README and 'pip install -e ".[train,dev]"' in README
    for image in re.findall(r"!\[[^\]]*\]\((docs/img/[^)]+)\)", README):
        assert (ROOT / image).is_file(), image
    assert "docs/img/table.png" in README and 'render_mode="rgb_array"' in README
    assert "min_deadwood_batch" in _python_block("card ids, it seems")
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^play: ", makefile, flags=re.M) and "$(VENV)/bin/hgin play" in makefile


@pytest.mark.slow
def test_readme_sb3_example_runs_at_toy_size() -> None:
    pytest.importorskip("sb3_contrib")
    code = _python_block("CardAwarePolicy")
    assert "torch.set_num_threads(" in code and "seed=0" in code
    small = code.replace("n_steps=512", "n_steps=64, batch_size=32, n_epochs=1").replace("learn(4_096)", "learn(64)")
    assert small != code
    run = subprocess.run([sys.executable, "-c", small + "\nprint('ACTION', int(action))\n"], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert re.search(r"^ACTION \d+$", run.stdout, flags=re.M)
