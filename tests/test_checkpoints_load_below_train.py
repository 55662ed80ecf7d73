"""Loading a policy imports nothing from ``train``: the networks live in ``agents.nets``, and
every committed SB3 checkpoint (the shipped policies and the run folders', saved when the
policy class was ``train.policy.CardAwarePolicy``) and every committed RLlib checkpoint
(saved when the module class was ``train.rllib_module.CardRLModule``) loads and plays with
``train`` made unimportable; new checkpoints name the new modules."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Run in a fresh interpreter: any import of ``train`` raises, then every checkpoint loads
#: and a duel policy plays a legal move on an observation dict.
LOADER = '''
import importlib.abc
import json
import sys


class NoTrain(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "train" or name.startswith("train."):
            raise ImportError(f"loading a policy imported {name}")


sys.meta_path.insert(0, NoTrain())
from agents.ppo import PPOAgent, read_meta
from hgin_env import hollywood_gin_v0

env = hollywood_gin_v0.env()
env.reset(seed=5)
observation, *_ = env.last()
loaded = []
for path in json.loads(sys.argv[1]):
    agent = PPOAgent.load(path)
    if read_meta(path).get("observation_format", "duel") == "duel":
        assert observation["action_mask"][agent(observation)]
    loaded.append(path)
assert not [m for m in sys.modules if m == "train" or m.startswith("train.")]
print(json.dumps(loaded))
'''


#: The same for RLlib checkpoint folders: each loads as ``rllib:PATH`` and plays a few moves
#: of a duel (Ray is imported, ``train`` never).
RLLIB_LOADER = LOADER.split("from agents.ppo")[0] + '''
from agents.spec import make_agent
from hgin_env import hollywood_gin_v0

loaded = []
for path in json.loads(sys.argv[1]):
    agent = make_agent("rllib:" + path)
    assert type(agent.model).__module__ == "agents.nets.rllib_module"
    env = hollywood_gin_v0.env()
    env.reset(seed=5)
    for _ in range(6):
        observation, *_ = env.last()
        action = agent(observation)
        assert observation["action_mask"][action]
        env.step(action)
    loaded.append(path)
assert not [m for m in sys.modules if m == "train" or m.startswith("train.")]
print(json.dumps(loaded))
'''


def _committed_checkpoints() -> list[str]:
    files = subprocess.run(["git", "ls-files", "*.zip"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    return [f for f in files if "data" in zipfile.ZipFile(ROOT / f).namelist()]


def test_every_committed_checkpoint_loads_and_plays_without_train() -> None:
    paths = _committed_checkpoints()
    old = [p for p in paths if json.loads(zipfile.ZipFile(ROOT / p).read("data"))["policy_class"].get("__module__")
           == "train.policy"]
    assert len(paths) >= 10 and "agents/policies/hgin_ppo_scratch.zip" in paths and old  # the old name is covered
    run = subprocess.run([sys.executable, "-c", LOADER, json.dumps(paths)], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == paths


def _committed_rllib_checkpoints() -> list[str]:
    """The checkpoint folders committed with an RLModule's pickled class (RLlib's files)."""
    files = subprocess.run(["git", "ls-files", "*/rl_module/*/class_and_ctor_args.pkl"], cwd=ROOT,
                           capture_output=True, text=True).stdout.split()
    return sorted({str(Path(f).parents[4]) for f in files})  # <ckpt>/learner_group/learner/rl_module/<id>/


def test_every_committed_rllib_checkpoint_loads_and_plays_without_train() -> None:
    pytest.importorskip("ray.rllib")
    paths = _committed_rllib_checkpoints()
    old = [p for p in paths if b"train.rllib_module" in next((ROOT / p).rglob("rl_module/*/class_and_ctor_args.pkl"))
           .read_bytes()]
    assert paths and old  # the old name is covered
    run = subprocess.run([sys.executable, "-c", RLLIB_LOADER, json.dumps(paths)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == paths


def test_the_loader_refuses_when_train_is_needed(tmp_path: Path) -> None:
    """The blocker works: importing the trainer under it fails (so the test above can fail)."""
    run = subprocess.run([sys.executable, "-c", LOADER.split("from agents.ppo")[0] + "import train.ppo\n", "[]"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "loading a policy imported train" in run.stderr


def test_new_checkpoints_name_the_policy_where_it_lives(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from agents.nets.policy import CardAwarePolicy
    from train.envs import BatchedVecEnv

    env = BatchedVecEnv(2, ["random"], seed=0)
    model = MaskablePPO(CardAwarePolicy, env, n_steps=8, batch_size=8, seed=0, device="cpu")
    model.save(tmp_path / "new.zip")
    env.close()
    entry = json.loads(zipfile.ZipFile(tmp_path / "new.zip").read("data"))["policy_class"]
    assert entry["__module__"] == "agents.nets.policy"


def test_new_rllib_checkpoints_name_the_module_where_it_lives(tmp_path: Path) -> None:
    """A module saved now pickles its class as ``agents.nets.rllib_module.CardRLModule``."""
    pytest.importorskip("ray.rllib")
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.nets.rllib_module import CardRLModule, load_module, model_config
    from train.rllib.env import RLlibBatchedEnv

    env = RLlibBatchedEnv({"num_envs": 2, "rules": "hollywood", "opponents": ["random"], "seed": 0})
    module = RLModuleSpec(module_class=CardRLModule, observation_space=env.single_observation_space,
                          action_space=env.single_action_space, model_config=model_config(3)).build()
    module.save_to_path(str(tmp_path / "module"))
    pickled = (tmp_path / "module" / "class_and_ctor_args.pkl").read_bytes()
    assert b"agents.nets.rllib_module" in pickled and b"train.rllib_module" not in pickled
    assert type(load_module(tmp_path / "module")) is CardRLModule
