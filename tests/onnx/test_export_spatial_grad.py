"""Resampling ops, the spatial transformers' and pooling's gradient ops, im2col/col2im,
Correlation's derivatives and the histogram on one-op graphs: exported, checked (full
check), run in onnxruntime and compared with ``mx.nd`` (float32 and float64, two or more
shapes and attribute sets each)."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run
from test_export_linalg import check

rng = np.random.default_rng(29)
CASES = []
F32, F64 = np.float32, np.float64
INTERNAL = lambda F: F._internal  # noqa: E731


def case(label, fn, *inputs, rtol=None, dtypes=(F32, F64)):
    """One case per dtype: the float inputs cast to it (rtol by dtype unless given)."""
    for dt in dtypes:
        cast = [a.astype(dt) if a.dtype.kind == "f" else a for a in inputs]
        tol = rtol or (2e-5 if dt == F32 else 1e-10)
        CASES.append(pytest.param(fn, cast, tol, id=f"{label}-{np.dtype(dt).name}"))


def normal(*shape, s=1.0):
    return rng.standard_normal(shape) * s


def grid(n, h, w, lim=1.3):
    """Points in [-lim, lim]: some outside the image (their corners read zero)."""
    return rng.uniform(-lim, lim, (n, 2, h, w))


# ---- adaptive pooling, bilinear resize and their adjoints --------------------------------------
AP = lambda F: F.contrib.AdaptiveAvgPooling2D  # noqa: E731
case("adaptive_shrink", lambda F, x: AP(F)(x, output_size=(2, 3)), normal(2, 3, 5, 7))
case("adaptive_grow_overlapping", lambda F, x: AP(F)(x, output_size=(4, 6)), normal(1, 2, 3, 4))
case("adaptive_square", lambda F, x: AP(F)(x, output_size=3), normal(2, 1, 7, 5))
case("adaptive_global", lambda F, x: AP(F)(x), normal(1, 3, 4, 4))
case("adaptive_adjoint", lambda F, g: INTERNAL(F)._adaptive_avg_pooling2d_adjoint(
    g, height=5, width=7), normal(2, 3, 2, 3))
case("adaptive_adjoint_overlapping", lambda F, g: INTERNAL(F)._adaptive_avg_pooling2d_adjoint(
    g, height=3, width=4), normal(1, 2, 4, 6))

BR = lambda F: F.contrib.BilinearResize2D  # noqa: E731
for ac in (True, False):
    case(f"resize_size_ac{int(ac)}", lambda F, x, a=ac: BR(F)(x, height=7, width=3,
                                                               align_corners=a),
         normal(2, 3, 4, 5))
    case(f"resize_scale_ac{int(ac)}", lambda F, x, a=ac: BR(F)(
        x, scale_height=0.7, scale_width=1.6, align_corners=a), normal(1, 2, 6, 5))
    case(f"resize_odd_scale_ac{int(ac)}", lambda F, x, a=ac: BR(F)(
        x, scale_height=2.0, scale_width=1.5, mode="odd_scale", align_corners=a),
        normal(1, 2, 5, 4))
    case(f"resize_single_row_ac{int(ac)}", lambda F, x, a=ac: BR(F)(
        x, height=1, width=4, align_corners=a), normal(1, 1, 3, 2))
    case(f"resize_adjoint_ac{int(ac)}", lambda F, g, a=ac: INTERNAL(F)._bilinear_resize2d_adjoint(
        g, height=3, width=5, align_corners=a), normal(2, 2, 6, 4))
    case(f"resize_adjoint_shrunk_ac{int(ac)}", lambda F, g, a=ac: INTERNAL(F)
         ._bilinear_resize2d_adjoint(g, height=6, width=7, align_corners=a), normal(1, 3, 2, 3))
for mode in ("to_even_down", "to_even_up", "to_odd_down", "to_odd_up"):
    case(f"resize_{mode}", lambda F, x, m=mode: BR(F)(x, mode=m, align_corners=False),
         normal(1, 2, 5, 6))


# ---- bilinear sampler derivatives, affine grid adjoint, deformable grid ------------------------
SD = lambda F: F._internal._bilinear_sampler_d  # noqa: E731
SA = lambda F: F._internal._bilinear_sampler_adjoint  # noqa: E731
for dx, dy in ((0, 0), (1, 0), (0, 1), (1, 1)):
    case(f"sampler_d_{dx}{dy}", lambda F, x, g, a=dx, b=dy: SD(F)(x, g, dx=a, dy=b),
         normal(2, 3, 5, 6), grid(2, 4, 3))
    case(f"sampler_d_{dx}{dy}_upsample", lambda F, x, g, a=dx, b=dy: SD(F)(x, g, dx=a, dy=b),
         normal(1, 2, 3, 3), grid(1, 6, 7, lim=1.0))
    case(f"sampler_adjoint_{dx}{dy}", lambda F, h, g, a=dx, b=dy: SA(F)(
        h, g, dx=a, dy=b, height=5, width=6), normal(2, 3, 4, 3), grid(2, 4, 3))
    case(f"sampler_adjoint_{dx}{dy}_dense", lambda F, h, g, a=dx, b=dy: SA(F)(
        h, g, dx=a, dy=b, height=3, width=3), normal(1, 2, 6, 7), grid(1, 6, 7, lim=1.0))
case("affine_adjoint", lambda F, g: INTERNAL(F)._grid_generator_affine_adjoint(
    g, target_shape=(4, 5)), normal(2, 2, 4, 5))
case("affine_adjoint_square", lambda F, g: INTERNAL(F)._grid_generator_affine_adjoint(
    g, target_shape=(3, 3)), normal(1, 2, 3, 3))
DG = lambda F: F._internal._deform_grid  # noqa: E731
case("deform_grid", lambda F, o: DG(F)(o, kernel=(3, 3), data_shape=(2, 4, 6, 7)),
     normal(2, 18, 4, 5))
case("deform_grid_strided_groups", lambda F, o: DG(F)(
    o, kernel=(2, 3), stride=(2, 1), dilate=(1, 2), pad=(1, 2), num_deformable_group=2,
    data_shape=(1, 4, 5, 6)), normal(1, 24, 3, 6))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_spatial_grad_op_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    check(fn, inputs, rtol, tmp_path)


def test_resize_like_reads_only_the_shape_of_like(tmp_path):
    """Mode 'like': the second input gives the size (its values do not matter)."""
    x = normal(2, 3, 4, 5).astype(F32)
    like = normal(1, 1, 7, 2).astype(F32)
    out = mx.sym.contrib.BilinearResize2D(mx.sym.var("x"), mx.sym.var("like"), mode="like")
    got = export_and_run(out, {}, {"x": x, "like": like}, tmp_path)
    want = mx.nd.contrib.BilinearResize2D(mx.nd.array(x), mx.nd.array(like), mode="like")
    assert got[0].shape == (2, 3, 7, 2)
    np.testing.assert_allclose(got[0], want.asnumpy(), rtol=2e-5, atol=2e-6)
    other = export_and_run(out, {}, {"x": x, "like": like * 0 + 9}, tmp_path)
    np.testing.assert_array_equal(other[0], got[0])


def test_sampler_adjoint_exports_with_a_dynamic_batch(tmp_path):
    """The adjoint's zeros take the batch from the head gradient (a symbolic axis)."""
    h, g = normal(2, 2, 3, 4).astype(F32), grid(2, 3, 4).astype(F32)
    out = mx.sym._internal._bilinear_sampler_adjoint(mx.sym.var("h"), mx.sym.var("g"),
                                                     height=4, width=5)
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(out, {}, in_shapes=[h.shape, g.shape], in_types=[F32, F32],
                         onnx_file_path=path, dynamic=True)
    from onnx_harness import run_onnx
    for n in (1, 3):
        hn, gn = normal(n, 2, 3, 4).astype(F32), grid(n, 3, 4).astype(F32)
        got = run_onnx(path, {"h": hn, "g": gn})[0]
        want = mx.nd._internal._bilinear_sampler_adjoint(mx.nd.array(hn), mx.nd.array(gn),
                                                         height=4, width=5).asnumpy()
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
