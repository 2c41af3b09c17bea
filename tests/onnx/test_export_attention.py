"""ONNX export of the interleaved attention matmuls on one-op graphs, run in onnxruntime
and compared with ``mx.nd``, and the score of one head against a NumPy computation."""
import numpy as np
import pytest

from test_export_ops import normal
from test_export_ops import test_one_op_graph_runs_in_onnxruntime_as_in_mxlite as _run_one

CASES = [
    ("selfatt_qk", lambda F, x: F.contrib.interleaved_matmul_selfatt_qk(x, heads=2),
     [normal(3, 2, 2 * 3 * 4)]),
    ("selfatt_qk_one_head", lambda F, x: F.contrib.interleaved_matmul_selfatt_qk(x, heads=1),
     [normal(5, 1, 6)]),
    ("selfatt_valatt", lambda F, x, a: F.contrib.interleaved_matmul_selfatt_valatt(
        x, a, heads=2), [normal(3, 2, 2 * 3 * 4), normal(4, 3, 3)]),
    ("selfatt_valatt_3heads", lambda F, x, a: F.contrib.interleaved_matmul_selfatt_valatt(
        x, a, heads=3), [normal(2, 1, 3 * 3 * 2), normal(3, 2, 2)]),
    ("encdec_qk", lambda F, q, kv: F.contrib.interleaved_matmul_encdec_qk(q, kv, heads=2),
     [normal(3, 2, 2 * 4), normal(5, 2, 2 * 2 * 4)]),
    ("encdec_qk_one_head", lambda F, q, kv: F.contrib.interleaved_matmul_encdec_qk(
        q, kv, heads=1), [normal(2, 3, 2), normal(4, 3, 4)]),
    ("encdec_valatt", lambda F, kv, a: F.contrib.interleaved_matmul_encdec_valatt(
        kv, a, heads=2), [normal(5, 2, 2 * 2 * 4), normal(4, 3, 5)]),
    ("encdec_valatt_one_head", lambda F, kv, a: F.contrib.interleaved_matmul_encdec_valatt(
        kv, a, heads=1), [normal(4, 1, 4), normal(1, 3, 4)]),
]


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i, id=n) for n, f, i in CASES])
def test_attention_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, tmp_path):
    _run_one(fn, inputs, 1e-4, tmp_path)


def test_selfatt_qk_layout_against_numpy():
    """The reference side: head h of batch b reads query rows [h*3*D, h*3*D + D) and key
    rows [h*3*D + D, h*3*D + 2D) (per head: query, key, value)."""
    import mxlite as mx
    t, b, h, d = 3, 2, 2, 4
    x = normal(t, b, h * 3 * d)
    got = mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.array(x), heads=h).asnumpy()
    v = x.reshape(t, b, h, 3, d)
    q, k = v[:, :, :, 0], v[:, :, :, 1]
    want = np.einsum("tbhd,sbhd->bhts", q, k).reshape(b * h, t, t) / np.sqrt(d)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
