"""The networks the agents play with, below the agents that load them and the trainers
that train them: :mod:`agents.nets.card_net` (the card network, torch alone) and
:mod:`agents.nets.policy` (SB3's card-aware policy around it). Loading a policy imports
these, never :mod:`train` (checkpoints saved before the move name ``train.policy``;
:func:`agents.ppo.PPOAgent.load` gives SB3 the class from here instead). Imported on use:
they need torch and SB3.
"""
