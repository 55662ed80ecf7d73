"""The benchmark's report: machine information, number formats, the targets and the
markdown table (see ``eval.bench.run``)."""

from __future__ import annotations

import os
import platform
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from eval.bench.results import FORMAT_PROFILES, OPENSPIEL_OBS, Bench, Sizes, batch_label
from eval.bench.runner import Runner


# ----------------------------------------------------------------------------- report
def machine_info() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "platform": platform.platform(), "load1": round(load, 2)}


def fmt_time(sec: float) -> str:
    if sec != sec:
        return "-"
    if sec < 1e-3:
        return f"{sec * 1e6:.2f} µs"
    if sec < 1:
        return f"{sec * 1e3:.2f} ms"
    return f"{sec:.2f} s"


def fmt_rate(sec: float) -> str:
    if sec != sec or sec <= 0:
        return "-"
    r = 1.0 / sec
    return f"{r / 1e6:.2f} M" if r >= 1e6 else f"{r / 1e3:.1f} k" if r >= 1e3 else f"{r:.0f}"


#: (bench, ours row, anchor row, required ratio anchor_time / ours_time, label)
TARGETS = [
    ("meld_real", "ours min_deadwood", "OpenSpiel GinRummyUtils.min_deadwood", 1.0,
     "single min_deadwood >= OpenSpiel (real-play hands)"),
    ("meld_real", "ours min_deadwood_batch", "OpenSpiel GinRummyUtils.min_deadwood", 10.0,
     "batched >= 10x OpenSpiel per hand (real-play hands)"),
    ("env_steps", "ours raw_env", "PettingZoo gin_rummy_v4", 10.0, "raw_env >= 10x PettingZoo steps/s"),
    ("env_steps", "ours env() wrapped", "PettingZoo gin_rummy_v4", 10.0,
     "env() wrapped >= 10x PettingZoo steps/s"),
    ("env_steps", "ours raw_env", "OpenSpiel gin_rummy (Python)", 1.0,
     "raw_env faster than OpenSpiel per decision"),
    ("env_hands", "ours raw_env", "OpenSpiel gin_rummy (Python)", 1.0,
     "raw_env faster than OpenSpiel per hand"),
    ("env_steps", "ours env() wrapped", "OpenSpiel gin_rummy (Python)", 1.0,
     "env() wrapped faster than OpenSpiel per decision"),
    ("env_hands", "ours env() wrapped", "OpenSpiel gin_rummy (Python)", 1.0,
     "env() wrapped faster than OpenSpiel per hand"),
    ("env_steps", "ours env() wrapped", OPENSPIEL_OBS, 1.5,
     "env() >= 1.5x OpenSpiel's Python loop with observation + mask, per decision"),
    ("env_steps", "ours raw_env", OPENSPIEL_OBS, 2.0,
     "raw_env >= 2x OpenSpiel's Python loop with observation + mask, per decision"),
    ("env_steps", "ours env() wrapped", OPENSPIEL_OBS, 2.0,
     "env() >= 2x OpenSpiel's Python loop with observation + mask, per decision (compiled engine issue)"),
    ("env_steps", "ours raw_env", OPENSPIEL_OBS, 2.5,
     "raw_env >= 2.5x OpenSpiel's Python loop with observation + mask, per decision (compiled engine issue)"),
    ("batch_steps", batch_label(1024, "numba"), OPENSPIEL_OBS, 50.0,
     "compiled batched engine N=1024 >= 50x OpenSpiel Python loop with obs tensor + mask, decisions/s"),
    ("batch_steps", batch_label(64, "numba"), OPENSPIEL_OBS, 20.0,
     "compiled batched engine N=64 >= 20x OpenSpiel Python loop with obs tensor + mask, decisions/s"),
    ("batch_steps", batch_label(1024, "numpy"), OPENSPIEL_OBS, 24.0,
     "numpy batched engine N=1024 >= 24x OpenSpiel Python loop with obs tensor + mask, decisions/s"),
    *[("batch_steps", batch_label(1024, "numba", p), f"ours raw_env ({p})", 30.0,
       f"compiled batched engine >= 30x the AEC env in {p}, decisions/s (obs + mask)") for p in FORMAT_PROFILES],
    *[("batch_steps", batch_label(1024, "numpy", p), f"ours raw_env ({p})", 10.0,
       f"numpy batched engine >= 10x the AEC env in {p}, decisions/s (obs + mask)") for p in FORMAT_PROFILES],
    ("batch_hands", batch_label(1024, "numba"), "OpenSpiel gin_rummy (Python)", 10.0,
     "compiled batched engine >= 10x OpenSpiel Python loop, hands/s"),
    ("train_steps", "ours train.ppo (batched, default)", "train.ppo (batched, numpy engine)", 1.0,
     "training with the default recipe on the compiled engine no slower than on numpy, steps/s"),
    ("expert_agents", "expert (batched)", "expert (row by row)", 20.0,
     "batched Expert >= 20x the row-by-row Expert per decision (N=256, same states)"),
    ("expert_agents", "expert (compiled)", "expert (batched)", 3.0,
     "compiled Expert >= 3x the numpy batched Expert per decision (N=256, same states)"),
    ("expert_openspiel_bot", "bot (compiled)", "bot (pyspiel, row by row)", 50.0,
     "compiled openspiel:simple >= 50x OpenSpiel's bot through pyspiel per decision (same states)"),
    ("train_steps", "ours train.ppo (batched, default)", "train.ppo previous defaults (--vec-env subproc)", 10.0,
     "PPO training >= 10x the previous train.ppo defaults, steps/s (opponent Simple)"),
]


def report(runner: Runner, machine: dict[str, Any], anchors_info: dict[str, Any] | None,
           anchors_note: str, sizes: Sizes, wall: float) -> tuple[str, dict[str, Any]]:
    lines = ["# hgin_env speed benchmark", ""]
    lines.append(f"Machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, "
                 f"numpy {machine['numpy']} ({machine['platform']}; load average {machine['load1']} "
                 "at the start: timings are noisy, compare ratios).")
    if anchors_info:
        lines.append("Anchors (bench_venv worker): " + ", ".join(f"{k} {v}" for k, v in anchors_info.items())
                     + ".")
    lines.append(f"Anchors: {anchors_note}")
    lines.append(f"{sizes.rounds} rounds, contenders alternated within each round; median per-unit time; "
                 f"'x ref' = median over rounds of (its time / the bench's reference row's time), >1 means "
                 f"the reference is faster. Wall time {wall:.0f} s.")
    lines.append("")
    lines.append("Inputs: " + "; ".join(f"**{k}**: {v}" for k, v in runner.inputs.items()) + ".")
    lines.append("")
    data: dict[str, Any] = {"machine": machine, "anchors": anchors_info, "anchors_note": anchors_note,
                            "sizes": sizes.__dict__, "inputs": runner.inputs, "benches": {},
                            "targets": [], "mismatches": runner.meld_mismatch}
    for b in runner.benches.values():
        lines += [f"## {b.title}", "", f"Reference row: **{b.ref}**. 'x ref' = a row's time / the reference's "
                  "time in the same round (median over rounds); above 1 the reference is that many times "
                  "faster, below 1 the row is faster than the reference.", "",
                  "| contender | per unit | per second | x ref | notes |", "|---|---|---|---|---|"]
        jb: dict[str, Any] = {"title": b.title, "ref": b.ref, "rows": {}}
        for label, row in b.rows.items():
            ratio = b.ratio(label) if b.ref in b.rows and label != b.ref else float("nan")
            rtxt = "ref" if label == b.ref else ("-" if ratio != ratio else f"{ratio:.2f} (ref {b.ref})"
                                                 if row.ours else f"{ratio:.2f}")
            note = row.note
            dph = row.extra.get("decisions_per_hand")
            if dph:
                note += f"; {statistics.median(dph):.0f} decisions/hand"
            name = f"**{label}**" if row.ours else label
            lines.append(f"| {name} | {fmt_time(row.median)} / {row.unit} | {fmt_rate(row.median)} | "
                         f"{rtxt} | {note} |")
            jb["rows"][label] = {"unit": row.unit, "ours": row.ours, "median_s": row.median,
                                 "times_s": row.times, "ratio_vs_ref": None if ratio != ratio else ratio,
                                 "note": note, **{k: v for k, v in row.extra.items()}}
        mm = data["mismatches"].get(b.name)
        if mm is not None:
            lines += ["", "Deadwood mismatches vs ours: " + ", ".join(f"{k} {v}" for k, v in mm.items())
                      + "."]
        lines.append("")
        data["benches"][b.name] = jb
    lines += [
        "Our env and engine runs start with our LRU caches emptied and use their own seeds, so no "
        "contender reuses positions another one played.",
        "",
        "What a hand is: **ours** (episode='hand'): one deal of Hollywood Gin rules, ending by knock, "
        "gin or the dead-hand rule; uniformly random legal play rarely knocks, so most hands are dead "
        "(played until the stock is down to the dead-hand limit). "
        "**PettingZoo gin_rummy_v4** (RLCard engine): one deal of RLCard's gin rummy "
        "(its own knock/dead-hand rules; steps include declaring/scoring moves). "
        "**OpenSpiel gin_rummy**: one deal with OpenSpiel's rules (knock, layoff phases as decisions); "
        "only non-chance actions count as decisions, but the chance actions (deal, draws) are applied "
        "inside the timed loop.",
        "",
    ]
    have_anchor = any(a in runner.benches.get(bn, Bench("", "", "")).rows for bn, _o, a, _t, _l in TARGETS)
    if have_anchor:
        lines += ["## Targets", "", "| target | ratio | met |", "|---|---|---|"]
        for bn, ours, anchor, need, label in TARGETS:
            b = runner.benches.get(bn)
            if b is None or ours not in b.rows or anchor not in b.rows:
                continue
            ratio = b.ratio(anchor, ours)
            met = ratio >= need
            lines.append(f"| {label} | {ratio:.2f}x (need {need:g}x) | {'yes' if met else 'NO'} |")
            data["targets"].append({"target": label, "ratio": ratio, "need": need, "met": met})
        lines.append("")
    return "\n".join(lines), data
