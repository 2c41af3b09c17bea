"""ONNX export of the normalisation layers and their kin (InstanceNorm, GroupNorm,
L2Normalization, LRN, SoftmaxActivation, UpSampling) on one-op graphs, run in onnxruntime
and compared with ``mx.nd``."""
import numpy as np
import pytest

from test_export_ops import normal, positive
from test_export_ops import test_one_op_graph_runs_in_onnxruntime_as_in_mxlite as _run_one

CASES = []


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


case("InstanceNorm", lambda F, x, g, b: F.InstanceNorm(x, g, b), normal(2, 3, 4, 5),
     normal(3), normal(3), rtol=1e-4)
case("InstanceNorm_3d_eps", lambda F, x, g, b: F.InstanceNorm(x, g, b, eps=0.5),
     normal(3, 2, 7), positive(2), normal(2), rtol=1e-4)
case("GroupNorm", lambda F, x, g, b: F.GroupNorm(x, g, b, num_groups=2), normal(2, 4, 3, 3),
     normal(2), normal(2), rtol=1e-4)
case("GroupNorm_one_group_stats", lambda F, x, g, b: F.GroupNorm(
    x, g, b, num_groups=1, eps=0.1, output_mean_var=True), normal(3, 6, 5), normal(1),
    normal(1), rtol=1e-4)
case("GroupNorm_2d", lambda F, x, g, b: F.GroupNorm(x, g, b, num_groups=3), normal(4, 6),
     normal(3), normal(3), rtol=1e-4)
for mode in ("instance", "channel", "spatial"):
    case(f"L2Normalization_{mode}", lambda F, x, m=mode: F.L2Normalization(x, mode=m),
         normal(2, 3, 4, 2), rtol=1e-4)
case("L2Normalization_instance_2d_eps", lambda F, x: F.L2Normalization(x, eps=0.3),
     normal(3, 5), rtol=1e-4)
case("L2Normalization_channel_3d", lambda F, x: F.L2Normalization(x, mode="channel"),
     normal(2, 4, 3), rtol=1e-4)
case("LRN_odd", lambda F, x: F.LRN(x, nsize=3, alpha=0.3, beta=0.6, knorm=1.5),
     normal(2, 6, 3, 4), rtol=1e-4)
case("LRN_even", lambda F, x: F.LRN(x, nsize=4, alpha=0.5, beta=0.75, knorm=2.0),
     normal(1, 7, 2, 3), rtol=1e-4)
case("LRN_one", lambda F, x: F.LRN(x, nsize=1, alpha=1.0), normal(1, 3, 2, 2), rtol=1e-4)
case("LRN_wide", lambda F, x: F.LRN(x, nsize=9), normal(2, 4, 2, 2), rtol=1e-4)
case("SoftmaxActivation", lambda F, x: F.SoftmaxActivation(x), normal(3, 5))
case("SoftmaxActivation_instance_3d", lambda F, x: F.SoftmaxActivation(x), normal(2, 3, 4))
case("SoftmaxActivation_channel", lambda F, x: F.SoftmaxActivation(x, mode="channel"),
     normal(2, 3, 4, 2))
case("UpSampling_nearest", lambda F, x: F.UpSampling(x, scale=2, sample_type="nearest"),
     normal(2, 3, 2, 3))
case("UpSampling_nearest_3", lambda F, x: F.UpSampling(x, scale=3, sample_type="nearest"),
     normal(1, 2, 3, 2))
case("UpSampling_nearest_concat", lambda F, x, y: F.UpSampling(
    x, y, scale=2, sample_type="nearest", num_args=2), normal(1, 2, 2, 2), normal(1, 3, 4, 4))
case("UpSampling_nearest_sum", lambda F, x, y: F.UpSampling(
    x, y, scale=4, sample_type="nearest", num_args=2, multi_input_mode="sum"),
    normal(2, 2, 1, 2), normal(2, 2, 2, 4))
case("UpSampling_bilinear_2", lambda F, x, w: F.UpSampling(
    x, w, scale=2, sample_type="bilinear", num_filter=3, num_args=2), normal(1, 3, 3, 4),
    normal(3, 1, 4, 4), rtol=1e-4)
case("UpSampling_bilinear_3", lambda F, x, w: F.UpSampling(
    x, w, scale=3, sample_type="bilinear", num_filter=2, num_args=2), normal(2, 2, 2, 3),
    normal(2, 1, 5, 5), rtol=1e-4)


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_normalisation_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    _run_one(fn, inputs, rtol, tmp_path)



@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_normalisation_graph_in_float64(fn, inputs, rtol, tmp_path):
    """float64 (checked by onnx.checker; onnxruntime's CPU provider lacks some float64
    kernels, LRN, Resize and ConvTranspose among them: its limit, a skip)."""
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtMissing
    try:
        _run_one(fn, [a.astype(np.float64) for a in inputs], rtol, tmp_path)
    except OrtMissing as e:
        pytest.skip(f"onnxruntime has no float64 kernel: {str(e)[:120]}")


def _bn_inputs(c):
    return normal(c), normal(c), normal(c), positive(c)


@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("op", ["SyncBatchNorm", "BatchNormWithReLU"])
def test_contrib_batch_norms_export_their_inference_form(op, fix_gamma, tmp_path):
    """Inference (the moving statistics), as BatchNorm; WithReLU adds the ReLU."""
    import mxlite as mx
    names = ["data", "gamma", "beta", "mean", "var"]
    inputs = [normal(2, 3, 4, 2)] + list(_bn_inputs(3))
    fn = lambda F, *v: getattr(F.contrib, op)(*v, fix_gamma=fix_gamma, eps=1e-3)  # noqa: E731
    sym = fn(mx.sym, *[mx.sym.var(n) for n in names])
    aux = set(sym.list_auxiliary_states())
    params = {n: mx.nd.array(a) for n, a in zip(names, inputs) if n in aux}
    feeds = {n: a for n, a in zip(names, inputs) if n not in aux}
    from onnx_harness import export_and_run
    got = export_and_run(sym, params, feeds, tmp_path)[0]
    x, g, b, m, v = inputs
    g = np.ones_like(g) if fix_gamma else g
    shape = (1, 3, 1, 1)
    want = (x - m.reshape(shape)) / np.sqrt(v.reshape(shape) + 1e-3) * g.reshape(shape) \
        + b.reshape(shape)
    want = np.maximum(want, 0) if op == "BatchNormWithReLU" else want
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
