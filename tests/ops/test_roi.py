"""ROIAlign and PSROIPooling (mxlite/ops/roi.py): MXNet 1.9.1's outputs and data gradients
(tests/fixtures/make_roi_fixture.py), direct NumPy references (a sample-by-sample ROIAlign,
a pixel-loop PSROIPooling), the adjoint identity, dtypes and clear errors."""
import importlib.util
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
FIXTURE = np.load(os.path.join(FIXTURES, "roi_mxnet.npz"))
CASES = sorted({k.split("/")[0] for k in FIXTURE.files if k.endswith("/rois")})


def _cases():
    spec = importlib.util.spec_from_file_location(
        "make_roi_fixture", os.path.join(FIXTURES, "make_roi_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES


@pytest.mark.parametrize("case", CASES)
def test_mxnet_fixture(case):
    op, _, _, kwargs = _cases()[case]
    f = {k: FIXTURE[f"{case}/{k}"] for k in ("data", "rois", "head", "out", "grad")
         if f"{case}/{k}" in FIXTURE.files}
    x = mx.nd.array(f["data"], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, op)(x, mx.nd.array(f["rois"], dtype="float64"), **kwargs)
    y.backward(mx.nd.array(f["head"], dtype="float64"))
    np.testing.assert_allclose(y.asnumpy(), f["out"], rtol=1e-10, atol=1e-12)
    if "grad" in f:             # MXNet's RROIAlign has no backward: test_adjoint_identity
        np.testing.assert_allclose(x.grad.asnumpy(), f["grad"], rtol=1e-10, atol=1e-12)


# ---- NumPy references, written sample by sample ---------------------------------------------
def _bilinear(img, y, x):
    """One ROIAlign sample (Detectron's border rules) of a (H, W) image."""
    h, w = img.shape
    if y < -1 or y > h or x < -1 or x > w:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    y1, x1 = (y0 + 1, x0 + 1)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[y0, x0] + (1 - ly) * lx * img[y0, x1]
            + ly * (1 - lx) * img[y1, x0] + ly * lx * img[y1, x1])


def _roi_align_ref(data, rois, pooled, scale, ratio=-1, ps=False, aligned=False):
    ph, pw = pooled
    c_out = data.shape[1] // (ph * pw) if ps else data.shape[1]
    out = np.zeros((len(rois), c_out, ph, pw))
    off, scale = 0.5 if aligned else 0.0, float(np.float32(scale))   # MXNet's float param
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        if b < 0:
            continue
        sx, sy = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sx, y2 * scale - off - sy
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else int(np.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(np.ceil(rw / pw))
        for c in range(c_out):
            for i in range(ph):
                for j in range(pw):
                    ch = c * ph * pw + i * pw + j if ps else c
                    img = data[int(b), ch]
                    total = sum(_bilinear(img, sy + i * bh + (iy + .5) * bh / gh,
                                          sx + j * bw + (ix + .5) * bw / gw)
                                for iy in range(gh) for ix in range(gw))
                    out[r, c, i, j] = total / (gh * gw)
    return out


def _c_round(v):
    return np.sign(v) * np.floor(abs(v) + 0.5)


def _psroi_ref(data, rois, scale, dim, pooled, group=0):
    group, scale = group or pooled, float(np.float32(scale))       # MXNet's float param
    h, w = data.shape[2:]
    out = np.zeros((len(rois), dim, pooled, pooled))
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        if b < 0:
            continue
        sx, sy = _c_round(x1) * scale, _c_round(y1) * scale
        rw = max((_c_round(x2) + 1) * scale - sx, 0.1)
        rh = max((_c_round(y2) + 1) * scale - sy, 0.1)
        bh, bw = rh / pooled, rw / pooled
        for c in range(dim):
            for i in range(pooled):
                for j in range(pooled):
                    h0 = min(max(int(np.floor(i * bh + sy)), 0), h)
                    h1 = min(max(int(np.ceil((i + 1) * bh + sy)), 0), h)
                    w0 = min(max(int(np.floor(j * bw + sx)), 0), w)
                    w1 = min(max(int(np.ceil((j + 1) * bw + sx)), 0), w)
                    gi = min(max(i * group // pooled, 0), group - 1)
                    gj = min(max(j * group // pooled, 0), group - 1)
                    patch = data[int(b), (c * group + gi) * group + gj, h0:h1, w0:w1]
                    out[r, c, i, j] = patch.mean() if patch.size else 0.0
    return out


ROIS = np.array([[1, 0.5, 1.0, 5.5, 4.0], [0, -3.0, 2.0, 2.0, 9.5], [-1, 1.0, 1.0, 3.0, 3.0],
                 [0, 2.2, 2.2, 2.4, 2.3], [1, 6.5, 0.2, 30.0, 5.5]])


@pytest.mark.parametrize("kw", [dict(pooled=(2, 3), scale=1.0),
                                dict(pooled=(3, 2), scale=0.7, ratio=2),
                                dict(pooled=(2, 2), scale=1.0, ratio=1, aligned=True),
                                dict(pooled=(2, 2), scale=0.9, ps=True),
                                dict(pooled=(1, 1), scale=1.0, ratio=7)])
def test_roi_align_matches_reference(kw):
    rng = np.random.default_rng(1)
    data = rng.normal(size=(2, 8, 5, 7))
    want = _roi_align_ref(data, ROIS, kw["pooled"], kw["scale"], kw.get("ratio", -1),
                          kw.get("ps", False), kw.get("aligned", False))
    got = mx.nd.contrib.ROIAlign(mx.nd.array(data, dtype="float64"),
                                 mx.nd.array(ROIS, dtype="float64"), pooled_size=kw["pooled"],
                                 spatial_scale=kw["scale"], sample_ratio=kw.get("ratio", -1),
                                 position_sensitive=kw.get("ps", False),
                                 aligned=kw.get("aligned", False))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(scale=1.0, dim=2, pooled=2),
                                dict(scale=0.5, dim=1, pooled=3, group=2),
                                dict(scale=0.8, dim=1, pooled=2, group=3)])
def test_psroi_matches_reference(kw):
    rng = np.random.default_rng(2)
    group = kw.get("group", 0) or kw["pooled"]
    data = rng.normal(size=(2, kw["dim"] * group * group, 6, 7))
    want = _psroi_ref(data, ROIS, kw["scale"], kw["dim"], kw["pooled"], kw.get("group", 0))
    got = mx.nd.contrib.PSROIPooling(mx.nd.array(data, dtype="float64"),
                                     mx.nd.array(ROIS, dtype="float64"),
                                     spatial_scale=kw["scale"], output_dim=kw["dim"],
                                     pooled_size=kw["pooled"], group_size=kw.get("group", 0))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_negative_batch_index_gives_zeros():
    data = mx.nd.ones((1, 2, 4, 4))
    rois = mx.nd.array([[-1, 0, 0, 2, 2], [0, 0, 0, 2, 2]])
    y = mx.nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=1.0).asnumpy()
    assert (y[0] == 0).all() and (y[1] == 1).all()
    z = mx.nd.contrib.PSROIPooling(data, rois, spatial_scale=1.0, output_dim=2,
                                   pooled_size=1).asnumpy()
    assert (z[0] == 0).all() and (z[1] == 1).all()


@pytest.mark.parametrize("op,kw", [
    ("ROIAlign", dict(pooled_size=(2, 3), spatial_scale=1.0, sample_ratio=2)),
    ("PSROIPooling", dict(spatial_scale=1.0, output_dim=2, pooled_size=3, group_size=2))])
def test_adjoint_identity(op, kw):
    """<op(x), g> == <x, adjoint(g)>: the gradient is the true transpose."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 8, 6, 7))
    rois = mx.nd.array(ROIS, dtype="float64")
    y = getattr(mx.nd.contrib, op)(mx.nd.array(x, dtype="float64"), rois, **kw)
    g = rng.normal(size=y.shape)
    adj = {"ROIAlign": mx.nd._internal._roi_align_adjoint,
           "PSROIPooling": mx.nd._internal._psroi_pooling_adjoint}[op]
    back = adj(mx.nd.array(g, dtype="float64"), rois, data_shape=x.shape, **kw).asnumpy()
    np.testing.assert_allclose((y.asnumpy() * g).sum(), (x * back).sum(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_dtypes(dtype):
    rng = np.random.default_rng(4)
    data = rng.normal(size=(2, 8, 5, 7))
    want = _roi_align_ref(data.astype(dtype).astype("float64"), ROIS, (2, 2), 1.0)
    got = mx.nd.contrib.ROIAlign(mx.nd.array(data, dtype=dtype), mx.nd.array(ROIS, dtype=dtype),
                                 pooled_size=(2, 2), spatial_scale=1.0)
    assert got.dtype == np.dtype(dtype)
    tol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)


def test_symbol_shapes():
    y = mx.sym.contrib.ROIAlign(mx.sym.var("d"), mx.sym.var("r"), pooled_size=(2, 3),
                                spatial_scale=0.5, position_sensitive=True)
    _, out, _ = y.infer_shape(d=(2, 12, 5, 5), r=(7, 5))
    assert out == [(7, 2, 2, 3)]
    z = mx.sym.contrib.PSROIPooling(mx.sym.var("d"), mx.sym.var("r"), spatial_scale=0.5,
                                    output_dim=3, pooled_size=2)
    assert z.infer_shape(d=(1, 12, 5, 5), r=(4, 5))[1] == [(4, 3, 2, 2)]


def _align(data, rois, **kw):
    kw.setdefault("pooled_size", (2, 2))
    kw.setdefault("spatial_scale", 1.0)
    return mx.nd.contrib.ROIAlign(data, rois, **kw)


def _ps(data, rois, **kw):
    kw = dict(dict(spatial_scale=1.0, output_dim=1, pooled_size=2), **kw)
    return mx.nd.contrib.PSROIPooling(data, rois, **kw)


@pytest.mark.parametrize("call,data,rois,words", [
    (_align, (1, 2, 4, 4), (3, 4), ["rois", "(3, 4)"]),
    (_align, (2, 4, 4), (3, 5), ["data", "4-D"]),
    (lambda d, r: _align(d, r, position_sensitive=True), (1, 3, 4, 4), (1, 5),
     ["3 channels", "position_sensitive"]),
    (lambda d, r: _align(d, r, spatial_scale=2.0), (1, 2, 4, 4), (1, 5), ["spatial_scale"]),
    (lambda d, r: _align(d, r, pooled_size=(0, 2)), (1, 2, 4, 4), (1, 5), ["pooled_size"]),
    (_ps, (1, 3, 4, 4), (1, 5), ["3 channels", "output_dim"]),
    (lambda d, r: _ps(d, r, pooled_size=0), (1, 4, 4, 4), (1, 5), ["pooled_size"]),
])
def test_bad_shapes(call, data, rois, words):
    with pytest.raises(MXNetError) as err:
        call(mx.nd.zeros(data), mx.nd.zeros(rois))
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("call", [_align, lambda d, r: _ps(d, r, output_dim=2, pooled_size=1)])
@pytest.mark.parametrize("roi,words", [([2, 0, 0, 1, 1], ["batch index 2", "batch 2"]),
                                       ([0, np.nan, 0, 1, 1], ["finite"]),
                                       ([0, 0, np.inf, 1, 1], ["finite"])])
def test_bad_rois(call, roi, words):
    with pytest.raises(MXNetError) as err:
        call(mx.nd.zeros((2, 2, 4, 4)), mx.nd.array([roi])).asnumpy()
    for w in words:
        assert w in str(err.value)


def test_aligned_needs_positive_size():
    with pytest.raises(MXNetError, match="aligned"):
        _align(mx.nd.zeros((1, 1, 4, 4)), mx.nd.array([[0, 2, 1, 2, 3]]), aligned=True)


def test_mixed_dtypes_rejected():
    with pytest.raises(MXNetError, match="one dtype"):
        _align(mx.nd.zeros((1, 1, 4, 4)), mx.nd.zeros((1, 5), dtype="float64"))


def test_huge_sample_ratio_is_bounded():
    """Only samples that can touch the map are formed: a huge sample_ratio on a small roi
    is a bounded error or a result, never an unbounded allocation."""
    data = mx.nd.ones((1, 1, 4, 4))
    try:
        y = _align(data, mx.nd.array([[0, 0, 0, 3, 3]]), sample_ratio=2 ** 40).asnumpy()
    except MXNetError as err:
        assert "sample grid" in str(err)
    else:
        np.testing.assert_allclose(y, 1.0)


def test_rois_get_no_gradient():
    data, rois = mx.nd.ones((1, 1, 4, 4)), mx.nd.array([[0, 0, 0, 2, 2]])
    data.attach_grad()
    rois.attach_grad()
    with mx.autograd.record():
        y = _align(data, rois)
    y.backward()
    assert (rois.grad.asnumpy() == 0).all()
    np.testing.assert_allclose(data.grad.asnumpy().sum(), 4.0)


# ---- RROIAlign -------------------------------------------------------------------------------
R_ROIS = np.array([[0, 3.0, 2.5, 4.0, 2.0, 10.0], [1, 4.2, 3.1, 5.5, 3.3, -30.0],
                   [-1, 1.0, 1.0, 2.0, 2.0, 0.0], [1, 1.0, 5.0, 6.0, 2.5, 120.0]])


def _rroi_ref(data, rois, pooled, scale, ratio=-1):
    ph, pw = pooled
    scale = float(np.float32(scale))
    out = np.zeros((len(rois), data.shape[1], ph, pw))
    for r, (b, cx, cy, w, h, deg) in enumerate(rois):
        if b < 0:
            continue
        cx, cy = cx * scale, cy * scale
        w, h = max(w * scale, 1.0), max(h * scale, 1.0)
        t = deg * np.pi / 180.0
        bh, bw = h / ph, w / pw
        gh = ratio if ratio > 0 else int(np.ceil(h / ph))
        gw = ratio if ratio > 0 else int(np.ceil(w / pw))
        for c in range(data.shape[1]):
            for i in range(ph):
                for j in range(pw):
                    total = 0.0
                    for iy in range(gh):
                        for ix in range(gw):
                            yy = -h / 2 + i * bh + (iy + .5) * bh / gh
                            xx = -w / 2 + j * bw + (ix + .5) * bw / gw
                            total += _bilinear(data[int(b), c],
                                               yy * np.cos(t) - xx * np.sin(t) + cy,
                                               xx * np.cos(t) + yy * np.sin(t) + cx)
                    out[r, c, i, j] = total / (gh * gw)
    return out


@pytest.mark.parametrize("kw", [dict(pooled=(2, 3), scale=1.0), dict(pooled=(3, 2), scale=0.7,
                                                                    ratio=2)])
def test_rroi_align_matches_reference(kw):
    rng = np.random.default_rng(5)
    data = rng.normal(size=(2, 3, 6, 8))
    want = _rroi_ref(data, R_ROIS, kw["pooled"], kw["scale"], kw.get("ratio", -1))
    got = mx.nd.contrib.RROIAlign(mx.nd.array(data, dtype="float64"),
                                  mx.nd.array(R_ROIS, dtype="float64"), pooled_size=kw["pooled"],
                                  spatial_scale=kw["scale"], sampling_ratio=kw.get("ratio", -1))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_rroi_adjoint_identity_and_gradient():
    """MXNet's RROIAlign had no gradient: the data's is the true transpose."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 3, 6, 8))
    rois = mx.nd.array(R_ROIS, dtype="float64")
    kw = dict(pooled_size=(2, 2), spatial_scale=1.0, sampling_ratio=2)
    xa = mx.nd.array(x, dtype="float64")
    xa.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.RROIAlign(xa, rois, **kw)
    g = rng.normal(size=y.shape)
    y.backward(mx.nd.array(g, dtype="float64"))
    back = xa.grad.asnumpy()
    np.testing.assert_allclose((y.asnumpy() * g).sum(), (x * back).sum(), rtol=1e-12)
    # the transpose column by column: d out / d x[k] is the op applied to a unit map
    k = (1, 2, 3, 4)
    unit = np.zeros_like(x)
    unit[k] = 1.0
    col = mx.nd.contrib.RROIAlign(mx.nd.array(unit, dtype="float64"), rois, **kw).asnumpy()
    np.testing.assert_allclose(back[k], (col * g).sum(), rtol=1e-12, atol=1e-14)


def test_rroi_errors():
    data = mx.nd.zeros((1, 2, 4, 4))
    with pytest.raises(MXNetError, match=r"\(num_rois, 6\)"):
        mx.nd.contrib.RROIAlign(data, mx.nd.zeros((2, 5)), pooled_size=(2, 2),
                                spatial_scale=1.0)
    with pytest.raises(MXNetError, match="batch index 3"):
        mx.nd.contrib.RROIAlign(data, mx.nd.array([[3, 1, 1, 1, 1, 0]]), pooled_size=(2, 2),
                                spatial_scale=1.0).asnumpy()
    with pytest.raises(MXNetError, match="sampling_ratio"):
        mx.nd.contrib.RROIAlign(data, mx.nd.array([[0, 1, 1, 1, 1, 0]]), pooled_size=(2, 2),
                                spatial_scale=1.0, sampling_ratio=1000).asnumpy()


# ---- deformable convolutions -----------------------------------------------------------------
def _dconv_cases():
    spec = importlib.util.spec_from_file_location(
        "make_roi_fixture", os.path.join(FIXTURES, "make_roi_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.DCONV


@pytest.mark.parametrize("case", ["dconv", "dconv_stride"])
def test_deformable_conv_mxnet_fixture(case):
    op, shapes, kwargs = _dconv_cases()[case]
    xs = [mx.nd.array(FIXTURE[f"{case}/in{i}"], dtype="float64") for i in range(len(shapes))]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, op)(*xs, **kwargs)
    y.backward(mx.nd.array(FIXTURE[f"{case}/head"], dtype="float64"))
    np.testing.assert_allclose(y.asnumpy(), FIXTURE[f"{case}/out"], rtol=1e-9, atol=1e-11)
    for i, x in enumerate(xs):
        np.testing.assert_allclose(x.grad.asnumpy(), FIXTURE[f"{case}/grad{i}"], rtol=1e-8,
                                   atol=1e-10, err_msg=f"input {i}")


def test_deformable_conv_zero_offset_is_convolution():
    rng = np.random.default_rng(7)
    x = mx.nd.array(rng.normal(size=(2, 4, 5, 6)), dtype="float64")
    wt = mx.nd.array(rng.normal(size=(6, 2, 3, 3)), dtype="float64")
    b = mx.nd.array(rng.normal(size=(6,)), dtype="float64")
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2)
    y = mx.nd.contrib.DeformableConvolution(x, mx.nd.zeros((2, 18, 5, 6), dtype="float64"), wt,
                                            b, **kw)
    np.testing.assert_allclose(y.asnumpy(), mx.nd.Convolution(x, wt, b, **kw).asnumpy(),
                               rtol=1e-12, atol=1e-12)


def test_deformable_conv_bad_offset_shape():
    with pytest.raises(MXNetError, match="offset must have shape"):
        mx.nd.contrib.DeformableConvolution(mx.nd.zeros((1, 2, 4, 4)), mx.nd.zeros((1, 9, 4, 4)),
                                            mx.nd.zeros((2, 2, 3, 3)), kernel=(3, 3),
                                            pad=(1, 1), num_filter=2, no_bias=True)


def test_modulated_is_deformable_with_its_mask():
    """A constant mask m scales the sampled columns: out = m * (deformable - bias) + bias
    (MXNet 1.9.1's modulated op runs on GPU only: no CPU fixture)."""
    rng = np.random.default_rng(8)
    ins = [mx.nd.array(rng.normal(size=s) * 1.5, dtype="float64")
           for s in [(2, 4, 5, 6), (2, 36, 5, 6)]]
    wt = mx.nd.array(rng.normal(size=(6, 2, 3, 3)), dtype="float64")
    b = mx.nd.array(rng.normal(size=(6,)), dtype="float64")
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2, num_deformable_group=2)
    plain = mx.nd.contrib.DeformableConvolution(*ins, wt, b, **kw).asnumpy()
    mask = mx.nd.full((2, 18, 5, 6), 0.25, dtype="float64")
    got = mx.nd.contrib.ModulatedDeformableConvolution(*ins, mask, wt, b, **kw).asnumpy()
    bias = b.asnumpy().reshape(1, 6, 1, 1)
    np.testing.assert_allclose(got, 0.25 * (plain - bias) + bias, rtol=1e-12, atol=1e-12)


def _dconv_call(data, offset, weight, **kw):
    kw = dict(dict(kernel=(3, 3), pad=(1, 1), num_filter=2, no_bias=True), **kw)
    return mx.nd.contrib.DeformableConvolution(data, offset, weight, **kw)


@pytest.mark.parametrize("shapes,kw,words", [
    ([(1, 2, 1, 4), (1, 18, 1, 4), (2, 2, 3, 3)], {}, ["height and width", "(1, 2, 1, 4)"]),
    ([(1, 3, 4, 4), (1, 18, 4, 4), (2, 1, 3, 3)], dict(num_group=2), ["num_group=2", "3"]),
    ([(1, 2, 4, 4), (1, 18, 4, 4), (2, 2, 3, 3)], dict(pad=(0, 0)), ["offset", "(1, 18, 2, 2)"]),
    ([(1, 2, 2, 2), (1, 18, 4, 4), (2, 2, 3, 3)], dict(pad=(0, 0)), ["does not fit"]),
    ([(1, 2, 4, 4), (1, 18, 4, 4), (2, 2, 3, 3)], dict(kernel=(3,)), ["kernel", "2-D"]),
])
def test_deformable_conv_bad_input(shapes, kw, words):
    with pytest.raises(MXNetError) as err:
        _dconv_call(*(mx.nd.zeros(s) for s in shapes), **kw)
    for w in words:
        assert w in str(err.value)


def test_deformable_conv_float16_rejected():
    with pytest.raises(MXNetError, match="float32 or float64"):
        _dconv_call(*(mx.nd.zeros(s, dtype="float16")
                      for s in [(1, 2, 4, 4), (1, 18, 4, 4), (2, 2, 3, 3)]))


def test_empty_inputs():
    d = mx.nd.ones((1, 4, 5, 5))
    assert mx.nd.contrib.ROIAlign(d, mx.nd.zeros((0, 5)), pooled_size=(2, 2),
                                  spatial_scale=1.0).shape == (0, 4, 2, 2)
    assert mx.nd.contrib.RROIAlign(d, mx.nd.zeros((0, 6)), pooled_size=(2, 2),
                                   spatial_scale=1.0).shape == (0, 4, 2, 2)
    assert _dconv_call(mx.nd.ones((0, 2, 4, 4)), mx.nd.zeros((0, 18, 4, 4)),
                       mx.nd.ones((2, 2, 3, 3))).shape == (0, 2, 4, 4)
