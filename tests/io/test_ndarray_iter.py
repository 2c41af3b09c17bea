"""mx.io.NDArrayIter: MXNet 1.9.1's batching, with the expected batches written out from
the definition of each last_batch_handle (examples numbered 0..N-1)."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _epoch(it):
    """[(example ids of the batch, pad)] for one epoch (the data's first column is the id)."""
    return [(b.data[0].asnumpy()[:, 0].astype(int).tolist(), b.pad) for b in it]


def _data(n=10):
    return np.repeat(np.arange(n, dtype=np.float32)[:, None], 2, axis=1)


def test_pad_fills_from_the_start():
    it = mx.io.NDArrayIter(_data(), batch_size=4, last_batch_handle="pad")
    assert _epoch(it) == [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0), ([8, 9, 0, 1], 2)]
    it.reset()
    assert _epoch(it) == [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0), ([8, 9, 0, 1], 2)]


def test_pad_repeats_small_data():
    it = mx.io.NDArrayIter(np.arange(3), batch_size=8, last_batch_handle="pad")
    batch = it.next()
    np.testing.assert_array_equal(batch.data[0].asnumpy(), [0, 1, 2, 0, 1, 2, 0, 1])
    assert batch.pad == 5


def test_discard_drops_the_short_batch():
    it = mx.io.NDArrayIter(_data(), batch_size=4, last_batch_handle="discard")
    for _ in range(2):
        assert _epoch(it) == [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)]
        it.reset()


def test_roll_over_carries_the_rest_into_the_next_epoch():
    it = mx.io.NDArrayIter(_data(), batch_size=3, last_batch_handle="roll_over")
    assert _epoch(it) == [([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 7, 8], 0)]
    it.reset()
    # example 9 was kept; MXNet reports the number of kept examples as the batch's pad
    assert _epoch(it) == [([9, 0, 1], 1), ([2, 3, 4], 0), ([5, 6, 7], 0)]
    it.reset()
    assert _epoch(it) == [([8, 9, 0], 2), ([1, 2, 3], 0), ([4, 5, 6], 0), ([7, 8, 9], 0)]
    it.reset()
    assert _epoch(it)[0] == ([0, 1, 2], 0)     # nothing was left over
    it.reset()
    it.next()
    it.hard_reset()
    assert _epoch(it)[0] == ([0, 1, 2], 0)


def test_labels_follow_the_data_and_names():
    data = {"b": _data(), "a": _data() * 10}
    label = np.arange(10, dtype=np.float32) + 100
    it = mx.io.NDArrayIter(data, label, batch_size=4, shuffle=True, last_batch_handle="discard",
                           label_name="lab")
    assert [d.name for d in it.provide_data] == ["a", "b"]       # sorted, as MXNet
    assert it.provide_data[0].shape == (4, 2) and it.provide_label[0].name == "lab"
    for batch in it:
        a, b = (x.asnumpy()[:, 0] for x in batch.data)
        np.testing.assert_array_equal(a, b * 10)
        np.testing.assert_array_equal(batch.label[0].asnumpy(), b + 100)
    names = mx.io.NDArrayIter([_data(), _data()], batch_size=2).provide_data
    assert [d.name for d in names] == ["_0_data", "_1_data"]
    assert mx.io.NDArrayIter(_data(), batch_size=2).next().label == []


def test_shuffle_uses_idx_every_epoch():
    np.random.seed(3)
    it = mx.io.NDArrayIter(_data(7), batch_size=1, shuffle=True)
    for _ in range(3):
        order = [ids[0] for ids, _ in _epoch(it)]
        assert order == it.idx.tolist() and sorted(order) == list(range(7))
        it.reset()


def test_layout_batch_axis():
    data = np.arange(2 * 6, dtype=np.float32).reshape(2, 6)
    it = mx.io.NDArrayIter(data, batch_size=4, layout="TN", last_batch_handle="pad")
    assert it.provide_data[0].shape == (2, 4) and it.provide_data[0].layout == "TN"
    batches = [b.data[0].asnumpy() for b in it]
    np.testing.assert_array_equal(batches[1], data[:, [4, 5, 0, 1]])


def test_keeps_ndarray_dtype_and_numpy_becomes_float32():
    it = mx.io.NDArrayIter(mx.nd.array(np.arange(4), dtype="int32"), np.arange(4), batch_size=2)
    batch = it.next()
    assert batch.data[0].dtype == np.int32 and batch.label[0].dtype == np.float32


@pytest.mark.parametrize("kwargs, message", [
    (dict(data=np.zeros((4, 2)), batch_size=0), "batch_size"),
    (dict(data=np.zeros((4, 2)), batch_size=2.5), "batch_size"),
    (dict(data=np.zeros((4, 2)), last_batch_handle="wrap"), "last_batch_handle"),
    (dict(data=np.zeros((4, 2)), label=np.zeros(3)), "same number of examples"),
    (dict(data=[]), "empty"),
    (dict(data=np.zeros((0, 2))), "no example"),
    (dict(data=np.zeros((4, 2)), layout="TC"), "layout"),
    (dict(data="not an array"), "data"),
    (dict(data=5), "data"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(MXNetError, match=message):
        mx.io.NDArrayIter(**kwargs)


def test_past_the_end():
    it = mx.io.NDArrayIter(np.zeros((2, 1)), batch_size=2)
    it.next()
    with pytest.raises(StopIteration):
        it.next()
    with pytest.raises(MXNetError, match="reset"):
        it.getdata()
