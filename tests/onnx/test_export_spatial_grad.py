"""Resampling ops, the spatial transformers' and pooling's gradient ops, im2col/col2im,
Correlation's derivatives and the histogram on one-op graphs: exported, checked (full
check), run in onnxruntime and compared with ``mx.nd`` (float32 and float64, two or more
shapes and attribute sets each)."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run, run_onnx
from onnx_harness import check

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


# ---- pooling gradients -------------------------------------------------------------------------
def ties(*shape, levels=4):
    """Few distinct values: windows with tied maxima (the first one wins)."""
    return rng.integers(0, levels, shape).astype(np.float64)


PB = lambda F: F._internal._pool_backward  # noqa: E731
PS = lambda F: F._internal._pool_max_scatter  # noqa: E731
PG = lambda F: F._internal._pool_max_gather  # noqa: E731
NHWC = lambda F, x: F.transpose(x, axes=(0, 2, 3, 1))  # noqa: E731
POOLS = [  # (label, window params, data shape)
    ("2d", dict(kernel=(2, 2), stride=(1, 2), pad=(1, 0)), (2, 3, 5, 6)),
    ("2d_full", dict(kernel=(3, 2), stride=(2, 2), pad=(1, 1), pooling_convention="full"),
     (1, 2, 5, 4)),
    ("2d_stride_past_kernel_full", dict(kernel=(2, 2), stride=(3, 3), pad=(1, 1),
                                        pooling_convention="full"), (1, 2, 6, 7)),
    ("1d", dict(kernel=(3,), stride=(2,), pad=(1,)), (2, 3, 7)),
    ("3d", dict(kernel=(2, 1, 2), stride=(2, 1, 1), pad=(0, 1, 1)), (1, 2, 4, 3, 5)),
]


def _window_count(kind, data, params):
    """The pooled shape (from mxlite's Pooling on zeros)."""
    return mx.nd.Pooling(mx.nd.zeros(data), pool_type=kind, **params).shape


for label, params, data in POOLS:
    for kind, include in (("avg", True), ("avg", False), ("sum", True)):
        g = normal(*_window_count(kind, data, params))
        case(f"pool_backward_{label}_{kind}_pad{int(include)}", lambda F, g, p=params, k=kind,
             i=include, s=data[2:]: PB(F)(g, pool_type=k, count_include_pad=i, in_shape=s,
                                          **p), g)
    pooled = _window_count("max", data, params)
    case(f"pool_max_scatter_{label}", lambda F, x, g, p=params: PS(F)(x, g, **p),
         normal(*data), normal(*pooled))
    case(f"pool_max_scatter_{label}_ties", lambda F, x, g, p=params: PS(F)(x, g, **p),
         ties(*data), normal(*pooled))
    case(f"pool_max_gather_{label}", lambda F, x, h, p=params: PG(F)(x, h, **p),
         normal(*data), normal(*data))
    case(f"pool_max_gather_{label}_ties", lambda F, x, h, p=params: PG(F)(x, h, **p),
         ties(*data), normal(*data))
MAXP = dict(kernel=(2, 3), stride=(1, 2), pad=(1, 1))


def specials(*shape):
    """Ties with NaNs and infinities: a NaN is its window's maximum (the first NaN), a
    window of -inf picks its first input element (never the padding)."""
    x = ties(*shape)
    x.flat[rng.choice(x.size, x.size // 3, replace=False)] = -np.inf
    x.flat[rng.choice(x.size, x.size // 8, replace=False)] = np.nan
    x.flat[rng.choice(x.size, x.size // 8, replace=False)] = np.inf
    return x


case("pool_max_scatter_nan_inf", lambda F, x, g: PS(F)(x, g, **MAXP), specials(2, 3, 4, 5),
     normal(2, 3, 5, 3))
case("pool_max_gather_nan_inf", lambda F, x, h: PG(F)(x, h, **MAXP), specials(2, 3, 4, 5),
     normal(2, 3, 4, 5))
case("pool_max_scatter_nhwc", lambda F, x, g: PS(F)(NHWC(F, x), NHWC(F, g), layout="NHWC",
                                                    **MAXP), ties(2, 3, 4, 5), normal(2, 3, 5, 3))
case("pool_max_gather_nhwc", lambda F, x, h: PG(F)(NHWC(F, x), NHWC(F, h), layout="NHWC",
                                                   **MAXP), ties(2, 3, 4, 5), normal(2, 3, 4, 5))
case("pool_backward_nhwc", lambda F, g: PB(F)(NHWC(F, g), layout="NHWC", pool_type="avg",
                                              in_shape=(4, 5), **MAXP), normal(2, 3, 5, 3))
case("pool_backward_nwc_full", lambda F, g: PB(F)(
    F.transpose(g, axes=(0, 2, 1)), layout="NWC", pool_type="avg", kernel=(3,), stride=(2,),
    pad=(1,), pooling_convention="full", count_include_pad=False, in_shape=(6,)),
    normal(1, 2, 4))
case("pool_backward_f16", lambda F, g: PB(F)(g, pool_type="avg", in_shape=(5, 4),
                                             kernel=(3, 2), stride=(2, 2), pad=(1, 1)),
     normal(1, 2, 3, 3), dtypes=(np.float16,), rtol=2e-3)
case("pool_max_scatter_f16", lambda F, x, g: PS(F)(x, g, **MAXP), ties(1, 2, 4, 5),
     normal(1, 2, 5, 3), dtypes=(np.float16,), rtol=2e-3)
case("pool_max_gather_f16", lambda F, x, h: PG(F)(x, h, **MAXP), ties(1, 2, 4, 5),
     normal(1, 2, 4, 5), dtypes=(np.float16,), rtol=1e-3)


# ---- im2col, col2im ----------------------------------------------------------------------------
COLS = [  # (label, params, image shape)
    ("2d", dict(kernel=(2, 2)), (2, 3, 4, 5)),
    ("2d_strided_dilated_padded", dict(kernel=(2, 3), stride=(1, 2), dilate=(2, 1),
                                       pad=(1, 1)), (1, 2, 4, 5)),
    ("1d", dict(kernel=(3,), stride=(2,), pad=(2,)), (2, 2, 7)),
    ("3d", dict(kernel=(2, 2, 1), stride=(1, 2, 1), pad=(0, 1, 1)), (1, 2, 3, 4, 2)),
]
for label, params, image in COLS:
    case(f"im2col_{label}", lambda F, x, p=params: F.im2col(x, **p), normal(*image))
    cols = mx.nd.im2col(mx.nd.zeros(image), **params).shape
    case(f"col2im_{label}", lambda F, c, p=params, s=image[2:]: F.col2im(c, output_size=s, **p),
         normal(*cols))
case("im2col_f16", lambda F, x: F.im2col(x, kernel=(2, 2), pad=(1, 1)), normal(1, 2, 3, 4),
     dtypes=(np.float16,), rtol=1e-3)
case("col2im_f16", lambda F, c: F.col2im(c, output_size=(3, 4), kernel=(2, 2), pad=(1, 1)),
     normal(1, 8, 20), dtypes=(np.float16,), rtol=2e-3)


# ---- Correlation's tangent and adjoint ---------------------------------------------------------
CORR = [  # (label, params, data shape)
    ("default", dict(), (2, 3, 5, 6)),
    ("multiply_k3_strided", dict(kernel_size=3, max_displacement=2, stride1=2, stride2=1,
                                 pad_size=2), (1, 4, 7, 8)),
    ("absdiff_stride2", dict(kernel_size=1, max_displacement=4, stride1=1, stride2=2,
                             pad_size=4, is_multiply=False), (2, 2, 6, 5)),
    ("absdiff_k3", dict(kernel_size=3, max_displacement=1, stride1=1, stride2=1, pad_size=1,
                        is_multiply=False), (1, 2, 5, 5)),
]


def corr_out(shape, params):
    z = mx.nd.zeros(shape)
    return mx.nd.Correlation(z, z, **params).shape


def corr_data(shape, params):
    """data1, data2 with some exact ties (the absolute difference's slope at a tie)."""
    d1, d2 = ties(*shape, levels=3), ties(*shape, levels=3)
    if params.get("is_multiply", True):
        d1, d2 = d1 + normal(*shape), d2 + normal(*shape)
    return d1, d2


for label, params, shape in CORR:
    for side in (1, 2):
        d1, d2 = corr_data(shape, params)
        case(f"corr_tangent_{label}_side{side}", lambda F, t, a, b, p=params, s=side:
             F._internal._correlation_tangent(t, a, b, side=s, **p), normal(*shape), d1, d2,
             rtol=1e-4)
        case(f"corr_adjoint_{label}_side{side}", lambda F, g, a, b, p=params, s=side:
             F._internal._correlation_adjoint(g, a, b, side=s, **p),
             normal(*corr_out(shape, params)), d1, d2, rtol=1e-4)
for side in (1, 2):
    d1, d2 = corr_data((1, 2, 5, 6), {})
    case(f"corr_tangent_f16_side{side}", lambda F, t, a, b, s=side: F._internal.
         _correlation_tangent(t, a, b, side=s, max_displacement=1), normal(1, 2, 5, 6), d1, d2,
         dtypes=(np.float16,), rtol=5e-3)
    case(f"corr_adjoint_f16_side{side}", lambda F, g, a, b, s=side: F._internal.
         _correlation_adjoint(g, a, b, side=s, max_displacement=1), normal(1, 9, 3, 4), d1, d2,
         dtypes=(np.float16,), rtol=5e-3)


# ---- _histogram ---------------------------------------------------------------------------------
HIST = lambda F: F._internal._histogram  # noqa: E731


def hist_data(*shape, lo=-1.0, hi=3.0):
    """Values spilling past the range, with its bounds, NaN and infinities among them."""
    x = rng.uniform(lo - 1, hi + 1, shape)
    x.flat[:5] = [lo, hi, np.nan, np.inf, -np.inf][:x.size]
    return x


def int_data(dtype, *shape):
    return rng.integers(-3, 9, shape).astype(dtype)


for label, bins, rng_ in (("5_bins", 5, (-1.0, 3.0)), ("7_bins", 7, (0.5, 2.0)),
                          ("1_bin", 1, (-1.0, 3.0)), ("empty_range", 3, (1.0, 1.0)),
                          ("no_bins", 0, (0.0, 1.0))):
    for shape in ((40,), (3, 4, 5)):
        case(f"histogram_{label}_{len(shape)}d", lambda F, x, b=bins, r=rng_: HIST(F)(
            x, bin_cnt=b, range=r), hist_data(*shape, lo=rng_[0], hi=rng_[1]))
for dt in (np.int32, np.int64, np.uint8, np.float16):
    case(f"histogram_{np.dtype(dt).name}", lambda F, x: HIST(F)(x, bin_cnt=4, range=(0.5, 7.0)),
         int_data(dt, 6, 7), dtypes=(dt,))
    case(f"histogram_edges_{np.dtype(dt).name}", lambda F, x, e: HIST(F)(x, e),
         int_data(dt, 6, 7), np.array([0, 1, 2, 5, 6], dt), dtypes=(dt,))
case("histogram_edges", lambda F, x, e: HIST(F)(x, e), hist_data(5, 8),
     np.array([-1.0, -0.5, 0.0, 1.5, 3.0]))
case("histogram_empty_data", lambda F, x: HIST(F)(x, bin_cnt=3, range=(0.0, 1.0)), np.zeros(0))
case("histogram_edges_empty_data", lambda F, x, e: HIST(F)(x, e), np.zeros((2, 0)),
     np.array([0.0, 1.0, 2.0]))
case("histogram_edges_ties_two", lambda F, x, e: HIST(F)(x, e), np.round(hist_data(30) * 2) / 2,
     np.array([0.0, 1.0]))


def least_opset(fn, n_inputs):
    """The newest of the least opsets the translations of ``fn``'s ops declare."""
    from mxlite.onnx.table import TRANSLATIONS
    from mxlite.symbol.graph import topo_order
    out = fn(mx.sym, *[mx.sym.var(f"in{i}") for i in range(n_inputs)])
    return max(TRANSLATIONS[n.op.name].opset for n in topo_order(out._outputs)
               if n.op is not None)


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
@pytest.mark.parametrize("least", [False, True], ids=["newest", "least"])
def test_spatial_grad_op_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, least, tmp_path):
    """At the default opset and at the least one the translations declare."""
    opset = least_opset(fn, len(inputs)) if least else None
    check(fn, inputs, rtol, tmp_path, opset_version=opset)


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


DYNAMIC = [  # (label, fn, input shapes after the batch axis)
    ("sampler_adjoint", lambda F, h, g: SA(F)(h, g, height=4, width=5), [(2, 3, 4), "grid"]),
    ("sampler_d", lambda F, x, g: SD(F)(x, g, dx=1), [(2, 4, 5), "grid"]),
    ("adaptive", lambda F, x: AP(F)(x, output_size=(2, 3)), [(2, 5, 4)]),
    ("affine_adjoint", lambda F, g: INTERNAL(F)._grid_generator_affine_adjoint(
        g, target_shape=(3, 4)), [(2, 3, 4)]),
    ("pool_max_scatter", lambda F, x, g: PS(F)(x, g, **MAXP), [(2, 4, 5), (2, 5, 3)]),
    ("pool_max_gather_nhwc", lambda F, x, h: PG(F)(NHWC(F, x), NHWC(F, h), layout="NHWC",
                                                   **MAXP), [(2, 4, 5), (2, 4, 5)]),
    ("pool_backward", lambda F, g: PB(F)(g, pool_type="avg", in_shape=(4, 5), **MAXP),
     [(2, 5, 3)]),
    ("im2col", lambda F, x: F.im2col(x, kernel=(2, 2), pad=(1, 1)), [(2, 3, 4)]),
    ("col2im", lambda F, c: F.col2im(c, output_size=(3, 4), kernel=(2, 2), pad=(1, 1)),
     [(8, 20)]),
    ("corr_adjoint", lambda F, g, a, b: INTERNAL(F)._correlation_adjoint(
        g, a, b, side=2, max_displacement=1, pad_size=1), [(9, 3, 4), (2, 3, 4), (2, 3, 4)]),
    ("corr_tangent", lambda F, t, a, b: INTERNAL(F)._correlation_tangent(
        t, a, b, side=1, max_displacement=1, pad_size=1), [(2, 3, 4), (2, 3, 4), (2, 3, 4)]),
]


@pytest.mark.parametrize("fn,shapes", [pytest.param(f, s, id=label) for label, f, s in DYNAMIC])
def test_exports_with_a_dynamic_batch(fn, shapes, tmp_path):
    """Exported with a symbolic batch axis at batch 2, run at batches 1 and 3."""
    def inputs(n):
        return [grid(n, 3, 4).astype(F32) if s == "grid" else normal(n, *s).astype(F32)
                for s in shapes]
    names = [f"in{i}" for i in range(len(shapes))]
    out = fn(mx.sym, *[mx.sym.var(n) for n in names])
    path = str(tmp_path / "m.onnx")
    first = inputs(2)
    mx.onnx.export_model(out, {}, in_shapes=[a.shape for a in first],
                         in_types=[F32] * len(first), onnx_file_path=path, dynamic=True)
    for n in (1, 3):
        arrays = inputs(n)
        got = run_onnx(path, dict(zip(names, arrays)))[0]
        want = fn(mx.nd, *[mx.nd.array(a) for a in arrays]).asnumpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


# ---- whole gradient graphs ---------------------------------------------------------------------
def _loss(F, fn, xs, second, grad):
    """sum(w * fn(inputs)) of ``xs`` = inputs + [w] (w a head gradient); ``second``: the
    squared norm of its gradient in the first input (``grad`` takes that gradient)."""
    loss = F.sum(fn(F, *xs[:-1]) * xs[-1])
    if second:
        loss = F.sum(F.square(grad(loss, xs[0])))
    return loss


def _grads_by_autograd(fn, arrays, second):
    """The gradients of the loss in every input and the head, by mx.autograd."""
    xs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    for x in xs:
        x.attach_grad()

    def grad(loss, x):
        return mx.autograd.grad(loss, [x], create_graph=True)[0]
    with mx.autograd.record():
        loss = _loss(mx.nd, fn, xs, second, grad)
    loss.backward()
    return [x.grad.asnumpy() for x in xs]


def _grads_by_symbol(fn, arrays, second):
    """The same gradients as a symbol graph (mx.sym.grad)."""
    xs = [mx.sym.var(f"in{i}", shape=a.shape, dtype=a.dtype) for i, a in enumerate(arrays)]
    loss = _loss(mx.sym, fn, xs, second, lambda loss, x: mx.sym.grad(loss, [x])[0])
    return mx.sym.Group(mx.sym.grad(loss, xs))


#: cases whose graph holds a forward op that onnxruntime runs in float32 only (avg Pooling
#: and Correlation are AveragePools, which onnxruntime 1.32 lacks in float64): float32
FLOAT32_ONLY = {"avg_pool_nhwc", "correlation"}
GRADS = [  # (label, fn, inputs)
    ("adaptive", lambda F, x: F.contrib.AdaptiveAvgPooling2D(x, output_size=(2, 3)),
     [normal(2, 2, 5, 4)]),
    ("resize", lambda F, x: F.contrib.BilinearResize2D(x, height=3, width=7,
                                                      align_corners=False),
     [normal(1, 2, 4, 5)]),
    ("max_pool", lambda F, x: F.Pooling(x, kernel=(2, 2), stride=(2, 1), pad=(1, 0),
                                        pool_type="max"), [normal(2, 2, 5, 4)]),
    ("avg_pool_nhwc", lambda F, x: F.Pooling(x, kernel=(3, 2), stride=(2, 2), pad=(1, 1),
                                             pool_type="avg", layout="NHWC",
                                             pooling_convention="full"),
     [normal(1, 5, 4, 3)]),
    ("im2col", lambda F, x: F.im2col(x, kernel=(2, 3), stride=(1, 2), pad=(1, 1)),
     [normal(2, 2, 4, 5)]),
    ("correlation", lambda F, a, b: F.Correlation(a, b, kernel_size=3, max_displacement=1,
                                                  pad_size=1), [normal(1, 2, 5, 5),
                                                                normal(1, 2, 5, 5)]),
    ("bilinear_sampler", lambda F, x, g: F.BilinearSampler(x, g),
     [normal(1, 2, 4, 5), grid(1, 3, 4)]),
    ("spatial_transformer", lambda F, x, t: F.SpatialTransformer(
        x, t, target_shape=(3, 4), transform_type="affine", sampler_type="bilinear"),
     [normal(1, 2, 4, 5), normal(1, 6, s=0.5)]),
    ("deformable_conv", lambda F, x, o, w: F.contrib.DeformableConvolution(
        x, o, w, kernel=(2, 2), num_filter=3, no_bias=True),
     [normal(1, 2, 4, 4), normal(1, 8, 3, 3, s=0.7), normal(3, 2, 2, 2)]),
]


@pytest.mark.parametrize("fn,arrays,dtype", [
    pytest.param(f, a, F32 if label in FLOAT32_ONLY else F64, id=label)
    for label, f, a in GRADS])
@pytest.mark.parametrize("order", [1, 2])
def test_gradient_graph_exports_and_matches_autograd(fn, arrays, dtype, order, tmp_path):
    """The gradient graph of each input and the head gradient (``order`` 2: of the squared
    norm of the first input's gradient) in float64 (or float32), exported and run, against
    mx.autograd."""
    arrays = [np.asarray(a, dtype) for a in arrays]
    out = fn(mx.nd, *[mx.nd.array(a, dtype=dtype) for a in arrays])
    arrays.append(normal(*out.shape).astype(dtype))
    graph = _grads_by_symbol(fn, arrays, order == 2)
    feeds = {f"in{i}": a for i, a in enumerate(arrays)}
    got = export_and_run(graph, {}, {k: feeds[k] for k in graph.list_arguments()}, tmp_path)
    want = _grads_by_autograd(fn, arrays, order == 2)
    assert len(got) == len(want)
    for g, e in zip(got, want):
        tol = 1e-9 if dtype == F64 else 1e-4
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol * 1e-2)
