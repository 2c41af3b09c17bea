"""ONNX export of _square_sum, nansum, nanprod, norm, moments, cumsum, argmax_channel, pick
and softmax_cross_entropy on one-op graphs, run in onnxruntime and compared with ``mx.nd``."""
import numpy as np
import pytest

from test_export_ops import indices, normal
from test_export_ops import test_one_op_graph_runs_in_onnxruntime_as_in_mxlite as _run_one

CASES = []


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


with_nan = normal(3, 4)
with_nan[0, 1] = with_nan[2, 3] = np.nan
for name in ("nansum", "nanprod"):
    case(name, lambda F, x, n=name: getattr(F, n)(x), with_nan)
    case(name + "_axis", lambda F, x, n=name: getattr(F, n)(x, axis=1), with_nan)
    case(name + "_keep_3d", lambda F, x, n=name: getattr(F, n)(x, axis=(0, 2), keepdims=True),
         normal(2, 3, 4))
    case(name + "_exclude", lambda F, x, n=name: getattr(F, n)(x, axis=1, exclude=True),
         normal(2, 3, 4))
case("square_sum", lambda F, x: F._internal._square_sum(x), normal(3, 4), rtol=1e-5)
case("square_sum_axis_keep", lambda F, x: F._internal._square_sum(x, axis=1, keepdims=True),
     normal(3, 4, 2), rtol=1e-5)
case("square_sum_exclude", lambda F, x: F._internal._square_sum(x, axis=1, exclude=True),
     normal(2, 3, 4), rtol=1e-5)
for o in (1, 2):
    case(f"norm_ord{o}", lambda F, x, o=o: F.norm(x, ord=o), normal(3, 4), rtol=1e-4)
    case(f"norm_ord{o}_axis", lambda F, x, o=o: F.norm(x, ord=o, axis=1), normal(3, 4, 2),
         rtol=1e-4)
    case(f"norm_ord{o}_axes_keep", lambda F, x, o=o: F.norm(x, ord=o, axis=(0, 2),
                                                             keepdims=True), normal(3, 4, 2),
         rtol=1e-4)
case("norm_out_dtype", lambda F, x: F.norm(x, axis=-1, out_dtype="float64"), normal(2, 5),
     rtol=1e-4)
case("moments", lambda F, x: F.moments(x, axes=(1,)), normal(3, 4), rtol=1e-4)
case("moments_all", lambda F, x: F.moments(x, axes=(0, 1)), normal(3, 4), rtol=1e-4)
case("moments_keep_3d", lambda F, x: F.moments(x, axes=(0, 2), keepdims=True),
     normal(3, 4, 5), rtol=1e-4)
case("cumsum", lambda F, x: F.cumsum(x, axis=1), normal(3, 4))
case("cumsum_flat", lambda F, x: F.cumsum(x), normal(2, 3, 2))
case("cumsum_axis0_f64", lambda F, x: F.cumsum(x, axis=0, dtype="float64"), normal(4, 3))
case("argmax_channel", lambda F, x: F.argmax_channel(x), normal(3, 5))
case("argmax_channel_4d", lambda F, x: F.argmax_channel(x), normal(2, 4, 3, 2))
case("argmax_channel_ties", lambda F, x: F.argmax_channel(x),
     np.array([[1, 3, 3], [2, 2, 0]], np.float32))
trunc_idx = np.array([-1.7, 4.0, 1.9, 2.2], np.float32)
case("pick_clip", lambda F, x, i: F.pick(x, i), normal(4, 3), trunc_idx)
case("pick_wrap", lambda F, x, i: F.pick(x, i, mode="wrap"), normal(4, 3), trunc_idx)
case("pick_axis0_keep", lambda F, x, i: F.pick(x, i, axis=0, keepdims=True), normal(3, 4, 2),
     indices(3, 4, 2))
case("pick_axis1_index_kept", lambda F, x, i: F.pick(x, i, axis=1), normal(2, 5, 3),
     indices(5, 2, 1, 3))
case("softmax_cross_entropy", lambda F, x, y: F.softmax_cross_entropy(x, y), normal(4, 5),
     indices(5, 4), rtol=1e-4)
case("softmax_cross_entropy_2", lambda F, x, y: F.softmax_cross_entropy(x, y),
     normal(1, 3) * 5, np.array([2], np.float32), rtol=1e-4)


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_reduction_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    _run_one(fn, inputs, rtol, tmp_path)


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "int64"])
@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_reduction_graph_in_other_dtypes(fn, inputs, rtol, dtype, tmp_path):
    """The data in other dtypes (integers: values scaled and rounded; index inputs keep
    their values); onnxruntime's missing kernels are its limit, a skip, and so is a dtype
    mxlite refuses or the export refuses by name."""
    import mxlite as mx
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtMissing
    data = np.nan_to_num(inputs[0] * 3)
    data = np.round(data) if dtype.startswith("int") else data
    inputs = [data.astype(dtype)] + list(inputs[1:])
    try:
        _run_one(fn, inputs, max(rtol, 2e-3 if dtype == "float16" else rtol), tmp_path)
    except OrtMissing as e:
        pytest.skip(f"onnxruntime has no kernel: {str(e)[:120]}")
    except mx.MXNetError as e:
        pytest.skip(f"refused: {str(e)[:160]}")
