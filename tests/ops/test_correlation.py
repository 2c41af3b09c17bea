"""Correlation and DeformablePSROIPooling (mxlite/ops/correlation.py): MXNet 1.9.1's outputs,
gradients and inferred shapes (tests/fixtures/make_correlation_fixture.py), loop-by-loop
NumPy references, the adjoint identities of the internal ops, dtypes and clear errors."""
import importlib.util
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
FIXTURE = np.load(os.path.join(FIXTURES, "correlation_mxnet.npz"))


def _script():
    spec = importlib.util.spec_from_file_location(
        "make_correlation_fixture", os.path.join(FIXTURES, "make_correlation_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


def _replay(case, fn, n_inputs, diff):
    """Run ``fn`` on the case's inputs in float64 and compare output and gradients."""
    ins = [mx.nd.array(FIXTURE[f"{case}/in{i}"], dtype="float64") for i in range(n_inputs)]
    for i in diff:
        ins[i].attach_grad()
    with mx.autograd.record():
        y = fn(*ins)
    y.backward(mx.nd.array(FIXTURE[f"{case}/head"], dtype="float64"))
    np.testing.assert_allclose(y.asnumpy(), FIXTURE[f"{case}/out"], rtol=1e-9, atol=1e-12)
    for i in diff:
        np.testing.assert_allclose(ins[i].grad.asnumpy(), FIXTURE[f"{case}/grad{i}"],
                                   rtol=1e-9, atol=1e-12, err_msg=f"gradient of input {i}")


# ---- Correlation ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(SCRIPT.CORRELATION))
def test_correlation_mxnet_fixture(case):
    _, kw = SCRIPT.CORRELATION[case]
    _replay(case, lambda a, b: mx.nd.Correlation(a, b, **kw), 2, (0, 1))


def test_correlation_shapes_match_mxnet():
    """Every shape MXNet inferred; where it raised, or its unsigned arithmetic wrapped to a
    nonsense size (more output rows than padded input rows), mxlite raises."""
    x = mx.sym.var("a")
    for h, w, k, md, s1, s2, pad, th, tw, q in FIXTURE["shape_table"].tolist():
        kw = dict(kernel_size=k, max_displacement=md, stride1=s1, stride2=s2, pad_size=pad)
        sym = mx.sym.Correlation(x, x, **kw)
        if th < 0 or th > h + 2 * pad or tw > w + 2 * pad:
            with pytest.raises(MXNetError, match="Correlation"):
                sym.infer_shape(a=(1, 2, h, w))
            continue
        _, (out,), _ = sym.infer_shape(a=(1, 2, h, w))
        assert out == (1, q, th, tw), (h, w, kw)


def _reference(a, b, k=1, md=1, s1=1, s2=1, pad=0, mult=True):
    """Correlation written as MXNet documents it, one output element at a time."""
    n, c, h, w = a.shape
    pa = np.pad(a, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    pb = np.pad(b, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    border = md + (k - 1) // 2
    th = -(-(h + 2 * pad - 2 * border) // s1)
    tw = -(-(w + 2 * pad - 2 * border) // s1)
    r = md // s2
    out = np.zeros((n, (2 * r + 1) ** 2, th, tw))
    for i in range(th):
        for j in range(tw):
            y1, x1 = i * s1 + md, j * s1 + md
            for q in range(out.shape[1]):
                y2 = y1 + (q // (2 * r + 1) - r) * s2
                x2 = x1 + (q % (2 * r + 1) - r) * s2
                p1 = pa[:, :, y1:y1 + k, x1:x1 + k]
                p2 = pb[:, :, y2:y2 + k, x2:x2 + k]
                f = p1 * p2 if mult else np.abs(p1 - p2)
                out[:, q, i, j] = f.sum(axis=(1, 2, 3)) / (k * k * c)
    return out


@pytest.mark.parametrize("kw", [dict(), dict(k=3, md=3, s1=2, s2=3, pad=2),
                                dict(k=1, md=4, s1=3, s2=1, pad=4, mult=False)])
def test_correlation_loop_reference(kw):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 8, 9)), rng.normal(size=(2, 3, 8, 9))
    names = dict(k="kernel_size", md="max_displacement", s1="stride1", s2="stride2",
                 pad="pad_size", mult="is_multiply")
    y = mx.nd.Correlation(mx.nd.array(a, dtype="float64"), mx.nd.array(b, dtype="float64"),
                          **{names[key]: v for key, v in kw.items()})
    np.testing.assert_allclose(y.asnumpy(), _reference(a, b, **kw), rtol=1e-12, atol=1e-14)


def test_correlation_blocks_match_one_block(monkeypatch):
    """Blocked over images and channels (small _CHUNK) the result is the same."""
    from mxlite.ops import correlation
    rng = np.random.default_rng(1)
    a = mx.nd.array(rng.normal(size=(3, 5, 7, 8)), dtype="float64")
    b = mx.nd.array(rng.normal(size=(3, 5, 7, 8)), dtype="float64")
    kw = dict(kernel_size=3, max_displacement=2, pad_size=1)
    want = mx.nd.Correlation(a, b, **kw).asnumpy()
    g = mx.nd.array(rng.normal(size=want.shape), dtype="float64")
    adj = mx.nd._internal._correlation_adjoint(g, a, b, side=2, **kw).asnumpy()
    monkeypatch.setattr(correlation, "_CHUNK", 64)
    np.testing.assert_allclose(mx.nd.Correlation(a, b, **kw).asnumpy(), want, rtol=1e-12)
    np.testing.assert_allclose(mx.nd._internal._correlation_adjoint(g, a, b, side=2, **kw)
                               .asnumpy(), adj, rtol=1e-12)


@pytest.mark.parametrize("mult", [True, False])
@pytest.mark.parametrize("side", [1, 2])
def test_correlation_adjoint_identity(mult, side):
    """<g, T(t)> == <A(g), t>: the tangent and adjoint ops are each other's transposes."""
    rng = np.random.default_rng(2)
    kw = dict(kernel_size=3, max_displacement=2, stride1=2, stride2=2, pad_size=2,
              is_multiply=mult)
    d1, d2, t = (mx.nd.array(rng.normal(size=(2, 3, 7, 6)), dtype="float64") for _ in range(3))
    tan = mx.nd._internal._correlation_tangent(t, d1, d2, side=side, **kw)
    g = mx.nd.array(rng.normal(size=tan.shape), dtype="float64")
    adj = mx.nd._internal._correlation_adjoint(g, d1, d2, side=side, **kw)
    assert np.isclose((g * tan).sum().asscalar(), (adj * t).sum().asscalar(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_correlation_dtypes(dtype):
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (1, 4, 6, 6)), rng.uniform(-1, 1, (1, 4, 6, 6))
    y = mx.nd.Correlation(mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype),
                          kernel_size=3, max_displacement=1)
    assert y.dtype == np.dtype(dtype)
    want = _reference(a.astype(dtype).astype("float64"), b.astype(dtype).astype("float64"),
                      k=3, md=1)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=2e-3 if dtype == "float16" else 1e-6,
                               atol=1e-3 if dtype == "float16" else 1e-7)


def test_correlation_symbol_shows_one_output():
    sym = mx.sym.Correlation(mx.sym.var("a"), mx.sym.var("b"))
    assert sym.list_outputs() == [f"{sym.name}_output"]
    assert sym.list_arguments() == ["a", "b"]


@pytest.mark.parametrize("shapes, kw, match", [
    ([(1, 2, 6, 6), (1, 2, 6, 5)], {}, "one shape"),
    ([(1, 2, 6), (1, 2, 6)], {}, "4-D"),
    ([(1, 2, 6, 6)] * 2, dict(kernel_size=2), "odd"),
    ([(1, 2, 6, 6)] * 2, dict(kernel_size=0), "odd"),
    ([(1, 2, 6, 6)] * 2, dict(stride1=0), "stride1"),
    ([(1, 2, 6, 6)] * 2, dict(stride2=0), "stride2"),
    ([(1, 2, 4, 4)] * 2, dict(kernel_size=3, max_displacement=1), "too small"),
    ([(1, 0, 6, 6)] * 2, {}, "channel"),
    ([(1, 2, 6, 6)] * 2, dict(max_displacement=-1), ">= 0"),
])
def test_correlation_errors(shapes, kw, match):
    a, b = (mx.nd.zeros(s) for s in shapes)
    with pytest.raises(MXNetError, match=f"Correlation.*{match}"):
        mx.nd.Correlation(a, b, **kw)


def test_correlation_dtype_errors():
    with pytest.raises(MXNetError, match="Correlation: data1, data2 must be float16"):
        mx.nd.Correlation(mx.nd.zeros((1, 1, 3, 3)), mx.nd.zeros((1, 1, 3, 3), dtype="float64"))
    with pytest.raises(MXNetError, match="Correlation"):
        mx.nd.Correlation(mx.nd.zeros((1, 1, 3, 3), dtype="int32"),
                          mx.nd.zeros((1, 1, 3, 3), dtype="int32"))
