"""Moved to :mod:`agents.nets.policy` (the networks sit below the agents that load them).
This name stays for checkpoints saved before the move, which name
``train.policy.CardAwarePolicy`` (SB3 unpickles that name when the training code resumes
one; :meth:`agents.ppo.PPOAgent.load` never does), and for older scripts' imports."""

from agents.nets.policy import (  # noqa: F401
    CARD_EMBEDDING,
    CARD_FEATURES,
    DERIVED_CARD_FEATURES,
    RELATION_KINDS,
    RELATION_SETS,
    CardAwarePolicy,
    CardExtractor,
    CardHead,
    format_input_columns,
    load_start_weights,
)
