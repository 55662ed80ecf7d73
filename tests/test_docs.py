"""The README and the rule book link only to files inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_resolve_inside_the_repository(doc: Path) -> None:
    bad = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+://", target) or target.startswith("#") or target.startswith("mailto:"):
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(ROOT) or not path.exists():
            bad.append(target)
    assert not bad, f"{doc.name} links outside the repository or to missing files: {bad}"


def test_rule_book_covers_every_profile() -> None:
    from hgin_env.rules import PROFILES

    text = (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    missing = [name for name in PROFILES if f"`{name}`" not in text]
    assert not missing, f"docs/RULES.md does not describe profiles {missing}"


def test_engine_package_imports_nothing_above_it() -> None:
    """``hgin_env`` is the bottom layer: no module in it imports agents, train, eval or the CLI."""
    import ast

    above = {"agents", "train", "eval", "hgin_cli"}
    bad = []
    for path in sorted((ROOT / "hgin_env").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            bad += [f"{path.name}: {name}" for name in names if name.split(".")[0] in above]
    assert not bad, f"hgin_env imports from layers above it: {bad}"


def test_action_kinds_cover_every_action_once() -> None:
    from hgin_env import actions as A

    ids = [a for start, stop in A.MOVE_KINDS.values() for a in range(start, stop)]
    assert ids == list(range(A.NUM_ACTIONS))
    assert A.KIND_STARTS == tuple(start for start, _ in A.MOVE_KINDS.values())
    assert [A.move_kind(a) for a in (0, 51, 52, 103, 104, 105, 106, 107)] == [
        "discard", "discard", "knock", "knock", "draw", "take", "pass", "big_gin"]
    assert A.is_knock(52) and not A.is_knock(51) and A.is_discard(51) and not A.is_discard(104)
    with pytest.raises(ValueError, match="108"):
        A.move_kind(108)
