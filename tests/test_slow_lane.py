"""The quick lane's list of slow tests (tests/conftest.py) names only tests that exist: a
renamed or removed test must leave the list too, or it would silently run in the quick lane."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import SLOW_FILES, SLOW_TESTS

ROOT = Path(__file__).resolve().parent.parent


def _module(path: str):
    spec = importlib.util.spec_from_file_location(f"slow_lane_{Path(path).stem}", ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_slow_test_and_file_named_exists():
    missing = sorted(path for path in SLOW_FILES if not (ROOT / path).is_file())
    modules: dict[str, object] = {}
    for name in sorted(SLOW_TESTS):
        path, test = name.split("::")[0], name.split("::")[-1]
        if not (ROOT / path).is_file():
            missing.append(name)
            continue
        module = modules.setdefault(path, _module(path))
        if not hasattr(module, test):
            missing.append(name)
    assert not missing, f"tests/conftest.py names tests that do not exist: {missing}"
