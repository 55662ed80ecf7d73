"""Moved to :mod:`agents.nets.card_net` (the networks sit below the agents that load
them); this name stays for older scripts' imports."""

from agents.nets.card_net import (  # noqa: F401
    CARD_EMBEDDING,
    CARD_FEATURES,
    DERIVED_CARD_FEATURES,
    MASKED_LOGIT,
    RELATION_KINDS,
    RELATION_SETS,
    CardExtractor,
    CardHead,
    CardNet,
)
