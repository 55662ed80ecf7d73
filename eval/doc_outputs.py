"""The output blocks of the documentation, regenerated from real runs.

    python -m eval.doc_outputs            # check: rerun each quick block's command, list those that differ
    python -m eval.doc_outputs --write    # rewrite the quick blocks in their pages from fresh runs
    python -m eval.doc_outputs --write cli-play   # one block by name
    python -m eval.doc_outputs --write demo       # a recorded run (minutes): named, never by default

A generated block is a fenced block right after a marker line in its page::

    <!-- output: NAME (python -m eval.doc_outputs --write NAME regenerates it) -->

:data:`OUTPUTS` says, per name, the page, the command (run in a fresh Python from the
repository's root, as a user would), its scripted input, and which of the printed lines the
page shows (``...`` marks the lines left out). tests/test_docs.py reruns every quick block
and compares it with its page, so a changed message fails the tests until the page is
regenerated, and a page cannot show output nobody printed. A recorded block (``quick=False``:
the demo, minutes of training) is rewritten only when named; its figures are checked by its
own tests (tests/test_train.py holds the README's demo block to ``train.demo.EXPECTED``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP = "..."
MARKER = re.compile(r"^<!-- output: (?P<name>[\w-]+) .*-->\n```(?P<lang>\w*)\n(?P<body>.*?)^```\n", re.M | re.S)


@dataclass(frozen=True)
class Output:
    """One generated block: ``command`` run with ``stdin`` (a function: computed when run),
    the lines ``shown`` keeps of what it printed on stdout."""

    name: str
    page: str
    command: Sequence[str]
    stdin: Callable[[], str] | None
    shown: Callable[[list[str]], list[str]]
    #: Rerun by the tests and by default (seconds); a recorded run (minutes) only when named.
    quick: bool = True
    #: Folders (under the repository's root) the command writes and must find absent.
    fresh: tuple[str, ...] = ()


# ---------------------------------------------------------------------- the CLI transcript
#: The duel of the CLI transcript: ``hgin play`` against the Expert on this seed.
CLI_SEED = 7


def cli_play_input() -> str:
    """What the person types in the transcript: the Expert's own moves for seat 0 of the
    seed-7 duel (the opponent is the Expert too, so the game is the one the transcript shows)
    up to the first hand seat 0 ends by knocking, with the mistakes a newcomer makes, each
    answered with a reason: ``knock`` before drawing, ``knock`` with the card about to be
    discarded while the deadwood is too high, a card that does not exist, ``help``, and
    ``knock`` without a card. Input ends after that hand (the match is then abandoned)."""
    from agents import make_agent
    from hgin_env import actions as A
    from hgin_env.game import Phase
    from hgin_env.loop import run_match
    from hgin_env.match import Match

    class _Knocked(Exception):
        pass

    match = Match("hollywood", seed=CLI_SEED)
    expert = make_agent("expert", seed=CLI_SEED)
    lines: list[str] = []
    said = {"knock before drawing": False, "knock too high": False, "knock alone": False}

    def human(obs: dict) -> int:
        game = match.current_game
        action = int(expert(obs))
        if game.phase == Phase.DRAW and not said["knock before drawing"]:
            said["knock before drawing"] = True
            lines.append("knock")
        card = A.action_card(action)
        if (A.DISCARD <= action < A.KNOCK and not said["knock too high"]
                and game.deadwood_after_discard()[card] > game.knock_limit):
            said["knock too high"] = True
            lines.extend(["knock " + A.describe_action(action), "KZ", "help"])
        if A.KNOCK <= action < A.DRAW_STOCK:
            said["knock alone"] = True
            lines.append("knock")
        lines.append(A.describe_action(action))
        return action

    def finished(done: list) -> None:
        if said["knock alone"]:
            raise _Knocked

    try:
        run_match(match, [human, expert], on_finished=finished)
    except _Knocked:
        pass
    return "\n".join(lines) + "\n"


def cli_play_shown(lines: list[str]) -> list[str]:
    """The transcript's opening (the deal, the first prompt and the Expert's reply), each
    mistake with its answer, and the knock that ends the hand, to the end of input."""
    def at(text: str, start: int = 0) -> int:
        return next(i for i in range(start, len(lines)) if lines[i].startswith(text))

    first = at("your move> ")
    before_drawing = at("your move> knock", first)
    after_help = at("your move> ", at("your move> help", before_drawing) + 1)
    alone = max(i for i, line in enumerate(lines) if line == "your move> knock")
    shown = lines[:first + 4]
    shown += [SKIP, *lines[before_drawing - 1:after_help + 2]]
    shown += [SKIP, *lines[alone - 2:]]
    return shown


def first_run_shown(lines: list[str]) -> list[str]:
    """The summary a training run ends with (``train/summary.py``)."""
    start = next(i for i, line in enumerate(lines) if line.startswith("run runs/first: "))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("saved "))
    return lines[start:end + 1]


def exploit_shown(lines: list[str]) -> list[str]:
    """The one line a probe ends with."""
    return [line for line in lines if line.startswith("exploit simple: the best response wins")]


def demo_shown(lines: list[str]) -> list[str]:
    """The demo's last section: what it expected next to what it got."""
    start = next(i for i, line in enumerate(lines) if line.startswith("== 6. expected"))
    return lines[start:]


OUTPUTS = [
    Output("cli-play", "docs/cli.md", [sys.executable, "-m", "hgin_cli", "play", "--opponent", "expert",
                                       "--seed", str(CLI_SEED)],
           cli_play_input, cli_play_shown),
    Output("demo", "README.md", [sys.executable, "-m", "train.demo"], None, demo_shown, quick=False),
    Output("first-run", "docs/training.md",
           [sys.executable, "-m", "train.ppo", "--run-name", "first", "--opponents", "simple", "--shaping", "1",
            "--total-timesteps", "300000", "--eval-every", "50000", "--eval-opponents", "random,simple",
            "--eval-matches", "40"], None, first_run_shown, quick=False, fresh=("runs/first",)),
    Output("exploit-line", "docs/exploit.md", [sys.executable, "-m", "eval.exploit", "simple", "--steps", "300000"],
           None, exploit_shown, quick=False, fresh=("runs/exploit_simple_0",)),
]


# ---------------------------------------------------------------------- running and pages
def run(output: Output) -> list[str]:
    """The block's lines: its command run afresh, what it printed cut to what the page shows."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    stdin = output.stdin() if output.stdin else ""
    for folder in output.fresh:
        shutil.rmtree(ROOT / folder, ignore_errors=True)
    done = subprocess.run(list(output.command), input=stdin, capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600, encoding="utf-8")
    if done.returncode != 0:
        raise RuntimeError(f"{output.name}: {' '.join(output.command)} exited {done.returncode}\n{done.stderr[-2000:]}")
    printed = [line.rstrip() for line in done.stdout.splitlines()]
    return output.shown(printed)


def page_block(output: Output) -> list[str]:
    """The lines the page shows now in the block named ``output.name``."""
    text = (ROOT / output.page).read_text(encoding="utf-8")
    found = [m for m in MARKER.finditer(text) if m.group("name") == output.name]
    if len(found) != 1:
        raise ValueError(f"{output.page}: {len(found)} blocks marked '<!-- output: {output.name} ...-->' (want 1)")
    return found[0].group("body").splitlines()


def write(output: Output, lines: list[str]) -> bool:
    """Put ``lines`` into the page's block; whether the page changed."""
    path = ROOT / output.page
    text = path.read_text(encoding="utf-8")
    page_block(output)  # exactly one marked block

    def replace(m: re.Match) -> str:
        if m.group("name") != output.name:
            return m.group(0)
        head = m.group(0)[:m.start("body") - m.start(0)]
        return head + "".join(line + "\n" for line in lines) + "```\n"

    new = MARKER.sub(replace, text)
    path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="blocks to run (default: the quick ones: "
                        f"{', '.join(o.name for o in OUTPUTS if o.quick)}; recorded: "
                        f"{', '.join(o.name for o in OUTPUTS if not o.quick)})")
    parser.add_argument("--write", action="store_true", help="rewrite the blocks in their pages")
    args = parser.parse_args(argv)
    known = {o.name: o for o in OUTPUTS}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"unknown block {', '.join(unknown)}: known {', '.join(known)}")
    differ = []
    for output in [known[n] for n in args.names] or [o for o in OUTPUTS if o.quick]:
        lines = run(output)
        if args.write:
            print(f"{output.page}: {output.name} {'rewritten' if write(output, lines) else 'unchanged'}")
        elif lines != page_block(output):
            differ.append(output)
            print(f"{output.page}: {output.name} differs from a fresh run (python -m eval.doc_outputs --write "
                  f"{output.name})")
        else:
            print(f"{output.page}: {output.name} as printed")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
