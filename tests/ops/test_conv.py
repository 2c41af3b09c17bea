"""Convolution, Deconvolution, Pooling, UpSampling: values against direct-loop NumPy
references written here, adjoint identities, torch where importable, and errors."""
import itertools

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

try:
    import torch
except ImportError:          # pragma: no cover - torch is an optional test dependency
    torch = None

RNG = np.random.default_rng(1234)


def nd64(a):
    return mx.nd.array(a, dtype="float64")


def _tuple(v, nd, default):
    return tuple(v) if v else (default,) * nd


# ---- references ----------------------------------------------------------------------------
def ref_conv(x, w, b, kernel, stride=(), pad=(), dilate=(), groups=1):
    """Direct loops over every output element and kernel tap (any number of spatial axes)."""
    nd = len(kernel)
    stride, pad, dilate = (_tuple(stride, nd, 1), _tuple(pad, nd, 0), _tuple(dilate, nd, 1))
    n, c = x.shape[:2]
    f = w.shape[0]
    cg, fg = c // groups, f // groups
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out_sp = [(x.shape[2 + i] + 2 * pad[i] - dilate[i] * (kernel[i] - 1) - 1) // stride[i] + 1
              for i in range(nd)]
    out = np.zeros((n, f) + tuple(out_sp))
    for b_, fo in itertools.product(range(n), range(f)):
        g = fo // fg
        for o in itertools.product(*map(range, out_sp)):
            acc = 0.0 if b is None else b[fo]
            for ci in range(cg):
                for k in itertools.product(*map(range, kernel)):
                    pos = tuple(o[i] * stride[i] + k[i] * dilate[i] for i in range(nd))
                    acc += w[(fo, ci) + k] * xp[(b_, g * cg + ci) + pos]
            out[(b_, fo) + o] = acc
    return out


def ref_deconv(y, w, b, kernel, out_sp, stride=(), pad=(), dilate=(), groups=1):
    """Scatter form: each input element adds weight * value to the outputs it reaches."""
    nd = len(kernel)
    stride, pad, dilate = (_tuple(stride, nd, 1), _tuple(pad, nd, 0), _tuple(dilate, nd, 1))
    n, cin = y.shape[:2]
    fg = w.shape[1]
    cg = cin // groups
    out = np.zeros((n, fg * groups) + tuple(out_sp))
    for b_, ci in itertools.product(range(n), range(cin)):
        g = ci // cg
        for i_ in itertools.product(*y.shape[2:] and map(range, y.shape[2:])):
            for fo in range(fg):
                for k in itertools.product(*map(range, kernel)):
                    pos = tuple(i_[a] * stride[a] - pad[a] + k[a] * dilate[a] for a in range(nd))
                    if all(0 <= pos[a] < out_sp[a] for a in range(nd)):
                        out[(b_, g * fg + fo) + pos] += w[(ci, fo) + k] * y[(b_, ci) + i_]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def ref_pool(x, kernel, stride, pad, pool_type, convention="valid", include_pad=True):
    """MXNet's pooling, window by window."""
    nd = len(kernel)
    sp = x.shape[2:]
    if convention == "valid":
        out_sp = [1 + (sp[i] + 2 * pad[i] - kernel[i]) // stride[i] for i in range(nd)]
    else:
        out_sp = [1 + -(-(sp[i] + 2 * pad[i] - kernel[i]) // stride[i]) for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(out_sp))
    for o in itertools.product(*map(range, out_sp)):
        start = [o[i] * stride[i] - pad[i] for i in range(nd)]
        end_pad = [min(start[i] + kernel[i], sp[i] + pad[i]) for i in range(nd)]
        lo = [max(s, 0) for s in start]
        hi = [max(min(e, sp[i]), a) for i, (e, a) in enumerate(zip(end_pad, lo))]
        region = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))]
        if region.size == 0:
            continue
        if pool_type == "max":
            v = region.max(axis=tuple(range(2, 2 + nd)))
        else:
            v = region.sum(axis=tuple(range(2, 2 + nd)))
            if pool_type == "avg":
                count = (np.prod([e - s for s, e in zip(start, end_pad)]) if include_pad
                         else np.prod([b - a for a, b in zip(lo, hi)]))
                v = v / count
        out[(slice(None), slice(None)) + o] = v
    return out


# ---- Convolution ----------------------------------------------------------------------------
CONV_CASES = [
    # (data shape, num_filter, kernel, stride, pad, dilate, groups)
    ((2, 3, 9), 4, (3,), (), (), (), 1),
    ((2, 4, 10), 6, (3,), (2,), (1,), (2,), 2),
    ((1, 3, 6, 5), 2, (3, 3), (), (), (), 1),
    ((2, 4, 7, 6), 6, (3, 2), (2, 1), (1, 1), (1, 2), 2),
    ((1, 6, 5, 5), 6, (2, 2), (1, 2), (0, 1), (2, 1), 6),         # depthwise
    ((1, 2, 4, 4, 5), 3, (2, 2, 3), (1, 2, 1), (1, 0, 1), (), 1),  # 3-D
]


@pytest.mark.parametrize("shape,f,kernel,stride,pad,dilate,groups", CONV_CASES)
@pytest.mark.parametrize("no_bias", [False, True])
def test_convolution_matches_direct_loops(shape, f, kernel, stride, pad, dilate, groups, no_bias):
    x = RNG.standard_normal(shape)
    w = RNG.standard_normal((f, shape[1] // groups) + kernel)
    b = None if no_bias else RNG.standard_normal(f)
    args = [nd64(x), nd64(w)] + ([] if no_bias else [nd64(b)])
    got = mx.nd.Convolution(*args, kernel=kernel, stride=stride, pad=pad, dilate=dilate,
                            num_filter=f, num_group=groups, no_bias=no_bias)
    want = ref_conv(x, w, b, kernel, stride, pad, dilate, groups)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_convolution_float32_and_float16():
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    want = ref_conv(x.astype(np.float64), w.astype(np.float64), None, (3, 3), pad=(1, 1))
    got = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), kernel=(3, 3), pad=(1, 1),
                            num_filter=4, no_bias=True)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-4)
    got16 = mx.nd.Convolution(mx.nd.array(x, dtype="float16"), mx.nd.array(w, dtype="float16"),
                              kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True)
    assert got16.dtype == np.float16
    np.testing.assert_allclose(got16.asnumpy(), want, rtol=2e-2, atol=5e-2)


def test_convolution_batch_chunks_match_one_pass(monkeypatch):
    """A column buffer limit that forces one image per chunk gives the same values (forward,
    deconvolution and weight gradient accumulate across chunks)."""
    import mxlite.ops.conv as conv
    x = nd64(RNG.standard_normal((3, 2, 5, 5)))
    w = nd64(RNG.standard_normal((4, 2, 3, 3)))
    x.attach_grad()
    w.attach_grad()

    def run():
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)
            loss = (y * y).sum()
        loss.backward()
        return y.asnumpy(), x.grad.asnumpy(), w.grad.asnumpy()

    whole = run()
    monkeypatch.setattr(conv, "_COL_LIMIT", 1)
    for a, b in zip(whole, run()):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# ---- Deconvolution ----------------------------------------------------------------------------
DECONV_CASES = [
    # (data shape, num_filter, kernel, stride, pad, dilate, adj, groups)
    ((2, 3, 4), 2, (3,), (2,), (1,), (), (1,), 1),
    ((1, 4, 3, 4), 6, (3, 2), (2, 1), (1, 0), (1, 2), (1, 0), 2),
    ((2, 2, 3, 3), 3, (4, 4), (2, 2), (1, 1), (), (), 1),
    ((1, 2, 2, 3), 2, (2, 3), (1, 1), (0, 0), (), (2, 1), 1),       # adj >= stride
    ((1, 2, 2, 3, 2), 2, (2, 2, 3), (2, 1, 2), (0, 1, 1), (1, 1, 1), (1, 0, 0), 2),   # 3-D
]


@pytest.mark.parametrize("shape,f,kernel,stride,pad,dilate,adj,groups", DECONV_CASES)
def test_deconvolution_matches_direct_loops(shape, f, kernel, stride, pad, dilate, adj, groups):
    y = RNG.standard_normal(shape)
    w = RNG.standard_normal((shape[1], f // groups) + kernel)
    b = RNG.standard_normal(f)
    nd = len(kernel)
    d, a = _tuple(dilate, nd, 1), _tuple(adj, nd, 0)
    out_sp = [stride[i] * (shape[2 + i] - 1) + d[i] * (kernel[i] - 1) + 1 - 2 * pad[i] + a[i]
              for i in range(nd)]
    got = mx.nd.Deconvolution(nd64(y), nd64(w), nd64(b), kernel=kernel, stride=stride, pad=pad,
                              dilate=dilate, adj=adj, num_filter=f, num_group=groups,
                              no_bias=False)
    want = ref_deconv(y, w, b, kernel, out_sp, stride, pad, dilate, groups)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_deconvolution_defaults_to_no_bias():
    y, w = nd64(np.ones((1, 1, 2))), nd64(np.ones((1, 1, 2)))
    assert mx.nd.Deconvolution(y, w, kernel=(2,), num_filter=1).asnumpy().tolist() == \
        [[[1.0, 2.0, 1.0]]]
    with pytest.raises(MXNetError):
        mx.nd.Deconvolution(y, w, nd64(np.ones(1)), kernel=(2,), num_filter=1)


@pytest.mark.parametrize("in_size,kernel,stride,target", [(4, 3, 2, 8), (4, 3, 2, 9),
                                                          (5, 4, 1, 7), (3, 3, 3, 9)])
def test_deconvolution_target_shape(in_size, kernel, stride, target):
    """MXNet's rule: total padding t = s*(in-1) + k - target; pad = ceil(t/2), adj = t % 2."""
    y = RNG.standard_normal((1, 1, in_size))
    w = RNG.standard_normal((1, 1, kernel))
    got = mx.nd.Deconvolution(nd64(y), nd64(w), kernel=(kernel,), stride=(stride,),
                              target_shape=(target,), num_filter=1, pad=(5,), adj=(3,))
    t = stride * (in_size - 1) + kernel - target
    want = ref_deconv(y, w, None, (kernel,), [target], (stride,), ((t + 1) // 2,))
    assert got.shape == (1, 1, target)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape,f,kernel,stride,pad,dilate,groups", CONV_CASES)
def test_deconvolution_is_the_adjoint_of_convolution(shape, f, kernel, stride, pad, dilate,
                                                     groups):
    """<conv(x), y> == <x, deconv(y)> with adj restoring x's size."""
    x = RNG.standard_normal(shape)
    w = RNG.standard_normal((f, shape[1] // groups) + kernel)
    kw = dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate, num_group=groups)
    cx = mx.nd.Convolution(nd64(x), nd64(w), num_filter=f, no_bias=True, **kw)
    y = RNG.standard_normal(cx.shape)
    nd = len(kernel)
    s, p, d = _tuple(stride, nd, 1), _tuple(pad, nd, 0), _tuple(dilate, nd, 1)
    adj = tuple((shape[2 + i] + 2 * p[i] - d[i] * (kernel[i] - 1) - 1) % s[i] for i in range(nd))
    dy = mx.nd.Deconvolution(nd64(y), nd64(w), num_filter=shape[1], adj=adj, **kw)
    assert dy.shape == x.shape
    np.testing.assert_allclose(np.vdot(cx.asnumpy(), y), np.vdot(x, dy.asnumpy()), rtol=1e-11)


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_convolution_and_gradients_match_torch():
    x = RNG.standard_normal((3, 4, 9, 8))
    w = RNG.standard_normal((6, 2, 3, 3))
    b = RNG.standard_normal(6)
    X, W, B = nd64(x), nd64(w), nd64(b)
    for a in (X, W, B):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(X, W, B, kernel=(3, 3), stride=(2, 1), pad=(1, 2),
                              dilate=(2, 1), num_filter=6, num_group=2)
        (y * y).sum().backward()
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, stride=(2, 1), padding=(1, 2), dilation=(2, 1),
                                    groups=2)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.asnumpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    for mine, theirs in ((X, tx), (W, tw), (B, tb)):
        np.testing.assert_allclose(mine.grad.asnumpy(), theirs.grad.numpy(), rtol=1e-11,
                                   atol=1e-11)


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_deconvolution_matches_torch():
    y = RNG.standard_normal((2, 4, 5, 3))
    w = RNG.standard_normal((4, 3, 3, 2))
    got = mx.nd.Deconvolution(nd64(y), nd64(w), kernel=(3, 2), stride=(2, 3), pad=(1, 0),
                              adj=(1, 2), num_filter=6, num_group=2)
    want = torch.nn.functional.conv_transpose2d(torch.tensor(y), torch.tensor(w),
                                                stride=(2, 3), padding=(1, 0),
                                                output_padding=(1, 2), groups=2)
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_gradient_penalty_through_convolution_matches_finite_differences():
    """The WGAN-GP pattern: d/dW of ||d conv(x, W)/dx||^2 (MXNet returned an error)."""
    x = nd64(RNG.standard_normal((2, 2, 5, 5)))
    w0 = RNG.standard_normal((3, 2, 3, 3))

    def penalty(wv, need_grad):
        W = nd64(wv)
        W.attach_grad()
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(x, W, kernel=(3, 3), num_filter=3, no_bias=True)
            out = mx.nd.tanh(y).sum()
            (gx,) = mx.autograd.grad(out, [x], create_graph=True)
            pen = (gx * gx).sum()
        if need_grad:
            pen.backward()
            return W.grad.asnumpy()
        return float(pen.asscalar())

    grad = penalty(w0, True)
    u = RNG.standard_normal(w0.shape)
    eps = 1e-6
    fd = (penalty(w0 + eps * u, False) - penalty(w0 - eps * u, False)) / (2 * eps)
    np.testing.assert_allclose(np.vdot(grad, u), fd, rtol=1e-6)


# ---- shapes, parameters, errors ------------------------------------------------------------
def test_list_inputs_and_backward_shape():
    conv = mx.nd.Convolution.op
    attrs = conv.parse_attrs({"kernel": (3, 3), "num_filter": 8, "num_group": 2})
    assert conv.list_inputs(attrs) == ("data", "weight", "bias")
    assert conv.list_inputs(conv.parse_attrs({"kernel": "(3,3)", "num_filter": "8",
                                              "no_bias": "True"})) == ("data", "weight")
    from mxlite.ops.shape_partial import infer_shape_partial
    ins, outs = infer_shape_partial(conv, [(4, 6, 10, 10), None, None], attrs)
    assert ins == [(4, 6, 10, 10), (8, 3, 3, 3), (8,)] and outs == [(4, 8, 8, 8)]
    deconv = mx.nd.Deconvolution.op
    attrs = deconv.parse_attrs({"kernel": (2, 2), "stride": (2, 2), "num_filter": 4,
                                "no_bias": False})
    ins, outs = infer_shape_partial(deconv, [(1, 6, 3, 3), None, None], attrs)
    assert ins == [(1, 6, 3, 3), (6, 4, 2, 2), (4,)] and outs == [(1, 4, 6, 6)]


def _assert_error_names(call, words):
    """call() raises MXNetError whose message holds every one of ``words``."""
    with pytest.raises(MXNetError) as info:
        call()
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("call,words", [
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 3, 5, 5)), mx.nd.ones((4, 2, 3, 3)),
                               kernel=(3, 3), num_filter=4, no_bias=True),
     ["Convolution", "weight", "(4, 2, 3, 3)", "(4, 3, 3, 3)"]),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 3, 2, 5)), mx.nd.ones((4, 3, 3, 3)),
                               kernel=(3, 3), num_filter=4, no_bias=True),
     ["Convolution", "kernel", "larger than the padded input", "(1, 3, 2, 5)"]),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 3, 5, 5)), mx.nd.ones((4, 1, 3, 3)),
                               kernel=(3, 3), num_filter=4, num_group=3, no_bias=True),
     ["Convolution", "num_group=3", "num_filter"]),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 3, 5, 5)), mx.nd.ones((4, 3, 3)),
                               kernel=(3,), num_filter=4, no_bias=True),
     ["Convolution", "data", "3-D", "(1, 3, 5, 5)"]),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 3, 5, 5)), mx.nd.ones((4, 3, 3, 3)),
                               mx.nd.ones((3,)), kernel=(3, 3), num_filter=4),
     ["Convolution", "bias", "(3,)", "(4,)"]),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 3, 5, 5)), mx.nd.ones((4, 3, 3, 3)),
                               kernel=(3, 3), stride=(1, 1, 1), num_filter=4, no_bias=True),
     ["Convolution", "stride"]),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 3, 5, 5)), mx.nd.ones((4, 3, 3, 3)),
                               kernel=(3, 3), num_filter=4, no_bias=True, layout="NHWC"),
     ["Convolution", "layout", "NHWC"]),
    (lambda: mx.nd.Deconvolution(mx.nd.ones((1, 4, 3, 3)), mx.nd.ones((4, 2, 2, 2)),
                                 kernel=(2, 2), num_filter=6, num_group=4),
     ["Deconvolution", "num_group=4"]),
    (lambda: mx.nd.Deconvolution(mx.nd.ones((1, 4, 3, 3)), mx.nd.ones((4, 3, 2, 2)),
                                 kernel=(2, 2), num_filter=2),
     ["Deconvolution", "weight", "(4, 2, 2, 2)"]),
    (lambda: mx.nd.Deconvolution(mx.nd.ones((1, 1, 3)), mx.nd.ones((1, 1, 2)), kernel=(2,),
                                 num_filter=1, target_shape=(9,)),
     ["Deconvolution", "target_shape", "too big"]),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 1, 5), dtype="int32"),
                               mx.nd.ones((1, 1, 2), dtype="int32"), kernel=(2,),
                               num_filter=1, no_bias=True),
     ["Convolution", "float"]),
])
def test_errors_name_op_parameter_and_shapes(call, words):
    _assert_error_names(call, words)


# ---- Pooling -------------------------------------------------------------------------------
POOL_CASES = [
    # (shape, kernel, stride, pad, convention)
    ((2, 3, 9), (3,), (2,), (1,), "valid"),
    ((2, 3, 9), (2,), (3,), (0,), "full"),
    ((1, 2, 7, 6), (3, 2), (2, 2), (1, 1), "valid"),
    ((1, 2, 7, 6), (3, 3), (2, 2), (1, 1), "full"),
    ((1, 2, 5, 5), (2, 2), (3, 3), (1, 1), "full"),     # a window of padding only
    ((1, 1, 4, 5, 4), (2, 3, 2), (2, 1, 2), (0, 1, 1), "full"),
]


@pytest.mark.parametrize("shape,kernel,stride,pad,convention", POOL_CASES)
@pytest.mark.parametrize("pool_type,include_pad", [("max", True), ("avg", True),
                                                   ("avg", False), ("sum", True)])
def test_pooling_matches_direct_loops(shape, kernel, stride, pad, convention, pool_type,
                                      include_pad):
    x = RNG.standard_normal(shape)
    got = mx.nd.Pooling(nd64(x), kernel=kernel, stride=stride, pad=pad, pool_type=pool_type,
                        pooling_convention=convention, count_include_pad=include_pad)
    want = ref_pool(x, kernel, stride, pad, pool_type, convention, include_pad)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_pooling_defaults_and_global_pool():
    x = RNG.standard_normal((2, 3, 4, 5))
    got = mx.nd.Pooling(nd64(x), kernel=(2, 2))         # max, stride 1, valid
    np.testing.assert_allclose(got.asnumpy(), ref_pool(x, (2, 2), (1, 1), (0, 0), "max"))
    for pool_type, f in (("max", np.max), ("avg", np.mean), ("sum", np.sum)):
        got = mx.nd.Pooling(nd64(x), kernel=(7, 7), stride=(3, 3), global_pool=True,
                            pool_type=pool_type)
        np.testing.assert_allclose(got.asnumpy(), f(x, axis=(2, 3), keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("shape,kernel,stride,pad,convention", POOL_CASES[:5])
def test_pooling_backward_is_the_adjoint(shape, kernel, stride, pad, convention):
    """<pool(x), g> == <x, pool_backward(g)> for the linear pools; max pooling's gradient
    puts each window's head gradient on the window's maximum."""
    x = RNG.standard_normal(shape)
    for pool_type in ("avg", "sum"):
        X = nd64(x)
        X.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(X, kernel=kernel, stride=stride, pad=pad, pool_type=pool_type,
                              pooling_convention=convention)
        g = RNG.standard_normal(y.shape)
        y.backward(nd64(g))
        np.testing.assert_allclose(np.vdot(y.asnumpy(), g), np.vdot(x, X.grad.asnumpy()),
                                   rtol=1e-11)
    X = nd64(x)
    X.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(X, kernel=kernel, stride=stride, pad=pad,
                          pooling_convention=convention)
    g = RNG.standard_normal(y.shape)
    y.backward(nd64(g))
    want = np.zeros_like(x)
    nd = len(kernel)
    for n, c in itertools.product(*map(range, x.shape[:2])):
        for o in itertools.product(*map(range, y.shape[2:])):
            lo = [max(o[i] * stride[i] - pad[i], 0) for i in range(nd)]
            hi = [min(o[i] * stride[i] - pad[i] + kernel[i], shape[2 + i]) for i in range(nd)]
            region = x[(n, c) + tuple(slice(a, b) for a, b in zip(lo, hi))]
            if region.size:
                at = np.unravel_index(np.argmax(region), region.shape)
                want[(n, c) + tuple(a + i for a, i in zip(lo, at))] += g[(n, c) + o]
    np.testing.assert_allclose(X.grad.asnumpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pooling_matches_direct_loops(p):
    """MXNet's lp: signed powers, (sum x**p) ** (1/p) with the cube root keeping the sign;
    its gradient x**(p-1) / y**(p-1) per window."""
    x = RNG.standard_normal((2, 2, 6, 5))
    kernel, stride, pad = (2, 3), (2, 1), (1, 1)
    got = mx.nd.Pooling(nd64(x), kernel=kernel, stride=stride, pad=pad, pool_type="lp",
                        p_value=p, pooling_convention="full")
    s = ref_pool(x ** p, kernel, stride, pad, "sum", "full")
    np.testing.assert_allclose(got.asnumpy(), np.cbrt(s) if p == 3 else s ** (1 / p),
                               rtol=1e-12, atol=1e-12)
    X = nd64(x)
    X.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(X, kernel=(2, 1), stride=(2, 1), pool_type="lp", p_value=p)
    y.backward()
    yv = np.repeat(y.asnumpy(), 2, axis=2)
    np.testing.assert_allclose(X.grad.asnumpy(), (x / yv) ** (p - 1), rtol=1e-10)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_pooling_matches_torch(ceil_mode):
    x = RNG.standard_normal((2, 3, 11, 10))
    conv = "full" if ceil_mode else "valid"
    t = torch.tensor(x)
    F = torch.nn.functional
    got = mx.nd.Pooling(nd64(x), kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                        pooling_convention=conv)
    np.testing.assert_allclose(got.asnumpy(), F.max_pool2d(t, 3, 2, 1, ceil_mode=ceil_mode))
    for include in (True, False):
        got = mx.nd.Pooling(nd64(x), kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                            count_include_pad=include)
        want = F.avg_pool2d(t, 3, 2, 1, count_include_pad=include)
        np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call,words", [
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(3, 3), pool_type="median"),
     ["Pooling", "pool_type", "median"]),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(3, 3), pool_type="lp"),
     ["Pooling", "lp", "p_value"]),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(3, 3), pool_type="lp",
                           p_value=4), ["Pooling", "p_value=4"]),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(5, 5), pad=(0, 0)),
     ["Pooling", "kernel=(5, 5)", "larger than the padded input", "(1, 1, 4, 4)"]),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2,)),
     ["Pooling", "kernel=(2,)"]),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4))), ["Pooling", "kernel is required"]),
    (lambda: mx.nd.Pooling(mx.nd.ones((4, 4)), kernel=(2,)), ["Pooling", "(4, 4)"]),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2),
                           pooling_convention="same"), ["Pooling", "same"]),
])
def test_pooling_errors(call, words):
    with pytest.raises(MXNetError) as info:
        call()
    for word in words:
        assert word in str(info.value)


# ---- UpSampling --------------------------------------------------------------------------------
def ref_nearest(x, s):
    return x.repeat(s, axis=2).repeat(s, axis=3)


def test_upsampling_nearest_single_and_multi_input():
    a = RNG.standard_normal((2, 3, 2, 3))
    b = RNG.standard_normal((2, 1, 4, 6))
    got = mx.nd.UpSampling(nd64(a), scale=3, sample_type="nearest")
    np.testing.assert_array_equal(got.asnumpy(), ref_nearest(a, 3))
    got = mx.nd.UpSampling(nd64(a), nd64(b), scale=2, sample_type="nearest")
    np.testing.assert_array_equal(got.asnumpy(),
                                  np.concatenate([ref_nearest(a, 2), b], axis=1))
    a = RNG.standard_normal((2, 3, 2, 4))
    c = RNG.standard_normal((2, 3, 1, 2))
    got = mx.nd.UpSampling(nd64(a), nd64(c), scale=2, sample_type="nearest",
                           multi_input_mode="sum", num_args=2)
    np.testing.assert_allclose(got.asnumpy(), ref_nearest(a, 2) + ref_nearest(c, 4))


def test_upsampling_gradient_sums_blocks():
    a = nd64(RNG.standard_normal((1, 2, 2, 2)))
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.UpSampling(a, scale=2, sample_type="nearest")
    g = RNG.standard_normal(y.shape)
    y.backward(nd64(g))
    want = g.reshape(1, 2, 2, 2, 2, 2).sum(axis=(3, 5))
    np.testing.assert_allclose(a.grad.asnumpy(), want, rtol=1e-12)


@pytest.mark.parametrize("scale", [1, 2, 3, 4])
def test_upsampling_bilinear_is_mxnets_depthwise_deconvolution(scale):
    """kernel 2s - s%2, stride s, pad ceil((s-1)/2), one group per channel (MXNet's rule;
    values checked against MXNet 1.9.1 for scales 2 and 3 while writing this)."""
    k = 2 * scale - scale % 2
    x = RNG.standard_normal((2, 3, 3, 4))
    w = RNG.standard_normal((3, 1, k, k))
    got = mx.nd.UpSampling(nd64(x), nd64(w), scale=scale, sample_type="bilinear",
                           num_filter=3)
    pad = -(-(scale - 1) // 2)
    want = ref_deconv(x, w, None, (k, k), (3 * scale, 4 * scale), (scale, scale), (pad, pad),
                      groups=3)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call,words", [
    (lambda: mx.nd.UpSampling(mx.nd.ones((1, 1, 2, 2)), scale=2, sample_type="bilinear",
                              num_filter=1), ["UpSampling", "bilinear", "2 inputs"]),
    (lambda: mx.nd.UpSampling(mx.nd.ones((1, 2, 2, 2)), mx.nd.ones((2, 1, 3, 3)), scale=2,
                              sample_type="bilinear", num_filter=2),
     ["UpSampling", "weight", "(2, 1, 3, 3)", "(num_filter, 1, 4, 4)"]),
    (lambda: mx.nd.UpSampling(mx.nd.ones((1, 2, 2, 2)), mx.nd.ones((2, 1, 4, 4)), scale=2,
                              sample_type="bilinear"), ["UpSampling", "num_filter=0"]),
    (lambda: mx.nd.UpSampling(mx.nd.ones((1, 1, 2, 2)), mx.nd.ones((1, 1, 3, 3)), scale=2,
                              sample_type="nearest"), ["UpSampling", "(1, 1, 3, 3)"]),
    (lambda: mx.nd.UpSampling(mx.nd.ones((1, 2, 2)), scale=2, sample_type="nearest"),
     ["UpSampling", "4-D"]),
])
def test_upsampling_errors(call, words):
    _assert_error_names(call, words)


def test_max_pooling_ties_go_to_the_first_maximum():
    """MXNet's rule (checked against MXNet 1.9.1): the whole window gradient goes to the
    first maximum in scan order."""
    x = nd64(np.array([[[1.0, 3.0, 3.0, 2.0]]]))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(x, kernel=(3,), pool_type="max")
    y.backward()
    assert x.grad.asnumpy().tolist() == [[[0.0, 2.0, 0.0, 0.0]]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("onednn_on", [True, False])
def test_max_pooling_of_a_window_with_nan_is_nan_and_its_gradient_goes_to_the_nan(
        dtype, onednn_on, device):
    """A NaN anywhere in a window (first or not) is the window's maximum, as NumPy's max,
    and takes the gradient; the other windows are untouched. MXNet skipped NaNs (and the
    reference kernel used to keep only a leading one), so oneDNN's path and the reference
    kernel, CPU and GPU, must all agree on this."""
    from mxlite.ops import onednn
    x = np.arange(32, dtype=dtype).reshape(1, 2, 4, 4)
    x[0, 0, 0, 1] = np.nan          # not the first of its window
    x[0, 1, 2, 2] = np.nan          # the first of its window
    with onednn.enabled(onednn_on):
        X = mx.nd.array(x, ctx=device, dtype=dtype)
        X.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(X, kernel=(2, 2), stride=(2, 2), pool_type="max")
        y.backward(mx.nd.arange(1, 9, ctx=device, dtype=dtype).reshape(1, 2, 2, 2))
    windows = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
    np.testing.assert_array_equal(y.asnumpy(), windows.max(axis=-1))     # NaN propagates
    head = np.arange(1, 9, dtype=dtype).reshape(2, 2, 2)
    grad = np.zeros_like(x)
    for c in range(2):
        for i in range(2):
            for j in range(2):
                win = x[0, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2].ravel()
                nan = np.flatnonzero(np.isnan(win))
                k = nan[0] if nan.size else int(np.argmax(win))   # the first NaN, else max
                grad[0, c, 2 * i + k // 2, 2 * j + k % 2] = head[c, i, j]
    np.testing.assert_array_equal(X.grad.asnumpy(), grad)


# ---- random geometries -----------------------------------------------------------------------
from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def conv_geometries(draw):
    nd = draw(st.integers(1, 2))
    groups = draw(st.integers(1, 3))
    c, f = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dilate = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    pad = tuple(draw(st.integers(0, 2)) for _ in range(nd))
    span = [dilate[i] * (kernel[i] - 1) + 1 for i in range(nd)]
    size = tuple(max(1, span[i] - 2 * pad[i]) + draw(st.integers(0, 4)) for i in range(nd))
    n = draw(st.integers(1, 2))
    return (n, c) + size, f, kernel, stride, pad, dilate, groups


@settings(max_examples=60, deadline=None)
@given(conv_geometries())
def test_convolution_and_its_adjoint_on_random_geometries(geometry):
    shape, f, kernel, stride, pad, dilate, groups = geometry
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((f, shape[1] // groups) + kernel)
    kw = dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate, num_group=groups)
    y = mx.nd.Convolution(nd64(x), nd64(w), num_filter=f, no_bias=True, **kw)
    np.testing.assert_allclose(y.asnumpy(), ref_conv(x, w, None, kernel, stride, pad, dilate,
                                                     groups), rtol=1e-11, atol=1e-11)
    g = rng.standard_normal(y.shape)
    adj = tuple((shape[2 + i] + 2 * pad[i] - dilate[i] * (kernel[i] - 1) - 1) % stride[i]
                for i in range(len(kernel)))
    dx = mx.nd.Deconvolution(nd64(g), nd64(w), num_filter=shape[1], adj=adj, **kw)
    np.testing.assert_allclose(np.vdot(y.asnumpy(), g), np.vdot(x, dx.asnumpy()), rtol=1e-10,
                               atol=1e-10)
    dw = mx.nd._internal._conv_weight_grad(nd64(x), nd64(g), num_filter=f, **kw)
    np.testing.assert_allclose(np.vdot(y.asnumpy(), g), np.vdot(w, dw.asnumpy()), rtol=1e-10,
                               atol=1e-10)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2).flatmap(lambda nd: st.tuples(
    st.tuples(*[st.integers(1, 3)] * nd), st.tuples(*[st.integers(1, 3)] * nd),
    st.tuples(*[st.integers(0, 2)] * nd), st.tuples(*[st.integers(0, 5)] * nd))),
    st.sampled_from(["max", "avg", "sum"]), st.sampled_from(["valid", "full"]), st.booleans())
def test_pooling_on_random_geometries(geometry, pool_type, convention, include_pad):
    kernel, stride, pad, extra = geometry
    shape = (2, 2) + tuple(max(1, k - 2 * p) + e for k, p, e in zip(kernel, pad, extra))
    x = np.random.default_rng(0).standard_normal(shape)
    got = mx.nd.Pooling(nd64(x), kernel=kernel, stride=stride, pad=pad, pool_type=pool_type,
                        pooling_convention=convention, count_include_pad=include_pad)
    want = ref_pool(x, kernel, stride, pad, pool_type, convention, include_pad)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_float16_convolution_runs_in_float32_chunks(monkeypatch):
    """A float16 call larger than a chunk computes on float32 copies of batch chunks (no
    float32 copy of the whole array): the output, both input gradients and the weight
    gradient equal the single-pass float16 call's (the weight gradient up to the float32
    sums' order)."""
    from mxlite.ops import conv
    rng = np.random.default_rng(5)
    x = mx.nd.array(rng.normal(size=(6, 3, 9, 9)), dtype="float16")
    w = mx.nd.array(rng.normal(size=(4, 3, 3, 3)), dtype="float16")
    b = mx.nd.array(rng.normal(size=(4,)), dtype="float16")

    def run():
        xs, ws, bs = (a.copy() for a in (x, w, b))
        for a in (xs, ws, bs):
            a.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(xs, ws, bs, kernel=(3, 3), num_filter=4, pad=(1, 1))
            p = mx.nd.Pooling(y, kernel=(2, 2), stride=(2, 2), pool_type="max")
        p.backward(mx.nd.ones_like(p))
        return [a.asnumpy() for a in (p, y, xs.grad, ws.grad, bs.grad)]
    whole = run()
    monkeypatch.setattr(conv, "_LAYOUT_CHUNK", 200)          # one image per chunk
    copies = []
    moved = conv._moved
    monkeypatch.setattr(conv, "_moved", lambda xp, a, dtype, last=True: (
        copies.append((a.shape, dtype, last)), moved(xp, a, dtype, last))[1])
    chunked = run()
    assert (x.shape[0] and ((1,) + x.shape[1:], np.float32, False) in
            [(s, np.dtype(d), last) for s, d, last in copies])   # image-sized float32 copies
    assert all(np.prod(s) <= 4 * 9 * 9 for s, _, _ in copies)   # never the whole batch
    for got, want in zip(chunked[:3], whole[:3]):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want)
    for got, want in zip(chunked[3:], whole[3:]):
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3)
