"""The peer benchmark: our agents against OpenSpiel's ``SimpleGinRummyBot`` on single hands
of OpenSpiel's ``gin_rummy``, under its rules, on duplicate deals.

Why single hands and OpenSpiel's rules: that is the game OpenSpiel's users know, scored in
its own points, so the figures compare with theirs. Every deal is played twice with the
seats swapped (our agent holds the bot's cards the second time); a deal (the mean of its two
hands) is the unit of the 95% confidence interval. The agent plays at OpenSpiel's table
through :func:`arena.openspiel.play_openspiel_hand` (its moves on our observation dicts,
the showdown from what the table shows).

Command line::

    python -m eval.peer --agents expert ppo: --deals 1000 --out runs/peer

It prints one table row per agent (points per hand and its CI, hands won and lost, gins and
undercuts, what the bot lost by laying no melds against gin) and writes ``hands.csv`` and
``summary.json`` to ``--out``; ``--summarize DIR`` prints the table again from them. docs/results.md has the figures.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena.matches import AgentSpec, as_spec, derive_seed, reset_agent
from arena.openspiel import AgentSeat, BotSeat, Deal, play_openspiel_hand
from arena.stats import mean_interval
from eval.crosscheck import parse_param

HAND_COLUMNS = ["deal_seed", "agent", "agent_player", "points", "kind", "knocker", "agent_deadwood",
                "bot_deadwood", "bot_gin_melds_cost", "refused_knocks", "wall_knocks", "moves"]


def play_peer(spec: AgentSpec, deals: int, seed: int, params: Mapping[str, Any] | None = None,
              on_hand: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """Deals ``seed .. seed + deals - 1`` (:meth:`Deal.from_seed`), each played with the agent
    as OpenSpiel's player 0 and then 1 against the bot; one row per hand (``HAND_COLUMNS``),
    points from the agent's side."""
    from agents.openspiel import rules_from_params

    rules = rules_from_params(params)
    agent = spec.build(rules)
    seat, bot = AgentSeat(agent, spec.display), BotSeat()
    rows = []
    for i in range(deals):
        deal = Deal.from_seed(seed + i, rules)
        for player in (0, 1):
            reset_agent(agent, derive_seed(seed + i, 1))  # the same agent seed in both seatings
            refused, walls = seat.counts.refused_knocks, seat.counts.wall_knocks
            seats = [seat, bot] if player == 0 else [bot, seat]
            out = play_openspiel_hand(deal, seats, params)
            if out.mirror_stopped:
                raise RuntimeError(f"deal {seed + i}: the agent's view stopped following the hand: "
                                   f"{out.mirror_stopped}")
            cost = 0
            if out.kind == "gin" and out.knocker == player:  # the bot defended against our gin
                cost = out.deadwood[1 - player] - out.defender_min_deadwood
            rows.append({
                "deal_seed": seed + i, "agent": spec.display, "agent_player": player,
                "points": int(out.returns[player]), "kind": out.kind,
                "knocker": "" if out.knocker is None else "agent" if out.knocker == player else "bot",
                "agent_deadwood": out.deadwood[player], "bot_deadwood": out.deadwood[1 - player],
                "bot_gin_melds_cost": cost,
                "refused_knocks": seat.counts.refused_knocks - refused,
                "wall_knocks": seat.counts.wall_knocks - walls, "moves": out.moves,
            })
            if on_hand is not None:
                on_hand()
    return rows


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Points per hand with its 95% CI (a deal, both seatings, is one unit), and rates."""
    hands = len(rows)
    by_deal: dict[int, list[int]] = {}
    for r in rows:
        by_deal.setdefault(r["deal_seed"], []).append(r["points"])
    units = [float(np.mean(v)) for v in by_deal.values()]
    lo, hi = mean_interval(units)

    def rate(test: Callable[[dict[str, Any]], bool]) -> float:
        return sum(1 for r in rows if test(r)) / hands if hands else float("nan")

    points = float(np.mean([r["points"] for r in rows])) if rows else float("nan")
    cost = float(np.mean([r["bot_gin_melds_cost"] for r in rows])) if rows else 0.0
    fair: dict[int, list[int]] = {}  # the points had the bot laid its melds against gin
    for r in rows:
        fair.setdefault(r["deal_seed"], []).append(r["points"] - r["bot_gin_melds_cost"])
    fair_lo, fair_hi = mean_interval([float(np.mean(v)) for v in fair.values()])
    return {
        "agent": rows[0]["agent"] if rows else "", "deals": len(by_deal), "hands": hands,
        "points_per_hand": points, "ci_low": lo, "ci_high": hi,
        "won": rate(lambda r: r["points"] > 0), "lost": rate(lambda r: r["points"] < 0),
        "agent_gin": rate(lambda r: r["kind"] == "gin" and r["knocker"] == "agent"),
        "bot_gin": rate(lambda r: r["kind"] == "gin" and r["knocker"] == "bot"),
        "agent_undercuts": rate(lambda r: r["kind"] == "undercut" and r["knocker"] == "bot"),
        "bot_undercuts": rate(lambda r: r["kind"] == "undercut" and r["knocker"] == "agent"),
        "no_knock": rate(lambda r: r["knocker"] == ""),
        "bot_gin_melds_cost": cost, "points_if_bot_laid_melds": points - cost,
        "fair_ci_low": fair_lo, "fair_ci_high": fair_hi,
        "refused_knocks": sum(r["refused_knocks"] for r in rows),
        "wall_knocks": sum(r["wall_knocks"] for r in rows),
    }


def markdown(summaries: Sequence[dict[str, Any]]) -> str:
    """The results table (docs/results.md)."""
    lines = ["| agent | deals (hands) | points per hand (95% CI) | won / lost % | gin % ours / bot's | "
             "undercuts % ours / bot's | had the bot laid its melds against gin | refused knocks |",
             "|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        lines.append(
            f"| {s['agent']} | {s['deals']} ({s['hands']}) | {s['points_per_hand']:+.2f} "
            f"({s['ci_low']:+.2f} to {s['ci_high']:+.2f}) | {100 * s['won']:.1f} / {100 * s['lost']:.1f} | "
            f"{100 * s['agent_gin']:.1f} / {100 * s['bot_gin']:.1f} | "
            f"{100 * s['agent_undercuts']:.1f} / {100 * s['bot_undercuts']:.1f} | "
            f"{s['points_if_bot_laid_melds']:+.2f} ({s['fair_ci_low']:+.2f} to {s['fair_ci_high']:+.2f}) | "
            f"{s['refused_knocks']} |")
    return "\n".join(lines)


def save(out: Path, rows: Sequence[dict[str, Any]], summaries: Sequence[dict[str, Any]], meta: dict) -> None:
    """``hands.csv`` (one row per hand) and ``summary.json`` (the table's figures) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "hands.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=HAND_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    (out / "summary.json").write_text(json.dumps({**meta, "summaries": list(summaries)}, indent=1) + "\n",
                                      encoding="utf-8")


def load_hands(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``hands.csv``, numbers as ints."""
    text = ("agent", "kind", "knocker")
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: (v if k in text else int(v)) for k, v in row.items()} for row in csv.DictReader(f)]


def resummarize(folder: Path) -> list[dict[str, Any]]:
    """Rebuild a folder's ``summary.json`` from its ``hands.csv``."""
    rows = load_hands(folder / "hands.csv")
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    summaries = [summarize([r for r in rows if r["agent"] == a]) for a in agents]
    meta = {k: v for k, v in json.loads((folder / "summary.json").read_text()).items() if k != "summaries"} \
        if (folder / "summary.json").is_file() else {}
    save(folder, rows, summaries, meta)
    return summaries


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.peer", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--summarize", metavar="DIR", default=None,
                   help="play nothing: print the table of DIR's hands.csv and rebuild its summary.json")
    p.add_argument("--agents", nargs="+", default=None,
                   help="our agents (make_agent names, label=name to rename), e.g. expert ppo:")
    p.add_argument("--deals", "--hands", dest="deals", type=int, default=1000,
                   help="deals per agent, each played twice with the seats swapped (default 1000; "
                        "--hands is the same option)")
    p.add_argument("--seed", type=int, default=0, help="first deal's seed; deal i is seed + i (default 0)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="an OpenSpiel gin_rummy parameter (repeatable), e.g. knock_card=7")
    p.add_argument("--out", default=None, help="folder for hands.csv and summary.json")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see ``--help``); 2 after a one-line error on stderr."""
    args = _parse_args(argv)
    if args.summarize:
        if not (Path(args.summarize) / "hands.csv").is_file():
            print(f"error: --summarize {args.summarize}: no hands.csv there", file=sys.stderr)
            return 2
        print(markdown(resummarize(Path(args.summarize))))
        return 0
    try:
        if not args.agents:
            raise ValueError("--agents: name at least one agent, e.g. --agents expert ppo:")
        if args.deals < 1:
            raise ValueError(f"--deals {args.deals}: must be >= 1")
        params = dict(parse_param(t) for t in args.param)
        from agents.openspiel import load_openspiel_game, rules_from_params

        load_openspiel_game(params)
        specs = [as_spec(text) for text in args.agents]
        for spec in specs:  # refuse bad names and checkpoints before playing
            spec.build(rules_from_params(params))
    except (ValueError, ImportError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=2 * args.deals * len(specs), unit="hand", smoothing=0.05)
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    try:
        for spec in specs:
            rows += play_peer(spec, args.deals, args.seed, params, on_hand=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    summaries = [summarize([r for r in rows if r["agent"] == spec.display]) for spec in specs]
    params_text = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
    print(f"against OpenSpiel's SimpleGinRummyBot, gin_rummy ({params_text}), deals "
          f"{args.seed}..{args.seed + args.deals - 1}, each twice (seats swapped), "
          f"{time.perf_counter() - start:.0f} s")
    print(markdown(summaries))
    if args.out:
        save(Path(args.out), rows, summaries, {"deals": args.deals, "seed": args.seed, "params": params,
                                               "agents": args.agents})
    return 0


if __name__ == "__main__":
    sys.exit(main())
