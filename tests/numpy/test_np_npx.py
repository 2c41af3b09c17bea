"""``mx.npx``'s operators: values against NumPy (or the legacy ``mx.nd`` operator where
NumPy has none), np array results, gradients against finite differences, graph nodes from
Symbols (``mx.sym.var`` and a hybridized block), errors; ``npx.reshape``'s codes,
``nonzero``, ``constraint_check``, ``save``/``load`` against files of MXNet 1.9.1, and
``npx.image``."""
import json
import pathlib

import numpy as onp
import pytest
import scipy.special

import mxlite as mx
from mxlite import autograd, gluon, np, npx
from mxlite.base import MXNetError
from mxlite.test_utils import check_grads

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
RNG = onp.random.default_rng(11)


def _f32(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(onp.float32)


def _softmax(x, axis=-1):
    e = onp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _sigmoid(x):
    return 1 / (1 + onp.exp(-x))


# ---- the names --------------------------------------------------------------------------------
# MXNet 1.9.1's public npx names (less npx.random, and the modules and helpers its module
# leaked by importing them)
_MXNET_NAMES = (
    "Context", "activation", "arange_like", "batch_dot", "batch_flatten", "batch_norm",
    "cast", "constraint_check", "convolution", "cpu", "cpu_pinned", "current_context",
    "deconvolution", "dropout", "embedding", "erf", "erfinv", "fully_connected", "gamma",
    "gammaln", "gather_nd", "get_cuda_compute_capability", "gpu", "gpu_memory_info",
    "image", "is_np_array", "is_np_shape", "layer_norm", "leaky_relu", "load",
    "log_softmax", "multibox_detection", "multibox_prior", "multibox_target", "nonzero",
    "num_gpus", "one_hot", "pick", "pooling", "relu", "reset_np", "reshape", "reshape_like",
    "rnn", "roi_pooling", "save", "sequence_mask", "set_np", "shape_array", "sigmoid",
    "slice", "smooth_l1", "softmax", "topk", "waitall")


def test_every_mxnet_npx_name_exists():
    assert [n for n in _MXNET_NAMES if not hasattr(npx, n)] == []


def test_operators_have_signatures_and_docs():
    import inspect
    for name in npx._op.__all__:
        fn = getattr(npx, name)
        if callable(fn) and not isinstance(fn, type):
            assert fn.__doc__ and fn.__doc__.strip(), name
    sig = inspect.signature(npx.softmax)
    assert list(sig.parameters)[:3] == ["data", "length", "axis"]
    assert "fully_connected" in npx.fully_connected.__doc__


# ---- values against NumPy ---------------------------------------------------------------------
def _layer_norm(x, g, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)
    return (x - m) / onp.sqrt(v + eps) * g + b


# name -> (inputs as NumPy arrays, npx call on np arrays, NumPy reference)
_X = _f32(3, 4)
_CASES = {
    "relu": ([_X], lambda x: npx.relu(x), lambda x: onp.maximum(x, 0)),
    "sigmoid": ([_X], lambda x: npx.sigmoid(x), _sigmoid),
    "activation_tanh": ([_X], lambda x: npx.activation(x, act_type="tanh"), onp.tanh),
    "activation_softrelu": ([_X], lambda x: npx.activation(x, act_type="softrelu"),
                            lambda x: onp.log1p(onp.exp(x))),
    "softmax_axis0": ([_X], lambda x: npx.softmax(x, axis=0), lambda x: _softmax(x, 0)),
    "softmax_temperature": ([_X], lambda x: npx.softmax(x, temperature=0.5),
                            lambda x: _softmax(x / 0.5)),
    "log_softmax": ([_X], lambda x: npx.log_softmax(x), lambda x: onp.log(_softmax(x))),
    "leaky_relu": ([_X], lambda x: npx.leaky_relu(x, slope=0.1),
                   lambda x: onp.where(x > 0, x, 0.1 * x)),
    "leaky_relu_elu": ([_X], lambda x: npx.leaky_relu(x, act_type="elu", slope=0.5),
                       lambda x: onp.where(x > 0, x, 0.5 * onp.expm1(x))),
    "erf": ([_X], lambda x: npx.erf(x), scipy.special.erf),
    "erfinv": ([_X * 0.9], lambda x: npx.erfinv(x), scipy.special.erfinv),
    "gamma": ([_X + 2], lambda x: npx.gamma(x), scipy.special.gamma),
    "gammaln": ([_X + 2], lambda x: npx.gammaln(x), scipy.special.gammaln),
    "smooth_l1": ([_X * 3], lambda x: npx.smooth_l1(x, scalar=1.0),
                  lambda x: onp.where(onp.abs(x) < 1, 0.5 * x * x, onp.abs(x) - 0.5)),
    "batch_flatten": ([_f32(2, 3, 4)], lambda x: npx.batch_flatten(x),
                      lambda x: x.reshape(2, 12)),
    "reshape_like": ([_f32(2, 6), _f32(3, 4)], lambda a, b: npx.reshape_like(a, b),
                     lambda a, b: a.reshape(3, 4)),
    "slice": ([_f32(5, 6)], lambda x: npx.slice(x, begin=(None, 4), end=(3, 0), step=(2, -2)),
              lambda x: x[:3:2, 4:0:-2]),
    "cast": ([_X * 10], lambda x: npx.cast(x, dtype="int32"), lambda x: x.astype(onp.int32)),
    "fully_connected": ([_f32(2, 3, 2), _f32(4, 6), _f32(4)],
                        lambda x, w, b: npx.fully_connected(x, w, b, num_hidden=4),
                        lambda x, w, b: x.reshape(2, 6) @ w.T + b),
    "fully_connected_no_bias": ([_f32(2, 3), _f32(4, 3)],
                                lambda x, w: npx.fully_connected(x, w, None, num_hidden=4,
                                                                 no_bias=True),
                                lambda x, w: x @ w.T),
    "layer_norm": ([_X, _f32(4), _f32(4)], lambda x, g, b: npx.layer_norm(x, g, b),
                   _layer_norm),
    "batch_dot_4d": ([_f32(2, 3, 4, 5), _f32(2, 3, 6, 5)],
                     lambda a, b: npx.batch_dot(a, b, transpose_b=True),
                     lambda a, b: a @ onp.swapaxes(b, -1, -2)),
    "gather_nd": ([_X, onp.array([[0, 2, 2], [1, 3, 0]], onp.int64)],
                  lambda x, i: npx.gather_nd(x, i), lambda x, i: x[tuple(i)]),
    "pick": ([_X, onp.array([3, 0, 1], onp.int64)], lambda x, i: npx.pick(x, i),
             lambda x, i: x[onp.arange(3), i]),
    "embedding": ([onp.array([[2, 0], [1, 2]], onp.int64), _f32(3, 5)],
                  lambda i, w: npx.embedding(i, w, input_dim=3, output_dim=5),
                  lambda i, w: w[i]),
    "one_hot": ([onp.array([2, 0, 3], onp.int64)], lambda i: npx.one_hot(i, 4),
                lambda i: onp.eye(4, dtype=onp.float32)[i]),
    "sequence_mask": ([_f32(4, 2, 3), onp.array([1, 3], onp.int64)],
                      lambda x, n: npx.sequence_mask(x, n, use_sequence_length=True,
                                                     value=-1.0),
                      lambda x, n: onp.where(onp.arange(4)[:, None, None] < n[None, :, None],
                                             x, -1.0)),
    "shape_array": ([_f32(2, 0, 3)], lambda x: npx.shape_array(x),
                    lambda x: onp.array(x.shape, onp.int64)),
    "arange_like": ([_f32(2, 3)], lambda x: npx.arange_like(x, start=1.0, step=0.5),
                    lambda x: (1.0 + 0.5 * onp.arange(6, dtype=onp.float32)).reshape(2, 3)),
    "arange_like_axis": ([_f32(2, 3)], lambda x: npx.arange_like(x, axis=1),
                         lambda x: onp.arange(3, dtype=onp.float32)),
    "reshape": ([_f32(2, 1, 3, 4)], lambda x: npx.reshape(x, (-2, -3, -6, 3, -1, -2)),
                lambda x: x.reshape(2, 3, 1, 4)),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_values_against_numpy(case):
    values, call, reference = _CASES[case]
    out = call(*[np.array(v, dtype=v.dtype) for v in values])
    want = onp.asarray(reference(*values))
    assert isinstance(out, np.ndarray)
    assert out.shape == want.shape
    assert out.dtype == want.dtype or (want.dtype == onp.float64 and out.dtype == onp.float32)
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=2e-5, atol=2e-6)


def test_softmax_length_counts_the_valid_entries():
    x = _f32(2, 4)
    out = npx.softmax(np.array(x), np.array([1, 3], dtype="int32"), use_length=True)
    want = onp.zeros_like(x)
    want[0, :1] = _softmax(x[0, :1])
    want[1, :3] = _softmax(x[1, :3])
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    out = npx.log_softmax(np.array(x), length=np.array([2, 4], dtype="int64"), use_length=True)
    onp.testing.assert_allclose(out.asnumpy()[1], onp.log(_softmax(x[1])), rtol=1e-5)
    onp.testing.assert_allclose(out.asnumpy()[0, :2], onp.log(_softmax(x[0, :2])), rtol=1e-5)


def test_softmax_dtype_and_empty_axes():
    x = np.array(_f32(2, 3))
    assert npx.softmax(x, dtype="float64").dtype == onp.float64
    for shape in [(3, 0, 4), (0, 0)]:
        z = np.zeros(shape)
        z.attach_grad()
        for axis in range(len(shape)):
            with autograd.record():
                y = npx.log_softmax(z, axis=axis)
            y.backward()
            assert y.shape == shape and z.grad.shape == shape


def test_topk_pick_and_one_hot_follow_mxnet_dtypes():
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    idx = npx.topk(x, k=2)
    assert idx.dtype == onp.float32                      # MXNet's default index dtype
    assert idx.asnumpy().tolist() == [[0.0, 2.0], [1.0, 2.0]]
    values, indices = npx.topk(x, k=2, ret_typ="both", dtype="int64")
    assert isinstance(values, np.ndarray) and isinstance(indices, np.ndarray)
    assert indices.dtype == onp.int64
    assert values.asnumpy().tolist() == [[3.0, 2.0], [5.0, 4.0]]
    assert npx.topk(x, k=1, ret_typ="mask", is_ascend=True).asnumpy().tolist() == \
        [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    assert npx.pick(x, np.array([2, 0]), keepdims=True).shape == (2, 1)
    assert npx.one_hot(np.array([1, 0]), 3, dtype="int32").dtype == onp.int32


def test_batch_norm_returns_the_output_alone_unless_asked():
    x = np.array(_f32(4, 3, 2))
    gamma, beta = np.array(_f32(3, lo=0.5, hi=1.5)), np.array(_f32(3))
    mean, var = np.zeros(3), np.ones(3)
    with autograd.record():
        y = npx.batch_norm(x, gamma, beta, mean, var, fix_gamma=False, eps=1e-5)
    assert isinstance(y, np.ndarray) and y.shape == (4, 3, 2)
    xs = x.asnumpy()
    m = xs.mean(axis=(0, 2), keepdims=True)
    v = xs.var(axis=(0, 2), keepdims=True)
    want = (xs - m) / onp.sqrt(v + 1e-5) * gamma.asnumpy()[:, None] + beta.asnumpy()[:, None]
    onp.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-5)
    # training mode moved the running statistics toward the batch's
    onp.testing.assert_allclose(mean.asnumpy(), 0.1 * m.ravel(), rtol=1e-4, atol=1e-6)
    out = npx.batch_norm(x, gamma, beta, mean, var, output_mean_var=True)
    assert isinstance(out, list) and len(out) == 3
    assert all(isinstance(o, np.ndarray) for o in out)


# ---- the operators MXNet documents by themselves: the legacy op's values ------------------
def _legacy_pairs():
    data = _f32(2, 3, 6, 6)
    weight, bias = _f32(4, 3, 3, 3), _f32(4)
    rois = onp.array([[0, 0, 0, 4, 4], [1, 1, 1, 5, 3]], onp.float32)
    anchors = onp.array([[[0.1, 0.1, 0.4, 0.4], [0.5, 0.5, 0.9, 0.8]]], onp.float32)
    return {
        "convolution": ([data, weight, bias], dict(kernel=(3, 3), num_filter=4, pad=(1, 1)),
                        "Convolution"),
        "deconvolution": ([data, _f32(3, 2, 3, 3)], dict(kernel=(3, 3), num_filter=2,
                                                         stride=(2, 2), no_bias=True),
                          "Deconvolution"),
        "pooling": ([data], dict(kernel=(2, 2), stride=(2, 2), pool_type="avg"), "Pooling"),
        "roi_pooling": ([data, rois], dict(pooled_size=(2, 2), spatial_scale=1.0),
                        "ROIPooling"),
        "multibox_prior": ([data], dict(sizes=(0.5, 0.25), ratios=(1, 2)),
                           "_contrib_MultiBoxPrior"),
        "multibox_target": ([anchors, onp.array([[[0, 0.1, 0.1, 0.45, 0.4]]], onp.float32),
                             _f32(1, 2, 2)], {}, "_contrib_MultiBoxTarget"),
        "multibox_detection": ([_softmax(_f32(1, 2, 2), axis=1), _f32(1, 8) * 0.1, anchors],
                               dict(threshold=0.01), "_contrib_MultiBoxDetection"),
        "rnn": ([_f32(3, 2, 4), _f32(4 * 5 + 5 * 5 + 2 * 5), _f32(1, 2, 5)],
                dict(state_size=5, num_layers=1, mode="rnn_tanh"), "RNN"),
    }


_LEGACY = _legacy_pairs()


@pytest.mark.parametrize("name", sorted(_LEGACY))
def test_operator_matches_the_legacy_operator(name):
    values, params, op_name = _LEGACY[name]
    outs = getattr(npx, name)(*[np.array(v, dtype=v.dtype) for v in values], **params)
    legacy = mx.ops.registry.REGISTRY[op_name]
    from mxlite.ndarray.ndarray import invoke
    want = invoke(legacy, [mx.nd.array(v, dtype=v.dtype) for v in values], params)
    outs, want = (o if isinstance(o, list) else [o] for o in (outs, want))
    assert len(outs) == len(want)
    for o, w in zip(outs, want):
        assert type(o) is np.ndarray
        onp.testing.assert_array_equal(o.asnumpy(), w.asnumpy())


def test_dropout_in_training_and_inference():
    x = np.ones((200,))
    assert (npx.dropout(x, p=0.5).asnumpy() == 1).all()          # not recording: identity
    with autograd.record():
        y = npx.dropout(x, p=0.5)
    kept = y.asnumpy()
    assert set(onp.unique(kept)) <= {0.0, 2.0} and 40 < (kept == 0).sum() < 160


# ---- gradients ------------------------------------------------------------------------------
def _f64(*shape, lo=-1.0, hi=1.0):
    return np.array(RNG.uniform(lo, hi, shape), dtype="float64")


_GRADIENTS = {
    "softmax": (lambda x: npx.softmax(x, axis=0, temperature=1.5), [_f64(3, 4)]),
    "log_softmax": (lambda x: npx.log_softmax(x), [_f64(2, 5)]),
    "layer_norm": (lambda x, g, b: npx.layer_norm(x, g, b, eps=1e-3),
                   [_f64(3, 4), _f64(4), _f64(4)]),
    "fully_connected": (lambda x, w, b: npx.fully_connected(x, w, b, num_hidden=2),
                        [_f64(3, 4), _f64(2, 4), _f64(2)]),
    "batch_dot_4d": (lambda a, b: npx.batch_dot(a, b, transpose_a=True),
                     [_f64(2, 2, 3, 4), _f64(2, 2, 3, 5)]),
    "reshape": (lambda x: npx.reshape(x, (-4, -1, 2, -6), reverse=True) ** 2,
                [_f64(2, 1, 6)]),
    "pick": (lambda x: npx.pick(x, np.array([1, 0, 2]), axis=1) ** 2, [_f64(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(_GRADIENTS))
def test_gradients_against_finite_differences(name):
    fn, args = _GRADIENTS[name]
    check_grads(fn, args, order=2, name=name)


def test_gradient_flows_to_np_arrays():
    x = np.array(_f32(2, 3))
    x.attach_grad()
    with autograd.record():
        y = npx.relu(x) * 3
    y.backward()
    assert isinstance(x.grad, np.ndarray)
    onp.testing.assert_array_equal(x.grad.asnumpy(), onp.where(x.asnumpy() > 0, 3.0, 0.0))


# ---- Symbols ---------------------------------------------------------------------------------
def test_symbol_inputs_build_nodes():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    fc = mx.sym.npx.fully_connected(x, w, num_hidden=3, no_bias=True)
    y = mx.sym.npx.reshape(mx.sym.npx.softmax(fc, axis=-1), (-5,))
    assert isinstance(y, mx.sym.Symbol)
    assert y.list_arguments() == ["x", "w"]
    ops = [n["op"] for n in json.loads(y.tojson())["nodes"]]
    assert ops == ["null", "null", "FullyConnected", "softmax", "_npx_reshape"]
    xv, wv = _f32(2, 4), _f32(3, 4)
    out = y.eval(x=mx.nd.array(xv), w=mx.nd.array(wv))[0]
    onp.testing.assert_allclose(out.asnumpy(), _softmax(xv @ wv.T).reshape(-1), rtol=1e-5)
    assert isinstance(mx.sym.npx.constraint_check(mx.sym.var("m"), "msg"), mx.sym.Symbol)


class _NpxBlock(gluon.HybridBlock):
    def hybrid_forward(self, F, x, w, mask):
        h = F.npx.fully_connected(x, w, num_hidden=4, no_bias=True)
        h = F.npx.reshape(h, (-2, -6, 2, -1)) * F.npx.constraint_check(mask, "mask is off")
        return F.npx.log_softmax(h, axis=-1), F.npx.topk(h, k=1, ret_typ="value")


def test_hybridized_block_matches_imperative():
    npx.set_np()
    try:
        block = _NpxBlock()
        x, w = np.array(_f32(3, 5)), np.array(_f32(4, 5))
        mask = np.ones((2,), dtype="bool")
        x.attach_grad()
        with autograd.record():
            imperative = block(x, w, mask)
        imperative[0].backward()
        g_imperative = x.grad.asnumpy().copy()
        block.hybridize()
        with autograd.record():
            hybrid = block(x, w, mask)
        hybrid[0].backward()
        for a, b in zip(imperative, hybrid):
            assert type(b) is np.ndarray and a.shape == b.shape
            onp.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
        onp.testing.assert_allclose(x.grad.asnumpy(), g_imperative, rtol=1e-6)
        with pytest.raises(ValueError, match="mask is off"):
            block(x, w, np.zeros((2,), dtype="bool"))[0].asnumpy()
    finally:
        npx.reset_np()


# ---- reshape's codes --------------------------------------------------------------------------
_RESHAPES = [   # input shape, newshape, reverse, the shape the codes describe
    ((4, 5, 6), (-2, -1), False, (4, 30)),
    ((4, 5, 6), (-1, -2), False, (24, 5)),       # -1 stands for one input dimension
    ((4, 1, 6), (-2, -3, -2), False, (4, 6)),
    ((1, 4, 1), (-3, -2, -3), False, (4,)),
    ((1, 1), (-3, -3), False, ()),
    ((4, 5, 6), (-4,), False, (4, 5, 6)),
    ((4, 5, 6), (2, 10, -4), False, (2, 10, 6)),
    ((4, 5, 6), (-5, -2), False, (20, 6)),
    ((4, 5, 6), (-2, -5), False, (4, 30)),
    ((12,), (-6, 3, -1), False, (3, 4)),
    ((12, 5), (-6, -1, 6, -2), False, (2, 6, 5)),
    ((4, 5, 6), (-1, -2), True, (20, 6)),
    ((4, 5, 6), (-4, 3, -1, -6), True, (4, 5, 3, 2)),    # -6's pair precedes it
    ((4, 5, 6), (-5, -2), True, (20, 6)),
    ((0, 3), (-1,), False, (0,)),
    ((2, 3), 6, False, (6,)),
    ((2, 0, 3), (0, 5), False, (0, 5)),
]


@pytest.mark.parametrize("shape,newshape,reverse,want", _RESHAPES)
def test_reshape_codes(shape, newshape, reverse, want):
    x = onp.arange(int(onp.prod(shape)), dtype=onp.float32).reshape(shape)
    y = npx.reshape(np.array(x), newshape, reverse=reverse)
    assert y.shape == want
    onp.testing.assert_array_equal(y.asnumpy(), x.reshape(want))


def test_reshape_is_a_copy():
    x = np.zeros((2, 3))
    y = npx.reshape(x, (-1,))
    y[0] = 5
    assert x.asnumpy()[0, 0] == 0


@pytest.mark.parametrize("shape,newshape,message", [
    ((2, 3), (-1, -1), "more than one -1"),
    ((2, 3), (-3, -2), "size 1"),
    ((2, 3), (-7,), "invalid value -7"),
    ((6,), (-6, 4, -1), "cannot split 6"),
    ((6,), (-6, 2), "two sizes"),
    ((2,), (-5,), "no input dimension"),
    ((2, 3), (5,), r"\(2, 3\) \(size 6\)"),
])
def test_reshape_errors(shape, newshape, message):
    with pytest.raises(MXNetError, match=message):
        npx.reshape(np.zeros(shape), newshape)


def test_reshape_order():
    with pytest.raises(MXNetError, match="order"):
        npx.reshape(np.zeros((2, 3)), (-1,), order="F")


# ---- nonzero, constraint_check -----------------------------------------------------------------
@pytest.mark.parametrize("value", [
    onp.array([[3, 0, 0], [0, 4, 0], [5, 6, 0]]),
    onp.array([True, False, True]),
    onp.zeros((2, 0, 3), onp.float32),
    onp.array([[0.0, 0.5], [-1.0, 0.0]], onp.float32),
])
def test_nonzero_is_argwhere(value):
    out = npx.nonzero(np.array(value, dtype=value.dtype))
    assert isinstance(out, np.ndarray) and out.dtype == onp.int64
    onp.testing.assert_array_equal(out.asnumpy(), onp.argwhere(value))


def test_nonzero_of_a_0d_array_and_of_a_symbol():
    assert npx.nonzero(np.array(2.0)).asnumpy().tolist() == [[0]]
    assert npx.nonzero(np.array(0.0)).shape == (0, 1)
    with pytest.raises(MXNetError, match="nonzero"):
        npx.nonzero(mx.sym.var("a"))


def test_constraint_check():
    ok = npx.constraint_check(np.array([True, True]), "never")
    assert type(ok) is np.ndarray and ok.shape == () and ok.dtype == onp.bool_
    assert bool(ok)
    assert bool(npx.constraint_check(np.zeros((0,), dtype="bool"), "empty"))
    with pytest.raises(ValueError, match="scale must be positive"):
        npx.constraint_check(np.array([True, False]), "scale must be positive")
    with pytest.raises(MXNetError, match="boolean"):
        npx.constraint_check(np.ones((2,)), "not bool")


# ---- errors of the entry points -----------------------------------------------------------------
def test_entry_point_errors_name_the_operator():
    with pytest.raises(MXNetError, match="batch_dot"):
        npx.batch_dot(np.ones((3, 1, 3, 2)), np.ones((1, 2, 2, 3)))
    with pytest.raises(MXNetError, match="softmax.*integer"):
        npx.softmax(np.ones((2, 3)), np.ones((2,)), use_length=True)
    with pytest.raises(MXNetError, match="FullyConnected.*bias"):
        npx.fully_connected(np.ones((2, 3)), np.ones((4, 3)), num_hidden=4)
    with pytest.raises(MXNetError, match="act_type"):
        npx.activation(np.ones(2), act_type="nope")


def test_array_like_inputs_are_converted():
    out = npx.pick(np.array([[1.0, 2.0], [3.0, 4.0]]), [1, 0])
    assert type(out) is np.ndarray and out.asnumpy().tolist() == [2.0, 3.0]
    assert npx.relu(onp.array([-1.0, 2.0], onp.float32)).asnumpy().tolist() == [0.0, 2.0]


# ---- save / load -------------------------------------------------------------------------------
def _fixture_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_npx_save_fixture",
                                                  FIXTURES / "make_npx_save_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_load_files_of_mxnet():
    fixture = _fixture_module()
    want = fixture.arrays()
    loaded = npx.load(str(FIXTURES / "npx_save_mxnet.params"))
    assert list(loaded) == list(want)
    for key, value in want.items():
        got = loaded[key]
        assert type(got) is np.ndarray, key
        assert got.dtype == value.dtype and got.shape == value.shape, key
        onp.testing.assert_array_equal(got.asnumpy(), value)
    listed = npx.load(str(FIXTURES / "npx_save_list_mxnet.params"))
    assert isinstance(listed, list) and len(listed) == len(fixture.LIST_KEYS)
    for got, key in zip(listed, fixture.LIST_KEYS):
        onp.testing.assert_array_equal(got.asnumpy(), want[key])


def test_save_writes_the_bytes_mxnet_writes(tmp_path):
    fixture = _fixture_module()
    values = {k: np.array(v, dtype=v.dtype) for k, v in fixture.arrays().items()}
    path = tmp_path / "dict.params"
    npx.save(str(path), values)
    assert path.read_bytes() == (FIXTURES / "npx_save_mxnet.params").read_bytes()
    path = tmp_path / "list.params"
    npx.save(str(path), [values[k] for k in fixture.LIST_KEYS])
    assert path.read_bytes() == (FIXTURES / "npx_save_list_mxnet.params").read_bytes()


def test_save_load_round_trip(tmp_path):
    path = str(tmp_path / "one.params")
    x = np.array(_f32(2, 3))
    npx.save(path, x)
    (back,) = npx.load(path)
    assert type(back) is np.ndarray
    onp.testing.assert_array_equal(back.asnumpy(), x.asnumpy())
    assert type(mx.nd.load(path)[0]) is mx.nd.NDArray        # the same file for mx.nd


def test_save_refuses_what_the_format_cannot_hold(tmp_path):
    path = str(tmp_path / "bad.params")
    with pytest.raises(MXNetError, match="item 1"):
        npx.save(path, [np.ones(2), onp.ones(2)])
    with pytest.raises(MXNetError, match="row_sparse"):
        npx.save(path, {"w": mx.nd.zeros((3, 2)).tostype("row_sparse")})
    with pytest.raises(MXNetError, match="cannot read"):
        npx.load(str(tmp_path / "missing.params"))


# ---- npx.image ------------------------------------------------------------------------------
def test_image_operators_and_functions():
    img = RNG.integers(0, 256, (4, 6, 3)).astype(onp.uint8)
    t = npx.image.to_tensor(np.array(img, dtype="uint8"))
    assert type(t) is np.ndarray and t.shape == (3, 4, 6)
    onp.testing.assert_allclose(t.asnumpy(), img.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    norm = npx.image.normalize(t, mean=(0.5, 0.5, 0.5), std=(0.25, 0.5, 1.0))
    want = (img.transpose(2, 0, 1) / 255.0 - 0.5) / onp.array([0.25, 0.5, 1.0])[:, None, None]
    onp.testing.assert_allclose(norm.asnumpy(), want, rtol=1e-5, atol=1e-6)
    flipped = npx.image.flip_left_right(np.array(img, dtype="uint8"))
    onp.testing.assert_array_equal(flipped.asnumpy(), img[:, ::-1])
    assert npx.image.imread is mx.image.imread and npx.image.ImageIter is mx.image.ImageIter


def test_device_helpers():
    assert npx.cpu_pinned() == mx.Context("cpu_pinned", 0)
    assert npx.Context is mx.Context and npx.waitall() is None
    with pytest.raises(MXNetError):
        npx.get_cuda_compute_capability(mx.cpu())
