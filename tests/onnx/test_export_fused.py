"""The fused gradient operators (_norm_project, _layer_norm_grad, _gelu_derivative,
_rrelu_slope), SVMOutput's forward pass and the optimizer operators that write no state
(sgd_update, signsgd_update, lamb_update_phase2, multi_sum_sq, multi_lars) on one-op graphs:
exported, checked (full check), run in onnxruntime and compared with ``mx.nd``."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run
from onnx_harness import check

rng = np.random.default_rng(31)
CASES = []
I = lambda F: F._internal  # noqa: E731
FLOATS = (np.float32, np.float64)


def case(label, fn, *inputs, rtol=None):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


def normal(*shape, dtype=np.float32, s=1.0):
    return (rng.standard_normal(shape) * s).astype(dtype)


def positive(*shape, dtype=np.float32):
    return rng.uniform(0.5, 2.0, shape).astype(dtype)


def tolerance(inputs):
    dt = np.result_type(*[a.dtype for a in inputs])
    return {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-5}.get(dt, 1e-12)


# ---- _norm_project: the reduced axes one block (layout 0) or the kept ones (layout 1) -------
def _proj_inputs(shape, red, flag, dt):
    kept = tuple(1 if i in red else d for i, d in enumerate(shape))
    return (normal(*shape, dtype=dt), normal(*shape, dtype=dt), positive(*kept, dtype=dt),
            np.array([flag], dt), normal(*kept, dtype=dt), normal(*kept, dtype=dt))


for dt in FLOATS:
    tag = np.dtype(dt).name
    case(f"norm_project_rows_{tag}", lambda F, *x: I(F)._norm_project(*x, axis=(1,)),
         *_proj_inputs((3, 5), (1,), 1.0, dt))
    case(f"norm_project_channels_{tag}", lambda F, *x: I(F)._norm_project(*x, axis=(0, 2)),
         *_proj_inputs((2, 3, 4), (0, 2), 1.0, dt))
    case(f"norm_project_exclude_flag0_{tag}", lambda F, *x: I(F)._norm_project(
        *x, axis=(0,), exclude=True), *_proj_inputs((2, 3, 4), (1, 2), 0.0, dt))
    case(f"norm_project_all_{tag}", lambda F, *x: I(F)._norm_project(*x),
         *_proj_inputs((4, 3), (0, 1), 1.0, dt))


# ---- _layer_norm_grad: mean and std from the data, as LayerNorm makes them -------------------
def _lng_inputs(shape, axis, dt):
    x = normal(*shape, dtype=dt, s=2.0)
    mean = x.mean(axis=axis, keepdims=True)
    std = np.sqrt(x.var(axis=axis, keepdims=True) + 1e-5).astype(dt)
    kept = mean.shape
    return (normal(*shape, dtype=dt), x, normal(shape[axis], dtype=dt), mean.astype(dt), std,
            normal(*kept, dtype=dt), normal(*kept, dtype=dt))


for dt in FLOATS:
    tag = np.dtype(dt).name
    case(f"layer_norm_grad_last_{tag}", lambda F, *x: I(F)._layer_norm_grad(*x, axis=-1),
         *_lng_inputs((4, 6), -1, dt))
    case(f"layer_norm_grad_axis1_{tag}", lambda F, *x: I(F)._layer_norm_grad(*x, axis=1),
         *_lng_inputs((2, 5, 3), 1, dt))
    case(f"layer_norm_grad_1d_{tag}", lambda F, *x: I(F)._layer_norm_grad(*x, axis=0),
         *_lng_inputs((7,), 0, dt))


# ---- _gelu_derivative: float64 too (the CDF without Erf), far into both tails -----------------
for dt in (np.float32, np.float64, np.float16):
    tag = np.dtype(dt).name
    for order in (1, 2):
        case(f"gelu_derivative_order{order}_{tag}",
             lambda F, x, o=order: I(F)._gelu_derivative(x, order=o),
             normal(3, 7, dtype=dt, s=2.5))
        case(f"gelu_derivative_order{order}_wide_{tag}",
             lambda F, x, o=order: I(F)._gelu_derivative(x, order=o),
             np.linspace(-30 if dt != np.float16 else -6, 9, 81).astype(dt).reshape(1, 81, 1))


# ---- _rrelu_slope: x < 0 ? y / x : 1 ---------------------------------------------------------
for dt in FLOATS + (np.float16,):
    tag = np.dtype(dt).name
    x = normal(4, 5, dtype=dt)
    x[0, :2] = 0
    case(f"rrelu_slope_{tag}", lambda F, x, y: I(F)._rrelu_slope(x, y), x,
         (x * rng.uniform(0.1, 0.4, x.shape)).astype(dt))
    x = normal(6, dtype=dt)
    case(f"rrelu_slope_identity_{tag}", lambda F, x, y: I(F)._rrelu_slope(x, y), x, x)

# ---- SVMOutput: the identity (the label is not an input of the exported graph) ----------------
for dt in FLOATS + (np.float16,):
    tag = np.dtype(dt).name
    case(f"SVMOutput_{tag}", lambda F, x, y: F.SVMOutput(x, y, margin=0.5),
         normal(4, 3, dtype=dt), np.array([0, 2, 1, 1], np.float32))
    case(f"SVMOutput_spatial_linear_{tag}", lambda F, x, y: F.SVMOutput(x, y, use_linear=True),
         normal(2, 3, 2, 2, dtype=dt), np.array([[[0, 2], [1, 1]], [[2, 2], [0, 1]]], np.int32))


# ---- optimizer operators ---------------------------------------------------------------------
for dt in FLOATS:
    tag = np.dtype(dt).name
    case(f"sgd_update_{tag}", lambda F, w, g: F.sgd_update(w, g, lr=0.1, wd=0.01),
         normal(3, 4, dtype=dt), normal(3, 4, dtype=dt))
    case(f"sgd_update_rescale_clip_{tag}", lambda F, w, g: F.sgd_update(
        w, g, lr=0.5, rescale_grad=0.5, clip_gradient=0.3, lazy_update=False),
        normal(7, dtype=dt), normal(7, dtype=dt, s=2.0))
    case(f"sgd_update_clip0_{tag}", lambda F, w, g: F.sgd_update(
        w, g, lr=0.05, wd=0.2, clip_gradient=0.0), normal(2, 3, dtype=dt),
        normal(2, 3, dtype=dt))
    g = normal(2, 5, dtype=dt)
    g[0, 0], g[1, 1] = 0, np.nan                 # sign 0 (mxlite's kernel, NaN too)
    case(f"signsgd_update_{tag}", lambda F, w, g: F.signsgd_update(w, g, lr=0.1, wd=0.05),
         normal(2, 5, dtype=dt), g)
    case(f"signsgd_update_rescale_clip_{tag}", lambda F, w, g: F.signsgd_update(
        w, g, lr=0.3, rescale_grad=-2.0, clip_gradient=0.1), normal(4, dtype=dt),
        normal(4, dtype=dt))
    w, step = normal(3, 4, dtype=dt), normal(3, 4, dtype=dt)
    r1, r2 = np.array([2.5], np.float32), np.array([0.7], dt)
    case(f"lamb_update_phase2_{tag}", lambda F, *x: F.lamb_update_phase2(*x, lr=0.1),
         w, step, r1, r2)
    case(f"lamb_update_phase2_bounds_{tag}", lambda F, *x: F.lamb_update_phase2(
        *x, lr=0.2, lower_bound=3.0, upper_bound=10.0), w, step, r1, r2)
    case(f"lamb_update_phase2_upper_{tag}", lambda F, *x: F.lamb_update_phase2(
        *x, lr=0.2, upper_bound=1.5), normal(5, dtype=dt), normal(5, dtype=dt),
        np.array([[2.5]], np.float16), r2)
    case(f"lamb_update_phase2_zero_bounds_{tag}", lambda F, *x: F.lamb_update_phase2(
        *x, lr=0.2, lower_bound=0.0, upper_bound=0.0), w, step, r1, r2)   # 0: not set
    case(f"lamb_update_phase2_zero_norm_{tag}", lambda F, *x: F.lamb_update_phase2(
        *x, lr=0.3), w, step, r1, np.array([0.0], dt))
    case(f"multi_sum_sq_{tag}", lambda F, a, b: F.multi_sum_sq(a, b, num_arrays=2),
         normal(3, 4, dtype=dt), normal(5, dtype=dt))
    case(f"multi_sum_sq_three_{tag}", lambda F, a, b, c: F.multi_sum_sq(a, b, c, num_arrays=3),
         normal(2, 2, 2, dtype=dt, s=10.0), normal(1, dtype=dt), normal(6, 1, dtype=dt))
case("multi_sum_sq_float16", lambda F, a, b: F.multi_sum_sq(a, b, num_arrays=2),
     normal(40, dtype=np.float16, s=30.0), normal(2, 3, dtype=np.float16))


def _lars_inputs(n, zero_w=(), zero_g=()):
    w2, g2 = positive(n) ** 2, positive(n) ** 2
    w2[list(zero_w)], g2[list(zero_g)] = 0, 0
    return positive(n) * 0.1, w2, g2, positive(n) * 0.01


case("multi_lars", lambda F, *x: F.multi_lars(*x, eta=0.001, eps=1e-8), *_lars_inputs(5))
case("multi_lars_rescale_zero_norms", lambda F, *x: F.multi_lars(
    *x, eta=0.5, eps=1e-3, rescale_grad=0.25), *_lars_inputs(6, zero_w=(1,), zero_g=(4,)))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_fused_op_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    check(fn, inputs, rtol or tolerance(inputs), tmp_path)


def test_rrelu_slope_reads_back_the_training_slopes(tmp_path):
    """The slopes of a training-mode rrelu, read back through the exported graph, lie in
    [lower_bound, upper_bound] and spread over it (mean near the middle)."""
    x = -np.abs(normal(4000)) - 0.1
    with mx.autograd.train_mode():
        y = mx.nd.LeakyReLU(mx.nd.array(x), act_type="rrelu", lower_bound=0.2,
                            upper_bound=0.4).asnumpy()
    out = mx.sym._internal._rrelu_slope(mx.sym.var("x"), mx.sym.var("y"))
    s = export_and_run(out, {}, {"x": x, "y": y}, tmp_path)[0]
    assert s.min() >= 0.2 - 1e-6 and s.max() <= 0.4 + 1e-6
    assert abs(s.mean() - 0.3) < 0.01 and s.std() > 0.05      # uniform: std 0.058


def test_gelu_derivative_keeps_float32_digits_in_the_left_tail(tmp_path):
    """Phi(x) + x phi(x) for x down to -12 (values to 1e-31), relative to mxlite's float32
    kernel: a float32 CDF by 1 + erf would lose every digit there."""
    x = np.linspace(-12, -3, 64).astype(np.float32)
    want = mx.nd._internal._gelu_derivative(mx.nd.array(x)).asnumpy()
    out = mx.sym._internal._gelu_derivative(mx.sym.var("x"))
    got = export_and_run(out, {}, {"x": x}, tmp_path)[0]
    assert np.all(want < 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=0)


def test_norm_project_and_sums_keep_a_dynamic_batch(tmp_path):
    """The means over the batch axis (BatchNorm's layout) count the batch that runs."""
    from test_export_gradscatter import check_dynamic
    check_dynamic(lambda F, *x: I(F)._norm_project(*x, axis=(0, 2)),
                  lambda b: list(_proj_inputs((b, 3, 4), (0, 2), 1.0, np.float32))[:2] + [
                      positive(1, 3, 1), np.ones(1, np.float32), normal(1, 3, 1),
                      normal(1, 3, 1)], tmp_path)
    check_dynamic(lambda F, *x: I(F)._layer_norm_grad(*x, axis=-1)[1],
                  lambda b: list(_lng_inputs((b, 6), -1, np.float32)), tmp_path)
    check_dynamic(lambda F, a, b: F.multi_sum_sq(a, b, num_arrays=2),
                  lambda b: [normal(b, 3), normal(b)], tmp_path)


def test_layer_norm_grad_refuses_a_dynamic_normalised_axis(tmp_path):
    x = [mx.sym.var(f"in{i}") for i in range(7)]
    y = mx.sym._internal._layer_norm_grad(*x, axis=0)[0]
    with pytest.raises(mx.MXNetError, match="dynamic=True"):
        mx.onnx.export_model(y, {}, in_shapes=[(5,), (5,), (5,), (1,), (1,), (1,), (1,)],
                             in_types=[np.float32] * 7, onnx_file_path=str(tmp_path / "m"),
                             dynamic=True)


GRAD_GRAPHS = [
    # ONNX's LayerNormalization keeps its statistics in float32, also for float64 data
    pytest.param("_layer_norm_grad", lambda F, x, c: F.LayerNorm(x, c["g"], c["b"], axis=1),
                 (3, 4, 2), {"g": positive(4), "b": normal(4)}, 1e-6, id="LayerNorm"),
    pytest.param("_norm_project", lambda F, x, c: F.InstanceNorm(x, c["g"], c["b"]),
                 (2, 3, 5), {"g": positive(3), "b": normal(3)}, 1e-10, id="InstanceNorm"),
    pytest.param("_gelu_derivative", lambda F, x, c: F.LeakyReLU(x, act_type="gelu"),
                 (3, 5), {}, 1e-10, id="gelu"),
]


@pytest.mark.parametrize("op,fn,shape,extra,rtol64", GRAD_GRAPHS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_gradient_graph_through_the_fused_op_runs_as_autograd(op, fn, shape, extra, rtol64,
                                                               dtype, tmp_path):
    """d/dx sum(f(x) * w): the fused backward inside a gradient graph of mx.sym.grad."""
    from mxlite.symbol.graph import topo_order
    x = normal(*shape, dtype=dtype)
    extra = {k: v.astype(dtype) for k, v in extra.items()}
    w = normal(*shape, dtype=dtype)
    xs = mx.sym.var("x", shape=shape, dtype=dtype)
    cs = {k: mx.sym.var(k, shape=v.shape, dtype=dtype) for k, v in extra.items()}
    out = fn(mx.sym, xs, cs)
    out = out[0] if len(out.list_outputs()) > 1 else out
    ws = mx.sym.var("w", shape=shape, dtype=dtype)
    graph = mx.sym.Group(mx.sym.grad(mx.sym.sum(out * ws), [xs]))
    assert op in {n.op.name for n in topo_order(graph._outputs) if n.op is not None}
    feeds = {"x": x, "w": w, **extra}
    got = export_and_run(graph, {}, {k: feeds[k] for k in graph.list_arguments()}, tmp_path)[0]
    xa = mx.nd.array(x, dtype=dtype)
    xa.attach_grad()
    with mx.autograd.record():
        y = fn(mx.nd, xa, {k: mx.nd.array(v, dtype=dtype) for k, v in extra.items()})
        y = y[0] if isinstance(y, (list, tuple)) else y
        loss = mx.nd.sum(y * mx.nd.array(w, dtype=dtype))
    loss.backward()
    rtol = 1e-4 if dtype == np.float32 else rtol64
    np.testing.assert_allclose(got, xa.grad.asnumpy(), rtol=rtol, atol=rtol * 0.1)
