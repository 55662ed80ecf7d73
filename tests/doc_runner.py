"""Run one documentation code block (read from stdin) statement by statement and check what
the page says about it; exits 1 naming every statement whose output differs.

What a block may say, in comments (tests/test_doc_examples.py runs every block this way):

- ``# prints TEXT`` on the lines right after a statement: the statement prints those lines,
  exactly (one ``# prints`` line per printed line).
- ``expression  # -> REPR`` at the end of a bare expression: ``repr(value) == REPR``.
- ``# ValueError: MESSAGE`` (any exception name) on the lines right after a statement, the
  message continued on further ``#`` lines: the statement raises that exception, with that
  message (white space folded); the block goes on after it.

Any other comment is prose and is not checked.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
import tokenize

RAISES = re.compile(r"^(\w+(?:Error|Exception|Warning)): (.*)$")


def _comments(code: str) -> dict[int, tuple[str, bool]]:
    """Line number -> (comment text without '#', whether the comment is the line's only token)."""
    out: dict[int, tuple[str, bool]] = {}
    lines = code.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            out[row] = (tok.string[1:].strip(), not lines[row - 1][:col].strip())
    return out


def _claims(code: str, statements: list[ast.stmt]) -> list[dict]:
    """What the page says about each top-level statement."""
    comments = _comments(code)
    claims = []
    for index, node in enumerate(statements):
        last = node.end_lineno or node.lineno
        stop = statements[index + 1].lineno if index + 1 < len(statements) else len(code.splitlines()) + 1
        following = []
        for row in range(last + 1, stop):
            if row in comments and comments[row][1]:
                following.append(comments[row][0])
            else:
                break
        claim: dict = {"prints": [], "raises": None, "value": None}
        inline = comments.get(last)
        if inline and not inline[1] and inline[0].startswith("-> "):
            claim["value"] = inline[0][3:]
        for i, text in enumerate(following):
            if text.startswith("prints "):
                claim["prints"].append(text[len("prints "):])
            elif (m := RAISES.match(text)) and i == 0:
                claim["raises"] = (m.group(1), " ".join([m.group(2), *following[1:]]))
                break
        claims.append(claim)
    return claims


def run(code: str, filename: str) -> list[str]:
    """Execute ``code``; the list of differences from what it says (empty: it does what it says)."""
    tree = ast.parse(code, filename)
    problems = []
    namespace: dict = {"__name__": "__main__"}
    for node, claim in zip(tree.body, _claims(code, tree.body), strict=True):
        where = f"{filename}:{node.lineno}"
        is_expression = isinstance(node, ast.Expr)
        compiled = compile(ast.Expression(node.value) if is_expression else ast.Module([node], []), where,
                           "eval" if is_expression else "exec")
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                value = eval(compiled, namespace) if is_expression else exec(compiled, namespace)  # noqa: S307
        except Exception as exc:  # noqa: BLE001 - the claim says which exception, if any
            sys.stdout.write(printed.getvalue())
            if claim["raises"] is None:
                raise
            name, message = claim["raises"]
            said = " ".join(str(exc).split())
            if type(exc).__name__ != name or said != " ".join(message.split()):
                problems.append(f"{where}: raised {type(exc).__name__}: {said}\n  the page says {name}: {message}")
            continue
        sys.stdout.write(printed.getvalue())
        if claim["raises"] is not None:
            problems.append(f"{where}: the page says it raises {claim['raises'][0]}, but it returned")
        if claim["prints"]:
            got = [line.rstrip() for line in printed.getvalue().splitlines()]
            if got != [line.rstrip() for line in claim["prints"]]:
                problems.append(f"{where}: printed {got}\n  the page says {claim['prints']}")
        if claim["value"] is not None and repr(value) != claim["value"]:
            problems.append(f"{where}: is {value!r}\n  the page says -> {claim['value']}")
    return problems


if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "<block>"
    found = run(sys.stdin.read(), name)
    for problem in found:
        print(f"DOC EXAMPLE MISMATCH {problem}", file=sys.stderr)
    sys.exit(1 if found else 0)
