"""The region-of-interest operators and their gradient operators (PSROIPooling, RROIAlign,
DeformablePSROIPooling, the adjoints, samplers and scatters, ROIPooling's argmax) on
one-op graphs in float16, float32 and float64, and gradient graphs through them: exported,
checked, run in onnxruntime and compared with ``mx.nd`` / ``mx.autograd``."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run
from onnx_harness import check

rng = np.random.default_rng(23)
CASES = []
DTYPES = ("float16", "float32", "float64")
RTOL = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-10}

# rois [batch, x1, y1, x2, y2]: inside, past the border, on the second image, a negative
# batch index (zeros), one much larger than the map (an adaptive grid of many samples)
ROIS = np.array([[0, 0.3, 0.6, 3.4, 2.7], [1, -1.2, 1.1, 2.2, 3.9], [0, 2.1, 0.4, 6.3, 2.2],
                 [-1, 1, 1, 3, 3], [1, -30, -20, 40, 35.5]])
ROIS_ONE = np.array([[0, 1.0, 0.0, 5.0, 6.5], [0, 0.5, 2.5, 2.5, 3.5], [0, 4.9, 3.9, 5.0, 4.0]])
# rotated rois [batch, cx, cy, w, h, degrees]
R_ROIS = np.array([[0, 2.1, 1.9, 3.0, 2.0, 25.0], [1, 2.6, 1.4, 2.5, 3.5, -60.0],
                   [0, 3.0, 3.0, 9.5, 7.0, 130.0], [-1, 2, 2, 2, 2, 0],
                   [1, 1.0, 4.0, 0.5, 12.0, 90.0]])
R_ROIS_ONE = np.array([[0, 3.3, 2.2, 4.0, 3.0, 0.0], [0, 0.0, 0.0, 6.0, 6.0, 45.0]])


def case(label, fn, shapes, rois):
    """A one-op case: ``fn(F, x, rois, *more)`` on normal inputs of ``shapes`` (the first
    before rois, the others after)."""
    CASES.append(pytest.param(fn, shapes, rois, id=label))


def normal(shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


# ---- PSROIPooling and its adjoint -----------------------------------------------------------
_PS_A = dict(spatial_scale=0.9, output_dim=2, pooled_size=2)
_PS_B = dict(spatial_scale=1.0, output_dim=2, pooled_size=3, group_size=2)
_PS_C = dict(spatial_scale=0.5, output_dim=1, pooled_size=2, group_size=3)
case("psroi_pooling", lambda F, x, r: F.contrib.PSROIPooling(x, r, **_PS_A),
     [(2, 8, 5, 6)], ROIS)
case("psroi_pooling_group2_pooled3", lambda F, x, r: F.contrib.PSROIPooling(x, r, **_PS_B),
     [(2, 8, 5, 6)], ROIS)
case("psroi_pooling_group3_pooled2", lambda F, x, r: F.contrib.PSROIPooling(x, r, **_PS_C),
     [(1, 9, 7, 4)], ROIS_ONE)
case("psroi_pooling_adjoint", lambda F, g, r: F._internal._psroi_pooling_adjoint(
    g, r, data_shape=(2, 8, 5, 6), **_PS_A), [(5, 2, 2, 2)], ROIS)
case("psroi_pooling_adjoint_group2_pooled3", lambda F, g, r: F._internal.
     _psroi_pooling_adjoint(g, r, data_shape=(2, 8, 5, 6), **_PS_B), [(5, 2, 3, 3)], ROIS)
case("psroi_pooling_adjoint_group3_pooled2", lambda F, g, r: F._internal.
     _psroi_pooling_adjoint(g, r, data_shape=(1, 9, 7, 4), **_PS_C), [(3, 1, 2, 2)], ROIS_ONE)

# ---- ROIAlign's adjoint ---------------------------------------------------------------------
_AL_A = dict(pooled_size=(2, 3), spatial_scale=1.0, sample_ratio=2)
_AL_B = dict(pooled_size=(3, 2), spatial_scale=0.6)                   # adaptive grid
_AL_C = dict(pooled_size=(2, 2), spatial_scale=0.8, position_sensitive=True, aligned=True)
_AL_D = dict(pooled_size=(1, 2), spatial_scale=1.0, sample_ratio=30, aligned=True)
case("roi_align_adjoint", lambda F, g, r: F._internal._roi_align_adjoint(
    g, r, data_shape=(2, 3, 5, 6), **_AL_A), [(5, 3, 2, 3)], ROIS)
case("roi_align_adjoint_adaptive", lambda F, g, r: F._internal._roi_align_adjoint(
    g, r, data_shape=(2, 3, 5, 6), **_AL_B), [(5, 3, 3, 2)], ROIS)
case("roi_align_adjoint_position_sensitive_aligned", lambda F, g, r: F._internal.
     _roi_align_adjoint(g, r, data_shape=(1, 8, 7, 4), **_AL_C), [(3, 2, 2, 2)], ROIS_ONE)
case("roi_align_adjoint_dense_grid_aligned", lambda F, g, r: F._internal._roi_align_adjoint(
    g, r, data_shape=(1, 2, 7, 4), **_AL_D), [(3, 2, 1, 2)], ROIS_ONE)

# ---- RROIAlign and its adjoint --------------------------------------------------------------
_RR_A = dict(pooled_size=(2, 3), spatial_scale=1.0, sampling_ratio=2)
_RR_B = dict(pooled_size=(2, 2), spatial_scale=0.8)                   # adaptive grid
case("rroi_align", lambda F, x, r: F.contrib.RROIAlign(x, r, **_RR_A), [(2, 3, 5, 6)], R_ROIS)
case("rroi_align_adaptive", lambda F, x, r: F.contrib.RROIAlign(x, r, **_RR_B),
     [(1, 2, 6, 7)], R_ROIS_ONE)
case("rroi_align_adjoint", lambda F, g, r: F._internal._rroi_align_adjoint(
    g, r, data_shape=(2, 3, 5, 6), **_RR_A), [(5, 3, 2, 3)], R_ROIS)
case("rroi_align_adjoint_adaptive", lambda F, g, r: F._internal._rroi_align_adjoint(
    g, r, data_shape=(1, 2, 6, 7), **_RR_B), [(2, 2, 2, 2)], R_ROIS_ONE)

# ---- DeformablePSROIPooling, its samplers and scatters -------------------------------------
_DPS_A = dict(spatial_scale=0.9, output_dim=2, group_size=2, pooled_size=2, part_size=3,
              sample_per_part=2, trans_std=0.3)
_DPS_B = dict(spatial_scale=0.5, output_dim=4, group_size=1, pooled_size=3,
              sample_per_part=3, trans_std=0.1)
_DPS_NO = dict(spatial_scale=1.0, output_dim=2, group_size=2, pooled_size=3,
               sample_per_part=3, no_trans=True)
case("deformable_psroi_pooling", lambda F, x, r, t: F.contrib.DeformablePSROIPooling(
    x, r, t, **_DPS_A), [(2, 8, 5, 6), (5, 2, 3, 3)], ROIS)
case("deformable_psroi_pooling_two_classes", lambda F, x, r, t: F.contrib.
     DeformablePSROIPooling(x, r, t, **_DPS_B), [(1, 4, 7, 4), (3, 4, 3, 3)], ROIS_ONE)
case("deformable_psroi_pooling_no_trans", lambda F, x, r: F.contrib.DeformablePSROIPooling(
    x, r, **_DPS_NO), [(2, 8, 5, 6)], ROIS)
for dx, dy in ((0, 0), (1, 0), (0, 1), (1, 1)):
    case(f"dpsroi_sample_dx{dx}_dy{dy}", lambda F, x, r, t, dx=dx, dy=dy: F._internal.
         _dpsroi_sample(x, r, t, dx=dx, dy=dy, **_DPS_A), [(2, 8, 5, 6), (5, 4, 3, 3)], ROIS)
    case(f"dpsroi_scatter_dx{dx}_dy{dy}", lambda F, g, r, t, dx=dx, dy=dy: F._internal.
         _dpsroi_scatter(g, r, t, dx=dx, dy=dy, data_shape=(2, 8, 5, 6), **_DPS_A),
         [(5, 2, 2, 2), (5, 4, 3, 3)], ROIS)
case("dpsroi_sample_two_classes", lambda F, x, r, t: F._internal._dpsroi_sample(
    x, r, t, dx=1, dy=0, **_DPS_B), [(1, 4, 7, 4), (3, 4, 3, 3)], ROIS_ONE)
case("dpsroi_scatter_two_classes", lambda F, g, r, t: F._internal._dpsroi_scatter(
    g, r, t, dx=0, dy=1, data_shape=(1, 4, 7, 4), **_DPS_B), [(3, 4, 3, 3), (3, 4, 3, 3)],
    ROIS_ONE)
case("dpsroi_scatter_no_trans", lambda F, g, r: F._internal._dpsroi_scatter(
    g, r, data_shape=(2, 8, 5, 6), **_DPS_NO), [(5, 2, 3, 3)], ROIS)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn, shapes, rois", CASES)
def test_roi_op_exports_and_matches(fn, shapes, rois, dtype, tmp_path):
    inputs = [normal(shapes[0], dtype), rois.astype(dtype)]
    inputs += [normal(s, dtype) for s in shapes[1:]]
    check(fn, inputs, RTOL[dtype], tmp_path)


@pytest.mark.parametrize("fn, shapes, rois", CASES)
def test_roi_op_at_the_oldest_opset(fn, shapes, rois, tmp_path):
    """Opset 17, the oldest export_model writes (Split by sizes, Reduce* axes as inputs)."""
    inputs = [normal(shapes[0], "float32"), rois.astype("float32")]
    inputs += [normal(s, "float32") for s in shapes[1:]]
    check(fn, inputs, RTOL["float32"], tmp_path, opset_version=17)


# ---- ROIPooling's argmax (int64 positions) ----------------------------------------------------
# full bins, bins clipped by the border, an empty roi (x2 < x1: single-pixel windows), bins
# past the map (empty: -1), and a NaN in the data (the first NaN wins, as NumPy's argmax)
ARGMAX_ROIS = np.array([[0, 0.6, 1.2, 4.4, 3.6], [0, -2, -1, 1, 2], [1, 3, 3, 1, 1],
                        [1, 1, 0, 9, 9], [0, 7, 7, 12, 12]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, attrs", [
    ((2, 3, 5, 6), dict(pooled_size=(2, 3), spatial_scale=1.0)),
    ((2, 2, 7, 4), dict(pooled_size=(3, 2), spatial_scale=0.5)),
    ((2, 1, 4, 4), dict(pooled_size=(1, 1), spatial_scale=0.8))])
@pytest.mark.parametrize("opset", [17, None])
def test_roi_pooling_argmax(shape, attrs, dtype, opset, tmp_path):
    x = normal(shape, dtype)
    x[0, 0, 2, 2] = np.nan
    x[1, -1, 1, 1:3] = np.nanmax(x) + 1              # a tie: the first position wins
    check(lambda F, x, r: F._internal._roi_pooling_argmax(x, r, **attrs),
          [x, ARGMAX_ROIS.astype(dtype)], 1e-12, tmp_path, opset_version=opset)


# ---- gradient graphs --------------------------------------------------------------------------
def _gradients(loss, values, wrt, tmp_path, rtol):
    """mx.sym.grad of ``loss(F, vars)`` in ``wrt``, exported and run, against autograd."""
    syms = {k: mx.sym.var(k, shape=v.shape) for k, v in values.items()}
    graph = mx.sym.Group(mx.sym.grad(loss(mx.sym, syms), [syms[k] for k in wrt]))
    got = export_and_run(graph, {}, {k: values[k] for k in graph.list_arguments()}, tmp_path)
    arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in values.items()}
    for k in wrt:
        arrays[k].attach_grad()
    with mx.autograd.record():
        out = loss(mx.nd, arrays)
    out.backward()
    assert len(got) == len(wrt)
    for g, k in zip(got, wrt):
        np.testing.assert_allclose(g, arrays[k].grad.asnumpy(), rtol=rtol, atol=rtol)


def _weighted(F, y, w):
    return F.sum(y * w)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_of_psroi_pooling_and_rroi_align(dtype, tmp_path):
    values = {"x": normal((2, 8, 5, 6), dtype), "rois": ROIS.astype(dtype),
              "rr": R_ROIS.astype(dtype), "w": normal((5, 2, 2, 2), dtype),
              "v": normal((5, 8, 2, 3), dtype)}

    def loss(F, v):
        sq = v["x"] * v["x"]
        return (_weighted(F, F.contrib.PSROIPooling(sq, v["rois"], **_PS_A), v["w"])
                + _weighted(F, F.contrib.RROIAlign(sq, v["rr"], **_RR_A), v["v"]))
    _gradients(loss, values, ["x"], tmp_path, RTOL[dtype] * 10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_second_order_through_roi_align(dtype, tmp_path):
    """d/dx of |d/dx sum(w * ROIAlign(x**2))|**2: the adjoint, then ROIAlign again."""
    values = {"x": normal((2, 3, 5, 6), dtype), "rois": ROIS.astype(dtype),
              "w": normal((5, 3, 3, 2), dtype)}

    def loss(F, v):
        if F is mx.sym:
            inner = _weighted(F, F.contrib.ROIAlign(v["x"] * v["x"], v["rois"], **_AL_B),
                              v["w"])
            g = mx.sym.grad(inner, [v["x"]])[0]
        else:
            with mx.autograd.record():
                inner = _weighted(F, F.contrib.ROIAlign(v["x"] * v["x"], v["rois"], **_AL_B),
                                  v["w"])
            g = mx.autograd.grad(inner, [v["x"]], create_graph=True)[0]
        return F.sum(g * g)
    _gradients(loss, values, ["x"], tmp_path, RTOL[dtype] * 10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_of_deformable_psroi_pooling(dtype, tmp_path):
    """Data and trans: the scatter and the samplers differentiated once more."""
    values = {"x": normal((2, 8, 5, 6), dtype), "rois": ROIS.astype(dtype),
              "t": normal((5, 2, 3, 3), dtype), "w": normal((5, 2, 2, 2), dtype)}

    def loss(F, v):
        y = F.contrib.DeformablePSROIPooling(v["x"] * v["x"], v["rois"], v["t"], **_DPS_A)
        return _weighted(F, y, v["w"])
    _gradients(loss, values, ["x", "t"], tmp_path, RTOL[dtype] * 10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_of_roi_pooling(dtype, tmp_path):
    """ROIPooling's gradient reads ``_roi_pooling_argmax``."""
    values = {"x": normal((2, 3, 5, 6), dtype), "rois": ARGMAX_ROIS[:4].astype(dtype),
              "w": normal((4, 3, 2, 3), dtype)}

    def loss(F, v):
        y = F.ROIPooling(v["x"], v["rois"], pooled_size=(2, 3), spatial_scale=1.0)
        return _weighted(F, y, v["w"])
    _gradients(loss, values, ["x"], tmp_path, RTOL[dtype])


# ---- dynamic batch axes: the number of rois and the batch size read at run time -------------
# (fn, the first input's shape past its first axis, the rois' width, the number of images of
# an adjoint's data_shape: None for a pooling, whose first input's first axis is the batch)
DYNAMIC = [
    pytest.param(lambda F, x, r: F.contrib.PSROIPooling(x, r, **_PS_B), (8, 5, 6), 5, None,
                 id="psroi_pooling"),
    pytest.param(lambda F, g, r: F._internal._roi_align_adjoint(
        g, r, data_shape=(2, 3, 5, 6), **_AL_B), (3, 3, 2), 5, 2, id="roi_align_adjoint"),
    pytest.param(lambda F, x, r: F.contrib.RROIAlign(x, r, **_RR_B), (2, 6, 7), 6, None,
                 id="rroi_align"),
    pytest.param(lambda F, g, r: F._internal._rroi_align_adjoint(
        g, r, data_shape=(1, 2, 6, 7), **_RR_B), (2, 2, 2), 6, 1, id="rroi_align_adjoint"),
    pytest.param(lambda F, x, r: F.contrib.DeformablePSROIPooling(x, r, **_DPS_NO),
                 (8, 5, 6), 5, None, id="deformable_psroi_pooling"),
    pytest.param(lambda F, x, r: F._internal._roi_pooling_argmax(
        x, r, pooled_size=(2, 3), spatial_scale=1.0), (3, 5, 6), 5, None,
        id="roi_pooling_argmax")]


def _rois_for(width, count, images, seed):
    """``count`` random rois on ``images`` images (a rotated roi's angle in degrees)."""
    g = np.random.default_rng(seed)
    batch = g.integers(0, images, count)
    if width == 6:
        return np.column_stack([batch, g.uniform(0, 6, (count, 2)),
                                g.uniform(0.5, 8, (count, 2)), g.uniform(-180, 180, count)])
    lo = g.uniform(-2, 4, (count, 2))
    return np.column_stack([batch, lo, lo + g.uniform(0, 5, (count, 2))])


@pytest.mark.parametrize("fn, item, width, images", DYNAMIC)
def test_dynamic_batch_axes(fn, item, width, images, tmp_path):
    """Exported with symbolic first axes at one size, run at others: the rois' count and
    (for a pooling) the batch size are read from the inputs."""
    from onnx_harness import run_onnx
    x, r = mx.sym.var("x"), mx.sym.var("r")
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(fn(mx.sym, x, r), {}, in_shapes=[(3,) + item, (3, width)],
                         in_types=[np.float32, np.float32], onnx_file_path=path,
                         dynamic_input_shapes=[(None,) + item, (None, width)])
    for count, n in ((4, 1), (7, 2)):
        rois = _rois_for(width, count, images or n, count).astype(np.float32)
        first = n if images is None else count        # a pooling's batch, an adjoint's rois
        data = rng.standard_normal((first,) + item).astype(np.float32)
        (got,) = run_onnx(path, {"x": data, "r": rois})
        want = fn(mx.nd, mx.nd.array(data), mx.nd.array(rois)).asnumpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
