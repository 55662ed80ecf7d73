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
