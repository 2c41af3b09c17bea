"""Channels-last layouts (NWC, NHWC, NDHWC) of Convolution, Deconvolution, the conv weight
gradient, Pooling and Pooling's gradient ops (mxlite/ops/conv.py, mxlite/ops/pooling.py).

Three references:
* MXNet 1.9.1 (tests/fixtures/layout_mxnet.npz, made by make_layout_fixture.py): pooling
  values and gradients, which its CPU computes in every channels-last layout, and the
  shapes it infers for Convolution and Deconvolution, which its CPU only infers;
* the channels-first op on the same numbers moved channels first by NumPy (the weight
  (O, *kernel, I) moved to (O, I, *kernel) alike): values and gradients, everywhere;
* NumPy: a direct convolution written here (an einsum over the windows).
"""
import importlib.util
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.ops.registry import REGISTRY

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
FIXTURE = np.load(os.path.join(FIXTURES, "layout_mxnet.npz"))
LAST = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


def _maker():
    spec = importlib.util.spec_from_file_location(
        "make_layout_fixture", os.path.join(FIXTURES, "make_layout_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKER = _maker()


def to_last(a):
    """Channels first -> channels last (also a weight (O, I, *k) -> (O, *k, I))."""
    return np.moveaxis(a, 1, -1)


def to_first(a):
    return np.moveaxis(a, -1, 1)


def _array(a, dtype="float64"):
    return mx.nd.array(a, dtype=dtype)


def _run(op, arrays, kwargs, head):
    """(output, input gradients) of ``op(*arrays, **kwargs)`` for head gradient ``head``."""
    xs = [_array(a, a.dtype) for a in arrays]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = op(*xs, **kwargs)
    y.backward(_array(head, y.dtype))
    return y.asnumpy(), [x.grad.asnumpy() for x in xs]


# ---- MXNet 1.9.1 ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(MAKER.POOL))
def test_pooling_matches_mxnet(case):
    _, kwargs = MAKER.POOL[case]
    x = FIXTURE[f"{case}/in0"]
    out, (grad,) = _run(mx.nd.Pooling, [x], kwargs, FIXTURE[f"{case}/head"])
    np.testing.assert_allclose(out, FIXTURE[f"{case}/out0"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, FIXTURE[f"{case}/grad0"], rtol=1e-12, atol=1e-12)


def _inferred(op, shape, kwargs, partial):
    sym = getattr(mx.sym, op)(mx.sym.var("data"), **kwargs)
    infer = sym.infer_shape_partial if partial else sym.infer_shape
    args, outs, _ = infer(data=shape)
    return [[list(s) for s in args], [list(s) for s in outs]]


@pytest.mark.parametrize("case,partial", [(c, False) for c in sorted(MAKER.SHAPES)]
                         + [(c, True) for c in sorted(MAKER.PARTIAL)])
def test_inferred_shapes_match_mxnet(case, partial):
    op, shape, kwargs = (MAKER.PARTIAL if partial else MAKER.SHAPES)[case]
    want = json.loads(str(FIXTURE[f"{case}/shapes"]))
    assert _inferred(op, shape, kwargs, partial) == want


def test_data_shape_from_output_in_channels_last():
    """The backward rule reads the output in the layout: batch and (stride 1) spatial sizes
    come back to the data, its channels to the weight's last axis."""
    op = REGISTRY["Convolution"]
    attrs = op.parse_attrs(dict(kernel=(3, 2), pad=(1, 0), num_filter=5, layout="NHWC"))
    ins, outs = op.infer_shape_partial([(None, None, None, 7), None, None], attrs,
                                       [(2, 6, 4, 5)])
    assert ins == [(2, 6, 5, 7), (5, 3, 2, 7), (5,)] and outs == [(2, 6, 4, 5)]
    attrs = op.parse_attrs(dict(kernel=(3, 2), stride=(2, 1), num_filter=5, layout="NHWC"))
    ins, _ = op.infer_shape_partial([(None, None, None, 7), None, None], attrs,
                                    [(2, 6, 4, 5)])
    assert ins[0] == (2, None, 5, 7)


# ---- against the channels-first op ------------------------------------------------------------
CONV_CASES = [
    # (channels-first data shape, kernel, keyword arguments)
    ((2, 4, 9), (3,), dict(num_filter=6, stride=(2,), pad=(1,), num_group=2)),
    ((1, 3, 8), (2,), dict(num_filter=2, dilate=(3,), no_bias=True)),
    ((2, 3, 7, 6), (3, 2), dict(num_filter=4, stride=(2, 1), pad=(1, 0), dilate=(1, 2))),
    ((2, 6, 5, 5), (3, 3), dict(num_filter=6, num_group=3, pad=(1, 1), no_bias=True)),
    ((1, 4, 5, 4, 6), (2, 3, 2), dict(num_filter=3, stride=(1, 2, 2), pad=(1, 0, 1))),
    ((2, 2, 4, 5, 3), (3, 2, 2), dict(num_filter=4, num_group=2, dilate=(1, 2, 1))),
]


def _conv_inputs(rng, shape, kernel, kw, deconv=False):
    c, f, g = shape[1], kw["num_filter"], kw.get("num_group", 1)
    wshape = (c, f // g) + kernel if deconv else (f, c // g) + kernel
    arrays = [rng.standard_normal(shape), rng.standard_normal(wshape)]
    if not kw.get("no_bias", deconv):         # MXNet: Deconvolution defaults to no bias
        arrays.append(rng.standard_normal(f))
    return arrays


def _moved(arrays):
    """Data and weight moved channels last; the bias as it is."""
    return [to_last(a) if a.ndim > 1 else a for a in arrays]


def _compare_layouts(op, arrays, kwargs, rng, rtol=1e-12):
    """``op`` in the channels-last layout equals the channels-first op on the same numbers,
    output and every input's gradient."""
    nd = arrays[0].ndim - 2
    head = rng.standard_normal(op(*[_array(a) for a in arrays], **kwargs).shape)
    ref_out, ref_grads = _run(op, arrays, kwargs, head)
    out, grads = _run(op, _moved(arrays), dict(kwargs, layout=LAST[nd]), to_last(head))
    np.testing.assert_allclose(out, to_last(ref_out), rtol=rtol, atol=rtol)
    for got, want in zip(grads, _moved(ref_grads)):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("shape,kernel,kw", CONV_CASES)
def test_convolution_channels_last_equals_channels_first(shape, kernel, kw):
    rng = np.random.default_rng(1)
    arrays = _conv_inputs(rng, shape, kernel, kw)
    _compare_layouts(mx.nd.Convolution, arrays, dict(kw, kernel=kernel), rng)


@pytest.mark.parametrize("shape,kernel,kw", CONV_CASES + [
    ((2, 3, 4, 3), (3, 3), dict(num_filter=2, stride=(2, 2), target_shape=(8, 6))),
    ((1, 4, 3, 3, 2), (2, 2, 3), dict(num_filter=2, stride=(2, 1, 2), adj=(1, 0, 1),
                                      num_group=2)),
])
def test_deconvolution_channels_last_equals_channels_first(shape, kernel, kw):
    rng = np.random.default_rng(2)
    arrays = _conv_inputs(rng, shape, kernel, kw, deconv=True)
    _compare_layouts(mx.nd.Deconvolution, arrays, dict(kw, kernel=kernel), rng)


@pytest.mark.parametrize("shape,kernel,kw", CONV_CASES)
def test_weight_gradient_channels_last_equals_channels_first(shape, kernel, kw):
    rng = np.random.default_rng(3)
    kw = {k: v for k, v in kw.items() if k != "no_bias"}
    y = mx.nd.Convolution(_array(rng.standard_normal(shape)),
                          _array(rng.standard_normal((kw["num_filter"],
                                                      shape[1] // kw.get("num_group", 1))
                                                     + kernel)),
                          kernel=kernel, no_bias=True, **kw)
    arrays = [rng.standard_normal(shape), rng.standard_normal(y.shape)]
    _compare_layouts(mx.nd._internal._conv_weight_grad, arrays, dict(kw, kernel=kernel), rng)


POOL_CASES = [
    # (channels-first data shape, keyword arguments)
    ((2, 3, 9), dict(kernel=(3,), stride=(2,), pad=(1,))),
    ((2, 3, 7, 6), dict(kernel=(3, 2), stride=(2, 2), pad=(1, 1),
                        pooling_convention="full")),
    ((2, 2, 4, 5, 6), dict(kernel=(2, 2, 3), stride=(1, 2, 2), pad=(1, 0, 1))),
    ((2, 3, 4, 5), dict(global_pool=True)),
]
POOL_TYPES = [dict(pool_type="max"), dict(pool_type="avg"),
              dict(pool_type="avg", count_include_pad=False), dict(pool_type="sum"),
              dict(pool_type="lp", p_value=2), dict(pool_type="lp", p_value=3)]


def _distinct(rng, shape, positive):
    """Distinct values (no max-pooling ties), positive for lp."""
    n = int(np.prod(shape))
    x = (rng.permutation(n) - n / 2) / n
    return (np.abs(x) + 0.1 if positive else x).reshape(shape)


@pytest.mark.parametrize("shape,kw", POOL_CASES)
@pytest.mark.parametrize("kind", POOL_TYPES, ids=lambda k: "-".join(map(str, k.values())))
def test_pooling_channels_last_equals_channels_first(shape, kw, kind):
    rng = np.random.default_rng(4)
    x = _distinct(rng, shape, kind["pool_type"] == "lp")
    _compare_layouts(mx.nd.Pooling, [x], dict(kw, **kind), rng)


_MAXP = dict(kernel=(2, 3), stride=(2, 1), pad=(1, 1), pool_type="max")


@pytest.mark.parametrize("op,second", [("_pool_max_scatter", "windows"),
                                       ("_pool_max_gather", "data")])
def test_max_pooling_gradient_ops_channels_last(op, second):
    rng = np.random.default_rng(5)
    x = _distinct(rng, (2, 3, 5, 6), False)
    windows = mx.nd.Pooling(_array(x), **_MAXP).shape
    other = rng.standard_normal(windows if second == "windows" else x.shape)
    _compare_layouts(getattr(mx.nd._internal, op), [x, other], _MAXP, rng)


def test_pool_backward_channels_last():
    rng = np.random.default_rng(6)
    kw = dict(kernel=(3, 2), stride=(2, 2), pad=(1, 1), pool_type="avg",
              pooling_convention="full", in_shape=(5, 4))
    g = rng.standard_normal((2, 3, 3, 3))
    _compare_layouts(mx.nd._internal._pool_backward, [g], kw, rng)


@pytest.mark.parametrize("dtype,rtol", [("float16", 2e-3), ("float32", 1e-5)])
def test_low_precision_channels_last(dtype, rtol):
    """float16 runs in float32 (the cast shares the transposing copy) and float32 as is."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 5, 6, 4)).astype(dtype)
    w = rng.standard_normal((3, 3, 2, 4)).astype(dtype)
    kw = dict(kernel=(3, 2), num_filter=3, no_bias=True)
    got = mx.nd.Convolution(_array(x, dtype), _array(w, dtype), layout="NHWC", **kw)
    want = mx.nd.Convolution(_array(to_first(x), dtype), _array(to_first(w), dtype), **kw)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got.asnumpy(), to_last(want.asnumpy()), rtol=rtol, atol=rtol)
    pooled = mx.nd.Pooling(_array(x, dtype), kernel=(2, 2), pool_type="avg", layout="NHWC")
    assert pooled.dtype == np.dtype(dtype)
    np.testing.assert_allclose(
        pooled.asnumpy(), to_last(mx.nd.Pooling(_array(to_first(x), dtype), kernel=(2, 2),
                                                pool_type="avg").asnumpy()), rtol=rtol)


# ---- against NumPy ------------------------------------------------------------------------
def _numpy_conv_nhwc(x, w, b, stride, pad):
    """A direct NHWC convolution: every output position's window dotted with the weight
    (O, kh, kw, C) (one group, no dilation)."""
    n, h, wd, c = x.shape
    f, kh, kw, _ = w.shape
    xp = np.pad(x, ((0, 0), (pad[0], pad[0]), (pad[1], pad[1]), (0, 0)))
    oh = (h + 2 * pad[0] - kh) // stride[0] + 1
    ow = (wd + 2 * pad[1] - kw) // stride[1] + 1
    out = np.empty((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw]
            out[:, i, j] = np.einsum("nhwc,fhwc->nf", win, w)
    return out + b


def test_convolution_nhwc_matches_numpy():
    rng = np.random.default_rng(8)
    x, w, b = (rng.standard_normal(s) for s in ((2, 7, 6, 3), (4, 3, 2, 3), (4,)))
    got = mx.nd.Convolution(_array(x), _array(w), _array(b), kernel=(3, 2), stride=(2, 1),
                            pad=(1, 1), num_filter=4, layout="NHWC")
    np.testing.assert_allclose(got.asnumpy(), _numpy_conv_nhwc(x, w, b, (2, 1), (1, 1)),
                               rtol=1e-12, atol=1e-12)


def test_symbol_channels_last_matches_nd():
    """A bound symbol with the layout runs the same kernels and gradient graph."""
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((2, 6, 5, 4)), rng.standard_normal((3, 2, 2, 4))
    kw = dict(kernel=(2, 2), num_filter=3, no_bias=True, layout="NHWC")
    y = mx.sym.Pooling(mx.sym.Convolution(mx.sym.var("x"), mx.sym.var("w"), **kw),
                       kernel=(2, 2), pool_type="max", layout="NHWC")
    ex = y.bind(mx.current_context(), {"x": _array(x), "w": _array(w)},
                args_grad={"x": _array(np.zeros_like(x)), "w": _array(np.zeros_like(w))})
    ex.forward(is_train=True)
    head = rng.standard_normal(ex.outputs[0].shape)
    ex.backward(_array(head))
    out, (gx, gw) = _run(lambda a, b: mx.nd.Pooling(mx.nd.Convolution(a, b, **kw),
                                                    kernel=(2, 2), pool_type="max",
                                                    layout="NHWC"), [x, w], {}, head)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), out)
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), gx)
    np.testing.assert_array_equal(ex.grad_dict["w"].asnumpy(), gw)


# ---- errors -------------------------------------------------------------------------------
def _assert_error(call, words):
    with pytest.raises(MXNetError) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize("call,words", [
    # a layout of another rank than the kernel's
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 5, 5, 3)), mx.nd.ones((2, 3, 3, 3)),
                               kernel=(3, 3), num_filter=2, no_bias=True, layout="NDHWC"),
     ["Convolution", "layout='NDHWC'", "2-D kernel", "'NCHW' or 'NHWC'"]),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 5, 3)), mx.nd.ones((2, 3, 3)), kernel=(3,),
                               num_filter=2, no_bias=True, layout="NHWC"),
     ["Convolution", "layout='NHWC'", "1-D kernel", "'NCW' or 'NWC'"]),
    # data of another rank than the layout's
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 5, 5, 5, 3)), mx.nd.ones((2, 3, 3, 3)),
                               kernel=(3, 3), num_filter=2, no_bias=True, layout="NHWC"),
     ["Convolution", "data", "4-D (NHWC)", "(1, 5, 5, 5, 3)"]),
    # the weight in the channels-first order under a channels-last layout
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 5, 5, 3)), mx.nd.ones((2, 3, 3, 3)),
                               kernel=(3, 2), num_filter=2, no_bias=True, layout="NHWC"),
     ["Convolution", "weight", "(2, 3, 3, 3)", "(num_filter, *kernel, channels / num_group)",
      "(2, 3, 2, 3)"]),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 5, 5, 4)), mx.nd.ones((6, 3, 3, 1)),
                               kernel=(3, 3), num_filter=6, num_group=3, no_bias=True,
                               layout="NHWC"),
     ["Convolution", "num_group=3", "data.shape[3]", "(4)"]),
    (lambda: mx.nd.Deconvolution(mx.nd.ones((1, 4, 4, 3)), mx.nd.ones((3, 2, 2, 3)),
                                 kernel=(2, 2), num_filter=2, layout="NHWC"),
     ["Deconvolution", "weight", "(channels, *kernel, num_filter / num_group)",
      "(3, 2, 2, 2)"]),
    (lambda: mx.nd._internal._conv_weight_grad(mx.nd.ones((1, 5, 5, 3)),
                                               mx.nd.ones((1, 3, 3, 4)), kernel=(3, 3),
                                               num_filter=2, layout="NHWC"),
     ["_conv_weight_grad", "ograd has 4 channels", "num_filter=2"]),
    # Pooling: the data fix the rank
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 5, 3)), kernel=(2,), layout="NHWC"),
     ["Pooling", "layout='NHWC'", "(1, 5, 3)", "'NCW' or 'NWC'"]),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 5, 5, 5, 3)), kernel=(2, 2, 2), layout="NWC"),
     ["Pooling", "layout='NWC'", "'NCDHW' or 'NDHWC'"]),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 5, 5, 3)), kernel=(2,), layout="NHWC"),
     ["Pooling", "kernel=(2,)", "spatial axis"]),
    (lambda: mx.nd._internal._pool_backward(mx.nd.ones((1, 2, 2, 3)), kernel=(2, 2),
                                            stride=(2, 2), pad=(0, 0), pool_type="avg",
                                            in_shape=(4, 4), layout="NCDHW"),
     ["_pool_backward", "layout='NCDHW'", "(1, 2, 2, 3)"]),
    (lambda: mx.nd._internal._pool_max_scatter(mx.nd.ones((1, 4, 4, 3)),
                                               mx.nd.ones((1, 3, 2, 2)), kernel=(2, 2),
                                               stride=(2, 2), pad=(0, 0), layout="NHWC"),
     ["_pool_max_scatter", "ograd", "(1, 3, 2, 2)", "(1, 2, 2, 3)"]),
])
def test_errors_name_the_layout_and_shapes(call, words):
    _assert_error(call, words)


def test_unknown_layout_is_refused_at_parse():
    _assert_error(lambda: mx.nd.Pooling(mx.nd.ones((1, 3, 4, 4)), kernel=(2, 2),
                                        layout="HWCN"), ["Pooling", "layout", "HWCN"])


@pytest.mark.parametrize("chunk", [1, 300])
def test_batch_chunks_give_the_whole_batch_result(monkeypatch, chunk):
    """A channels-last call copies and computes a batch chunk at a time (the weight
    gradient adds the chunks up): chunks of one item, or a few, give the one-chunk result."""
    import mxlite.ops.conv as conv
    rng = np.random.default_rng(10)
    x, w = rng.standard_normal((5, 6, 5, 4)), rng.standard_normal((3, 3, 2, 4))
    kw = dict(kernel=(3, 2), num_filter=3, no_bias=True, layout="NHWC")

    def everything():
        y = mx.nd.Convolution(_array(x), _array(w), **kw)
        return [y, mx.nd.Deconvolution(y, _array(w), kernel=(3, 2), num_filter=4,
                                       layout="NHWC"),
                mx.nd._internal._conv_weight_grad(_array(x), y, kernel=(3, 2), num_filter=3,
                                                  layout="NHWC"),
                mx.nd.Pooling(_array(x), kernel=(2, 2), pool_type="max", layout="NHWC"),
                mx.nd._internal._pool_backward(y, kernel=(2, 2), stride=(1, 1), pad=(0, 0),
                                               pool_type="avg", in_shape=(5, 5),
                                               layout="NHWC")]
    whole = [a.asnumpy() for a in everything()]
    monkeypatch.setattr(conv, "_LAYOUT_CHUNK", chunk)
    for got, want in zip(everything(), whole):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_empty_batch_channels_last():
    w = mx.nd.ones((3, 3, 3, 4))
    y = mx.nd.Convolution(mx.nd.ones((0, 5, 5, 4)), w, kernel=(3, 3), num_filter=3,
                          no_bias=True, layout="NHWC")
    assert y.shape == (0, 3, 3, 3)
    g = mx.nd._internal._conv_weight_grad(mx.nd.ones((0, 5, 5, 4)), y, kernel=(3, 3),
                                          num_filter=3, layout="NHWC")
    assert g.shape == (3, 3, 3, 4) and not g.asnumpy().any()


def test_max_scatter_in_place_channels_last(monkeypatch):
    """``out=`` the data itself: each batch chunk is copied before its output is written,
    and a chunk reads only its own items."""
    import mxlite.ops.conv as conv
    monkeypatch.setattr(conv, "_LAYOUT_CHUNK", 1)
    rng = np.random.default_rng(11)
    x = _distinct(rng, (3, 5, 6, 2), False)
    g = rng.standard_normal((3, 3, 3, 2))
    kw = dict(kernel=(2, 2), stride=(2, 2), pad=(1, 0), layout="NHWC")
    want = mx.nd._internal._pool_max_scatter(_array(x), _array(g), **kw).asnumpy()
    data = _array(x)
    mx.nd._internal._pool_max_scatter(data, _array(g), out=data, **kw)
    np.testing.assert_array_equal(data.asnumpy(), want)
