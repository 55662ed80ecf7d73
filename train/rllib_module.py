"""Moved to :mod:`agents.nets.rllib_module` (the networks sit below the agents that load
them); this name stays for older scripts' imports, and for checkpoints saved before the
move, which name ``train.rllib_module.CardRLModule`` (the trainer resuming one unpickles
that name; :func:`agents.nets.rllib_module.load_module` points it at the new module)."""

from agents.nets.rllib_module import (  # noqa: F401
    NET_KEYS,
    NET_PREFIX,
    PRIVILEGED_KEY,
    CardRLModule,
    build_net,
    model_config,
    module_state,
    net_state,
)
