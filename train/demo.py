"""The main job (``make demo``): train a small agent, evaluate it against the baselines,
print the three-column results and write plots.

    python -m train.demo --timesteps 50000 --matches 40

1. Clones the Expert's play (``--imitation-matches``), then trains MaskablePPO (card-aware
   policy) for ``--timesteps`` against Simple and Expert on the batched engine
   (``train.ppo``'s default environment: ``--n-envs`` matches stepped together).
2. Plays ``--matches`` duplicate Hollywood matches (each deal twice, seats swapped) of the
   new agent, and of the shipped policy when present, against Random, Simple and Expert.
3. Prints a table: match win rate with 95% CI, columns won, mean column totals I/II/III of
   both sides, and how hands ended.
4. Writes ``runs/demo/learning_curve.png`` and ``runs/demo/results.png``.
5. With the default arguments, prints what to expect (``EXPECTED``, from a recorded run) next
   to what it got.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tqdm import tqdm

#: What the default ``python -m train.demo`` printed when it was recorded, kernels pinned
#: (:data:`PINNED_KERNELS`; 2-core AMD EPYC with AVX-512, torch 2.13.0+cpu, 2026-12-06, the
#: PSRO round 6's average shipped (docs/runs/psro4), the per-card scorer on the
#: legal cards alone, the trunks' first layers on the observation's nonzero entries, each
#: minibatch's gradient in two halves and each rollout in two parts, train/split_update.py
#: and train/split_rollout.py, the update's lean step: one clip norm, Adam fused), and again
#: on one core (``taskset -c 0``), the same to the last digit:
#: (agent, opponent) -> (match win rate, 95% CI low, high) over 40 duplicate matches.
EXPECTED: dict[tuple[str, str], tuple[float, float, float]] = {
    ("demo agent", "random"): (1.000, 1.000, 1.000),
    ("demo agent", "simple"): (0.700, 0.590, 0.810),
    ("demo agent", "expert"): (0.325, 0.178, 0.472),
    ("shipped policy", "random"): (1.000, 1.000, 1.000),
    ("shipped policy", "simple"): (0.700, 0.569, 0.831),
    ("shipped policy", "expert"): (0.625, 0.453, 0.797),
}
#: The recorded run's wall time after set-up, and where it ran.
EXPECTED_WALL = "1 min 24 s"
EXPECTED_MACHINE = "a quiet 2-core machine"
#: The torch build the figures were recorded with: the pins make the training the same floats
#: across the cores and SIMD widths of one CPU family, not across torch (or MKL) versions.
EXPECTED_TORCH = "2.13.0+cpu"
#: The CPU family the figures were recorded and checked on. Not every x86-64 CPU repeats them:
#: an Intel Xeon with AMX (Sapphire Rapids, 2026-12-06) trains another demo agent (62.5% against
#: Simple, 17.5% against the Expert; the shipped policy's figures repeat), and neither numba's
#: generic target, numpy without its AVX-512 dispatch, oneDNN capped at AVX2 nor MKL's AVX2 path
#: (NUMBA_CPU_NAME, NPY_DISABLE_CPU_FEATURES, ONEDNN_MAX_CPU_ISA, MKL_ENABLE_INSTRUCTIONS) changed it.
EXPECTED_CPU = "AMD EPYC"
#: The settings that make the demo's training the same floats whatever the core count and SIMD
#: width of a CPU of the recorded family (:data:`EXPECTED_CPU`), set before torch is imported:
#: float sums come out differently with another thread count, another SIMD width of torch's own
#: kernels (AVX-512 here, AVX2 or none elsewhere) or another code path of MKL's matrix
#: products, and PPO then amplifies one rounding difference into another policy (a user's run
#: on another CPU beat Simple 67.5% where the record says 50.0%).
#: ``ATEN_CPU_CAPABILITY=default`` runs torch's portable kernels, ``MKL_CBWR=COMPATIBLE`` MKL's
#: conditional numerical reproducibility mode, and one thread each for OpenMP and MKL keeps
#: every reduction in one order. The cost is measured in docs/getting_started.md; ``--no-pin``
#: trains with the machine's fastest kernels instead.
PINNED_KERNELS = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "OMP_NUM_THREADS": "1",
                  "MKL_NUM_THREADS": "1"}
#: The SHA-256 of the shipped policy file (``agents.ppo.SHIPPED_POLICY``) the "shipped policy"
#: figures were recorded with: a new shipped policy must be recorded again
#: (tests/test_train.py checks that this names the file in the repository).
EXPECTED_SHIPPED_SHA256 = "6f8ecf965f48d6822b789f1bcd7297c79168fd164b91bc88596d14dec37280df"
#: The arguments ``EXPECTED`` holds for (the defaults); any other run prints no expectation.
EXPECTED_ARGS = {"timesteps": 50_000, "imitation_matches": 800, "matches": 40, "n_envs": 32, "seed": 0}


def expectation(rows: list[dict], seconds: float, torch_version: str | None = None) -> str:
    """Expected against measured, one line per evaluated pair: the recorded win rate and 95%
    CI, this run's, and whether this run repeats the record. With the kernels pinned, the
    recorded torch build and a CPU of the recorded family, every figure must repeat exactly:
    a difference is said in capitals, with whether it still lies inside the recorded
    interval (the evaluation's interval, not a spread over trainings)."""
    if torch_version is None:
        import torch

        torch_version = torch.__version__
    minutes, secs = divmod(round(seconds), 60)
    same_build = torch_version == EXPECTED_TORCH
    lines = [f"time: recorded {EXPECTED_WALL} on {EXPECTED_MACHINE}, after set-up; this run {minutes} min {secs} s",
             f"figures (kernels pinned: the same on the {EXPECTED_CPU} CPUs checked, with torch {EXPECTED_TORCH}; "
             "another CPU may train another agent; "
             + ("this run's torch is that build, so on such a CPU every figure must repeat):" if same_build else
                f"this run's torch is {torch_version}, whose floats may differ, and training amplifies them):")]
    for r in rows:
        key = (r["agent_a"], r["agent_b"])
        got = f"{r['a_win_rate']:.1%} ({r['ci_low']:.1%}-{r['ci_high']:.1%})"
        if key not in EXPECTED:
            lines.append(f"  {key[0]} vs {key[1]}: no recorded figure; got {got}")
            continue
        rate, low, high = EXPECTED[key]
        verdict = ("as recorded" if abs(rate - r["a_win_rate"]) < 5e-4
                   else "DIFFERS from the record, inside its CI" if low - 5e-4 <= r["a_win_rate"] <= high + 5e-4
                   else "DIFFERS from the record, OUTSIDE its CI")
        lines.append(f"  {key[0]} vs {key[1]}: expected {rate:.1%} ({low:.1%}-{high:.1%}), got {got}: {verdict}")
    return "\n".join(lines)


def pin_kernels() -> str:
    """Set :data:`PINNED_KERNELS` for this process (and the workers it starts), and say so;
    when torch was imported before (the demo called from a Python that already used it), the
    settings can no longer take effect and the line says the figures may differ."""
    if "torch" in sys.modules and any(os.environ.get(k) != v for k, v in PINNED_KERNELS.items()):
        return ("== kernels: NOT pinned (torch was imported before train.demo set them): "
                "the figures may differ from the recorded ones ==")
    os.environ.update(PINNED_KERNELS)
    return ("== kernels: pinned (" + " ".join(f"{k}={v}" for k, v in PINNED_KERNELS.items())
            + f"): the same figures on the {EXPECTED_CPU} CPUs checked, with this torch build ==")


def kernels_pinned() -> bool:
    """Whether this process trains with :data:`PINNED_KERNELS` (torch's portable kernels in
    use, every setting in the environment)."""
    import torch

    return (torch.backends.cpu.get_cpu_capability() == "DEFAULT"
            and all(os.environ.get(k) == v for k, v in PINNED_KERNELS.items()))


def engine_line() -> str:
    """The batched engine's heading: which implementation trains, and (compiled) how long its
    kernels took to compile on this machine's first run or to load from numba's cache."""
    from hgin_env.batch.engines import warm_kernels
    from hgin_env.compiled import ENGINE_VARIABLE, resolve_engine

    if resolve_engine() == "numpy":
        return (f"== engine: the numpy batched engine (numba not installed, or {ENGINE_VARIABLE}=numpy; "
                f"pip install numba for the compiled one) ==")
    from agents.opponent_loop import warm_opponent_loop

    seconds = warm_kernels() + warm_opponent_loop()
    return (f"== engine: compiled kernels (numba) ready in {seconds:.1f} s (compiled once on a new machine, "
            f"loaded from numba's cache afterwards) ==")


def training_steps(total: int, rollout: int) -> str:
    """How many steps the training makes, said so that the progress bar's count matches:
    PPO learns in whole rollouts, so it runs on to the first multiple of ``rollout`` at or
    past ``total`` (``train.callbacks.ProgressFps.planned_steps``)."""
    from train.callbacks import ProgressFps

    planned = ProgressFps.planned_steps(total, 0, rollout)
    if planned == total:
        return f"{total:,} steps"
    return f"{total:,} steps (the bar counts to {planned:,}: PPO learns in whole rollouts of {rollout:,} decisions)"


def evaluate(agent_name: str, agent: object, opponents: list[str], matches: int, seed: int) -> list[dict]:
    from arena.evaluate import evaluate_against

    rows = []
    for opp in tqdm(opponents, desc=f"evaluating {agent_name}", unit="opponent"):
        summary = evaluate_against(agent, opp, matches=matches, seed=seed, rules="hollywood")
        summary["agent_a"] = agent_name
        rows.append(summary)
    return rows


def results_table(rows: list[dict]) -> str:
    """Markdown table of pair summaries (side A = the evaluated agent)."""
    head = ("| agent | opponent | matches | win rate (95% CI) | columns won | column totals I/II/III "
            "(agent) | (opponent) | knock/gin/undercut won per hand | hands/match |")
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        lines.append(
            f"| {r['agent_a']} | {r['agent_b']} | {r['matches']} | {r['a_win_rate']:.1%} "
            f"({r['ci_low']:.1%}–{r['ci_high']:.1%}) | {r['a_columns_won']:.2f} : {r['b_columns_won']:.2f} | "
            f"{' / '.join(f'{x:.0f}' for x in r['a_columns'])} | "
            f"{' / '.join(f'{x:.0f}' for x in r['b_columns'])} | "
            f"{r['a_knock_rate']:.2f}/{r['a_gin_rate']:.2f}/{r['a_undercut_rate']:.2f} | "
            f"{r['hands_per_match']:.1f} |")
    return "\n".join(lines)


def plot_results(rows: list[dict], path: Path) -> Path:
    """Grouped bars: each evaluated agent's match win rate (95% CI) against each opponent,
    one colour per agent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    agents = list(dict.fromkeys(r["agent_a"] for r in rows))
    opponents = list(dict.fromkeys(r["agent_b"] for r in rows))
    width = 0.8 / max(1, len(agents))
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, agent in enumerate(agents):
        mine = {r["agent_b"]: r for r in rows if r["agent_a"] == agent}
        xs = [j + (i - (len(agents) - 1) / 2) * width for j, o in enumerate(opponents) if o in mine]
        rs = [mine[o] for o in opponents if o in mine]
        rates = np.array([r["a_win_rate"] for r in rs])
        err = np.array([[r["a_win_rate"] - r["ci_low"] for r in rs], [r["ci_high"] - r["a_win_rate"] for r in rs]])
        ax.bar(xs, rates, width=width * 0.95, yerr=err, capsize=4, color=colours[i % len(colours)],
               label=f"{agent}: match win rate, 95% CI")
    ax.axhline(0.5, color="grey", ls="--", lw=0.8, label="50% (even)")
    ax.set_xticks(range(len(opponents)), [f"vs {o}" for o in opponents])
    matches = rows[0]["matches"] if rows else 0
    ax.set(ylim=(0, 1.05), xlabel="opponent", ylabel="match win rate (share of matches won)",
           title=f"Hollywood match win rate over {matches} duplicate matches per opponent")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=50_000, help="PPO steps of the small agent")
    parser.add_argument("--imitation-matches", type=int, default=800,
                        help="matches of Expert play cloned before PPO (0 = PPO from scratch)")
    parser.add_argument("--matches", type=int, default=40, help="duplicate matches per opponent")
    parser.add_argument("--n-envs", type=int, default=32,
                        help="matches in the batched training environment (one process)")
    parser.add_argument("--opponents", default="random,simple,expert", help="baselines to evaluate against")
    parser.add_argument("--out", default="runs/demo", help="run folder")
    parser.add_argument("--seed", type=int, default=0, help="seed of training and evaluation")
    parser.add_argument("--no-shipped", action="store_true", help="do not evaluate the shipped policy")
    parser.add_argument("--no-pin", action="store_true",
                        help="train with this machine's fastest kernels and threads (figures then depend on the CPU; "
                             "no comparison with the recorded run)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    if args.no_pin:
        print("== kernels: this machine's fastest (--no-pin): the figures depend on the CPU ==")
    else:
        print(pin_kernels())
    from agents.ppo import SHIPPED_POLICY, PPOAgent
    from train.plots import plot_learning_curves
    from train.ppo import Args, train

    out = Path(args.out)
    n_steps = max(8, min(64, args.timesteps // (4 * args.n_envs)))
    # The PPO settings of the demo before the batched engine (2,048 decisions per rollout,
    # minibatch 256, the network of the imitation policy hgin_ppo.zip, which clones the Expert
    # more closely): only the environment changed.
    recipe = dict(out_dir=str(out.parent), seed=args.seed, n_envs=args.n_envs, n_steps=n_steps, batch_size=256,
                  eval_every=0, checkpoint_every=0, hidden=256, summary=128, card_hidden=64, learning_rate=1e-4,
                  ent_coef=0.003, clip_range=0.1,
                  # Pinned: the CPU learner, each minibatch's gradient as two halves and each
                  # rollout as two parts on any core count (train/split_update.py,
                  # train/split_rollout.py; on one core the helper process shares the core,
                  # to the same bits).
                  device="auto" if args.no_pin else "cpu", update_processes=0 if args.no_pin else 2)
    print(engine_line())
    start_weights = ""
    if args.imitation_matches:
        print(f"== 1. imitation: recording the Expert's play over {args.imitation_matches:,} matches, then cloning "
              f"it ({out}_imitation) ==")
        start_weights = str(train(Args(run_name=f"{out.name}_imitation", total_timesteps=0,
                                       imitation_matches=args.imitation_matches, **recipe)))
    else:
        print("== 1. imitation: none (--imitation-matches 0), PPO starts from random weights ==")
    print(f"== 2. PPO: training the small agent for {training_steps(args.timesteps, n_steps * args.n_envs)} "
          f"against Simple and the Expert ({out}) ==")
    model_path = train(Args(run_name=out.name, total_timesteps=args.timesteps, init_from=start_weights, **recipe))
    opponents = [o for o in args.opponents.split(",") if o]
    print(f"== 3. evaluation: {args.matches} duplicate matches per opponent ==")
    rows = evaluate("demo agent", PPOAgent.load(model_path), opponents, args.matches, args.seed + 1)
    if not args.no_shipped and SHIPPED_POLICY.exists():
        rows += evaluate("shipped policy", PPOAgent.load(SHIPPED_POLICY), opponents, args.matches,
                         args.seed + 1)
    print("== 4. three-column results ==")
    print(results_table(rows))
    curve = plot_learning_curves(out)
    bars = plot_results(rows, out / "results.png")
    (out / "results.md").write_text(results_table(rows) + "\n")
    print(f"== 5. plots: {curve} {bars}; table: {out / 'results.md'} ==")
    if {k: getattr(args, k) for k in EXPECTED_ARGS} == EXPECTED_ARGS and not args.no_pin and kernels_pinned():
        print("== 6. expected (recorded run) against this run ==")
        print(expectation(rows, time.perf_counter() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
