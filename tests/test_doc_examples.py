"""Every ```python block of the README and of docs/ runs as a user would paste it (a fresh
Python in the repository's root) and prints what the page says (tests/doc_runner.py reads
the page's ``# prints`` lines, ``# -> value`` comments and ``# SomeError: message`` lines).

Blocks that take minutes at full size run at toy size: ``TOY`` names each replacement, and
each replaced text must still be in its block, so the table cannot rot. OpenSpiel's upstream
reproducers (``# reproducer: NAME``) run in tests/test_openspiel.py, which checks that each
still shows its fault.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
WEB_URL = "http://127.0.0.1:8000"

#: (page, text that singles out the block) -> replacements that make it a toy of itself.
TOY: dict[tuple[str, str], list[tuple[str, str]]] = {
    ("docs/agents.md", "run_tournament"): [("matches=200", "matches=4"), ("workers=2", "workers=1")],
    ("docs/training.md", "CardAwarePolicy"): [("learn(40_960", "learn(4_096")],
}
#: (page, text that singles out the block) -> text its output must hold beyond its ``# prints`` lines.
SHOWS: dict[tuple[str, str], list[str]] = {
    ("docs/training.md", "CardAwarePolicy"): ["4,096/4,096"],  # SB3's progress bar, ending at its total
}


def _blocks() -> list[tuple[str, int, str]]:
    """(page relative to the root, line of the block, code) for every python block."""
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            out.append((page.relative_to(ROOT).as_posix(), text[:m.start()].count("\n") + 2, m.group(1)))
    return out


BLOCKS = [b for b in _blocks() if not b[2].startswith("# reproducer:")]


def _keyed(table: dict, page: str, code: str) -> list:
    return [item for (where, marker), items in table.items() if where == page and marker in code for item in items]


def test_every_toy_entry_names_a_block_and_text_it_holds() -> None:
    for table in (TOY, SHOWS):
        for page, marker in table:
            assert [b for b in BLOCKS if b[0] == page and marker in b[2]], f"{page}: no block with {marker!r}"
    for page, _, code in BLOCKS:
        for old, _ in _keyed(TOY, page, code):
            assert old in code, f"{page}: the block no longer holds {old!r}"
    reproducers = [b for b in _blocks() if b[2].startswith("# reproducer:")]
    assert {b[0] for b in reproducers} <= {"docs/openspiel.md"} and len(reproducers) == 3


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real web table on a free loopback port, for docs/web.md's scripting example."""
    from web_helpers import serving

    from hgin_web.app import WebConfig, create_app

    with serving(create_app(WebConfig(save_dir=tmp_path_factory.mktemp("web") / "games"))) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.mark.slow
@pytest.mark.parametrize("page,line,code", BLOCKS, ids=[f"{p}:{line}" for p, line, _ in BLOCKS])
def test_doc_example_runs_and_prints_what_the_page_says(page: str, line: int, code: str,
                                                        request: pytest.FixtureRequest) -> None:
    for old, new in _keyed(TOY, page, code):
        code = code.replace(old, new)
    if WEB_URL in code:
        code = code.replace(WEB_URL, request.getfixturevalue("web_server"))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "doc_runner.py"), f"{page}:{line}"], input=code,
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=240)
    assert run.returncode == 0, f"{page}:{line}\n{run.stdout[-1500:]}\n{run.stderr[-3000:]}"
    for text in _keyed(SHOWS, page, code):
        assert text in run.stdout + run.stderr, f"{page}:{line}: the output lacks {text!r}"


def test_doc_runner_catches_a_page_that_says_otherwise() -> None:
    """The runner fails a block whose output, value or exception differs from its comments,
    and passes one that says them right."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from doc_runner import run
    finally:
        sys.path.remove(str(ROOT / "tests"))
    right = "x = 2\nprint(x + 1)\n# prints 3\nx * 5  # -> 10\nint('a')\n# ValueError: invalid literal for int()\n" \
            "# with base 10: 'a'\nprint('after')\n"
    assert run(right, "right") == []
    assert len(run("print(4)\n# prints 3\n", "wrong")) == 1
    assert len(run("2 * 5  # -> 11\n", "wrong")) == 1
    assert len(run("int('1')\n# ValueError: nope\n", "wrong")) == 1
    assert len(run("int('a')\n# ValueError: another message\n", "wrong")) == 1
    with pytest.raises(ValueError):
        run("int('a')\n", "unannounced")
