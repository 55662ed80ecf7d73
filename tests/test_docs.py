"""The README and the documentation pages link only to files inside the repository; the
README stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve_inside_the_repository(doc: Path) -> None:
    bad = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+://", target) or target.startswith("#") or target.startswith("mailto:"):
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(ROOT) or not path.exists():
            bad.append(target)
    assert not bad, f"{doc.name} links outside the repository or to missing files: {bad}"


def test_readme_is_a_short_front_page() -> None:
    """At most 250 lines, and nothing it cites is a file a clone lacks (``runs/`` is written by
    the scripts, never committed)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "runs/bench/bench.md" not in text


def test_every_docs_page_is_in_the_site_nav() -> None:
    """mkdocs.yml lists every page under docs/, so none is built but unreachable."""
    import yaml

    class _Loader(yaml.SafeLoader):  # mkdocs.yml names Python objects (!!python/name:...)
        pass

    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)

    def pages(nav: object) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        if isinstance(nav, list):
            return [p for item in nav for p in pages(item)]
        if isinstance(nav, dict):
            return [p for value in nav.values() for p in pages(value)]
        return []

    listed = set(pages(config["nav"]))
    on_disk = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk - listed == set(), "pages missing from mkdocs.yml's nav"
    assert listed - on_disk == set(), "nav entries without a page"


def test_rule_book_covers_every_profile() -> None:
    from hgin_env.rules import PROFILES

    text = (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    missing = [name for name in PROFILES if f"`{name}`" not in text]
    assert not missing, f"docs/RULES.md does not describe profiles {missing}"


#: The packages bottom up; each may import only the ones before it. The CLI is on top: it
#: registers ``hgin web`` (imports hgin_web); the server reads and writes match files
#: through arena.records and never imports the CLI.
LAYERS = ["hgin_env", "agents", "arena", "train", "eval", "hgin_web", "hgin_cli"]


def _imported_packages(package: str) -> list[tuple[str, str]]:
    import ast

    out = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            out += [(str(path.relative_to(ROOT)), name.split(".")[0]) for name in names]
    return out


@pytest.mark.parametrize("package", LAYERS)
def test_every_import_points_down(package: str) -> None:
    """Each package imports only the layers below it (``hgin_env`` nothing above it; ``train``
    the match library ``arena``, never the ``eval`` scripts; ``arena`` never ``train``)."""
    above = set(LAYERS[LAYERS.index(package) + 1:])
    bad = [f"{where}: {name}" for where, name in _imported_packages(package) if name in above]
    assert not bad, f"{package} imports from layers above it: {bad}"


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
