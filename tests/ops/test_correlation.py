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
    ([(1, 1, 3, 3)] * 2, dict(max_displacement=10 ** 5, pad_size=10 ** 5), "padded plane"),
    ([(1, 1, 3, 3)] * 2, dict(max_displacement=3000, pad_size=3000, stride1=1000),
     "displacements"),
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


# ---- DeformablePSROIPooling -------------------------------------------------------------------
def _dps(**kw):
    return lambda *xs: mx.nd.contrib.DeformablePSROIPooling(*xs, **kw)


@pytest.mark.parametrize("case", sorted(SCRIPT.DPSROI))
def test_dpsroi_mxnet_fixture(case):
    _, classes, kw = SCRIPT.DPSROI[case]
    _replay(case, _dps(**kw), 3 if classes else 2, (0, 2) if classes else (0,))


def _dps_reference(data, rois, trans, scale, o_dim, group, pooled, part=0, spp=1, std=0.0):
    """DeformablePSROIPooling and its sample counts, one sample at a time (MXNet's
    definition: rounded rois, skipped and clamped samples)."""
    n, c, h, w = data.shape
    part = part or pooled
    ncls = 1 if trans is None else trans.shape[1] // 2
    out = np.zeros((len(rois), o_dim, pooled, pooled))
    count = np.zeros_like(out)
    rnd = lambda v: np.floor(abs(v) + 0.5) * np.sign(v)                 # noqa: E731
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        sw, sh = rnd(x1) * scale - 0.5, rnd(y1) * scale - 0.5
        rw = max((rnd(x2) + 1) * scale - 0.5 - sw, 0.1)
        rh = max((rnd(y2) + 1) * scale - 0.5 - sh, 0.1)
        for o in range(o_dim):
            for i in range(pooled):
                for j in range(pooled):
                    pi, pj = int(i / pooled * part), int(j / pooled * part)
                    k = o // (o_dim // ncls)
                    tx = 0 if trans is None else trans[r, 2 * k, pi, pj] * std
                    ty = 0 if trans is None else trans[r, 2 * k + 1, pi, pj] * std
                    gi = min(i * group // pooled, group - 1)
                    gj = min(j * group // pooled, group - 1)
                    img = data[int(b), (o * group + gi) * group + gj]
                    total, seen = 0.0, 0
                    for a in range(spp):
                        for e in range(spp):
                            x = sw + j * rw / pooled + tx * rw + e * rw / pooled / spp
                            y = sh + i * rh / pooled + ty * rh + a * rh / pooled / spp
                            if not (-0.5 <= x <= w - 0.5 and -0.5 <= y <= h - 0.5):
                                continue
                            x, y = min(max(x, 0), w - 1), min(max(y, 0), h - 1)
                            x0, y0 = int(np.floor(x)), int(np.floor(y))
                            x1_, y1_ = int(np.ceil(x)), int(np.ceil(y))
                            fx, fy = x - x0, y - y0
                            total += ((1 - fx) * (1 - fy) * img[y0, x0] + fx * (1 - fy)
                                      * img[y0, x1_] + (1 - fx) * fy * img[y1_, x0]
                                      + fx * fy * img[y1_, x1_])
                            seen += 1
                    out[r, o, i, j] = total / seen if seen else 0.0
                    count[r, o, i, j] = seen
    return out, count


_REF_ROIS = np.array([[0, 1.2, 0.7, 6.3, 5.1], [1, -3.0, 2.5, 4.0, 9.0],
                      [0, 3.3, 3.3, 3.6, 3.4], [1, 6.0, -2.0, 20.0, 2.0]])


@pytest.mark.parametrize("kw", [
    dict(scale=1.0, o_dim=2, group=2, pooled=3, spp=2, std=0.2, part=2),
    dict(scale=0.6, o_dim=4, group=3, pooled=2, spp=3, std=0.5, ncls=2),
    dict(scale=0.8, o_dim=1, group=2, pooled=3, spp=1, std=0.0, ncls=0),
])
def test_dpsroi_loop_reference(kw):
    """Values and the hidden top_count against the sample-by-sample reference."""
    rng = np.random.default_rng(4)
    kw = dict(kw)
    ncls = kw.pop("ncls", 1)
    data = rng.normal(size=(2, kw["o_dim"] * kw["group"] ** 2, 7, 8))
    part = kw.get("part", 0) or kw["pooled"]
    trans = rng.uniform(-1, 1, (4, 2 * ncls, part, part)) if ncls else None
    want, count = _dps_reference(data, _REF_ROIS, trans, **kw)
    params = dict(spatial_scale=kw["scale"], output_dim=kw["o_dim"], group_size=kw["group"],
                  pooled_size=kw["pooled"], part_size=kw.get("part", 0),
                  sample_per_part=kw["spp"], trans_std=kw["std"], no_trans=trans is None)
    ins = [mx.nd.array(data, dtype="float64"), mx.nd.array(_REF_ROIS, dtype="float64")]
    if trans is not None:
        ins.append(mx.nd.array(trans, dtype="float64"))
    # trans_std and spatial_scale are float32 parameters (as MXNet's): 1e-7 relative
    y = mx.nd.contrib.DeformablePSROIPooling(*ins, **params)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(_top_count(ins, params), count)


def _top_count(ins, params):
    """The hidden second output, from the op's compute function (a call shows one)."""
    from mxlite.device import run_context
    from mxlite.ops.registry import get_op
    op = get_op("_contrib_DeformablePSROIPooling")
    attrs = op.parse_attrs(params)
    shapes = op.infer_shape([x.shape for x in ins], attrs)
    outs = [np.empty(s) for s in shapes]
    op.compute["cpu"](run_context(mx.cpu()), [x.asnumpy() for x in ins], outs, attrs)
    return outs[1]


def test_dpsroi_negative_batch_index_gives_zeros():
    data = mx.nd.ones((1, 4, 5, 5))
    rois = mx.nd.array([[-1, 0, 0, 3, 3], [0, 0, 0, 3, 3]])
    y = mx.nd.contrib.DeformablePSROIPooling(data, rois, spatial_scale=1.0, output_dim=1,
                                             group_size=2, pooled_size=2, no_trans=True)
    np.testing.assert_array_equal(y.asnumpy()[0], 0.0)
    np.testing.assert_array_equal(y.asnumpy()[1], 1.0)


@pytest.mark.parametrize("dx, dy", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_dpsroi_scatter_is_the_samplers_adjoint(dx, dy):
    rng = np.random.default_rng(5)
    kw = dict(spatial_scale=0.9, output_dim=2, group_size=2, pooled_size=3, part_size=2,
              sample_per_part=2, trans_std=0.4)
    data = mx.nd.array(rng.normal(size=(2, 8, 6, 7)), dtype="float64")
    rois = mx.nd.array(_REF_ROIS, dtype="float64")
    trans = mx.nd.array(rng.uniform(-1, 1, (4, 2, 2, 2)), dtype="float64")
    s = mx.nd._internal._dpsroi_sample(data, rois, trans, dx=dx, dy=dy, **kw)
    g = mx.nd.array(rng.normal(size=s.shape), dtype="float64")
    a = mx.nd._internal._dpsroi_scatter(g, rois, trans, dx=dx, dy=dy, data_shape=data.shape,
                                        **kw)
    assert np.isclose((g * s).sum().asscalar(), (a * data).sum().asscalar(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_dpsroi_dtypes(dtype):
    rng = np.random.default_rng(6)
    data = rng.uniform(-1, 1, (2, 8, 7, 8))
    trans = rng.uniform(-1, 1, (4, 2, 2, 2))
    kw = dict(spatial_scale=1.0, output_dim=2, group_size=2, pooled_size=2, sample_per_part=2,
              trans_std=0.1)
    y = mx.nd.contrib.DeformablePSROIPooling(
        mx.nd.array(data, dtype=dtype), mx.nd.array(_REF_ROIS, dtype=dtype),
        mx.nd.array(trans, dtype=dtype), **kw)
    assert y.dtype == np.dtype(dtype)
    cast = lambda a: a.astype(dtype).astype("float64")                  # noqa: E731
    want, _ = _dps_reference(cast(data), cast(_REF_ROIS), cast(trans), 1.0, 2, 2, 2, spp=2,
                             std=float(np.float32(0.1)))
    tol = 3e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(y.asnumpy(), want, rtol=tol, atol=tol)


def test_dpsroi_symbol_inputs_and_outputs():
    kw = dict(spatial_scale=1.0, output_dim=1, group_size=1, pooled_size=2)
    sym = mx.sym.contrib.DeformablePSROIPooling(mx.sym.var("d"), mx.sym.var("r"),
                                                mx.sym.var("t"), **kw)
    assert sym.list_arguments() == ["d", "r", "t"]
    assert len(sym.list_outputs()) == 1
    plain = mx.sym.contrib.DeformablePSROIPooling(mx.sym.var("d"), mx.sym.var("r"),
                                                  no_trans=True, **kw)
    assert plain.list_arguments() == ["d", "r"]


_OK = dict(spatial_scale=1.0, output_dim=2, group_size=2, pooled_size=2)


@pytest.mark.parametrize("shapes, kw, match", [
    ([(1, 8, 5, 5), (2, 5), (2, 2, 2, 2)], {}, None),
    ([(1, 7, 5, 5), (2, 5), (2, 2, 2, 2)], {}, "fewer than output_dim"),
    ([(1, 8, 5), (2, 5), (2, 2, 2, 2)], {}, "4-D"),
    ([(1, 8, 5, 5), (2, 4), (2, 2, 2, 2)], {}, "rois must be"),
    ([(1, 8, 5, 5), (2, 5), (3, 2, 2, 2)], {}, "trans must be"),
    ([(1, 8, 5, 5), (2, 5), (2, 3, 2, 2)], {}, "trans must be"),
    ([(1, 8, 5, 5), (2, 5), (2, 6, 2, 2)], {}, "trans must be"),       # 3 classes, 2 outputs
    ([(1, 8, 5, 5), (2, 5), (2, 2, 3, 3)], {}, "trans must be"),
    ([(1, 8, 5, 5), (2, 5), (2, 2, 2, 2)], dict(sample_per_part=0), "sample_per_part"),
    ([(1, 8, 5, 5), (2, 5), (2, 2, 2, 2)], dict(sample_per_part=10 ** 6), "samples per bin"),
    ([(1, 8, 5, 5), (2, 5), (2, 2, 2, 2)], dict(trans_std=1.5), r"\[0, 1\]"),
    ([(1, 8, 5, 5), (2, 5), (2, 2, 2, 2)], dict(spatial_scale=2.0), r"\[0, 1\]"),
    ([(1, 8, 5, 5), (2, 5), (2, 2, 2, 2)], dict(part_size=-1), "part_size"),
])
def test_dpsroi_shape_errors(shapes, kw, match):
    data, rois, trans = (mx.nd.zeros(s) for s in shapes)
    call = lambda: mx.nd.contrib.DeformablePSROIPooling(data, rois, trans,        # noqa: E731
                                                        **dict(_OK, **kw))
    if match is None:
        assert call().shape == (2, 2, 2, 2)
        return
    with pytest.raises(MXNetError, match=f"DeformablePSROIPooling.*{match}"):
        call()


@pytest.mark.parametrize("rois, match", [([[2, 0, 0, 3, 3]], "out of range"),
                                         ([[0, np.nan, 0, 3, 3]], "finite"),
                                         ([[0, np.inf, 0, 3, 3]], "finite")])
def test_dpsroi_bad_rois(rois, match):
    with pytest.raises(MXNetError, match=f"DeformablePSROIPooling.*{match}"):
        mx.nd.contrib.DeformablePSROIPooling(mx.nd.zeros((2, 8, 5, 5)), mx.nd.array(rois),
                                             mx.nd.zeros((1, 2, 2, 2)), **_OK)


def test_dpsroi_dtype_errors():
    with pytest.raises(MXNetError, match="DeformablePSROIPooling: data, rois, trans must be"):
        mx.nd.contrib.DeformablePSROIPooling(mx.nd.zeros((1, 8, 5, 5)),
                                             mx.nd.zeros((2, 5), dtype="float64"),
                                             mx.nd.zeros((2, 2, 2, 2)), **_OK)


def test_empty_batches_and_rois():
    y = mx.nd.Correlation(mx.nd.ones((0, 1, 3, 3)), mx.nd.ones((0, 1, 3, 3)),
                          max_displacement=0)
    assert y.shape == (0, 1, 3, 3)
    z = mx.nd.contrib.DeformablePSROIPooling(mx.nd.ones((1, 4, 3, 3)), mx.nd.ones((0, 5)),
                                             mx.nd.ones((0, 2, 2, 2)), spatial_scale=1.0,
                                             output_dim=1, group_size=2, pooled_size=2)
    assert z.shape == (0, 1, 2, 2)


def test_dpsroi_output_past_memory_is_an_error():
    with pytest.raises(MXNetError, match="DeformablePSROIPooling: output shape"):
        mx.nd.contrib.DeformablePSROIPooling(mx.nd.ones((1, 1, 3, 3)), mx.nd.ones((1, 5)),
                                             spatial_scale=1.0, output_dim=1, group_size=1,
                                             pooled_size=10 ** 6, no_trans=True)
