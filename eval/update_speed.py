"""The PPO update's speed in two source trees, side by side: the default recipe's update
(``train.ppo``'s network and minibatches) timed in each tree on the same rollout, from the
same weights, and the updated weights compared bit for bit.

    mkdir -p /tmp/base && git archive b19731e | tar -x -C /tmp/base   # a tree before the change
    python -m eval.update_speed --before /tmp/base --after .

Each measurement is its own process (``PYTHONPATH`` = its tree, one torch thread), because
what is measured includes process-wide state (the heap's settings,
:mod:`agents.nets.heap`); the trees alternate, round after round, and each reports the CPU
time of its best and median update (thread CPU time, so that other jobs on a busy machine
count less than in wall time), its page faults per update, and its updated weights. The
rollout is the same in both (same seed and, as long as the network computes the same
function, the same actions): one update of 4,096 decisions, 4 epochs of 1,024.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def worker(updates: int, out: Path | str, dense: bool = False) -> None:
    """In the tree on ``PYTHONPATH``: build the default recipe's model, collect one rollout
    (one ``learn`` of 4,096 steps), then time ``updates`` updates, each from the same
    weights and optimizer state on that rollout. Writes the timings (JSON), and the last
    update's weights and its logits on the rollout's first 1,024 states, next to ``out``.
    ``dense``: the per-card scorer on all 52 cards
    (``CardAwarePolicy.legal_cards_only = False``, the bit-identical path)."""
    import copy
    import resource
    import time

    import numpy as np
    import torch

    from agents.spec import parse_mixture
    from hgin_env.rules import get_rules
    from train import ppo, run

    out = Path(out)
    if dense:
        from agents.nets.policy import CardAwarePolicy

        CardAwarePolicy.legal_cards_only = False
    run.configure_torch(1)
    fields = dict(eval_every=0, checkpoint_every=0, progress_bar=False)
    if "update_processes" in ppo.Args.__dataclass_fields__:
        # The update in this process alone: its CPU time is what is timed (a split update's
        # other half runs in a helper process; whole runs measure that, eval.bench's train group).
        fields["update_processes"] = 1
    args = run.resolved(ppo.Args(**fields))
    rules = get_rules(args.rules)
    envs = ppo.make_envs(args, rules, *parse_mixture(args.opponents))
    model = ppo.new_model(args, envs, rules, run.Start(run_dir=out.parent))
    model.learn(total_timesteps=args.n_steps * args.n_envs)  # the rollout (and one update)
    policy = model.policy
    weights, optimizer = copy.deepcopy(policy.state_dict()), copy.deepcopy(policy.optimizer.state_dict())
    cpu, faults = [], []
    for _ in range(updates):
        policy.load_state_dict(weights)
        policy.optimizer.load_state_dict(copy.deepcopy(optimizer))  # Adam updates its state in place
        np.random.seed(0)  # the minibatches' order
        torch.manual_seed(0)
        before, began = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.thread_time()
        model.train()
        cpu.append(time.thread_time() - began)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    buffer = model.rollout_buffer
    states = 1024  # flattened by the update (steps x environments, then the columns)
    obs = torch.as_tensor(buffer.observations.reshape(-1, buffer.observations.shape[-1])[:states])
    mask = torch.as_tensor(buffer.action_masks.reshape(-1, buffer.action_masks.shape[-1])[:states]).bool()
    with torch.no_grad():  # SB3's own masked distribution (all 52 cards scored, then masked)
        logits = policy.get_distribution(obs, action_masks=mask.numpy()).distribution.logits
    torch.save({"weights": policy.state_dict(), "logits": logits, "mask": mask,
                "actions": torch.as_tensor(buffer.actions)}, out.with_suffix(".pt"))
    out.write_text(json.dumps({"cpu": cpu, "faults": faults}))
    envs.close()


def measure(tree: Path, updates: int, out: Path, dense: bool) -> dict:
    """Run :func:`worker` in ``tree`` (its own process); its timings."""
    # Imported here, in the driver: the worker runs this file inside the measured tree, whose
    # eval package may be older.
    from eval.trainer_parity import run_in_tree

    # The worker is this file's function, run inside the measured tree: ``-c`` puts the
    # tree (the working directory), not this file's folder, first on the path.
    script = str(Path(__file__).resolve())
    run_in_tree(tree, ["-c", f"import runpy; runpy.run_path({script!r})['worker']({updates}, {str(out)!r}, {dense})"])
    return json.loads(out.read_text())


def compare(before: Path, after: Path) -> str:
    """How the updated networks of two measurements compare: 'bit-identical' weights, or
    the largest absolute difference of the weights and of the legal actions' logits."""
    import torch

    a, b = torch.load(before, weights_only=True), torch.load(after, weights_only=True)
    wa, wb = a["weights"], b["weights"]
    rollout = "same rollout" if torch.equal(a["actions"], b["actions"]) else \
        f"rollouts differ in {int((a['actions'] != b['actions']).sum())} actions"
    if wa.keys() != wb.keys():
        return f"different parameters: {sorted(wa.keys() ^ wb.keys())}"
    differ = [k for k in wa if not torch.equal(wa[k], wb[k])]
    if not differ:
        return f"{rollout}, weights bit-identical"
    weights = max(float((wa[k] - wb[k]).abs().max()) for k in differ)
    legal = a["mask"]
    logits = float((a["logits"][legal] - b["logits"][legal]).abs().max())
    return f"{rollout}, {len(differ)} of {len(wa)} weight tensors differ, max abs diff {weights:.2g}; " \
        f"legal logits {logits:.2g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="source tree before the change")
    parser.add_argument("--after", type=Path, default=Path("."), help="source tree after it (default: .)")
    parser.add_argument("--rounds", type=int, default=3, help="processes per tree, alternating")
    parser.add_argument("--updates", type=int, default=8, help="updates timed per process")
    args = parser.parse_args(argv)
    variants = {"before": (args.before.resolve(), False), "after": (args.after.resolve(), False),
                "after, all 52 cards": (args.after.resolve(), True)}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    faults: dict[str, list[int]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        files = {name: Path(tmp) / f"{i}.json" for i, name in enumerate(variants)}
        for round_ in range(args.rounds):
            order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
            for name in order:
                tree, dense = variants[name]
                result = measure(tree, args.updates, files[name], dense)
                cpu[name] += result["cpu"]
                faults[name] += result["faults"]
                print(f"round {round_ + 1} {name}: best {min(result['cpu']):.3f} s", flush=True)
        differences = {name: compare(files["before"].with_suffix(".pt"), files[name].with_suffix(".pt"))
                       for name in variants if name != "before"}
    print(f"\nCPU seconds per update (4,096 decisions, 4 epochs of 1,024; "
          f"{args.rounds} processes x {args.updates} updates each):")
    print("| code | tree | best | median | vs before (best) | page faults per update | the update vs before's |")
    print("|---|---|---|---|---|---|---|")
    base = min(cpu["before"])
    for name, (tree, _) in variants.items():
        times, flts = sorted(cpu[name]), sorted(faults[name])
        print(f"| {name} | {tree} | {times[0]:.3f} | {times[len(times) // 2]:.3f} | {base / times[0]:.2f}x "
              f"| {flts[len(flts) // 2]} | {differences.get(name, '')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
