"""Shape-manipulation operators against their NumPy equivalents (mxlite/ops/shape.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mxlite as mx
from mxlite import MXNetError
from mxlite.ops.registry import NON_DIFFERENTIABLE, get_op

DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int32", "int64", "bool"]
SETTINGS = settings(max_examples=60, deadline=None)

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)
dtypes = st.sampled_from(DTYPES)
seeds = st.integers(0, 2 ** 32 - 1)


def rand(shape, dtype, seed=0):
    """Random values of ``dtype``, distinct enough that a misplaced element shows."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    if dt.kind == "u":
        return rng.integers(0, 250, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(-120, 120, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def check(result, expected):
    got = result.asnumpy()
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


# ---- reshape family --------------------------------------------------------------------------
# (input shape, shape codes, reverse, expected shape): the examples of MXNet's reshape docs.
RESHAPE_CASES = [
    ((2, 3, 4), (4, 0, 2), False, (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), False, (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), False, (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), False, (3, 1, 8)),
    ((2, 3, 4), (-1,), False, (24,)),
    ((2, 3, 4), (0, -1), False, (2, 12)),
    ((2, 3, 4), (-2,), False, (2, 3, 4)),
    ((2, 3, 4), (2, -2), False, (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), False, (2, 3, 4, 1, 1)),
    ((2, 3, 4, 5), (-3, -3), False, (6, 20)),
    ((2, 3, 4), (0, -3), False, (2, 12)),
    ((2, 3, 4), (-3, -2), False, (6, 4)),
    ((6, 4), (-3, 4), False, None),          # -3 needs two input dims after the first
    ((2, 3, 4), (-4, 1, 2, -2), False, (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), False, (2, 1, 3, 4)),
    ((10, 5, 4), (-1, 0), False, (40, 5)),
    ((10, 5, 4), (-1, 0), True, (50, 4)),
    ((1,), (), False, ()),
    ((), (1, 1), False, (1, 1)),
    ((0, 3), (-1,), False, (0,)),
    ((0, 3), (3, 0, -1), False, (3, 3, 0)),
    ((0, 3), (0, -1), False, None),          # 0 * x = 0 elements: -1 is ambiguous
]


@pytest.mark.parametrize("src,codes,reverse,expected", RESHAPE_CASES)
def test_reshape_codes(src, codes, reverse, expected):
    x = rand(src, "float32", 1)
    if expected is None:
        with pytest.raises(MXNetError, match="reshape"):
            mx.nd.reshape(nd(x), shape=codes, reverse=reverse)
        return
    y = mx.nd.reshape(nd(x), shape=codes, reverse=reverse)
    check(y, x.reshape(expected))
    check(mx.nd.Reshape(nd(x), shape=codes, reverse=reverse), x.reshape(expected))


def test_reshape_code_minus3_with_4():
    # the brief's (-3, 4) example: (2, 3, 4) -> merge (2, 3) -> (6, 4)
    x = rand((2, 3, 4), "int32")
    check(mx.nd.reshape(nd(x), shape=(-3, 4)), x.reshape(6, 4))


@SETTINGS
@given(shape=shapes, dtype=dtypes, seed=seeds, data=st.data())
def test_reshape_random(shape, dtype, seed, data):
    x = rand(shape, dtype, seed)
    check(mx.nd.reshape(nd(x), shape=shape), x)
    check(mx.nd.reshape(nd(x), shape=(-2,)), x)
    if x.size:                        # (0,) would be the copy code, not a size
        check(mx.nd.reshape(nd(x), shape=(x.size,)), x.reshape(-1))
        check(mx.nd.reshape(nd(x), shape=(-1,)), x.reshape(-1))
        first = data.draw(st.sampled_from([d for d in range(1, x.size + 1) if x.size % d == 0]))
        check(mx.nd.reshape(nd(x), shape=(first, -1)), x.reshape(first, -1))
        check(nd(x).reshape(-1, first), x.reshape(-1, first))


def test_reshape_errors():
    x = mx.nd.zeros((2, 3, 4))
    with pytest.raises(MXNetError, match="reshape"):
        mx.nd.reshape(x, shape=(5, 5))
    with pytest.raises(MXNetError, match="reshape"):
        mx.nd.reshape(x, shape=(-1, -1))
    with pytest.raises(MXNetError, match="reshape"):
        mx.nd.reshape(x, shape=(-4, 5, -1, 0, 0))
    with pytest.raises(MXNetError, match="reshape"):
        mx.nd.reshape(x, shape=(0, 0, 0, 0))
    with pytest.raises(MXNetError, match="reshape"):
        mx.nd.reshape(x, shape=(-7, 24))


@SETTINGS
@given(shape=shapes, dtype=dtypes, seed=seeds)
def test_flatten(shape, dtype, seed):
    x = rand(shape, dtype, seed)
    expected = x.reshape(1, 1) if x.ndim == 0 else x.reshape(shape[0], int(np.prod(shape[1:])))
    check(mx.nd.flatten(nd(x)), expected)
    check(mx.nd.Flatten(nd(x)), expected)


@SETTINGS
@given(shape=shapes, dtype=dtypes, seed=seeds, data=st.data())
def test_expand_dims(shape, dtype, seed, data):
    x = rand(shape, dtype, seed)
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    check(mx.nd.expand_dims(nd(x), axis=axis), np.expand_dims(x, axis))


def test_expand_dims_error():
    with pytest.raises(MXNetError, match="expand_dims"):
        mx.nd.expand_dims(mx.nd.zeros((2, 3)), axis=3)
    with pytest.raises(MXNetError, match="expand_dims"):
        mx.nd.expand_dims(mx.nd.zeros((2, 3)), axis=-4)


@SETTINGS
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=5).map(tuple), dtype=dtypes,
       seed=seeds, data=st.data())
def test_squeeze(shape, dtype, seed, data):
    x = rand(shape, dtype, seed)
    expected = np.squeeze(x)
    if expected.ndim == 0:
        expected = expected.reshape(1)           # MXNet 1.x keeps (1,)
    check(mx.nd.squeeze(nd(x)), expected)
    ones = [i for i, d in enumerate(shape) if d == 1]
    if ones:
        chosen = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
        neg = [a - len(shape) if k % 2 else a for k, a in enumerate(chosen)]
        expected = np.squeeze(x, axis=tuple(chosen))
        if expected.ndim == 0:
            expected = expected.reshape(1)
        check(mx.nd.squeeze(nd(x), axis=tuple(neg)), expected)


def test_squeeze_special():
    x = rand((), "int8")
    check(mx.nd.squeeze(nd(x)), x)            # nothing to squeeze in a 0-d array
    y = rand((1, 1), "float64")
    check(mx.nd.squeeze(nd(y)), y.reshape(1))
    z = rand((3, 1, 2), "float32")
    check(mx.nd.squeeze(nd(z), axis=1), z.reshape(3, 2))


def test_squeeze_errors():
    x = mx.nd.zeros((3, 1, 2))
    with pytest.raises(MXNetError, match="squeeze.*axis 0.*size is 3"):
        mx.nd.squeeze(x, axis=0)
    with pytest.raises(MXNetError, match="squeeze"):
        mx.nd.squeeze(x, axis=3)
    with pytest.raises(MXNetError, match="squeeze"):
        mx.nd.squeeze(x, axis=(1, -2))


# ---- axis permutations -----------------------------------------------------------------------
@SETTINGS
@given(shape=shapes, dtype=dtypes, seed=seeds, data=st.data())
def test_transpose(shape, dtype, seed, data):
    x = rand(shape, dtype, seed)
    check(mx.nd.transpose(nd(x)), x.T)
    check(nd(x).T, x.T)
    perm = data.draw(st.permutations(range(len(shape))))
    neg = tuple(a - len(shape) if data.draw(st.booleans()) else a for a in perm)
    check(mx.nd.transpose(nd(x), axes=neg), np.transpose(x, perm))


def test_transpose_errors():
    x = mx.nd.zeros((2, 3, 4))
    with pytest.raises(MXNetError, match="transpose.*repeats"):
        mx.nd.transpose(x, axes=(0, 0, 1))
    with pytest.raises(MXNetError, match="transpose"):
        mx.nd.transpose(x, axes=(0, 1, 3))
    with pytest.raises(MXNetError, match=r"transpose.*\(2, 3, 4\)"):
        mx.nd.transpose(x, axes=(1, 0))


@SETTINGS
@given(shape=shapes.filter(len), dtype=dtypes, seed=seeds, data=st.data())
def test_swapaxes(shape, dtype, seed, data):
    x = rand(shape, dtype, seed)
    d1 = data.draw(st.integers(-len(shape), len(shape) - 1))
    d2 = data.draw(st.integers(-len(shape), len(shape) - 1))
    check(mx.nd.swapaxes(nd(x), dim1=d1, dim2=d2), np.swapaxes(x, d1, d2))
    check(mx.nd.SwapAxis(nd(x), dim1=d1, dim2=d2), np.swapaxes(x, d1, d2))


def test_swapaxes_default_and_error():
    x = rand((2, 3), "int32")
    check(mx.nd.swapaxes(nd(x)), x)
    with pytest.raises(MXNetError, match="swapaxes.*dim2"):
        mx.nd.swapaxes(nd(x), dim1=0, dim2=2)


@SETTINGS
@given(shape=shapes, dtype=dtypes, seed=seeds, data=st.data())
def test_flip(shape, dtype, seed, data):
    x = rand(shape, dtype, seed)
    axes = data.draw(st.lists(st.integers(0, max(len(shape) - 1, 0)), unique=True,
                              max_size=len(shape)))
    neg = tuple(a - len(shape) if k % 2 else a for k, a in enumerate(axes))
    check(mx.nd.flip(nd(x), axis=neg), np.flip(x, tuple(axes)))
    check(mx.nd.reverse(nd(x), axis=neg), np.flip(x, tuple(axes)))


def test_flip_errors():
    with pytest.raises(MXNetError, match="flip"):
        mx.nd.flip(mx.nd.zeros((2, 3)), axis=2)
    with pytest.raises(MXNetError, match="flip"):
        mx.nd.flip(mx.nd.zeros((2, 3)))


# ---- tile / repeat ---------------------------------------------------------------------------
@SETTINGS
@given(shape=shapes, dtype=dtypes, seed=seeds,
       reps=st.lists(st.integers(0, 3), max_size=4).map(tuple))
def test_tile(shape, dtype, seed, reps):
    x = rand(shape, dtype, seed)
    check(mx.nd.tile(nd(x), reps=reps), np.tile(x, reps))


def test_tile_examples_and_error():
    x = np.array([[1, 2], [3, 4]], dtype=np.float32)
    check(mx.nd.tile(nd(x), reps=(2, 3)), np.tile(x, (2, 3)))
    check(mx.nd.tile(nd(x), reps=(2,)), np.tile(x, 2))
    check(mx.nd.tile(nd(x), reps=2), np.tile(x, 2))
    check(mx.nd.tile(nd(x), reps=(2, 1, 3)), np.tile(x, (2, 1, 3)))
    with pytest.raises(MXNetError, match="tile.*negative"):
        mx.nd.tile(nd(x), reps=(2, -1))


@SETTINGS
@given(shape=shapes, dtype=dtypes, seed=seeds, repeats=st.integers(0, 3), data=st.data())
def test_repeat(shape, dtype, seed, repeats, data):
    x = rand(shape, dtype, seed)
    check(mx.nd.repeat(nd(x), repeats=repeats), np.repeat(x, repeats))
    if shape:
        axis = data.draw(st.integers(-len(shape), len(shape) - 1))
        check(mx.nd.repeat(nd(x), repeats=repeats, axis=axis), np.repeat(x, repeats, axis))


def test_repeat_errors():
    with pytest.raises(MXNetError, match="repeat.*negative"):
        mx.nd.repeat(mx.nd.zeros((2,)), repeats=-1)
    with pytest.raises(MXNetError, match="repeat"):
        mx.nd.repeat(mx.nd.zeros((2,)), repeats=2, axis=1)


# ---- joining and splitting -------------------------------------------------------------------
@SETTINGS
@given(base=nonempty_shapes | st.lists(st.integers(0, 3), min_size=1, max_size=3).map(tuple),
       dtype=dtypes, seed=seeds, data=st.data())
def test_concat(base, dtype, seed, data):
    axis = data.draw(st.integers(-len(base), len(base) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    arrays = []
    for k, n in enumerate(sizes):
        s = list(base)
        s[axis] = n
        arrays.append(rand(tuple(s), dtype, seed + k))
    expected = np.concatenate(arrays, axis=axis)
    check(mx.nd.concat(*[nd(a) for a in arrays], dim=axis), expected)
    check(mx.nd.Concat(*[nd(a) for a in arrays], dim=axis, num_args=len(arrays)), expected)


def test_concat_default_dim_and_errors():
    a, b = rand((2, 3), "float32", 1), rand((2, 5), "float32", 2)
    check(mx.nd.concat(nd(a), nd(b)), np.concatenate([a, b], axis=1))
    with pytest.raises(MXNetError, match=r"concat.*\(3, 3\).*\(2, 3\)"):
        mx.nd.concat(nd(a), mx.nd.zeros((3, 3)), dim=1)
    with pytest.raises(MXNetError, match="concat"):
        mx.nd.concat(nd(a), mx.nd.zeros((2, 3, 1)), dim=1)
    with pytest.raises(MXNetError, match="concat.*dtype"):
        mx.nd.concat(nd(a), mx.nd.zeros((2, 3), dtype="float64"), dim=0)
    with pytest.raises(MXNetError, match="concat"):
        mx.nd.concat(nd(a), nd(b), dim=2)
    with pytest.raises(MXNetError, match="concat"):
        mx.nd.concat(mx.nd.array(1.0), mx.nd.array(2.0), dim=0)


@SETTINGS
@given(shape=shapes, dtype=dtypes, seed=seeds, n=st.integers(1, 4), data=st.data())
def test_stack(shape, dtype, seed, n, data):
    arrays = [rand(shape, dtype, seed + k) for k in range(n)]
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    check(mx.nd.stack(*[nd(a) for a in arrays], axis=axis), np.stack(arrays, axis=axis))


def test_stack_errors():
    with pytest.raises(MXNetError, match=r"stack.*\(2, 3\).*\(3, 2\)"):
        mx.nd.stack(mx.nd.zeros((2, 3)), mx.nd.zeros((3, 2)))
    with pytest.raises(MXNetError, match="stack"):
        mx.nd.stack(mx.nd.zeros((2, 3)), axis=3)


@SETTINGS
@given(base=shapes.filter(len), dtype=dtypes, seed=seeds, n=st.integers(1, 4), data=st.data())
def test_split(base, dtype, seed, n, data):
    axis = data.draw(st.integers(-len(base), len(base) - 1))
    shape = list(base)
    shape[axis] *= n
    x = rand(tuple(shape), dtype, seed)
    expected = np.split(x, n, axis=axis)
    parts = mx.nd.split(nd(x), num_outputs=n, axis=axis)
    if n == 1:                      # MXNet returns one NDArray, not a list of one
        assert isinstance(parts, mx.nd.NDArray)
        parts = [parts]
    assert isinstance(parts, list) and len(parts) == n
    for p, e in zip(parts, expected):
        check(p, e)
    if shape[axis] == n:
        squeezed = mx.nd.SliceChannel(nd(x), num_outputs=n, axis=axis, squeeze_axis=True)
        squeezed = squeezed if isinstance(squeezed, list) else [squeezed]
        for p, e in zip(squeezed, expected):
            check(p, np.squeeze(e, axis=axis))


def test_split_defaults_and_errors():
    x = rand((2, 6, 3), "float32")
    parts = mx.nd.split(nd(x), num_outputs=3)           # axis=1 by default
    assert [p.shape for p in parts] == [(2, 2, 3)] * 3
    for p, e in zip(parts, np.split(x, 3, axis=1)):
        check(p, e)
    parts = mx.nd.split(nd(x), num_outputs=2, axis=0, squeeze_axis=True)
    for p, e in zip(parts, x):
        check(p, e)
    with pytest.raises(MXNetError, match=r"split.*\(2, 6, 3\)"):
        mx.nd.split(nd(x), num_outputs=4)
    with pytest.raises(MXNetError, match="split.*squeeze_axis"):
        mx.nd.split(nd(x), num_outputs=3, squeeze_axis=True)
    with pytest.raises(MXNetError, match="split"):
        mx.nd.split(nd(x), num_outputs=0)
    with pytest.raises(MXNetError, match="split"):
        mx.nd.split(nd(x), num_outputs=1, axis=3)


def test_split_out():
    x = rand((4, 2), "int64")
    outs = [mx.nd.zeros((2, 2), dtype="int64") for _ in range(2)]
    res = mx.nd.split(nd(x), num_outputs=2, axis=0, out=outs)
    assert res is outs
    check(outs[0], x[:2])
    check(outs[1], x[2:])


# ---- slicing ---------------------------------------------------------------------------------
index = st.one_of(st.none(), st.integers(-6, 6))


@SETTINGS
@given(shape=shapes.filter(len), dtype=dtypes, seed=seeds, data=st.data())
def test_slice(shape, dtype, seed, data):
    x = rand(shape, dtype, seed)
    k = data.draw(st.integers(0, len(shape)))
    begin = tuple(data.draw(index) for _ in range(k))
    end = tuple(data.draw(index) for _ in range(k))
    step = tuple(data.draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
                 for _ in range(k))
    key = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))
    check(mx.nd.slice(nd(x), begin=begin, end=end, step=step), x[key])
    key = tuple(slice(b, e) for b, e in zip(begin, end))
    check(mx.nd.slice(nd(x), begin=begin, end=end), x[key])


def test_slice_examples():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = mx.nd.slice(nd(x), begin=(0, 1), end=(2, 4))
    check(y, np.array([[1, 2, 3], [5, 6, 7]], dtype=np.float32))
    y = mx.nd.slice(nd(x), begin=(None, None), end=(None, None), step=(-1, -2))
    check(y, x[::-1, ::-2])
    y = mx.nd.slice(nd(x), begin=(-1,), end=(None,), step=(-2,))
    check(y, x[-1::-2])
    check(mx.nd.slice(nd(x), begin=1, end=3), x[1:3])


def test_slice_errors():
    x = mx.nd.zeros((3, 4))
    with pytest.raises(MXNetError, match="slice.*same length"):
        mx.nd.slice(x, begin=(0, 1), end=(2,))
    with pytest.raises(MXNetError, match="slice.*step"):
        mx.nd.slice(x, begin=(0,), end=(2,), step=(0,))
    with pytest.raises(MXNetError, match="slice"):
        mx.nd.slice(x, begin=(0, 0, 0), end=(1, 1, 1))
    with pytest.raises(MXNetError, match="slice"):
        mx.nd.slice(x, begin=(0.5,), end=(1,))


@SETTINGS
@given(shape=shapes.filter(len), dtype=dtypes, seed=seeds, data=st.data())
def test_slice_axis(shape, dtype, seed, data):
    x = rand(shape, dtype, seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    b = data.draw(st.integers(0, n))
    e = data.draw(st.one_of(st.none(), st.integers(b, n)))
    stop = n if e is None else e
    expected = np.take(x, np.arange(b, stop), axis=axis)
    check(mx.nd.slice_axis(nd(x), axis=axis, begin=b, end=e), expected)
    # the same range with negative indices
    check(mx.nd.slice_axis(nd(x), axis=axis, begin=b - n if b < n else b,
                           end=stop - n if stop < n else None), expected)


def test_slice_axis_errors():
    x = mx.nd.zeros((3, 4))
    with pytest.raises(MXNetError, match=r"slice_axis.*\(3, 4\)"):
        mx.nd.slice_axis(x, axis=1, begin=1, end=5)
    with pytest.raises(MXNetError, match="slice_axis"):
        mx.nd.slice_axis(x, axis=0, begin=2, end=1)
    with pytest.raises(MXNetError, match="slice_axis"):
        mx.nd.slice_axis(x, axis=2, begin=0, end=1)


# ---- broadcasting ----------------------------------------------------------------------------
@SETTINGS
@given(target=shapes, dtype=dtypes, seed=seeds, data=st.data())
def test_broadcast_to(target, dtype, seed, data):
    k = data.draw(st.integers(0, len(target)))
    lead = len(target) - k
    src = tuple(d if data.draw(st.booleans()) else 1 for d in target[lead:])
    x = rand(src, dtype, seed)
    # MXNet's 0 code keeps the input's dimension (so (1,) "to" (0,) stays (1,)); NumPy-style
    # leading axes take the target's size as it is, 0 included
    effective = target[:lead] + tuple(s if t == 0 else t for s, t in zip(src, target[lead:]))
    expected = np.broadcast_to(x, effective)
    check(mx.nd.broadcast_to(nd(x), shape=target), expected)
    zeros = target[:lead] + tuple(0 if s == t else t for s, t in zip(src, target[lead:]))
    check(mx.nd.broadcast_to(nd(x), shape=zeros), expected)


def test_broadcast_to_errors():
    x = mx.nd.zeros((2, 3))
    with pytest.raises(MXNetError, match=r"broadcast_to.*\(2, 3\).*\(2, 4\)"):
        mx.nd.broadcast_to(x, shape=(2, 4))
    with pytest.raises(MXNetError, match="broadcast_to"):
        mx.nd.broadcast_to(x, shape=(3,))
    with pytest.raises(MXNetError, match="broadcast_to"):
        mx.nd.broadcast_to(mx.nd.zeros((1, 3)), shape=(-2, 3))


@SETTINGS
@given(rshape=shapes, dtype=dtypes, seed=seeds, data=st.data())
def test_broadcast_like(rshape, dtype, seed, data):
    lshape = tuple(d if data.draw(st.booleans()) else 1 for d in rshape)
    x = rand(lshape, dtype, seed)
    y = rand(rshape, "int32", seed + 1)
    check(mx.nd.broadcast_like(nd(x), nd(y)), np.broadcast_to(x, rshape))


def test_broadcast_like_axes_and_errors():
    x = rand((1, 3, 1), "float16", 3)
    y = mx.nd.zeros((5, 2, 7))
    out = mx.nd.broadcast_like(nd(x), y, lhs_axes=(0, -1), rhs_axes=(2, 0))
    check(out, np.broadcast_to(x, (7, 3, 5)))
    with pytest.raises(MXNetError, match="broadcast_like"):
        mx.nd.broadcast_like(nd(x), y)
    with pytest.raises(MXNetError, match="broadcast_like"):
        mx.nd.broadcast_like(nd(x), y, lhs_axes=(1,), rhs_axes=(0,))
    with pytest.raises(MXNetError, match="broadcast_like"):
        mx.nd.broadcast_like(nd(x), y, lhs_axes=(0,))
    with pytest.raises(MXNetError, match="broadcast_like"):
        mx.nd.broadcast_like(nd(x), y, lhs_axes=(0,), rhs_axes=(3,))


@SETTINGS
@given(shape=shapes, dtype=dtypes, seed=seeds, data=st.data())
def test_broadcast_axis(shape, dtype, seed, data):
    ones = [i for i, d in enumerate(shape) if d == 1]
    axes = data.draw(st.lists(st.sampled_from(ones), unique=True)) if ones else []
    sizes = [data.draw(st.integers(0, 3)) for _ in axes]
    x = rand(shape, dtype, seed)
    target = list(shape)
    for a, n in zip(axes, sizes):
        target[a] = n
    neg = tuple(a - len(shape) for a in axes)
    check(mx.nd.broadcast_axis(nd(x), axis=neg, size=tuple(sizes)), np.broadcast_to(x, target))
    check(mx.nd.broadcast_axes(nd(x), axis=tuple(axes), size=tuple(sizes)),
          np.broadcast_to(x, target))


def test_broadcast_axis_errors():
    x = mx.nd.zeros((2, 1))
    with pytest.raises(MXNetError, match=r"broadcast_axis.*\(2, 1\)"):
        mx.nd.broadcast_axis(x, axis=0, size=3)
    with pytest.raises(MXNetError, match="broadcast_axis.*same length"):
        mx.nd.broadcast_axis(x, axis=(1,), size=(3, 4))


# ---- diag ------------------------------------------------------------------------------------
@SETTINGS
@given(n=st.integers(0, 5), k=st.integers(-6, 6), dtype=dtypes, seed=seeds)
def test_diag_1d(n, k, dtype, seed):
    x = rand((n,), dtype, seed)
    check(mx.nd.diag(nd(x), k=k), np.diag(x, k))


@SETTINGS
@given(shape=st.lists(st.integers(0, 4), min_size=2, max_size=4).map(tuple), k=st.integers(-5, 5),
       dtype=dtypes, seed=seeds, data=st.data())
def test_diag_nd(shape, k, dtype, seed, data):
    x = rand(shape, dtype, seed)
    if len(shape) == 2 and -shape[0] <= k <= shape[1]:
        check(mx.nd.diag(nd(x), k=k), np.diag(x, k))
    a1, a2 = data.draw(st.permutations(range(len(shape))))[:2]
    a1 -= len(shape) if data.draw(st.booleans()) else 0
    if -shape[a1] <= k <= shape[a2]:
        check(mx.nd.diag(nd(x), k=k, axis1=a1, axis2=a2), np.diagonal(x, k, a1, a2))
    else:   # NumPy gives an empty diagonal; MXNet: "Diagonal does not exist"
        with pytest.raises(MXNetError, match=f"diag: k={k} names no diagonal"):
            mx.nd.diag(nd(x), k=k, axis1=a1, axis2=a2)


def test_diag_errors():
    with pytest.raises(MXNetError, match="diag.*0-d"):
        mx.nd.diag(mx.nd.array(1.0))
    with pytest.raises(MXNetError, match="diag.*same axis"):
        mx.nd.diag(mx.nd.zeros((2, 3)), axis1=1, axis2=-1)
    with pytest.raises(MXNetError, match="diag.*axis2"):
        mx.nd.diag(mx.nd.zeros((2, 3)), axis2=2)


def test_diag_k_must_name_a_diagonal():
    # MXNet 1.9.1's rule: -h <= k <= w for h x w planes (the edges give empty diagonals)
    x = mx.nd.zeros((3, 4))
    assert mx.nd.diag(x, k=4).shape == (0,) and mx.nd.diag(x, k=-3).shape == (0,)
    for k, bounds in ((5, r"\[-3, 4\]"), (-4, r"\[-3, 4\]")):
        with pytest.raises(MXNetError, match=rf"diag: k={k} .*3 x 4 .*\(3, 4\).*{bounds}"):
            mx.nd.diag(x, k=k)
    with pytest.raises(MXNetError, match=r"k=4 .*2 x 3 planes \(axis1=0, axis2=1\) of shape "
                                         r"\(2, 3, 5\)"):
        mx.nd.diag(mx.nd.zeros((2, 3, 5)), k=4)
    with pytest.raises(MXNetError, match="diag: k=9"):
        mx.sym.diag(mx.sym.var("x"), k=9).infer_shape(x=(3, 4))
    assert mx.nd.diag(mx.nd.zeros((3,)), k=-7).shape == (10, 10)    # 1-d input: any k


# ---- across the family -----------------------------------------------------------------------
def test_large_arrays_take_the_parallel_path():
    # above PARALLEL_MIN elements, with transposed, broadcast, flipped and sliced views
    x = rand((257, 513), "float64", 7)
    check(mx.nd.transpose(nd(x)), x.T)
    check(mx.nd.flip(nd(x), axis=(0, 1)), x[::-1, ::-1])
    check(mx.nd.tile(nd(x), reps=(2, 1)), np.tile(x, (2, 1)))
    check(mx.nd.repeat(nd(x), repeats=2, axis=0), np.repeat(x, 2, axis=0))
    check(mx.nd.concat(nd(x), nd(x[:, :7]), dim=1), np.concatenate([x, x[:, :7]], axis=1))
    check(mx.nd.slice(nd(x), begin=(1, None), end=(None, None), step=(2, -3)), x[1::2, ::-3])
    b = rand((1, 70000), "bool", 8)
    check(mx.nd.broadcast_to(nd(b), shape=(3, 70000)), np.broadcast_to(b, (3, 70000)))


def test_inputs_that_are_views_and_out():
    base = rand((4, 3, 5), "int32", 9)
    whole = nd(base)
    part = whole[1:3]                 # a write-through view: its buffer starts at an offset
    check(mx.nd.transpose(part, axes=(2, 0, 1)), base[1:3].transpose(2, 0, 1))
    check(mx.nd.diag(part, k=1, axis1=1, axis2=2), np.diagonal(base[1:3], 1, 1, 2))
    out = mx.nd.zeros((5, 2, 3), dtype="int32")
    res = mx.nd.transpose(part, axes=(2, 0, 1), out=out)
    assert res is out
    check(out, base[1:3].transpose(2, 0, 1))
    # writing into a first-axis view of a bigger array leaves the rest alone
    target = mx.nd.zeros((3, 2, 2), dtype="int32")
    mx.nd.reshape(mx.nd.array(np.arange(4), dtype="int32"), shape=(2, 2), out=target[1])
    expected = np.zeros((3, 2, 2), np.int32)
    expected[1] = np.arange(4).reshape(2, 2)
    check(target, expected)


def test_no_numpy_data_movement(monkeypatch):
    """The bytes move through strided_copy, not NumPy's own kernels."""
    def forbidden(*a, **k):
        raise AssertionError("a NumPy data-moving routine was called")
    x, v = nd(rand((2, 3), "float32")), mx.nd.array([1.0, 2.0])
    for name in ("concatenate", "stack", "tile", "repeat", "copyto", "diag", "diagonal"):
        monkeypatch.setattr(np, name, forbidden)
    mx.nd.concat(x, x, dim=0)
    mx.nd.stack(x, x, axis=1)
    mx.nd.tile(x, reps=(2, 2))
    mx.nd.repeat(x, repeats=2, axis=1)
    mx.nd.diag(x)
    mx.nd.diag(v)
    mx.nd.split(x, num_outputs=3)


SHAPE_OPS = {
    "reshape": ("Reshape",), "transpose": (), "expand_dims": (), "squeeze": (),
    "flatten": ("Flatten",), "swapaxes": ("SwapAxis",), "flip": ("reverse",), "tile": (),
    "repeat": (), "concat": ("Concat",), "stack": (), "split": ("SliceChannel",),
    "slice": (), "slice_axis": (), "broadcast_to": (), "broadcast_like": (),
    "broadcast_axis": ("broadcast_axes",), "diag": (),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_registered(name):
    op = get_op(name)
    assert op.differentiable and op.gradient is not NON_DIFFERENTIABLE
    assert op.gradient.__doc__.strip()               # each FGradient states its derivative
    assert op.grad_needs == frozenset()              # gradients read shapes only
    assert op.doc.strip()
    for alias in SHAPE_OPS[name]:
        assert get_op(alias) is op
        assert callable(getattr(mx.nd, alias))
    assert getattr(mx.nd, name).op is op


def test_parameter_defaults_match_mxnet():
    import inspect
    sig = lambda f: {k: v.default for k, v in inspect.signature(f).parameters.items()}  # noqa: E731
    assert sig(mx.nd.concat)["dim"] == 1
    assert sig(mx.nd.stack)["axis"] == 0
    assert sig(mx.nd.split)["axis"] == 1 and sig(mx.nd.split)["squeeze_axis"] is False
    assert sig(mx.nd.swapaxes)["dim1"] == 0 and sig(mx.nd.swapaxes)["dim2"] == 0
    assert sig(mx.nd.diag)["k"] == 0 and sig(mx.nd.diag)["axis2"] == 1
    assert sig(mx.nd.reshape)["reverse"] is False



# ---- internal adjoint operators ----------------------------------------------------------------
@SETTINGS
@given(shape=shapes.filter(len), dtype=dtypes, seed=seeds, data=st.data())
def test_slice_scatter(shape, dtype, seed, data):
    k = data.draw(st.integers(1, len(shape)))
    begin = tuple(data.draw(index) for _ in range(k))
    end = tuple(data.draw(index) for _ in range(k))
    step = tuple(data.draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
                 for _ in range(k))
    key = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))
    expected = np.zeros(shape, dtype)
    x = rand(expected[key].shape, dtype, seed)
    expected[key] = x
    check(mx.nd._internal._slice_scatter(nd(x), shape=shape, begin=begin, end=end, step=step),
          expected)


def test_slice_scatter_errors():
    with pytest.raises(MXNetError, match=r"_slice_scatter.*\(2, 2\).*\(3, 2\)"):
        mx.nd._internal._slice_scatter(mx.nd.zeros((2, 2)), shape=(5, 2), begin=(1,), end=(4,))
    with pytest.raises(MXNetError, match="_slice_scatter.*step"):
        mx.nd._internal._slice_scatter(mx.nd.zeros((2,)), shape=(4,), begin=(0,), end=(2,),
                                       step=(0,))
    with pytest.raises(MXNetError, match="_slice_scatter.*negative"):
        mx.nd._internal._slice_scatter(mx.nd.zeros((2,)), shape=(-4,), begin=(0,), end=(2,))


@SETTINGS
@given(shape=st.lists(st.integers(0, 4), min_size=2, max_size=4).map(tuple), k=st.integers(-5, 5),
       dtype=dtypes, seed=seeds, data=st.data())
def test_diag_scatter(shape, k, dtype, seed, data):
    a1, a2 = data.draw(st.permutations(range(len(shape))))[:2]
    k = min(max(k, -shape[a1]), shape[a2])      # a diagonal that exists
    expected = np.zeros(shape, dtype)
    x = rand(np.diagonal(expected, k, a1, a2).shape, dtype, seed)
    # write diagonal element j of each plane: (a1, a2) = (j + max(-k, 0), j + max(k, 0))
    planes = np.moveaxis(expected, (a1, a2), (-2, -1))      # a view: writes reach expected
    for j in range(x.shape[-1]):
        planes[..., j + max(-k, 0), j + max(k, 0)] = x[..., j]
    check(mx.nd._internal._diag_scatter(nd(x), shape=shape, k=k, axis1=a1, axis2=a2), expected)


def test_diag_scatter_errors():
    with pytest.raises(MXNetError, match=r"_diag_scatter.*\(3,\).*\(2,\)"):
        mx.nd._internal._diag_scatter(mx.nd.zeros((3,)), shape=(2, 4), k=0)
    with pytest.raises(MXNetError, match="_diag_scatter.*2 dimensions"):
        mx.nd._internal._diag_scatter(mx.nd.zeros((3,)), shape=(3,))
    with pytest.raises(MXNetError, match="_diag_scatter.*same axis"):
        mx.nd._internal._diag_scatter(mx.nd.zeros((2,)), shape=(2, 2), axis1=0, axis2=-2)


# ---- gradients -----------------------------------------------------------------------------------
def vjp(f, inputs, heads, dtype="float64"):
    """Input gradients of ``f`` at NumPy ``inputs`` for head gradients ``heads`` (NumPy)."""
    xs = [mx.nd.array(x, dtype=dtype) for x in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = f(*xs)
    outs = out if isinstance(out, list) else [out]
    grads = mx.autograd.grad(outs, xs, head_grads=[mx.nd.array(h, dtype=dtype) for h in heads])
    return [g.asnumpy() for g in grads]


def _diag_adjoint(v, shape, k, a1, a2):
    out = np.zeros(shape)
    planes = np.moveaxis(out, (a1, a2), (-2, -1))
    for j in range(v.shape[-1]):
        planes[..., j + max(-k, 0), j + max(k, 0)] = v[..., j]
    return out


def _sliced_zeros(shape, key, v):
    out = np.zeros(shape)
    out[key] = v
    return out


# (name, input shapes, output shapes, f(nd, *xs), expected input gradients(*heads)):
# the expectations are written out by hand, not derived from the operators.
GRAD_CASES = [
    ("reshape", [(2, 3, 4)], [(4, 6)], lambda x: mx.nd.reshape(x, shape=(4, -1)),
     lambda v: [v.reshape(2, 3, 4)]),
    ("transpose", [(2, 3, 4)], [(3, 4, 2)], lambda x: mx.nd.transpose(x, axes=(1, 2, 0)),
     lambda v: [v.transpose(2, 0, 1)]),
    ("transpose_default", [(2, 3, 4)], [(4, 3, 2)], lambda x: mx.nd.transpose(x),
     lambda v: [v.transpose(2, 1, 0)]),
    ("swapaxes", [(2, 3, 4)], [(4, 3, 2)], lambda x: mx.nd.swapaxes(x, dim1=0, dim2=-1),
     lambda v: [v.swapaxes(0, 2)]),
    ("flip", [(2, 3, 4)], [(2, 3, 4)], lambda x: mx.nd.flip(x, axis=(0, 2)),
     lambda v: [v[::-1, :, ::-1]]),
    ("squeeze", [(1, 3, 1)], [(3,)], lambda x: mx.nd.squeeze(x), lambda v: [v.reshape(1, 3, 1)]),
    ("tile", [(2, 3)], [(3, 4, 6)], lambda x: mx.nd.tile(x, reps=(3, 2, 2)),
     lambda v: [sum(v[a, 2 * i:2 * i + 2, 3 * j:3 * j + 3]
                    for a in range(3) for i in range(2) for j in range(2))]),
    ("repeat_axis", [(2, 3)], [(2, 9)], lambda x: mx.nd.repeat(x, repeats=3, axis=1),
     lambda v: [v[:, 0::3] + v[:, 1::3] + v[:, 2::3]]),
    ("repeat_flat", [(2, 3)], [(12,)], lambda x: mx.nd.repeat(x, repeats=2),
     lambda v: [(v[0::2] + v[1::2]).reshape(2, 3)]),
    ("concat", [(2, 3), (2, 1), (2, 2)], [(2, 6)], lambda a, b, c: mx.nd.concat(a, b, c, dim=1),
     lambda v: [v[:, :3], v[:, 3:4], v[:, 4:]]),
    ("stack", [(2, 3), (2, 3)], [(2, 2, 3)], lambda a, b: mx.nd.stack(a, b, axis=1),
     lambda v: [v[:, 0], v[:, 1]]),
    ("split", [(2, 6)], [(2, 2)] * 3, lambda x: mx.nd.split(x, num_outputs=3, axis=1),
     lambda v0, v1, v2: [np.concatenate([v0, v1, v2], axis=1)]),
    ("split_squeeze", [(3, 2)], [(2,)] * 3,
     lambda x: mx.nd.split(x, num_outputs=3, axis=0, squeeze_axis=True),
     lambda v0, v1, v2: [np.array([v0, v1, v2])]),
    ("slice", [(5, 4, 2)], [(2, 4, 2)],
     lambda x: mx.nd.slice(x, begin=(1, None), end=(None, None), step=(2, -1)),
     lambda v: [_sliced_zeros((5, 4, 2), (slice(1, None, 2), slice(None, None, -1)), v)]),
    ("slice_axis", [(4, 5)], [(4, 3)], lambda x: mx.nd.slice_axis(x, axis=1, begin=1, end=-1),
     lambda v: [np.pad(v, ((0, 0), (1, 1)))]),
    ("broadcast_to", [(3, 1)], [(2, 3, 4)], lambda x: mx.nd.broadcast_to(x, shape=(2, 3, 4)),
     lambda v: [v.sum(axis=(0, 2)).reshape(3, 1)]),
    ("broadcast_axis", [(1, 3, 1)], [(2, 3, 4)],
     lambda x: mx.nd.broadcast_axis(x, axis=(0, 2), size=(2, 4)),
     lambda v: [v.sum(axis=(0, 2)).reshape(1, 3, 1)]),
    ("broadcast_like", [(1, 4), (3, 4)], [(3, 4)], lambda a, b: mx.nd.broadcast_like(a, b),
     lambda v: [v.sum(axis=0, keepdims=True), np.zeros((3, 4))]),
    ("diag_1d", [(3,)], [(5, 5)], lambda x: mx.nd.diag(x, k=-2),
     lambda v: [np.array([v[2, 0], v[3, 1], v[4, 2]])]),
    ("diag_3d", [(4, 3, 5)], [(3, 3)], lambda x: mx.nd.diag(x, k=1, axis1=2, axis2=0),
     lambda v: [_diag_adjoint(v, (4, 3, 5), 1, 2, 0)]),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradient_values(case, rng):
    _, in_shapes, out_shapes, f, expected = case
    inputs = [rng.standard_normal(s) for s in in_shapes]
    heads = [rng.standard_normal(s) for s in out_shapes]
    got = vjp(f, inputs, heads)
    for g, e, s in zip(got, expected(*heads), in_shapes):
        assert g.shape == s
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_gradient_keeps_float32_and_only_shapes_on_the_tape():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.tile(mx.nd.transpose(x), reps=(2, 1))
    assert y._node[0].inputs is None and y._node[0].outputs is None   # grad_needs=()
    y.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 3), 2, np.float32))


def test_gradient_of_unused_split_outputs_is_zero():
    x = mx.nd.array(np.arange(6.0).reshape(2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.split(x, num_outputs=3, axis=1)[1] * 2
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0, 2, 0], [0, 2, 0]])


def test_gradient_for_one_input_of_concat():
    a, b = mx.nd.ones((2, 2)), mx.nd.ones((2, 3))
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.concat(a, b * 3, dim=1)
    (gb,) = mx.autograd.grad([y], [b], head_grads=[mx.nd.array(np.arange(10.0).reshape(2, 5))])
    np.testing.assert_array_equal(gb.asnumpy(), 3 * np.arange(10.0).reshape(2, 5)[:, 2:])


def test_gradients_of_0d_and_empty_inputs():
    x = mx.nd.array(np.array(2.0), dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        outs = [mx.nd.tile(x, reps=(2, 2)), mx.nd.expand_dims(x, axis=0),
                mx.nd.broadcast_to(x, shape=(2, 3)), mx.nd.transpose(x), mx.nd.flatten(x),
                mx.nd.repeat(x, repeats=3)]
    (g,) = mx.autograd.grad(outs, [x])
    assert g.shape == () and float(g.asnumpy()) == 4 + 1 + 6 + 1 + 1 + 3
    for f, shape in [(lambda e: mx.nd.tile(e, reps=(2, 1)), (0, 3)),
                     (lambda e: mx.nd.tile(e, reps=(0, 2)), (2, 3)),
                     (lambda e: mx.nd.repeat(e, repeats=0, axis=1), (2, 3)),
                     (lambda e: mx.nd.reshape(e, shape=(-1,)), (0, 3)),
                     (lambda e: mx.nd.slice_axis(e, axis=1, begin=1, end=1), (2, 3)),
                     (lambda e: mx.nd.broadcast_to(e, shape=(0, 1, 3)), (1, 3)),
                     (lambda e: mx.nd.diag(e, k=3), (2, 3))]:
        e = mx.nd.ones(shape, dtype="float64")
        e.attach_grad()
        with mx.autograd.record():
            y = f(e)
        (g,) = mx.autograd.grad([y], [e])
        assert g.shape == shape
        np.testing.assert_array_equal(g.asnumpy(), np.zeros(shape))


@settings(max_examples=25, deadline=None)
@given(shape=nonempty_shapes, seed=seeds, data=st.data())
def test_tile_and_repeat_gradients_are_adjoints(shape, seed, data):
    """<op(u), v> == <u, VJP(v)> with NumPy's tile/repeat as the forward oracle."""
    rng = np.random.default_rng(seed)
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=len(shape) + 1)))
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    r = data.draw(st.integers(0, 3))
    for f, oracle in [(lambda x: mx.nd.tile(x, reps=reps), lambda u: np.tile(u, reps)),
                      (lambda x: mx.nd.repeat(x, repeats=r, axis=axis),
                       lambda u: np.repeat(u, r, axis=axis))]:
        u = rng.standard_normal(shape)
        forward = oracle(u)
        v = rng.standard_normal(forward.shape)
        (g,) = vjp(f, [rng.standard_normal(shape)], [v])
        assert g.shape == shape
        np.testing.assert_allclose(np.vdot(u, g), np.vdot(forward, v), rtol=1e-10, atol=1e-10)


# Variants beyond the spec table's rows, to order 3 (none of these goes through sum_to).
HIGHER_ORDER_CASES = [
    ("squeeze_all", [(1, 3, 1)], lambda x: mx.nd.squeeze(x)),
    ("expand_dims_neg", [(2, 3)], lambda x: mx.nd.expand_dims(x, axis=-1)),
    ("transpose_4d", [(2, 1, 3, 2)], lambda x: mx.nd.transpose(x, axes=(3, 0, 2, 1))),
    ("slice_neg", [(5, 3)], lambda x: mx.nd.slice(x, begin=(-1, 2), end=(0, None),
                                                  step=(-2, None))),
    ("slice_axis_0", [(5, 3)], lambda x: mx.nd.slice_axis(x, axis=0, begin=-4, end=None)),
    ("concat_neg", [(2, 2), (2, 3)], lambda a, b: mx.nd.concat(a, b, dim=-1)),
    ("stack_neg", [(2, 3), (2, 3)], lambda a, b: mx.nd.stack(a, b, axis=-1)),
    ("split_one", [(2, 3)], lambda x: mx.nd.split(x, num_outputs=1, axis=0)),
    ("diag_2d_rect", [(3, 5)], lambda x: mx.nd.diag(x, k=-1)),
    ("diag_1d_pos", [(3,)], lambda x: mx.nd.diag(x, k=2)),
]


@pytest.mark.parametrize("case", HIGHER_ORDER_CASES, ids=[c[0] for c in HIGHER_ORDER_CASES])
def test_higher_order_gradients(case, rng):
    from mxlite.test_utils import check_grads
    name, in_shapes, f = case

    def squared(*xs):
        out = f(*xs)
        return [o * o for o in out] if isinstance(out, list) else out * out
    inputs = [mx.nd.array(rng.standard_normal(s), dtype="float64") for s in in_shapes]
    check_grads(squared, inputs, order=3, name=name)


def test_reshape_target_shape_and_keep_highest_as_mxnet():
    """The deprecated parameters, by MXNet 1.9.1's rule: one 0 of target_shape is inferred;
    keep_highest keeps the input's first dimension; a non-empty shape wins over both."""
    x = mx.nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    want = np.arange(24, dtype=np.float32)
    for f in (mx.nd.reshape, mx.nd.Reshape):
        np.testing.assert_array_equal(f(x, target_shape=(0, 8)).asnumpy(), want.reshape(3, 8))
        np.testing.assert_array_equal(f(x, target_shape=(7, 3, 0), keep_highest=True).asnumpy(),
                                      want.reshape(2, 3, 4))
        assert f(x, target_shape=(2, 12)).shape == (2, 12)
        assert f(x, shape=(0, -1), target_shape=(4, 6)).shape == (2, 12)
    assert mx.nd.reshape(mx.nd.zeros((0, 3)), target_shape=(0, 0)).shape == (0, 0)
    s = mx.sym.Reshape(mx.sym.var("d"), target_shape=(0, 0), keep_highest=True)
    assert s.infer_shape(d=(5, 4, 3))[1] == [(5, 12)]
    with pytest.raises(MXNetError, match="needs shape"):
        mx.nd.reshape(x)
    with pytest.raises(MXNetError, match=r"target_shape=\(-1, 4\)"):
        mx.nd.reshape(x, target_shape=(-1, 4))
