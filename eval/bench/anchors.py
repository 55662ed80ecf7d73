"""Client for the anchor worker: OpenSpiel / RLCard / PettingZoo timings from another venv.

The anchors live in their own virtual environment (``bench_venv``, built by
``eval/bench/setup_anchors.sh``) and are never imported here: :class:`AnchorWorker` runs
``bench_venv/bin/python eval/bench/anchor_worker.py`` as a subprocess and exchanges one JSON
line per request, so a harness can keep it alive and alternate timing rounds with our
engine. Hands are always given in OUR card ids (``suit * 13 + rank``, suits C, D, H, S).

    if AnchorWorker.available():
        with AnchorWorker() as anchors:
            reply = anchors.meld_openspiel(hands, repeat=3)
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKER_SCRIPT = Path(__file__).resolve().with_name("anchor_worker.py")
STAMP_NAME = ".anchors_installed"


class AnchorError(RuntimeError):
    """The worker replied with an error, died, or could not be started."""


def bench_venv() -> Path:
    """The anchor venv: ``$HGIN_BENCH_VENV`` if set, else ``<repo>/bench_venv``."""
    return Path(os.environ.get("HGIN_BENCH_VENV") or REPO_ROOT / "bench_venv")


class AnchorWorker:
    """A live anchor worker process; one request at a time, replies as dicts."""

    def __init__(self, venv: Path | None = None) -> None:
        venv = venv or bench_venv()
        if not self.available(venv):
            raise AnchorError(f"no anchor venv at {venv}: run bash eval/bench/setup_anchors.sh")
        self._stderr = tempfile.TemporaryFile(mode="w+")
        env = dict(os.environ, PYGAME_HIDE_SUPPORT_PROMPT="1", PYTHONUNBUFFERED="1")
        env.pop("PYTHONPATH", None)  # keep our package and venv out of the anchors' interpreter
        self._proc: subprocess.Popen[str] | None = subprocess.Popen(
            [str(venv / "bin" / "python"), str(WORKER_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            cwd=REPO_ROOT,
            env=env,
        )

    @staticmethod
    def available(venv: Path | None = None) -> bool:
        """Whether the anchor venv is installed (its python and setup stamp exist); no raise."""
        try:
            venv = venv or bench_venv()
            python = venv / "bin" / "python"
            return python.exists() and (venv / STAMP_NAME).exists() and WORKER_SCRIPT.exists()
        except OSError:
            return False

    def request(self, cmd: str, **args: Any) -> dict[str, Any]:
        """Send one command, wait for its reply; raise :class:`AnchorError` on failure."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise AnchorError("anchor worker is closed")
        try:
            proc.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError) as exc:
            raise AnchorError(f"anchor worker died: {exc}; stderr: {self._stderr_tail()}") from exc
        if not line:
            raise AnchorError(f"anchor worker exited; stderr: {self._stderr_tail()}")
        reply = json.loads(line)
        if "error" in reply:
            raise AnchorError(f"{cmd}: {reply['error']}")
        return reply

    # One method per worker command (see anchor_worker.py for the reply fields).

    def info(self) -> dict[str, Any]:
        """Versions of Python and of the anchor packages."""
        return self.request("info")

    def meld_openspiel(self, hands: Sequence[Sequence[int]], repeat: int = 1) -> dict[str, Any]:
        """Time OpenSpiel min deadwood on 10-card hands: seconds, calls, deadwood."""
        return self.request("meld_openspiel", hands=_lists(hands), repeat=repeat)

    def meld_rlcard(self, hands: Sequence[Sequence[int]], repeat: int = 1) -> dict[str, Any]:
        """Time RLCard min deadwood on 10-card hands: seconds, calls, deadwood."""
        return self.request("meld_rlcard", hands=_lists(hands), repeat=repeat)

    def discards_openspiel(
        self, hands: Sequence[Sequence[int]], repeat: int = 1, mode: str = "loop"
    ) -> dict[str, Any]:
        """Time deadwood after each discard of 11-card hands (``mode="min11"``: best only)."""
        return self.request("discards_openspiel", hands=_lists(hands), repeat=repeat, mode=mode)

    def discards_rlcard(self, hands: Sequence[Sequence[int]], repeat: int = 1) -> dict[str, Any]:
        """Time deadwood after each discard of 11-card hands with RLCard."""
        return self.request("discards_rlcard", hands=_lists(hands), repeat=repeat)

    def env_pettingzoo(self, steps: int, seed: int = 0) -> dict[str, Any]:
        """Random legal play in PettingZoo gin_rummy_v4: seconds, steps, hands."""
        return self.request("env_pettingzoo", steps=steps, seed=seed)

    def env_openspiel(self, steps: int, seed: int = 0, observe: bool = False) -> dict[str, Any]:
        """Random play in OpenSpiel gin_rummy: seconds, decisions, chance, hands; with
        ``observe`` each decision also builds the observation tensor and legal mask."""
        return self.request("env_openspiel", steps=steps, seed=seed, observe=observe)

    def selfcheck(self, n: int = 300, seed: int = 0) -> dict[str, Any]:
        """Card mappings and anchor deadwood vs brute force: ok plus per-check counts."""
        return self.request("selfcheck", n=n, seed=seed)

    def close(self) -> None:
        """Ask the worker to quit and wait for it (killed if it does not exit in time)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None and proc.poll() is None:
                proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                proc.stdin.close()
            proc.wait(timeout=10)
        except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()
            self._stderr.close()

    def _stderr_tail(self, chars: int = 2000) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read()[-chars:]

    def __enter__(self) -> AnchorWorker:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_proc", None) is not None:
            self.close()


def _lists(hands: Sequence[Sequence[int]]) -> list[list[int]]:
    return [[int(c) for c in h] for h in hands]
