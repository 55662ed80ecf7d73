"""Every plot has a title, labelled axes and a legend that says what is counted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_LOGS = ROOT / "agents" / "policies" / "hgin_ppo_training"


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """Figures as they are saved (the plotting functions close them right after)."""
    saved: list[Figure] = []
    original = Figure.savefig

    def capture(self: Figure, *args, **kwargs):  # noqa: ANN002, ANN003
        saved.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", capture)
    return saved


def _check_readable(fig: Figure) -> None:
    axes = [ax for ax in fig.axes if ax.get_title() or ax.get_xlabel()]  # twin axes share the x label
    assert axes
    for ax in axes:
        assert ax.get_title(), "every panel has a title"
        assert ax.get_xlabel() and ax.get_ylabel(), (ax.get_title(), "axes are labelled")
        legend = ax.get_legend()
        assert legend is not None, (ax.get_title(), "every panel has a legend")
        labels = [t.get_text() for t in legend.get_texts()]
        assert labels and all(labels), (ax.get_title(), labels)


def _write_run(folder: Path, evals: bool, imitation: bool) -> Path:
    folder.mkdir(parents=True)
    shutil.copy(SHIPPED_LOGS / "episodes.csv", folder / "episodes.csv")
    if evals:
        shutil.copy(SHIPPED_LOGS / "eval.csv", folder / "eval.csv")
    if imitation:
        history = [{"epoch": e, "loss": 1.0 / e, "accuracy": 0.8 + 0.01 * e} for e in (1, 2, 3)]
        (folder / "imitation.json").write_text(json.dumps({"history": history}))
    return folder


@pytest.mark.parametrize("evals,imitation", [(True, True), (False, True), (True, False)])
def test_learning_curves(evals: bool, imitation: bool, tmp_path: Path, figures: list[Figure]) -> None:
    from train.plots import plot_learning_curves

    run = _write_run(tmp_path / "run", evals, imitation)
    out = plot_learning_curves(run)
    assert out.is_file() and len(figures) == 1
    fig = figures[0]
    assert fig.get_suptitle() == "Learning curves of run 'run'"
    _check_readable(fig)
    titles = [ax.get_title() for ax in fig.axes]
    assert any(t.startswith("Evaluation") for t in titles) == evals  # no empty evaluation panel
    assert any(t.startswith("Imitation") for t in titles) == imitation
    if imitation:  # both imitation curves are named, each with its axis and unit
        imitation_axes = [ax for ax in fig.axes if not ax.get_title() and ax.get_ylabel()]
        assert imitation_axes and "nats" in imitation_axes[0].get_ylabel()


def test_tournament_summary(tmp_path: Path, figures: list[Figure]) -> None:
    from eval.tournament import plot_summary, run_tournament

    result = run_tournament(["simple", "random"], matches=2, seed=0, workers=1, progress=False)
    plot_summary(result, tmp_path / "summary.png")
    fig = figures[0]
    assert "Tournament" in fig.get_suptitle() and "2 matches per pair" in fig.get_suptitle()
    _check_readable(fig)
    labels = [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
    assert "A won by knocking" in labels and "dead hand (nobody scores)" in labels
    assert not any(label in ("A knock", "B knock") for label in labels)


def test_tournament_summary_shows_a_zero_win_rate(tmp_path: Path, figures: list[Figure]) -> None:
    """A pair at 0% (random against simple) has no bar to see: its rate is written beside the
    axis, as every pair's is."""
    from eval.tournament import plot_summary, run_tournament

    result = run_tournament(["random", "simple"], matches=2, seed=0, workers=1, progress=False)
    assert [s["a_win_rate"] for s in result.summaries()] == [0.0]
    plot_summary(result, tmp_path / "summary.png")
    win_rates = figures[0].axes[0]
    assert [t.get_text() for t in win_rates.texts] == ["0.0%"]
    assert win_rates.texts[0].get_position()[0] >= win_rates.get_xlim()[0]  # inside the panel


def test_demo_results_give_each_agent_its_colour(tmp_path: Path, figures: list[Figure]) -> None:
    from train.demo import plot_results

    rows = [{"agent_a": a, "agent_b": o, "a_win_rate": 0.5, "ci_low": 0.4, "ci_high": 0.6, "matches": 10}
            for a in ("demo agent", "shipped policy") for o in ("random", "simple", "expert")]
    plot_results(rows, tmp_path / "results.png")
    fig = figures[0]
    _check_readable(fig)
    ax = fig.axes[0]
    colours = {tuple(bar.get_facecolor()) for container in ax.containers for bar in container
               if hasattr(bar, "get_facecolor")}
    assert len(colours) == 2  # one colour per evaluated agent
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "demo agent: match win rate, 95% CI" in labels and "shipped policy: match win rate, 95% CI" in labels


def test_training_win_rate_is_binned_with_intervals() -> None:
    """A steady 50% learner shows as flat points whose 95% intervals hold 50%, not as swings;
    bins keep at least 20 matches, and bad input is refused."""
    import numpy as np

    from train.plots import binned_win_rate

    rng = np.random.default_rng(0)
    won = (rng.random(2_000) < 0.5).astype(float)
    t, rate, low, high, per_bin = binned_win_rate(np.arange(2_000) * 100, won)
    assert len(t) == 12 and per_bin == 166 and np.all(np.diff(t) > 0)
    assert np.all((low <= rate) & (rate <= high))
    assert np.sum((low <= 0.5) & (0.5 <= high)) >= 10  # 95% intervals: about 1 in 20 misses the truth
    assert len(binned_win_rate([1, 2, 3], [1.0, 0.0, 1.0])[0]) == 1
    with pytest.raises(ValueError, match="differ in length"):
        binned_win_rate([1, 2], [1.0])
    with pytest.raises(ValueError, match="no matches"):
        binned_win_rate([], [])


def test_legends_sit_below_the_panels(tmp_path: Path, figures: list[Figure]) -> None:
    """No legend is drawn inside a panel, where it could cover a curve (the vs-Expert one)."""
    from train.plots import plot_learning_curves

    plot_learning_curves(_write_run(tmp_path / "run", True, True))
    for ax in figures[-1].axes:
        legend = ax.get_legend()
        if legend is not None:
            anchor = legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted())
            assert anchor.y1 < 0, (ax.get_title(), "legend below the axes")


def test_only_the_runs_own_snapshots_are_labelled_self_play():
    from train.plots import opponent_label

    assert opponent_label("ppo:runs/x/snapshots/snapshot_000100000.zip") == "self-play"
    assert opponent_label("ppo:agents/policies/hgin_ppo.zip") == "ppo:agents/policies/hgin_ppo.zip"
    assert opponent_label("simple") == "simple"
    assert opponent_label("snapshot:runs/x/snapshots/snapshot_000100000.zip") == "self-play"  # league


def test_net_hand_points_have_an_axis_that_holds_them(tmp_path: Path, figures: list[Figure]) -> None:
    """The hand panel's net points per hand (a fresh learner loses 50-100 a hand) have their
    own axis, which holds every point of the curve; the shares keep theirs, 0 to 1."""
    import numpy as np

    from train.plots import plot_learning_curves

    run = tmp_path / "run"  # the first 40 matches of a run from random weights: about -50 points a hand
    run.mkdir()
    lines = (ROOT / "docs" / "runs" / "scratch_shaping" / "episodes.csv").read_text().splitlines()[:41]
    (run / "episodes.csv").write_text("\n".join(lines) + "\n")
    plot_learning_curves(run)
    points = [ax for ax in figures[-1].axes if ax.get_ylabel() == "net hand points per hand"]
    assert len(points) == 1
    curve = points[0].get_lines()[0].get_ydata()
    low, high = points[0].get_ylim()
    assert low <= np.min(curve) and np.max(curve) <= high and np.min(curve) < -30.0
    shares = [ax for ax in figures[-1].axes if ax.get_ylabel() == "share of hands"]
    assert len(shares) == 1 and shares[0].get_ylim() == (0.0, 1.0)
    labels = [t.get_text() for t in shares[0].get_legend().get_texts()]
    assert "net hand points per hand (right axis)" in labels
