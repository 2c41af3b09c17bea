"""ONNX export of topk, sort and argsort on one-op graphs (ties included: the order is
stable in both directions), run in onnxruntime and compared with ``mx.nd``."""
import numpy as np
import pytest

from test_export_ops import normal
from test_export_ops import test_one_op_graph_runs_in_onnxruntime_as_in_mxlite as _run_one

CASES = []


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


ties = np.array([[3, 1, 2, 1, 3], [0, 5, 5, 2, 0]], np.float32)
for ret in ("value", "indices", "both", "mask"):
    for asc in (False, True):
        case(f"topk_{ret}_asc{asc}", lambda F, x, r=ret, s=asc: F.topk(
            x, k=2, ret_typ=r, is_ascend=s), ties)
        case(f"topk_{ret}_asc{asc}_axis0_3d", lambda F, x, r=ret, s=asc: F.topk(
            x, axis=0, k=3, ret_typ=r, is_ascend=s), normal(4, 2, 3))
case("topk_flat", lambda F, x: F.topk(x, axis=None, k=4, ret_typ="both"), normal(3, 4))
case("topk_whole_axis_int32", lambda F, x: F.topk(x, k=0, ret_typ="both", dtype="int32"),
     ties)
case("topk_int64_indices_axis1", lambda F, x: F.topk(x, axis=1, k=2, dtype="int64"),
     normal(2, 5, 3))
for asc in (True, False):
    case(f"sort_asc{asc}", lambda F, x, s=asc: F.sort(x, is_ascend=s), ties)
    case(f"sort_asc{asc}_axis0", lambda F, x, s=asc: F.sort(x, axis=0, is_ascend=s),
         normal(5, 3, 2))
    case(f"argsort_asc{asc}", lambda F, x, s=asc: F.argsort(x, is_ascend=s), ties)
    case(f"argsort_asc{asc}_flat_int32", lambda F, x, s=asc: F.argsort(
        x, axis=None, is_ascend=s, dtype="int32"), normal(3, 4))
case("sort_flat", lambda F, x: F.sort(x, axis=None), normal(2, 3, 2))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_sorting_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    _run_one(fn, inputs, rtol, tmp_path)


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64"])
@pytest.mark.parametrize("fn,inputs,rtol", CASES[:8])
def test_sorting_graph_in_other_dtypes(fn, inputs, rtol, dtype, tmp_path):
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtMissing
    try:
        _run_one(fn, [np.round(a * 3).astype(dtype) for a in inputs], rtol, tmp_path)
    except OrtMissing as e:
        pytest.skip(f"onnxruntime has no kernel: {str(e)[:120]}")
