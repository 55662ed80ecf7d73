"""The README and the documentation pages link only to files inside the repository; the
README stays short; every generated output block (eval/doc_outputs.py) is what its command
prints today."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from eval import doc_outputs
from eval.doc_outputs import OUTPUTS

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


def _mkdocs_config() -> dict:
    import yaml

    class _Loader(yaml.SafeLoader):  # mkdocs.yml names Python objects (!!python/name:...)
        pass

    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def test_every_docs_page_is_in_the_site_nav() -> None:
    """mkdocs.yml lists every page under docs/, so none is built but unreachable."""
    config = _mkdocs_config()

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


#: The networks below the agents (the card network, SB3's policy, RLlib's module): the
#: checkpoints of both trainers load without ``train`` (tests/test_checkpoints_load_below_train.py).
NETS = ("agents/nets/card_net.py", "agents/nets/policy.py", "agents/nets/rllib_module.py")


def test_the_networks_import_nothing_from_train() -> None:
    imports = _imported_packages("agents")
    assert set(NETS) <= {where for where, _ in imports}  # each is read (a rename must update NETS)
    bad = [f"{where}: {name}" for where, name in imports if where in NETS and name == "train"]
    assert not bad, f"the networks import the trainers: {bad}"


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


#: hgin_env's own layers, bottom up (docs/architecture.md): each module may import modules of
#: its own layer and the ones before it, never one above. The package front (``__init__``,
#: ``hollywood_gin_v0``, the published name) sit on top.
ENGINE_LAYERS: list[tuple[str, set[str]]] = [
    ("engine", {"codes", "cards", "rules", "actions", "melds", "scoring", "sheets", "game", "match", "compiled",
                "card_kernels"}),
    ("observer", {"observation", "rewards", "loop", "summary", "determinize"}),
    ("render", {"render"}),
    ("batch", {"batch", "format_worlds"}),
    ("envs", {"envs"}),
]
ENGINE_TOP = {"__init__", "hollywood_gin_v0"}


def _engine_imports(type_checking: bool = True) -> dict[str, set[str]]:
    """hgin_env module (dotted, below hgin_env) -> the hgin_env modules it imports (any
    nesting: a function-level import counts too; ``type_checking=False`` leaves out the
    imports under ``if TYPE_CHECKING:``, which never run)."""
    import ast

    base = ROOT / "hgin_env"
    graph: dict[str, set[str]] = {}
    for path in sorted(base.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        module = ".".join(parts)
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        targets: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped: set[int] = set()
        if not type_checking:
            for node in ast.walk(tree):
                if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                    skipped |= {id(n) for child in node.body for n in ast.walk(child)}
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                    stem = anchor + (node.module.split(".") if node.module else [])
                elif node.module and node.module.split(".")[0] == "hgin_env":
                    stem = node.module.split(".")[1:]
                else:
                    continue
                names = [stem] if stem else []
                names += [stem + [alias.name] for alias in node.names]  # `from . import actions`
                for name in names:
                    where = base / Path(*name)
                    if where.with_suffix(".py").exists() or (where / "__init__.py").exists():
                        targets.add(".".join(name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("hgin_env."):
                        targets.add(alias.name[len("hgin_env."):])
        graph[module] = targets - {module}
    return graph


def _engine_layer(module: str) -> int | None:
    top = module.split(".")[0]
    if top in ENGINE_TOP:
        return None
    for level, (_, members) in enumerate(ENGINE_LAYERS):
        if top in members:
            return level
    raise AssertionError(f"hgin_env.{module} is in no layer of ENGINE_LAYERS: place it there")


def test_engine_imports_point_down_and_form_no_circle() -> None:
    """Inside hgin_env: no module imports one of a higher layer (the engine imports no
    observer, renderer, reward, batched engine or env; type-hint imports included), and no
    circle among the imports that run."""
    graph = _engine_imports()
    bad = []
    for module, targets in graph.items():
        level = _engine_layer(module)
        if level is None:
            continue
        for target in targets:
            other = _engine_layer(target)
            if other is None or other > level:
                bad.append(f"hgin_env.{module} imports hgin_env.{target}")
    assert not bad, f"imports that run up a layer: {bad}"
    # No circle among the imports, type-hint imports under TYPE_CHECKING included (one that
    # closes a circle says two modules know each other: the batched engine's seatings once
    # named BatchGame; they name the interface they need instead): a depth-first search over
    # the module graph (package __init__ files excluded, they only re-export).
    running = _engine_imports(type_checking=True)
    edges = {m: {t for t in ts if not t.endswith("__init__") and t in running} for m, ts in running.items()
             if not m.endswith("__init__")}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                raise AssertionError(f"import circle: {' -> '.join(path + [node, nxt])}")
            if nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for node in edges:
        if node not in state:
            visit(node, [])


# ----------------------------------------------------------------------------- the built site
@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The documentation site as ``make test`` builds it (``mkdocs build --strict``)."""
    import os
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", *_makefile_docs_flags(), "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _makefile_docs_flags() -> list[str]:
    """The flags of the docs build that ``make test`` runs (its recipe line in the Makefile)."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("test:"))
    recipe = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        recipe.append(line)
    build = [re.search(r"mkdocs build (.*?) --site-dir", line) for line in recipe]
    found = [m for m in build if m]
    assert len(found) == 1, f"the Makefile's test recipe should build the docs once: {recipe}"
    return found[0].group(1).split()


def test_docs_build_fails_on_a_broken_anchor(tmp_path: Path) -> None:
    """``make test``'s docs build fails on a warning, and a link to an anchor a page lacks is
    one: a two-page site with the project's ``validation`` settings, built with the Makefile's
    flags, fails on a planted broken anchor and passes once it is mended. (``--quiet`` beside
    ``--strict`` would hide the warnings that ``--strict`` counts; this test catches that.)"""
    import os
    import subprocess
    import sys

    import yaml

    flags = _makefile_docs_flags()
    assert "--strict" in flags and "--quiet" not in flags and "-q" not in flags, flags
    validation = {"validation": _mkdocs_config()["validation"]}
    assert validation["validation"]["links"]["anchors"] == "warn", "mkdocs.yml must report broken anchors"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## Checked against the scalar engine\n")

    def build(anchor: str) -> subprocess.CompletedProcess:
        (tmp_path / "docs" / "index.md").write_text(f"# Home\n\nSee [the check](other.md#{anchor}).\n")
        (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump({"site_name": "t", **validation}))
        return subprocess.run([sys.executable, "-m", "mkdocs", "build", *flags, "--site-dir", str(tmp_path / "site")],
                              cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})

    broken = build("checked-against-game")
    assert broken.returncode != 0, "the strict docs build passed a broken anchor"
    assert "does not contain an anchor '#checked-against-game'" in broken.stderr + broken.stdout
    mended = build("checked-against-the-scalar-engine")
    assert mended.returncode == 0, mended.stderr[-2000:]


def _site_links(site: Path) -> list[tuple[str, str, Path]]:
    """Every link and image of the built pages that stays on the site: (page, URL, target file)."""
    from urllib.parse import unquote, urlsplit

    out = []
    for page in sorted(site.rglob("*.html")):
        for url in re.findall(r'\b(?:href|src)="([^"]*)"', page.read_text(encoding="utf-8")):
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            base = site if parts.path.startswith("/") else page.parent  # 404.html links from the root
            target = (base / unquote(parts.path).lstrip("/")).resolve()
            out.append((str(page.relative_to(site)), url, target / "index.html" if target.is_dir() else target))
    return out


def test_every_link_of_the_site_resolves_on_the_site(site: Path) -> None:
    """Links to source files, notebooks, run logs and folders open them on the site too
    (docs/hooks/repository_links.py serves them), as they do in the repository."""
    links = _site_links(site)
    broken = [(page, url) for page, url, target in links if not target.is_file()]
    assert not broken, f"links the site does not hold: {broken[:20]}"
    served = {target.relative_to(site).as_posix() for _, _, target in links}
    for path in ("repository/hgin_env/rewards.py", "repository/notebooks/01_quickstart.ipynb",
                 "runs/exploit_5m_self/result.json", "runs/exploit_simple/index.html",
                 "repository/agents/policies/hgin_ppo_training/index.html"):
        assert path in served, path
    assert (site / "repository/hgin_env/rewards.py").read_text() == (ROOT / "hgin_env/rewards.py").read_text()


RAW_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):(?:`|<code>)")


def test_api_pages_render_sphinx_roles_as_cross_references(site: Path) -> None:
    """The docstrings' ``:class:`...``` roles (docs/hooks/sphinx_roles.py) come out as links to
    the API entries, never as raw text."""
    raw = {str(page.relative_to(site)): len(RAW_ROLE.findall(page.read_text(encoding="utf-8")))
           for page in site.rglob("*.html")}
    assert not {page: n for page, n in raw.items() if n}, "raw Sphinx roles in the built site"
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    # hgin_env.observation's docstrings: :class:`~hgin_env.match.Match` -> a link to Match's entry.
    link = r'<a class="autorefs autorefs-internal"[^>]*href="#hgin_env\.match\.Match"[^>]*><code>Match</code>'
    assert re.search(link, api)


def test_sphinx_roles_resolve_where_the_docstring_stands() -> None:
    import importlib.util

    import griffe

    spec = importlib.util.spec_from_file_location("sphinx_roles", ROOT / "docs" / "hooks" / "sphinx_roles.py")
    roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roles)
    assert roles.split_role("~hgin_env.match.Match") == ("Match", "hgin_env.match.Match")
    assert roles.split_role("Match.observation <hgin_env.match.Match.observation>") == (
        "Match.observation", "hgin_env.match.Match.observation")
    assert roles.split_role("encode") == ("encode", "encode")
    module = griffe.load("hgin_env.match", search_paths=[str(ROOT)])
    match = module["Match"]
    assert roles.resolve(match, "Match.apply") == "hgin_env.match.Match.apply"  # a name of its module
    assert roles.resolve(match, "apply") == "hgin_env.match.Match.apply"  # a member of its class
    assert roles.resolve(match, "agents.batched.BatchedExpert") == "agents.batched.BatchedExpert"
    text = roles.convert("see :meth:`~hgin_env.match.Match.apply` and :func:`nowhere`", match)
    assert text == ('see <autoref identifier="hgin_env.match.Match.apply" optional><code>apply</code></autoref> '
                    'and <autoref identifier="nowhere" optional><code>nowhere</code></autoref>')


#: A repository path as the pages and notebooks name them (``docs/runs/psro_step``, ``agents/policies/x.zip``).
REPO_PATH = re.compile(r"(?<![\w/.~-])((?:docs|agents|arena|train|eval|hgin_env|hgin_web|hgin_cli|notebooks|tests)"
                       r"/[\w.\-/]*[\w/])")
#: Names of that shape that are not paths: SB3's logged scalars.
NOT_PATHS = {"train/entropy_loss"}


def test_every_path_a_page_or_notebook_names_exists() -> None:
    """Each repository path the README, a docs page or a notebook names (in prose, code or a
    cell) is in the repository, so a notebook never reads a folder that is not there and a
    reader never looks for one (patterns such as ``docs/runs/<run>/`` are not paths)."""
    import json

    texts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in DOCS}
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        texts[nb.relative_to(ROOT).as_posix()] = "\n".join("".join(cell["source"]) for cell in cells)
    missing = {name: sorted({m for m in REPO_PATH.findall(text)
                             if not any(c in m for c in "<>*{}") and m not in NOT_PATHS and not (ROOT / m).exists()})
               for name, text in texts.items()}
    assert not {k: v for k, v in missing.items() if v}, "paths named but missing from the repository"
    assert "docs/runs/psro4/psro6" in texts["notebooks/03_evaluate_policy.ipynb"]


@pytest.mark.parametrize("name", [o.name for o in OUTPUTS if o.quick])
def test_generated_output_block_is_what_its_command_prints(name: str) -> None:
    """A transcript in the docs is what its command prints today (regenerate a changed one
    with ``python -m eval.doc_outputs --write NAME``)."""
    output = next(o for o in OUTPUTS if o.name == name)
    assert doc_outputs.run(output) == doc_outputs.page_block(output), \
        f"{output.page}: the block '{name}' is stale: python -m eval.doc_outputs --write {name}"


def test_every_output_marker_names_a_generated_block() -> None:
    """A page marks a generated block only with a name eval/doc_outputs.py knows, once."""
    names = {o.name for o in OUTPUTS}
    for page in DOCS:
        for marked in re.findall(r"^<!-- output: ([\w-]+)", page.read_text(encoding="utf-8"), re.M):
            assert marked in names, f"{page.name}: no generated block named {marked!r}"
    for output in OUTPUTS:
        assert doc_outputs.page_block(output)  # exactly one marked, non-empty block


def test_doc_outputs_write_replaces_only_its_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--write puts the fresh lines into the marked block and leaves the rest of the page."""
    page = tmp_path / "page.md"
    page.write_text("intro\n<!-- output: demo (regenerated) -->\n```\nold\n```\nafter\n```\nother\n```\n")
    monkeypatch.setattr(doc_outputs, "ROOT", tmp_path)
    output = doc_outputs.Output("demo", "page.md", ["true"], None, lambda lines: lines)
    assert doc_outputs.page_block(output) == ["old"]
    assert doc_outputs.write(output, ["new 1", "new 2"])
    assert page.read_text() == "intro\n<!-- output: demo (regenerated) -->\n```\nnew 1\nnew 2\n```\nafter\n```\n" \
                               "other\n```\n"
    assert not doc_outputs.write(output, ["new 1", "new 2"])
