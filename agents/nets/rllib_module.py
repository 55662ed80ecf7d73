"""The project's card network as an RLlib RLModule (new API stack), below the agents that
load it (``rllib:PATH``, :mod:`agents.rllib_agent`) and the trainer that trains it
(``train.rllib.ppo``): it imports nothing from ``train``.

:class:`CardRLModule` is a ``TorchRLModule`` with the ``ValueFunctionAPI`` around one
:class:`agents.nets.card_net.CardNet`, the very network ``train.ppo`` trains through SB3
(``CardAwarePolicy``): the same classes, so a ``ppo:`` checkpoint's weights load into it
and it exports back (``train.rllib.export``), key for key under the prefix ``net.``.

- The actor reads ``obs["observations"]`` alone; the illegal actions' logits are set to
  ``MASKED_LOGIT`` (-1e8) from ``obs["action_mask"]``.
- The critic (:meth:`CardRLModule.compute_values`) reads the observation followed by
  ``obs["privileged"]`` when the module was built with ``privileged=P`` (the batched
  engine's hidden facts, :mod:`train.rllib.env`): they are in the training batch, never
  in the actor's input, so the policy's outputs do not depend on them
  (``tests/test_rllib.py`` puts noise in them and checks the logits bit for bit), and a
  checkpoint plays from the ordinary observation.

``model_config``: ``columns``, ``format`` (the observation layout), ``hidden``,
``summary``, ``card_hidden``, ``relations``, ``knock_bound``, ``privileged``,
``shared_trunk`` (as ``CardAwarePolicy``'s ``policy_kwargs``) and ``seed`` (the initial
weights, SB3's orthogonal initialisation: :meth:`CardNet.init_like_sb3`).

RLlib pickles the module's class by name in each checkpoint; checkpoints saved before the
move name ``train.rllib_module.CardRLModule``. :func:`load_module` reads them with that
name pointing here (no import of ``train``); new checkpoints name this module. Imported
only where RLlib is used: it needs Ray and torch.
"""


from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule

from hgin_env.envs.rllib import MASK_KEY, OBS_KEY
from hgin_env.observation import ObservationLayout

from .card_net import CardNet

#: Key of the privileged columns in the observation dict (critic only).
PRIVILEGED_KEY = "privileged"
#: Where the CardNet's parameters sit in the module's state dict.
NET_PREFIX = "net."
#: The CardNet's constructor arguments in a module's ``model_config``.
NET_KEYS = ("hidden", "summary", "card_hidden", "relations", "knock_bound", "privileged", "shared_trunk")
#: Where checkpoints saved before the move say the module's class lives.
OLD_MODULE_NAMES = ("train.rllib_module",)


def build_net(net_config: dict, state: dict | None = None) -> CardNet:
    """A :class:`agents.nets.card_net.CardNet` from the module's ``model_config`` and a state dict."""
    layout = ObservationLayout(net_config["columns"], net_config.get("format", "duel"))
    # RLlib merges its default model_config keys (fcnet_hiddens...) in: only the net's are read.
    net = CardNet(layout, **{k: net_config[k] for k in NET_KEYS if k in net_config})
    if state is not None:
        net.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in state.items()})
    net.eval()
    return net


class CardRLModule(TorchRLModule, ValueFunctionAPI):
    """The card network with action masking and a (privileged) critic."""

    def setup(self) -> None:
        config = dict(self.model_config or {})
        seed = int(config.get("seed", 0))
        # The initial weights from the config's seed, without moving torch's global generator.
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            self.net = build_net(config)
            self.net.init_like_sb3()
        self.net.train()
        self.privileged = int(config.get("privileged", 0))

    def _forward(self, batch: dict, **kwargs: Any) -> dict:
        obs = batch[Columns.OBS]
        logits = self.net.logits(obs[OBS_KEY], obs[MASK_KEY] > 0)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch: dict, **kwargs: Any) -> dict:
        """Logits and the critic's latent in one pass (the shared trunk computed once), the
        latent as ``Columns.EMBEDDINGS`` for the learner's value loss."""
        obs = batch[Columns.OBS]
        logits, latent_vf = self.net.logits_and_critic_latent(self._critic_input(obs), obs[MASK_KEY] > 0)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: latent_vf}

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        if embeddings is not None:
            return self.net.value_net(embeddings).squeeze(-1)
        return self.net.values(self._critic_input(batch[Columns.OBS]))

    def _critic_input(self, obs: dict) -> torch.Tensor:
        """The observation, followed by the privileged columns when the critic has them
        (the actor's latent reads the observation's columns alone)."""
        if self.privileged:
            return torch.cat([obs[OBS_KEY], obs[PRIVILEGED_KEY]], dim=1)
        return obs[OBS_KEY]


def model_config(columns: int, format: str = "duel", hidden: int = 128, summary: int = 64, card_hidden: int = 32,
                 relations: bool = False, knock_bound: float = 0.0, privileged: int = 0,
                 shared_trunk: bool = False, seed: int = 0) -> dict:
    """The module's ``model_config`` (``train.ppo``'s defaults for the sizes)."""
    return {"columns": columns, "format": format, "hidden": hidden, "summary": summary, "card_hidden": card_hidden,
            "relations": relations, "knock_bound": float(knock_bound), "privileged": int(privileged),
            "shared_trunk": shared_trunk, "seed": seed}


def net_state(module_state: dict) -> dict:
    """The CardNet's state dict (numpy) from the module's (``net.`` prefix removed)."""
    return {k[len(NET_PREFIX):]: _numpy(v) for k, v in module_state.items() if k.startswith(NET_PREFIX)}


def module_state(net_state_dict: dict) -> dict:
    """The module's state dict from a CardNet's (an SB3 policy's ``state_dict()`` is one)."""
    return {NET_PREFIX + k: _numpy(v) for k, v in net_state_dict.items()}


def _numpy(x: Any) -> Any:
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


def load_module(module_dir: str | Path) -> CardRLModule:
    """An RLModule checkpoint folder loaded as RLlib's ``RLModule.from_checkpoint`` does
    (the class and its constructor arguments from ``class_and_ctor_args.pkl``, then the
    state), except that the pickle is read by :class:`_Unpickler`: a checkpoint naming
    :data:`OLD_MODULE_NAMES` gets this module's class without ``train`` being imported.
    RLlib's own loader cannot be told: it calls ``pickle.load``, which imports a class's
    package (``train``) before looking up its module."""
    from ray.rllib.core.rl_module.rl_module import RLModule
    from ray.rllib.utils import force_list

    path = Path(module_dir).resolve()  # RLlib needs absolute paths
    ctor_file = path / RLModule.CLASS_AND_CTOR_ARGS_FILE_NAME
    if not ctor_file.is_file():  # not a pickle-based checkpoint: RLlib's loader says why
        return RLModule.from_checkpoint(str(path))
    with ctor_file.open("rb") as f:
        info = _Unpickler(f).load()
    ctor = info["class"]
    if not (isinstance(ctor, type) and issubclass(ctor, RLModule)):
        raise ValueError(f"{path}: the checkpoint's class {ctor!r} is not an RLModule")
    args, kwargs = info["ctor_args_and_kwargs"]
    module = ctor(*force_list(args), **kwargs)
    module.restore_from_path(str(path))
    return module


class _Unpickler(pickle.Unpickler):
    """pickle's reader with the module's old names pointing here."""

    def find_class(self, module: str, name: str) -> Any:
        if module in OLD_MODULE_NAMES:
            module = __name__
        return super().find_class(module, name)
