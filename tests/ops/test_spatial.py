"""The spatial layers of mxlite/ops/spatial.py against MXNet 1.9.1 (the cases of
tests/fixtures/spatial_mxnet.npz, made by make_spatial_fixture.py: forward outputs and
gradients for a fixed head gradient) and against NumPy slicing, plus their errors."""
import importlib.util
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
FIXTURE = np.load(os.path.join(FIXTURES, "spatial_mxnet.npz"))


def _maker():
    spec = importlib.util.spec_from_file_location(
        "make_spatial_fixture", os.path.join(FIXTURES, "make_spatial_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKER = _maker()


@pytest.mark.parametrize("case", sorted(MAKER.CASES))
def test_matches_mxnet(case):
    op, specs, kwargs = MAKER.CASES[case]
    arrays = [mx.nd.array(FIXTURE[f"{case}/in{i}"]) for i in range(len(specs))]
    diff = [k != "c" and not k.startswith("rois") for _, k in specs]
    for a, d in zip(arrays, diff):
        if d:
            a.attach_grad()
    with mx.autograd.record():
        res = MAKER._op(mx.nd, op)(*arrays, **kwargs)
    np.testing.assert_allclose(res.asnumpy(), FIXTURE[f"{case}/out0"], rtol=1e-5, atol=1e-6)
    if any(diff):
        res.backward(mx.nd.array(FIXTURE[f"{case}/head"]))
        for i, (a, d) in enumerate(zip(arrays, diff)):
            if d:
                np.testing.assert_allclose(a.grad.asnumpy(), FIXTURE[f"{case}/grad{i}"],
                                           rtol=1e-5, atol=1e-5, err_msg=f"{case} grad {i}")


# ---- Crop -------------------------------------------------------------------------------------
def test_crop_any_dtype_and_symbol():
    x = np.arange(2 * 3 * 5 * 4).reshape(2, 3, 5, 4).astype(np.int32)
    y = mx.nd.Crop(mx.nd.array(x, dtype="int32"), h_w=(3, 2), center_crop=True)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y.asnumpy(), x[:, :, 1:4, 1:3])
    sym = mx.sym.Crop(mx.sym.var("a"), mx.sym.var("b"))
    assert sym.list_arguments() == ["a", "b"]
    _, out, _ = sym.infer_shape(a=(2, 3, 5, 4), b=(7, 2, 2))
    assert out == [(2, 3, 2, 2)]


def test_crop_like_gets_zero_gradient():
    x, like = mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((1, 1, 2, 2))
    like.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Crop(x, like, offset=(2, 2))
    y.backward()
    np.testing.assert_array_equal(like.grad.asnumpy(), np.zeros((1, 1, 2, 2)))


@pytest.mark.parametrize("shapes, kw, message", [
    ([(2, 3)], dict(h_w=(1, 1)), "must be 4-D"),
    ([(1, 1, 4, 4)], dict(), r"h_w=\(0, 0\) must be at least"),
    ([(1, 1, 4, 4)], dict(h_w=(5, 2)), r"larger than the data's \(height, width\)=\(4, 4\)"),
    ([(1, 1, 4, 4)], dict(h_w=(2, 2), offset=(3, 0)), r"offset=\(3, 0\) puts the \(2, 2\) crop"),
    ([(1, 1, 4, 4)], dict(h_w=(2, 2), offset=(-1, 0)), r"offset=\(-1, 0\)"),
    ([(1, 1, 4, 4), (3,)], dict(), "crop_like must have at least 2 axes"),
    ([(1, 1, 4, 4), (1, 1, 2, 5)], dict(), r"\(h, w\)=\(2, 5\) is larger"),
    ([(1, 1, 4, 4)], dict(h_w=(2, 2, 1)), "must have two entries"),
])
def test_crop_errors(shapes, kw, message):
    with pytest.raises(MXNetError, match="Crop.*" + message):
        mx.nd.Crop(*[mx.nd.zeros(s) for s in shapes], **kw)


def test_crop_num_args_must_match_inputs():
    with pytest.raises(MXNetError, match="Crop"):
        mx.nd.Crop(mx.nd.zeros((1, 1, 4, 4)), num_args=2)
    with pytest.raises(MXNetError, match="Crop"):
        mx.sym.Crop(*[mx.sym.var(n) for n in "abc"]).infer_shape(
            a=(1, 1, 4, 4), b=(1, 1, 2, 2), c=(1, 1, 2, 2))


# ---- _slice_assign / _slice_assign_scalar -----------------------------------------------------
REGIONS = [
    (dict(begin=(1,), end=(3,)), lambda a: a[1:3]),
    (dict(begin=(None, -1), end=(None, 0), step=(None, -2)), lambda a: a[:, -1:0:-2]),
    (dict(begin=(3, 1, None), end=(None, None, None), step=(-3, 2, 2)),
     lambda a: a[3::-3, 1::2, ::2]),
]


@pytest.mark.parametrize("kw, region", REGIONS)
def test_slice_assign_matches_numpy(rng, kw, region):
    lhs = rng.standard_normal((4, 5, 3))
    rhs = rng.standard_normal(region(lhs).shape)
    want = lhs.copy()
    region(want)[...] = rhs
    for name in ("_slice_assign", "_crop_assign"):
        got = getattr(mx.nd._internal, name)(mx.nd.array(lhs, dtype="float64"),
                                             mx.nd.array(rhs, dtype="float64"), **kw)
        np.testing.assert_array_equal(got.asnumpy(), want)
    want = lhs.copy()
    region(want)[...] = -1.5
    for name in ("_slice_assign_scalar", "_crop_assign_scalar"):
        got = getattr(mx.nd._internal, name)(mx.nd.array(lhs, dtype="float64"), scalar=-1.5,
                                             **kw)
        np.testing.assert_array_equal(got.asnumpy(), want)


def test_slice_assign_in_place_as_mxnet_calls_it():
    a = mx.nd.zeros((3, 4), dtype="int32")
    mx.nd._internal._crop_assign(a, mx.nd.ones((2, 2), dtype="int32"), begin=(1, 1),
                                 end=(3, 3), out=a)
    mx.nd._internal._crop_assign_scalar(a, scalar=7, begin=(0,), end=(1,), out=a)
    want = np.zeros((3, 4), np.int32)
    want[1:3, 1:3], want[0] = 1, 7
    np.testing.assert_array_equal(a.asnumpy(), want)


def test_slice_assign_out_is_rhs():
    """out= the rhs (a reversal of a whole array): rhs is read before lhs is copied over."""
    lhs, rhs = mx.nd.zeros((4,)), mx.nd.array([1.0, 2.0, 3.0, 4.0])
    mx.nd._internal._slice_assign(lhs, rhs, begin=(None,), end=(None,), step=(-1,), out=rhs)
    np.testing.assert_array_equal(rhs.asnumpy(), [4.0, 3.0, 2.0, 1.0])


def test_slice_assign_gradients():
    lhs, rhs = mx.nd.ones((3, 4)), mx.nd.ones((2, 2))
    lhs.attach_grad()
    rhs.attach_grad()
    head = np.arange(12.0).reshape(3, 4)
    with mx.autograd.record():
        y = mx.nd._internal._crop_assign(lhs, rhs, begin=(1, 1), end=(3, 3))
    y.backward(mx.nd.array(head))
    want = head.copy()
    want[1:3, 1:3] = 0
    np.testing.assert_array_equal(lhs.grad.asnumpy(), want)
    np.testing.assert_array_equal(rhs.grad.asnumpy(), head[1:3, 1:3])


@pytest.mark.parametrize("lhs, rhs, kw, message", [
    ((3, 4), (1, 2), dict(begin=(1, 1), end=(3, 3)), r"rhs of shape \(1, 2\) does not fill"),
    ((3, 4), (2, 2), dict(begin=(1, 1, 0), end=(3, 3, 1)), "more entries than the 2 axes"),
    ((3, 4), (2, 2), dict(begin=(1, 1), end=(3, 3), step=(0, 1)), "zero entry"),
])
def test_slice_assign_errors(lhs, rhs, kw, message):
    with pytest.raises(MXNetError, match="_slice_assign.*" + message):
        mx.nd._internal._crop_assign(mx.nd.zeros(lhs), mx.nd.zeros(rhs), **kw)


def test_slice_assign_dtype_and_scalar_errors():
    with pytest.raises(MXNetError, match="_slice_assign.*one dtype.*float32 and float64"):
        mx.nd._internal._crop_assign(mx.nd.zeros((3,)), mx.nd.zeros((1,), dtype="float64"),
                                     begin=(0,), end=(1,))
    with pytest.raises(MXNetError, match="_slice_assign_scalar.*zero entry"):
        mx.nd._internal._crop_assign_scalar(mx.nd.zeros((3,)), begin=(0,), end=(1,), step=(0,))


# ---- BilinearSampler, GridGenerator, SpatialTransformer ---------------------------------------
def _sample_reference(data, grid):
    """Bilinear sampling, one point at a time, zero outside the image (float64 NumPy)."""
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:])
    for b in range(n):
        for i, j in np.ndindex(*grid.shape[2:]):
            x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
            y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
            x0, y0 = int(np.floor(x)), int(np.floor(y))
            for yy in (y0, y0 + 1):
                for xx in (x0, x0 + 1):
                    if 0 <= yy < h and 0 <= xx < w:
                        wt = (1 - abs(x - xx)) * (1 - abs(y - yy))
                        out[b, :, i, j] += wt * data[b, :, yy, xx]
    return out


def test_bilinear_sampler_matches_numpy_float64(rng):
    data = rng.standard_normal((2, 3, 4, 6))
    grid = rng.uniform(-1.3, 1.3, (2, 2, 3, 5))
    got = mx.nd.BilinearSampler(mx.nd.array(data, dtype="float64"),
                                mx.nd.array(grid, dtype="float64"))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.asnumpy(), _sample_reference(data, grid), rtol=1e-12,
                               atol=1e-12)


def test_sampler_adjoint_is_the_adjoint(rng):
    """<A(g, grid), h> = <g, S(h, grid)> for every derivative order pair."""
    grid = mx.nd.array(rng.uniform(-1.2, 1.2, (2, 2, 3, 2)), dtype="float64")
    g = mx.nd.array(rng.standard_normal((2, 3, 3, 2)), dtype="float64")
    h = mx.nd.array(rng.standard_normal((2, 3, 4, 5)), dtype="float64")
    for dx, dy in ((0, 0), (1, 0), (0, 1), (1, 1)):
        a = mx.nd._internal._bilinear_sampler_adjoint(g, grid, dx=dx, dy=dy, height=4, width=5)
        s = mx.nd._internal._bilinear_sampler_d(h, grid, dx=dx, dy=dy)
        np.testing.assert_allclose((a * h).sum().asscalar(), (g * s).sum().asscalar(),
                                   rtol=1e-12)


def test_sampler_d_is_the_derivative_in_the_grid(rng):
    """S_{1,0} and S_{0,1} are the central differences of the sampler in x and y."""
    data = mx.nd.array(rng.standard_normal((1, 2, 4, 5)), dtype="float64")
    grid = rng.uniform(-0.9, 0.9, (1, 2, 2, 2))
    eps = 1e-6
    for axis, kw in ((0, dict(dx=1)), (1, dict(dy=1))):
        up, down = grid.copy(), grid.copy()
        up[:, axis] += eps
        down[:, axis] -= eps
        fd = (mx.nd.BilinearSampler(data, mx.nd.array(up, dtype="float64"))
              - mx.nd.BilinearSampler(data, mx.nd.array(down, dtype="float64"))) / (2 * eps)
        got = mx.nd._internal._bilinear_sampler_d(data, mx.nd.array(grid, dtype="float64"), **kw)
        np.testing.assert_allclose(got.asnumpy(), fd.asnumpy(), rtol=1e-6, atol=1e-6)


def test_grid_generator_identity_and_zero_flow():
    theta = mx.nd.array([[1, 0, 0, 0, 1, 0]], dtype="float64")
    grid = mx.nd.GridGenerator(theta, transform_type="affine", target_shape=(3, 5)).asnumpy()
    xs, ys = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(-1, 1, 3))
    np.testing.assert_allclose(grid[0], np.stack([xs, ys]), atol=1e-15)
    warp = mx.nd.GridGenerator(mx.nd.zeros((1, 2, 3, 5), dtype="float64"),
                               transform_type="warp").asnumpy()
    np.testing.assert_allclose(warp, grid, atol=1e-15)


def test_spatial_transformer_is_sampler_of_the_affine_grid(rng):
    data = mx.nd.array(rng.standard_normal((2, 2, 4, 5)), dtype="float64")
    loc = mx.nd.array(rng.uniform(-1, 1, (2, 6)), dtype="float64")
    got = mx.nd.SpatialTransformer(data, loc, target_shape=(3, 3), transform_type="affine",
                                   sampler_type="bilinear")
    grid = mx.nd.GridGenerator(loc, transform_type="affine", target_shape=(3, 3))
    np.testing.assert_allclose(got.asnumpy(), _sample_reference(data.asnumpy(),
                                                                grid.asnumpy()), atol=1e-12)
    ident = mx.nd.array([[1, 0, 0, 0, 1, 0]] * 2, dtype="float64")
    same = mx.nd.SpatialTransformer(data, ident, target_shape=(4, 5), transform_type="affine",
                                    sampler_type="bilinear")
    np.testing.assert_allclose(same.asnumpy(), data.asnumpy(), atol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: mx.nd.BilinearSampler(mx.nd.zeros((1, 1, 3, 3)), mx.nd.zeros((1, 3, 2, 2))),
     r"BilinearSampler.*grid must be \(batch, 2, height, width\).*\(1, 3, 2, 2\)"),
    (lambda: mx.nd.BilinearSampler(mx.nd.zeros((2, 1, 3, 3)), mx.nd.zeros((1, 2, 2, 2))),
     "BilinearSampler.*grid's batch 1 differs from data's 2"),
    (lambda: mx.nd.BilinearSampler(mx.nd.zeros((1, 3, 3)), mx.nd.zeros((1, 2, 2, 2))),
     "BilinearSampler.*data must be 4-D"),
    (lambda: mx.nd.BilinearSampler(mx.nd.zeros((1, 1, 3, 3), dtype="int32"),
                                   mx.nd.zeros((1, 2, 2, 2), dtype="int32")),
     "BilinearSampler.*float32 or float64"),
    (lambda: mx.nd.GridGenerator(mx.nd.zeros((2, 6)), transform_type="affine"),
     r"GridGenerator.*target_shape=\(0, 0\) must be \(height, width\), each at least 2"),
    (lambda: mx.nd.GridGenerator(mx.nd.zeros((2, 4)), transform_type="affine",
                                 target_shape=(2, 2)), r"GridGenerator.*\(batch, 6\)"),
    (lambda: mx.nd.GridGenerator(mx.nd.zeros((2, 2, 1, 4)), transform_type="warp"),
     "GridGenerator.*each at least 2"),
    (lambda: mx.nd.GridGenerator(mx.nd.zeros((2, 3, 2, 4)), transform_type="warp"),
     r"GridGenerator.*warp data must be a flow"),
    (lambda: mx.nd.GridGenerator(mx.nd.zeros((2, 6)), transform_type="perspective"),
     "GridGenerator.*transform_type"),
    (lambda: mx.nd.SpatialTransformer(mx.nd.zeros((2, 1, 3, 3)), mx.nd.zeros((1, 6)),
                                      target_shape=(2, 2), transform_type="affine",
                                      sampler_type="bilinear"),
     r"SpatialTransformer.*loc must be \(batch, 6\) = \(2, 6\)"),
    (lambda: mx.nd._internal._bilinear_sampler_d(mx.nd.zeros((1, 1, 3, 3)),
                                                 mx.nd.zeros((1, 2, 2, 2)), dx=2),
     "_bilinear_sampler_d.*dx"),
])
def test_sampler_errors(call, message):
    with pytest.raises(MXNetError, match=message):
        call()


# ---- ROIPooling -------------------------------------------------------------------------------
def test_roi_pooling_gradient_goes_to_each_bins_maximum():
    x = mx.nd.array(np.arange(16.0).reshape(1, 1, 4, 4))
    x.attach_grad()
    rois = mx.nd.array([[0, 0, 0, 3, 3], [0, 0, 0, 1, 1]])
    with mx.autograd.record():
        y = mx.nd.ROIPooling(x, rois, pooled_size=(2, 2), spatial_scale=1.0)
    y.backward(mx.nd.ones_like(y))
    want = np.zeros((4, 4))
    for h, w in ((1, 1), (1, 3), (3, 1), (3, 3)):       # the 2x2 maxima of the whole image
        want[h, w] += 1
    for h, w in ((0, 0), (0, 1), (1, 0), (1, 1)):       # each bin of the small roi is a pixel
        want[h, w] += 1
    np.testing.assert_array_equal(x.grad.asnumpy()[0, 0], want)


@pytest.mark.parametrize("data, rois, kw, message", [
    ((1, 1, 4, 4), (2, 4), dict(), r"rois must be \(num_rois, 5\)"),
    ((1, 4, 4), (2, 5), dict(), "data must be 4-D"),
    ((1, 1, 4, 4), (2, 5), dict(pooled_size=(0, 2)), "pooled_size=\\(0, 2\\)"),
    ((1, 1, 4, 4), (2, 5), dict(spatial_scale=2.0), "spatial_scale=2.0 must be in \\[0, 1\\]"),
])
def test_roi_pooling_shape_errors(data, rois, kw, message):
    kw = dict(dict(pooled_size=(2, 2), spatial_scale=1.0), **kw)
    with pytest.raises(MXNetError, match="ROIPooling.*" + message):
        mx.nd.ROIPooling(mx.nd.zeros(data), mx.nd.zeros(rois), **kw)


@pytest.mark.parametrize("index", [2, -1, 0.5])
def test_roi_pooling_batch_index_out_of_range(index):
    rois = mx.nd.array([[index, 0, 0, 1, 1]])
    with pytest.raises(MXNetError, match=f"ROIPooling.*batch_index {float(index)}"):
        mx.nd.ROIPooling(mx.nd.zeros((2, 1, 4, 4)), rois, pooled_size=(1, 1),
                         spatial_scale=1.0).asnumpy()


# ---- _contrib_AdaptiveAvgPooling2D ------------------------------------------------------------
def _adaptive_reference(x, oh, ow):
    h, w = x.shape[2:]
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, h1 = i * h // oh, -(-(i + 1) * h // oh)
            w0, w1 = j * w // ow, -(-(j + 1) * w // ow)
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


@pytest.mark.parametrize("shape, size", [((2, 3, 7, 5), (3, 2)), ((1, 1, 2, 3), (5, 4)),
                                         ((1, 2, 9, 9), (9, 1))])
def test_adaptive_avg_pooling_matches_numpy_float64(rng, shape, size):
    x = rng.standard_normal(shape)
    got = mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.array(x, dtype="float64"), output_size=size)
    np.testing.assert_allclose(got.asnumpy(), _adaptive_reference(x, *size), rtol=1e-12)


@pytest.mark.parametrize("shape, size, message", [
    ((2, 3, 4), (2, 2), "data must be 4-D"),
    ((1, 1, 4, 4), (2, 2, 2), r"output_size=\(2, 2, 2\)"),
    ((1, 1, 4, 4), (0, 2), r"output_size=\(0, 2\)"),
    ((1, 1, 0, 4), (2, 2), "height and width must be at least 1"),
])
def test_adaptive_avg_pooling_errors(shape, size, message):
    with pytest.raises(MXNetError, match="_contrib_AdaptiveAvgPooling2D.*" + message):
        mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.zeros(shape), output_size=size)


# ---- _contrib_BilinearResize2D ----------------------------------------------------------------
def _resize_reference(x, oh, ow, align):
    """Bilinear resize, one output pixel at a time (float64 NumPy)."""
    h, w = x.shape[2:]

    def source(i, n_in, n_out):
        if n_out == 1:
            return 0.0
        if align:
            return i * (n_in - 1) / (n_out - 1)
        return max((i + 0.5) * n_in / n_out - 0.5, 0.0)

    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            y, z = source(i, h, oh), source(j, w, ow)
            y0, z0 = int(y), int(z)
            y1, z1 = min(y0 + 1, h - 1), min(z0 + 1, w - 1)
            fy, fz = y - y0, z - z0
            out[:, :, i, j] = ((1 - fy) * ((1 - fz) * x[:, :, y0, z0] + fz * x[:, :, y0, z1])
                               + fy * ((1 - fz) * x[:, :, y1, z0] + fz * x[:, :, y1, z1]))
    return out


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("shape, size", [((1, 2, 4, 5), (7, 3)), ((2, 1, 3, 3), (1, 6))])
def test_bilinear_resize_matches_numpy_float64(rng, align, shape, size):
    x = rng.standard_normal(shape)
    got = mx.nd.contrib.BilinearResize2D(mx.nd.array(x, dtype="float64"), height=size[0],
                                         width=size[1], align_corners=align)
    np.testing.assert_allclose(got.asnumpy(), _resize_reference(x, *size, align), rtol=1e-12,
                               atol=1e-12)


def test_bilinear_resize_one_scale_per_axis():
    """A scale on one axis and a size on the other (MXNet 1.9.1 failed: 'bad optional')."""
    y = mx.nd.contrib.BilinearResize2D(mx.nd.zeros((1, 1, 4, 5)), scale_height=1.5, width=2)
    assert y.shape == (1, 1, 6, 2)


@pytest.mark.parametrize("shape, kw, message", [
    ((1, 1, 4), dict(height=2, width=2), "data must be 4-D"),
    ((1, 1, 4, 4), dict(height=0, width=2), r"output \(height, width\)=\(0, 2\)"),
    ((1, 1, 1, 4), dict(mode="to_even_down"), r"output \(height, width\)=\(0, 4\)"),
    ((1, 1, 4, 4), dict(mode="odd_scale", scale_height=2.0), "needs scale_height and "
     "scale_width"),
    ((1, 1, 4, 4), dict(scale_height=-1.0, scale_width=1.0), "scale_height=-1.0 must be "
     "positive"),
    ((1, 1, 4, 4), dict(mode="nearest"), "mode"),
])
def test_bilinear_resize_errors(shape, kw, message):
    with pytest.raises(MXNetError, match="_contrib_BilinearResize2D.*" + message):
        mx.nd.contrib.BilinearResize2D(mx.nd.zeros(shape), **kw)


def test_bilinear_resize_like_needs_its_input():
    with pytest.raises(MXNetError, match="_contrib_BilinearResize2D"):
        mx.nd.contrib.BilinearResize2D(mx.nd.zeros((1, 1, 4, 4)), mode="like")
