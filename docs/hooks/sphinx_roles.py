"""A griffe extension (mkdocs.yml, mkdocstrings' ``extensions``) that turns the Sphinx roles
of the docstrings (``:class:`Match```, ``:func:`~hgin_env.observation.observe```,
``:meth:`title <target>```) into mkdocstrings cross-references as the API pages are built.

The docstrings stay as they are, readable in ``help()`` and the editor. Each role's target is
resolved where the docstring stands (a name of its module, its imports or its class, as
Python would look it up; a dotted name from a package of this repository as it is), then
written as an autorefs reference: a link to the object's entry on the API pages, or, for an
object those pages do not show (a private helper, a script), its name as code with the full
path on hover. ``tests/test_docs.py`` builds the site and fails on any role left raw.
"""

from __future__ import annotations

import html
import re

import griffe

#: ``:class:`X```, ``:py:func:`~a.b```, ``:meth:`title <a.b.c>```.
ROLE = re.compile(r":(?:py:)?(?P<role>class|func|meth|mod|attr|data|exc|obj|const):`(?P<body>[^`]+)`")
#: The repository's top-level packages: a dotted target starting with one is a full path.
PACKAGES = ("hgin_env", "agents", "arena", "train", "eval", "hgin_cli", "hgin_web")


def split_role(body: str) -> tuple[str, str]:
    """A role's (title, target): ``title <target>``, ``~a.b.c`` (title ``c``) or ``a.b``."""
    explicit = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^<>]+)>", body.strip())
    if explicit:
        return explicit["title"], explicit["target"].strip().lstrip("~")
    target = body.strip()
    if target.startswith("~"):
        target = target[1:]
        return target.rsplit(".", 1)[-1], target
    return target, target


def resolve(obj: griffe.Object, target: str) -> str:
    """The full path of ``target`` as seen from ``obj``'s docstring (``target`` itself when it
    is a full path already or cannot be resolved)."""
    target = target.rstrip("()")
    head, _, rest = target.partition(".")
    if head in PACKAGES:
        return target
    try:
        path = obj.resolve(head)
    except (griffe.NameResolutionError, AttributeError, KeyError):
        return target
    return f"{path}.{rest}" if rest else path


def cross_reference(title: str, identifier: str) -> str:
    """An optional autorefs reference: a link where the identifier is on the site, else the
    title as code (with the identifier on hover), never a build warning."""
    return (f'<autoref identifier="{html.escape(identifier, quote=True)}" optional>'
            f"<code>{html.escape(title)}</code></autoref>")


def convert(text: str, obj: griffe.Object) -> str:
    """``text`` with every Sphinx role replaced by a cross-reference resolved from ``obj``."""
    def replace(match: re.Match[str]) -> str:
        title, target = split_role(match["body"])
        return cross_reference(title, resolve(obj, target))

    return ROLE.sub(replace, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the Sphinx roles of every docstring once the object tree is complete."""

    def on_object(self, *, obj: griffe.Object, **kwargs: object) -> None:
        if obj.is_alias or obj.docstring is None:
            return
        obj.docstring.value = convert(obj.docstring.value, obj)
