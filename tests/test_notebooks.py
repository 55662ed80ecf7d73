"""Execute the notebooks at toy size with nbclient (the venv's own ipykernel).

Each notebook has a cell tagged ``parameters``; the test appends small overrides to it, so a
user who opens the notebook sees the defaults while the suite stays fast. The notebooks are
stored without outputs; this test never writes them back.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import ipykernel  # noqa: F401  (make test installs it: a missing kernel fails here, never skips)
import nbclient
import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
#: Small overrides of each notebook's parameters cell.
OVERRIDES = {
    "01_quickstart.ipynb": "",
    "02_heuristic_benchmark.ipynb": "MATCHES = 6\nWORKERS = 1",
    "03_evaluate_policy.ipynb": "MATCHES = 2\nOPPONENTS = ['simple']\nDECISIONS = 3",
    "04_table_pictures.ipynb": "RULES = {'target': 25}",
}
CELL_TIMEOUT = 180


def _kernel_uses_this_python() -> None:
    """The ``python3`` kernel must run this interpreter (the venv), not some other Python."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    exe = spec.argv[0]
    # jupyter_client replaces a bare "python" with sys.executable when it starts the kernel.
    assert exe in ("python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}") \
        or Path(exe).resolve() == Path(sys.executable).resolve(), (exe, sys.executable)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(OVERRIDES))
def test_notebook_runs(name: str, tmp_path: Path) -> None:
    path = NOTEBOOKS / name
    nb = nbformat.read(path, as_version=4)
    # Stored clean: no outputs, no execution counts.
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{name}: strip outputs"
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, f"{name}: needs exactly one cell tagged 'parameters'"
    overrides = OVERRIDES[name]
    if name.startswith("04_"):
        overrides += f"\nGIF_PATH = {str(tmp_path / 'match.gif')!r}"
    if overrides:
        params[0].source += "\n# test overrides\n" + overrides
    _kernel_uses_this_python()
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    old = dict(os.environ)
    os.environ.update(env)
    start = time.perf_counter()
    try:
        client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                         resources={"metadata": {"path": str(NOTEBOOKS)}})
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    seconds = time.perf_counter() - start
    assert seconds < 120, f"{name} took {seconds:.0f} s"
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    if name.startswith(("02_", "03_")):  # the plots were drawn
        assert any("image/png" in o.get("data", {}) for o in outputs), f"{name}: no figure"
    if name.startswith("04_"):  # the frames, the GIF and the HTML tables were shown
        from PIL import Image

        with Image.open(tmp_path / "match.gif") as gif:
            assert gif.n_frames > 10
        assert any("image/png" in o.get("data", {}) for o in outputs), f"{name}: no frame shown"
        assert any("image/gif" in o.get("data", {}) for o in outputs), f"{name}: no GIF shown"
        assert any("Hollywood sheet" in o.get("data", {}).get("text/html", "") for o in outputs)
    if name.startswith("03_"):
        text = "".join(o.get("text", "") for o in outputs)
        # The shipped policy's own run folder, found from its metadata (run psro6's args.json).
        assert "training logs in" in text and "docs/runs/psro4/psro6: episodes.csv" in text, text
        assert "probability" in "".join(
            str(o.get("data", {}).get("text/plain", "")) for o in outputs)


def test_the_notebook_commands_the_docs_give_are_installed() -> None:
    """docs/cli.md tells users to open the notebooks with JupyterLab and to run one with
    ``jupyter nbconvert --execute``; ``make test`` installs both into the venv."""
    import subprocess

    cli = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    jupyter = Path(sys.executable).parent / "jupyter"
    for command in ("lab", "nbconvert"):
        assert f".venv/bin/jupyter {command}" in cli
        run = subprocess.run([str(jupyter), command, "--version"], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and run.stdout.strip(), (command, run.stderr[-1000:])
