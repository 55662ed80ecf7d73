"""Ray for the RLlib trainer: start or join it (:func:`init_ray`), and the driver's traffic
with the env runners through it: the learner's weights read and set (on every runner
too), a function run on every sampling runner's env (:func:`on_runners`), and the league
pushed to the runners (:func:`push_league`; a pipelined run's through the object store).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from train.rllib.config import Args


def init_ray(args: Args) -> None:
    """Connect to ``--address`` / ``$RAY_ADDRESS``, else start a local Ray with ``--num-cpus``."""
    import ray

    if ray.is_initialized():
        return
    address = args.address or os.environ.get("RAY_ADDRESS", "")
    runtime_env: dict[str, Any] = {"env_vars": {"OMP_NUM_THREADS": "1"}}
    if args.working_dir:
        runtime_env["working_dir"] = args.working_dir
    if address:
        ray.init(address=address, runtime_env=runtime_env)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, runtime_env=runtime_env)


# ---------------------------------------------------------------------- weights, runners
def learner_net_state(algo: Any) -> dict:
    """The learner's CardNet weights (numpy)."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    from agents.nets.rllib_module import net_state

    return net_state(algo.get_module(DEFAULT_MODULE_ID).state_dict())


def set_learner_weights(algo: Any, net_state_dict: dict) -> None:
    """Put CardNet weights in the learner's module and every runner's."""
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE, DEFAULT_MODULE_ID

    from agents.nets.rllib_module import module_state

    algo.set_state({COMPONENT_LEARNER_GROUP: {COMPONENT_LEARNER: {COMPONENT_RL_MODULE: {
        DEFAULT_MODULE_ID: module_state(net_state_dict)}}}})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)


def on_runners(algo: Any, func: Any) -> list:
    """``func(env)`` on the env of every runner that samples (the remote ones, or the
    driver's own when there are none)."""
    group = algo.env_runner_group
    remote = group.num_remote_env_runners() > 0
    return group.foreach_env_runner(lambda r: func(r.worker_index, r.env.unwrapped), local_env_runner=not remote)


def push_league(algo: Any, league: Any, states: dict[str, dict], refs: dict[str, Any] | None = None) -> None:
    """The league's members and PFSP weights to every runner; snapshot weights go to the
    runners that lack them (new snapshots, or a runner restarted after a failure).

    A pipelined run (``--pipelined``) pushes without waiting for the batch in flight: the
    snapshots go through Ray's object store, each put once into ``refs``."""
    specs, weights = league.specs, [float(w) for w in league.weights()]
    if getattr(algo, "pipelined", False) and algo.env_runner_group.num_remote_env_runners():
        import ray

        from train.rllib.pipeline import push_league_async

        refs = {} if refs is None else refs
        for spec in [s for s in refs if s not in specs]:  # dropped from the pool: free the object store
            del refs[spec]
        for spec in specs:
            if spec in states and spec not in refs:
                refs[spec] = ray.put(states[spec])
        push_league_async(algo, specs, weights, refs)
        return
    missing = set()
    for names in on_runners(algo, lambda i, env: env.missing_snapshots(specs)):
        missing.update(names)
    payload = {s: states[s] for s in missing if s in states}
    on_runners(algo, lambda i, env: env.set_league(specs, weights, payload))
