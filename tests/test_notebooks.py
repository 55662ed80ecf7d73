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

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

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


def _fake_training_logs(folder: Path) -> Path:
    """Small CSVs shaped like a training run's logs, so the plotting cell of notebook 03 runs
    even while the shipped policy has no logs next to it."""
    folder.mkdir(parents=True, exist_ok=True)
    episodes = ["timesteps,opponent,won,lost,truncated,columns_won,columns_lost,hands"]
    for i in range(60):
        opponent = ("simple", "expert", "ppo:snapshots/s1.zip")[i % 3]
        episodes.append(f"{100 * (i + 1)},{opponent},{int(i % 4 == 0)},{int(i % 4 != 0)},0,1,2,6")
    (folder / "episodes.csv").write_text("\n".join(episodes) + "\n")
    evals = ["timesteps,opponent,matches,win_rate,ci_low,ci_high,columns_won,hands_per_match"]
    for t in (2000, 4000, 6000):
        for opponent, rate in (("random", 0.9), ("simple", 0.4)):
            evals.append(f"{t},{opponent},20,{rate},{rate - 0.2},{min(1.0, rate + 0.1)},1.5,7.0")
    (folder / "eval.csv").write_text("\n".join(evals) + "\n")
    (folder / "progress.csv").write_text(
        "time/total_timesteps,rollout/ep_rew_mean,train/entropy_loss\n2048,-1.0,-2.0\n4096,-0.5,-1.8\n")
    return folder


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
    if name.startswith("03_"):
        overrides += f"\nTRAINING_LOGS = {str(_fake_training_logs(tmp_path / 'logs'))!r}"
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
        assert "training logs in" in text and "probability" in "".join(
            str(o.get("data", {}).get("text/plain", "")) for o in outputs)
