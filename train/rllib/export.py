"""Export an RLlib checkpoint of the card network (``train.rllib.ppo``) as an SB3 ``ppo:`` zip.

    python -m train.rllib.export runs/my_rllib out.zip      # then: ppo:out.zip everywhere

Why it is exact: :class:`agents.nets.rllib_module.CardRLModule` and SB3's
:class:`agents.nets.policy.CardAwarePolicy` hold the same :class:`agents.nets.card_net.CardNet`
parameters under the same names (the module's under ``net.``), so the exported policy is
a MaskablePPO built with the module's sizes whose ``state_dict`` is the module's. The
zip carries ``hgin_meta.json`` for the same rules and layout (and the privileged critic's
width, whose columns the SB3 policy's critic reads in training only), plus
``exported_from``. What does not travel: RLlib's optimizer state and the league (a
``ppo:`` zip is a policy, not a resumable RLlib run; ``train.ppo --init-from out.zip``
starts an SB3 run from its weights).
"""

from __future__ import annotations

import sys
from pathlib import Path


def export_ppo(checkpoint: str | Path, out: str | Path) -> Path:
    """Write the SB3 zip of an RLlib run or checkpoint folder; returns its path."""
    import torch
    from sb3_contrib import MaskablePPO

    from agents.nets.policy import CardAwarePolicy
    from agents.nets.rllib_module import load_module, net_state
    from agents.ppo import checkpoint_meta, save_checkpoint
    from agents.rllib_agent import MODULES_DIR, checkpoint_dir, read_meta
    from hgin_env.rules import get_rules
    from train.envs import BatchedVecEnv

    ckpt = checkpoint_dir(checkpoint)
    meta = read_meta(ckpt)
    module = load_module(ckpt / MODULES_DIR / meta.get("module", "default_policy"))
    cfg = module.model_config
    rules = get_rules(meta["rules"])
    privileged = int(cfg.get("privileged", 0))
    env = BatchedVecEnv(1, ["random"], rules=rules, privileged=bool(privileged))  # the spaces only
    kwargs = {"columns": rules.columns, "format": rules.format, "hidden": cfg["hidden"], "summary": cfg["summary"],
              "card_hidden": cfg["card_hidden"], "relations": cfg["relations"], "knock_bound": cfg["knock_bound"],
              "privileged": privileged, "shared_trunk": cfg["shared_trunk"]}
    model = MaskablePPO(CardAwarePolicy, env, policy_kwargs=kwargs, device="cpu", n_steps=8, batch_size=8)
    model.policy.load_state_dict({k: torch.as_tensor(v) for k, v in net_state(module.state_dict()).items()})
    model.num_timesteps = int(meta.get("timesteps", 0))
    extra = {"run": meta.get("run"), "exported_from": {"path": str(ckpt), "format": meta["format"]}}
    if privileged:
        extra["privileged_size"] = privileged
    return save_checkpoint(model, Path(out), checkpoint_meta(rules, extra))


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="RLlib run folder or checkpoint folder (rllib:PATH's PATH)")
    parser.add_argument("out", help="the .zip to write (play it as ppo:OUT)")
    args = parser.parse_args(argv)
    print(f"wrote {export_ppo(args.checkpoint, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
