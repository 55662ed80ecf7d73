"""A MkDocs hook (mkdocs.yml ``hooks``) that makes the pages' links to repository files
resolve on the site as they do in the repository.

The pages link to source files (``../train/ppo.py``), notebooks, run logs
(``runs/exploit_5m_self/result.json``) and folders. In the repository these open the file;
the site holds only ``docs/``'s pages and pictures, so without this hook those links would
404 there. The site serves the linked files themselves, at the same place relative to the
pages: a file under ``docs/`` that ``exclude_docs`` leaves out is put back when a page links
to it, and a file elsewhere in the repository is copied to ``repository/<its path>`` (the
link is rewritten to point there). A linked folder opens its ``README.md`` when it has one,
else a generated page that lists its files (each served the same way). Nothing links out
of the site, so the site works offline and from any host; with every link resolvable, the
strict build fails on a link to a missing file (``validation`` in mkdocs.yml), and
``tests/test_docs.py`` checks every link of the built site.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

#: A Markdown link or image target: ``](target)``, as tests/test_docs.py reads them.
LINK = re.compile(r"(\]\()([^)\s]+)(\))")
#: Where copies of files outside ``docs/`` go in the site.
REPOSITORY = "repository"
#: A linked folder's files above this size are listed but not served (model zips, logs).
MAX_SERVED_BYTES = 5_000_000


def _roots(config: MkDocsConfig) -> tuple[Path, Path]:
    docs = Path(config.docs_dir).resolve()
    return docs, Path(config.config_file_path).resolve().parent


def _is_relative(target: str) -> bool:
    return not (re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")))


def site_path(path: Path, config: MkDocsConfig) -> str | None:
    """Where a repository file or folder is on the site (a docs-relative URI), or None when
    it is outside the repository."""
    docs, root = _roots(config)
    if path.is_relative_to(docs):
        return path.relative_to(docs).as_posix()
    if path.is_relative_to(root):
        return f"{REPOSITORY}/{path.relative_to(root).as_posix()}"
    return None


def _linked_paths(page: File, docs: Path) -> list[tuple[str, Path]]:
    text = Path(page.abs_src_path).read_text(encoding="utf-8")
    out = []
    for _, target, _ in LINK.findall(text):
        if _is_relative(target) and target.split("#", 1)[0]:
            out.append((target, (Path(page.abs_src_path).parent / target.split("#", 1)[0]).resolve()))
    return out


def _serve(path: Path, config: MkDocsConfig, files: Files) -> str | None:
    """Make a linked repository file or folder part of the site; its docs-relative URI."""
    uri = site_path(path, config)
    if uri is None or not path.exists():
        return None
    if path.is_dir():
        for name in ("README.md", "index.md"):
            if (path / name).is_file() and site_path(path / name, config) in files.src_uris:
                return f"{uri}/{name}"
        listing = f"{uri}/index.md"
        if files.get_file_from_path(listing) is None:
            files.append(File.generated(config, listing, content=_listing(path, config, files),
                                        inclusion=InclusionLevel.NOT_IN_NAV))
        return listing
    existing = files.get_file_from_path(uri)
    if existing is not None:
        if existing.inclusion.is_excluded():
            existing.inclusion = InclusionLevel.NOT_IN_NAV
        return uri
    files.append(File.generated(config, uri, abs_src_path=str(path), inclusion=InclusionLevel.NOT_IN_NAV))
    return uri


def _listing(folder: Path, config: MkDocsConfig, files: Files) -> str:
    """A page listing a folder's files, each linked (and served) unless it is too large."""
    _, root = _roots(config)
    lines = [f"# `{folder.relative_to(root).as_posix()}/`", "",
             "The files of this folder of the repository:", ""]
    for child in sorted(folder.iterdir()):
        if child.is_dir():
            lines.append(f"- `{child.name}/` (a folder)")
        elif child.stat().st_size > MAX_SERVED_BYTES:
            lines.append(f"- `{child.name}` ({child.stat().st_size / 1e6:.0f} MB, in the repository only)")
        else:
            _serve(child, config, files)
            lines.append(f"- [`{child.name}`]({child.name})")
    return "\n".join(lines) + "\n"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    docs, _ = _roots(config)
    for page in list(files.documentation_pages()):
        if page.generated_by is None:
            for _, path in _linked_paths(page, docs):
                _serve(path, config, files)
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Point each link to a repository file or folder at its place on the site."""
    if page.file.generated_by is not None:  # a folder listing links to its own files
        return markdown
    source = Path(page.file.abs_src_path).parent

    def rewrite(match: re.Match[str]) -> str:
        target = match[2]
        if not _is_relative(target):
            return match[0]
        path_part, hash_, fragment = target.partition("#")
        if not path_part:
            return match[0]
        uri = _serve((source / path_part).resolve(), config, files)
        if uri is None:
            return match[0]  # a link to a missing file: the strict build reports it
        new = posixpath.relpath(uri, posixpath.dirname(page.file.src_uri) or ".")
        return f"{match[1]}{new}{hash_}{fragment}{match[3]}"

    return LINK.sub(rewrite, markdown)
