"""mx.np's shape and joining functions against NumPy (0-d and zero-size included),
reshape views writing through, bad arguments, and gradients."""
import numpy as onp
import pytest
from np_checks import finite_difference, same
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import autograd
from mxlite import np

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3)


def arr(shape, dtype="float32"):
    return onp.arange(int(onp.prod(shape)), dtype=dtype).reshape(shape)




@settings(max_examples=50)
@given(shapes, st.data())
def test_reshape(shape, data):
    a = arr(shape)
    size = a.size
    divisors = [d for d in range(1, size + 1) if size % d == 0] or [1]
    d = data.draw(st.sampled_from(divisors))
    targets = [(-1,), (d, -1), (-1, d, 1)] if size else [(0, 5), (2, 0, 3), (0,), (-1,)]
    for t in targets:
        same(np.reshape(np.array(a), t), onp.reshape(a, t))
    same(np.array(a).reshape(*((size,) if size else (0,))), a.reshape(-1))
    with pytest.raises(mx.base.MXNetError):
        np.reshape(np.array(a), (size + 1,))
    with pytest.raises(mx.base.MXNetError):
        np.reshape(np.array(a), (-1, -1))


@settings(max_examples=50)
@given(shapes, st.data())
def test_transpose_moveaxis_swapaxes(shape, data):
    a = arr(shape)
    x = np.array(a)
    nd = a.ndim
    perm = data.draw(st.permutations(range(nd)))
    same(np.transpose(x, perm), onp.transpose(a, perm))
    same(np.transpose(x), onp.transpose(a))
    same(x.T, a.T)
    if nd:
        i, j = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
        same(np.swapaxes(x, i, j), onp.swapaxes(a, i, j))
        same(np.moveaxis(x, i, j), onp.moveaxis(a, i, j))
        same(np.rollaxis(x, i), onp.rollaxis(a, i))
        same(np.flip(x, i), onp.flip(a, i))
    same(np.flip(x), onp.flip(a))


@settings(max_examples=40)
@given(shapes, st.data())
def test_squeeze_expand_dims(shape, data):
    a = arr(shape)
    x = np.array(a)
    same(np.squeeze(x), onp.squeeze(a))
    ones = [i for i, d in enumerate(shape) if d == 1]
    if ones:
        ax = data.draw(st.sampled_from(ones))
        same(np.squeeze(x, ax), onp.squeeze(a, ax))
    not_ones = [i for i, d in enumerate(shape) if d != 1]
    if not_ones:
        with pytest.raises(mx.base.MXNetError):
            np.squeeze(x, not_ones[0])
    ax = data.draw(st.integers(-a.ndim - 1, a.ndim))
    same(np.expand_dims(x, ax), onp.expand_dims(a, ax))
    same(np.expand_dims(x, (0, -1)), onp.expand_dims(a, (0, -1)))


@settings(max_examples=40)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, min_side=0, max_side=3))
def test_broadcast(bs):
    s1, s2 = bs.input_shapes
    a, b = arr(s1), arr(s2, "int32")
    same(np.broadcast_to(np.array(a), bs.result_shape), onp.broadcast_to(a, bs.result_shape))
    for g, w in zip(np.broadcast_arrays(np.array(a), np.array(b, dtype="int32")),
                    onp.broadcast_arrays(a, b)):
        same(g, w)


def test_broadcast_to_errors():
    with pytest.raises(mx.base.MXNetError):
        np.broadcast_to(np.ones((2, 3)), (3, 3))
    with pytest.raises(mx.base.MXNetError):
        np.broadcast_to(np.ones((2, 3)), (3,))


@settings(max_examples=40)
@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), st.data(),
       st.sampled_from(["int32", "float16", "float64"]))
def test_concatenate_stack(shape, data, dtype2):
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1))
    other = list(shape)
    other[axis] = data.draw(st.integers(0, 3))
    a, b = arr(shape), arr(tuple(other), dtype2)
    want = onp.concatenate([a, b], axis=axis)
    if dtype2 in ("int32",):
        want = want.astype("float32")        # an integer with a float gives that float
    same(np.concatenate([np.array(a), np.array(b, dtype=dtype2)], axis=axis), want)
    same(np.concatenate([np.array(a), np.array(a)], axis=None),
         onp.concatenate([a, a], axis=None))
    sax = data.draw(st.integers(-nd - 1, nd))
    same(np.stack([np.array(a), np.array(a)], axis=sax), onp.stack([a, a], axis=sax))
    same(np.append(np.array(a), np.array(a)), onp.append(a, a))


def test_stack_family():
    a, b = arr((3,)), arr((3,)) + 10
    for fn in ("vstack", "hstack", "dstack", "column_stack", "row_stack"):
        same(getattr(np, fn)([np.array(a), np.array(b)]),
             getattr(onp, fn if fn != "row_stack" else "vstack")([a, b]))
    m = arr((2, 3))
    for fn in ("vstack", "hstack", "dstack", "column_stack"):
        same(getattr(np, fn)([np.array(m), np.array(m)]), getattr(onp, fn)([m, m]))
    for fn in ("atleast_1d", "atleast_2d", "atleast_3d"):
        for s in [(), (2,), (2, 3), (1, 2, 3)]:
            same(getattr(np, fn)(np.array(arr(s))), getattr(onp, fn)(arr(s)))
    with pytest.raises(mx.base.MXNetError):
        np.concatenate([np.ones((2, 3)), np.ones((2, 4))], axis=0)
    with pytest.raises(mx.base.MXNetError):
        np.concatenate([np.ones(()), np.ones(())])
    with pytest.raises(mx.base.MXNetError):
        np.stack([np.ones((2,)), np.ones((3,))])


@pytest.mark.parametrize("spec", [3, [1, 4], [0, 2, 2, 5], [-2], [8]])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_split_family(spec, axis):
    a = arr((6, 6, 2))
    x = np.array(a)
    if isinstance(spec, int) and a.shape[axis] % spec:
        with pytest.raises(mx.base.MXNetError):
            np.split(x, spec, axis)
    else:
        for g, w in zip(np.split(x, spec, axis), onp.split(a, spec, axis)):
            same(g, w)
    for g, w in zip(np.array_split(x, 4 if isinstance(spec, int) else spec, axis),
                    onp.array_split(a, 4 if isinstance(spec, int) else spec, axis)):
        same(g, w)
    for fn in ("hsplit", "vsplit", "dsplit"):
        n = 2
        for g, w in zip(getattr(np, fn)(x, n), getattr(onp, fn)(a, n)):
            same(g, w)
    with pytest.raises(mx.base.MXNetError):
        np.split(x, 0)


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (0, 3)])
def test_roll_rot90_tile_repeat(shape):
    a = arr(shape)
    x = np.array(a)
    for shift, axis in [(2, None), (-1, 0), (7, -1), ((1, 2), (0, -1))]:
        if axis is not None and max(onp.atleast_1d(axis)) >= a.ndim:
            continue
        if isinstance(axis, tuple) and a.ndim < 2:
            continue
        same(np.roll(x, shift, axis), onp.roll(a, shift, axis))
    if a.ndim >= 2:
        for k in range(-1, 5):
            same(np.rot90(x, k), onp.rot90(a, k))
        same(np.fliplr(x), onp.fliplr(a))
    same(np.flipud(x), onp.flipud(a))
    for reps in [2, (2, 1), (1, 2, 2)]:
        same(np.tile(x, reps), onp.tile(a, reps))
    for rep, axis in [(2, None), (2, 0), ([1, 2, 0, 3, 1][:a.shape[0]] or 1, 0)]:
        same(np.repeat(x, rep, axis), onp.repeat(a, rep, axis))


def test_shape_queries():
    x = np.zeros((2, 0, 3))
    assert np.shape(x) == (2, 0, 3) and np.ndim(x) == 3 and np.size(x) == 0
    assert np.size(x, 2) == 3
    assert np.shape([[1, 2]]) == (1, 2)


def test_ravel_and_reshape_are_views():
    x = np.array(arr((2, 3)))
    r = np.ravel(x)
    r[0] = 100
    y = x.reshape(3, 2)
    y[2, 1] = -5
    assert x[0, 0].item() == 100 and x[1, 2].item() == -5
    f = x.flatten()
    f[1] = 50
    assert x[0, 1].item() == 1


_fd = finite_difference


@pytest.mark.parametrize("name,args", [
    ("reshape", ((3, 4),)), ("transpose", ((2, 0, 1),)), ("moveaxis", (0, -1)),
    ("swapaxes", (0, 2)), ("squeeze", ()), ("expand_dims", (1,)),
    ("broadcast_to", ((3, 2, 3, 2),)), ("flip", (1,)), ("roll", (2, 1)), ("rot90", ()),
    ("tile", ((2, 1, 1),)), ("repeat", (2, 1)),
])
def test_gradients(name, args, rng):
    a = rng.uniform(-1, 1, (2, 3, 2))
    if name == "squeeze":
        a = a[:, :1]
    w = rng.uniform(0.5, 1.5, getattr(onp, name)(a, *args).shape)
    x = np.array(a, dtype="float64")
    x.attach_grad()
    with autograd.record():
        z = (getattr(np, name)(x, *args) * np.array(w, dtype="float64")).sum()
    z.backward()
    want = _fd(lambda v: (getattr(onp, name)(v, *args) * w).sum(), a)
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6, atol=1e-9)


def test_join_gradients(rng):
    a, b = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))
    x, y = np.array(a, dtype="float64"), np.array(b, dtype="float64")
    x.attach_grad()
    y.attach_grad()
    w = rng.uniform(0.5, 1.5, (2, 2, 3))
    with autograd.record():
        s = np.stack([x, y], axis=1)
        c = np.concatenate([x, y], axis=0)
        parts = np.split(c, 2, axis=0)
        z = (s * np.array(w, dtype="float64")).sum() + (parts[1] * 3).sum()
    z.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), w[:, 0])
    onp.testing.assert_allclose(y.grad.asnumpy(), w[:, 1] + 3)


def test_broadcast_to_keeps_axes_marked_minus_two():
    a = arr((3, 1))
    same(np.broadcast_to(np.array(a), (2, -2, 4)), onp.broadcast_to(a, (2, 3, 4)))
    same(np.broadcast_to(np.array(arr((1, 0))), (2, -2, -2)), onp.zeros((2, 1, 0), "float32"))
    with pytest.raises(mx.base.MXNetError):
        np.broadcast_to(np.array(a), (-2, 2, 3, 4))


@pytest.mark.parametrize("shape", [(0, 3), (2, 0, 1), (1, 1, 0)])
def test_hybridized_shape_functions_of_zero_size_arrays(shape):
    from mxlite import gluon, npx

    class Net(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return [F.np.reshape(x, (-1,)), F.np.squeeze(x), F.np.expand_dims(x, 0),
                    F.np.broadcast_to(x, (2,) + x.shape), F.np.tril(x)]

    a = arr(shape)
    npx.set_np()
    try:
        net = Net()
        net.hybridize()
        outs = net(np.array(a))
    finally:
        npx.reset_np()
    for got, want in zip(outs, [a.reshape(-1), onp.squeeze(a), onp.expand_dims(a, 0),
                                onp.broadcast_to(a, (2,) + shape), onp.tril(a)]):
        same(got, want)
