"""A duel network started in a three-hand or partnership layout (``train.ppo --init-from``
with a duel checkpoint and a format's ``--rules``): it plays a format seat exactly as the duel
network plays that seat's own table, whatever the format's context columns hold."""

from __future__ import annotations

import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO

from agents.nets.policy import CardAwarePolicy, format_input_columns, load_start_weights
from agents.ppo import read_meta
from hgin_env.batch import privileged_size
from hgin_env.observation import ObservationLayout
from hgin_env.rules import get_rules
from train.envs import BatchedVecEnv
from train.ppo import Args, train

SMALL = {"columns": 3, "hidden": 32, "summary": 16, "card_hidden": 8, "relations": True, "knock_bound": 2.2}


def _model(profile: str, shared_trunk: bool, privileged: bool) -> MaskablePPO:
    rules = get_rules(profile)
    env = BatchedVecEnv(2, ["simple"], [1.0], rules=rules, seed=0, privileged=privileged)
    kwargs = {**SMALL, "format": rules.format, "shared_trunk": shared_trunk,
              "privileged": privileged_size(rules.format) if privileged else 0}
    return MaskablePPO(CardAwarePolicy, env, policy_kwargs=kwargs, n_steps=8, batch_size=16, seed=1,
                       device="cpu")


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership"])
@pytest.mark.parametrize("shared_trunk", [True, False])
def test_widened_duel_network_reads_the_duel_columns_alone(profile, shared_trunk):
    duel, fmt = _model("hollywood", shared_trunk, True), _model(profile, shared_trunk, True)
    for p in duel.policy.parameters():  # away from the initial weights, so that a copy shows
        p.data.add_(th.randn_like(p) * 0.1)
    load_start_weights(fmt.policy, duel.policy)
    layout = ObservationLayout.for_rules(get_rules(profile))
    duel_size, priv = ObservationLayout(3).size, privileged_size("duel")
    rng = np.random.default_rng(3)
    wide = th.as_tensor(rng.random((16, layout.size + privileged_size(layout.format))), dtype=th.float32)
    narrow = th.cat([wide[:, :duel_size], wide[:, layout.size:layout.size + priv]], dim=1)
    with th.no_grad():
        a_fmt, v_fmt = fmt.policy.mlp_extractor(wide)
        a_duel, v_duel = duel.policy.mlp_extractor(narrow)
        # The format network's output whatever its format columns and extra privileged hold.
        noisy = wide.clone()
        noisy[:, duel_size:layout.size] = th.rand_like(noisy[:, duel_size:layout.size])
        noisy[:, layout.size + priv:] = th.rand_like(noisy[:, layout.size + priv:])
        a_noisy, v_noisy = fmt.policy.mlp_extractor(noisy)
    # The per-card columns hold the format's own slices at the duel's offsets: equal.
    th.testing.assert_close(a_fmt, a_duel)
    th.testing.assert_close(v_fmt, v_duel)
    th.testing.assert_close(a_noisy, a_duel)
    th.testing.assert_close(v_noisy, v_duel)
    assert set(format_input_columns(fmt.policy, duel.policy)) == {
        "mlp_extractor.actor_trunk.0.weight", "mlp_extractor.critic_trunk.0.weight"}


def test_same_layout_and_other_networks_are_not_widened():
    duel = _model("hollywood", True, True)
    assert format_input_columns(duel.policy, duel.policy) == {}
    three = _model("hollywood_three_hand", True, True)
    with pytest.raises(ValueError, match="shape"):  # a format network does not narrow into the duel
        load_start_weights(duel.policy, three.policy)
    unshared = _model("hollywood_three_hand", False, True)
    with pytest.raises(ValueError, match="networks differ"):
        load_start_weights(unshared.policy, duel.policy)  # another critic: refused by name


def test_train_format_from_a_duel_checkpoint(tmp_path):
    small = {"hidden": 32, "summary": 16, "card_hidden": 8, "relations": True, "knock_bound": 2.2,
             "privileged_critic": True, "shared_trunk": True}
    common = {"out_dir": str(tmp_path), "eval_every": 0, "checkpoint_every": 0, "progress_bar": False,
              "n_envs": 4, "n_steps": 8, "batch_size": 32, **small}
    train(Args(run_name="duel", total_timesteps=32, **common))
    duel = tmp_path / "duel" / "model.zip"
    train(Args(run_name="three", rules="hollywood_three_hand", total_timesteps=64, init_from=str(duel), **common))
    meta = read_meta(tmp_path / "three" / "model.zip")
    assert meta["observation_format"] == "three_hand" and meta["args"]["init_from"] == str(duel)
    assert meta["started_from"]["observation_format"] == "duel"
    # A format checkpoint stays refused as the start of a duel run, in one line.
    with pytest.raises(ValueError, match="three_hand layout") as err:
        train(Args(run_name="back", total_timesteps=32, init_from=str(tmp_path / "three" / "model.zip"), **common))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("pipeline", ["off", "on"])
def test_frozen_policy_trains_the_critic_alone(tmp_path, pipeline):
    """``--frozen-policy``: a duel network widened into three-hand keeps its moves bit for bit
    (every actor weight as widened) while its critic learns, on the synchronous and the
    pipelined learner; the split update (whose helper's copy would learn) is refused."""
    from agents.nets.policy import CRITIC_PARAMETERS, load_model

    small = {"hidden": 32, "summary": 16, "card_hidden": 8, "relations": True, "knock_bound": 2.2,
             "privileged_critic": True, "shared_trunk": True}
    common = {"out_dir": str(tmp_path), "eval_every": 0, "checkpoint_every": 0, "progress_bar": False,
              "n_envs": 4, "n_steps": 8, "batch_size": 32, "rules": "hollywood_three_hand", **small}
    train(Args(run_name="duel", total_timesteps=32, **{**common, "rules": "hollywood"}))
    duel = str(tmp_path / "duel" / "model.zip")
    train(Args(run_name="widened", total_timesteps=0, init_from=duel, **common))
    train(Args(run_name="fit", total_timesteps=96, init_from=duel, frozen_policy=True, pipeline=pipeline, **common))
    widened = load_model(tmp_path / "widened" / "model.zip", device="cpu").policy.state_dict()
    fit = load_model(tmp_path / "fit" / "model.zip", device="cpu").policy.state_dict()
    critic = [k for k in fit if k.startswith(CRITIC_PARAMETERS)]
    assert critic and len(critic) < len(fit)
    for key, value in fit.items():
        if key in critic:
            continue
        assert th.equal(value, widened[key]), key
    assert any(not th.equal(fit[k], widened[k]) for k in critic)
    assert read_meta(tmp_path / "fit" / "model.zip")["args"]["frozen_policy"] is True
    # Without the start's --shared-trunk the critic is a fresh trunk of its own; the actor is still the start's.
    train(Args(run_name="own", total_timesteps=64, init_from=duel, frozen_policy=True, pipeline=pipeline,
               **{**common, "shared_trunk": False}))
    own = load_model(tmp_path / "own" / "model.zip", device="cpu").policy.state_dict()
    assert own["mlp_extractor.critic_trunk.0.weight"].shape[1] > widened["mlp_extractor.critic_trunk.0.weight"].shape[1]
    for key, value in widened.items():
        if not key.startswith(CRITIC_PARAMETERS):
            assert th.equal(own[key], value), key
    with pytest.raises(ValueError, match="networks differ"):  # without --frozen-policy it stays refused
        train(Args(run_name="mixed", total_timesteps=64, init_from=duel, **{**common, "shared_trunk": False}))
    with pytest.raises(ValueError, match="--update-processes 1"):
        train(Args(run_name="split", total_timesteps=96, init_from=duel, frozen_policy=True, update_processes=2,
                   **common))
    with pytest.raises(ValueError, match="--init-from"):
        train(Args(run_name="bare", total_timesteps=96, frozen_policy=True, **common))
    with pytest.raises(ValueError, match="--distill and --imitation-matches"):
        Args(init_from=duel, frozen_policy=True, imitation_matches=4).validate()
