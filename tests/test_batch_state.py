"""The table state record (hgin_env/batch/state.py): one definition of the batched tables'
arrays, shared by the numpy methods, the kernels and the loader."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from hgin_env.batch import BatchGame
from hgin_env.batch import state as S
from hgin_env.batch.state import TableState
from hgin_env.codes import NO_DW


def test_the_index_constants_follow_the_fields_and_the_stored_fields_exclude_the_derived():
    assert [getattr(S, name.upper()) for name in TableState._fields] == list(range(len(TableState._fields)))
    assert set(S.STORED) == set(TableState._fields) - {"after", "dw_now", "take_dw", "can_take"}
    assert S.MASKS <= set(TableState._fields)


@pytest.mark.parametrize("engine", ["numba", "numpy"])
@pytest.mark.parametrize("copy_of", [copy.deepcopy, lambda b: pickle.loads(pickle.dumps(b))])
def test_the_batch_arrays_are_the_record_s_also_in_a_copy(engine, copy_of):
    """``batch.hands is batch.state.hands`` (one array, two names), also after a copy; the
    kernels' tuple views the same memory."""
    batch = copy_of(BatchGame(4, seed=0, engine=engine))
    for name in TableState._fields:
        assert getattr(batch, name) is getattr(batch.state, name), name
    view = batch.state.for_kernels()
    assert view[S.HANDS].dtype == np.int64 and np.shares_memory(view[S.HANDS], batch.hands)
    assert view[S.PHASE] is batch.phase
    masks = batch.legal_action_masks()
    batch.step(masks.argmax(axis=1))  # steps its own arrays (the record's)
    assert batch.turns.sum() > 0 or batch.passed.any()


def test_put_copies_the_stored_fields_of_the_given_rows():
    src, dst = TableState.zeros(3), TableState.zeros(4)
    for name in S.STORED:
        a = getattr(src, name)
        a[...] = (np.arange(a.size).reshape(a.shape) % 7).astype(a.dtype)
    dst.put(np.array([3, 0]), src, np.array([1, 2]))
    for name in S.STORED:
        np.testing.assert_array_equal(getattr(dst, name)[[3, 0]], getattr(src, name)[[1, 2]], err_msg=name)
    assert (dst.after[3] == NO_DW).all()  # derived: the caller refreshes it


def test_the_batch_fields_are_read_only_views_of_the_record():
    """``batch.hands`` and the other field names read the record (one way to reach an array);
    none can be rebound behind the record's back."""
    batch = BatchGame(3, seed=0, engine="numpy")
    for name in TableState._fields:
        assert getattr(batch, name) is getattr(batch.state, name)
    with pytest.raises(AttributeError):
        batch.phase = np.zeros(3, dtype=np.int64)


@pytest.mark.parametrize("rules", ["hollywood", "hollywood_three_hand", "hollywood_partnership"])
def test_a_seating_holds_nothing_of_the_batch(rules):
    """A batched step reads one way (engine -> formats -> sheets): the seating keeps its own
    arrays and the rules, never the batch, its sheets or its generators."""
    batch = BatchGame(2, rules=rules, seed=0)
    for value in vars(batch.seating).values():
        assert not isinstance(value, BatchGame | list | np.random.Generator)
