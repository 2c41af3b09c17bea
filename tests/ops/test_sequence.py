"""SequenceMask, SequenceLast, SequenceReverse against loop references (mxlite/ops/sequence.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mxlite as mx
from mxlite import MXNetError
from mxlite.ops.registry import get_op
from mxlite.test_utils import check_grads

SETTINGS = settings(max_examples=40, deadline=None)
DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int32", "int64", "bool"]


def time_major(x, axis):
    """View the data as (T, B, ...)."""
    return x if axis == 0 else np.swapaxes(x, 0, 1)


def ref_mask(x, lengths, value, axis):
    out = time_major(x.copy(), axis)
    for b, n in enumerate(lengths):
        out[max(int(n), 0):, b] = value
    return time_major(out, axis)


def ref_last(x, lengths, axis):
    tm = time_major(x, axis)
    return np.stack([tm[int(n) - 1, b] for b, n in enumerate(lengths)])


def ref_reverse(x, lengths, axis):
    tm = time_major(x, axis)
    out = tm.copy()
    for b, n in enumerate(lengths):
        n = int(n)
        out[:n, b] = tm[:n, b][::-1]
    return time_major(out, axis)


def data_of(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 50).astype(dtype)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 4), st.lists(st.integers(1, 3), max_size=2),
       st.sampled_from([0, 1]), st.sampled_from(DTYPES), st.integers(0, 2 ** 31), st.data())
def test_sequence_ops_match_loops(T, B, rest, axis, dtype, seed, data):
    shape = ((T, B) if axis == 0 else (B, T)) + tuple(rest)
    x = data_of(shape, dtype, seed)
    lengths = np.array(data.draw(st.lists(st.integers(1, T), min_size=B, max_size=B)),
                       dtype=data.draw(st.sampled_from(["float32", "int32", "int64"])))
    a, L = mx.nd.array(x, dtype=dtype), mx.nd.array(lengths, dtype=lengths.dtype)
    kw = dict(use_sequence_length=True, axis=axis)
    value = 0 if dtype == "bool" else 7
    np.testing.assert_array_equal(mx.nd.SequenceMask(a, L, value=value, **kw).asnumpy(),
                                  ref_mask(x, lengths, value, axis))
    np.testing.assert_array_equal(mx.nd.SequenceLast(a, L, **kw).asnumpy(),
                                  ref_last(x, lengths, axis))
    np.testing.assert_array_equal(mx.nd.SequenceReverse(a, L, **kw).asnumpy(),
                                  ref_reverse(x, lengths, axis))
    full = np.full(B, T)
    np.testing.assert_array_equal(mx.nd.SequenceMask(a, axis=axis).asnumpy(), x)
    np.testing.assert_array_equal(mx.nd.SequenceLast(a, axis=axis).asnumpy(),
                                  ref_last(x, full, axis))
    np.testing.assert_array_equal(mx.nd.SequenceReverse(a, axis=axis).asnumpy(),
                                  ref_reverse(x, full, axis))


def test_mxnet_examples():
    x = mx.nd.arange(12).reshape((4, 3, 1))
    got = mx.nd.SequenceReverse(x, mx.nd.array([2, 4, 0]), use_sequence_length=True)
    assert got[:, :, 0].asnumpy().tolist() == [[3, 10, 2], [0, 7, 5], [6, 4, 8], [9, 1, 11]]
    got = mx.nd.SequenceMask(x, mx.nd.array([2, 5, 0]), use_sequence_length=True, value=-1)
    assert got[:, :, 0].asnumpy().tolist() == [[0, 1, -1], [3, 4, -1], [-1, 7, -1],
                                               [-1, 10, -1]]
    got = mx.nd.SequenceLast(x.reshape((3, 4, 1)), mx.nd.array([2, 4, 1]),
                             use_sequence_length=True, axis=1)
    assert got[:, 0].asnumpy().tolist() == [1, 7, 8]


def test_sequence_length_is_an_input_only_when_used():
    for name in ("SequenceMask", "SequenceLast", "SequenceReverse"):
        op = get_op(name)
        assert op.list_inputs(op.parse_attrs({})) == ("data",)
        assert op.list_inputs(op.parse_attrs({"use_sequence_length": True})) == (
            "data", "sequence_length")
    with pytest.raises(MXNetError, match="SequenceMask"):
        mx.nd.SequenceMask(mx.nd.ones((2, 2)), mx.nd.ones((2,)))


def test_sequence_errors():
    x = mx.nd.ones((4, 3, 2))
    with pytest.raises(MXNetError, match=r"SequenceLast: sequence_length\[1\] = 5.0 is outside"
                                         r" \[1, 4\]"):
        mx.nd.SequenceLast(x, mx.nd.array([2, 5, 1]), use_sequence_length=True)
    with pytest.raises(MXNetError, match=r"SequenceLast.*sequence_length\[2\] = 0"):
        mx.nd.SequenceLast(x, mx.nd.array([2, 3, 0]), use_sequence_length=True)
    with pytest.raises(MXNetError, match=r"SequenceReverse.*outside \[0, 4\]"):
        mx.nd.SequenceReverse(x, mx.nd.array([2, 3, 9]), use_sequence_length=True)
    with pytest.raises(MXNetError, match=r"SequenceMask: sequence_length has shape \(2,\); "
                                         r"expected \(3,\)"):
        mx.nd.SequenceMask(x, mx.nd.array([1, 2]), use_sequence_length=True)
    with pytest.raises(MXNetError, match="SequenceMask: axis must be 0"):
        mx.nd.SequenceMask(x, axis=2)
    with pytest.raises(MXNetError, match="SequenceLast: data must have at least 2"):
        mx.nd.SequenceLast(mx.nd.ones((3,)))


def test_mask_extremes():
    x = mx.nd.ones((3, 2))
    got = mx.nd.SequenceMask(x, mx.nd.array([-1, 7]), use_sequence_length=True, value=5)
    assert got.asnumpy().tolist() == [[5, 1], [5, 1], [5, 1]]


def test_gradients():
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((3, 4, 2)), dtype="float64")     # (B, T, R), axis=1
    L = mx.nd.array([1, 4, 2])
    for op in (mx.nd.SequenceMask, mx.nd.SequenceLast, mx.nd.SequenceReverse):
        check_grads(lambda a: op(a * a, L, use_sequence_length=True, axis=1), [x], order=2)
        check_grads(lambda a: op(a * a, axis=1), [x], order=2)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.SequenceLast(x, L, use_sequence_length=True, axis=1)
    y.backward()
    ref = np.zeros((3, 4, 2))
    for b, n in enumerate([1, 4, 2]):
        ref[b, n - 1] = 1
    np.testing.assert_array_equal(x.grad.asnumpy(), ref)
