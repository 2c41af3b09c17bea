"""The multi-tensor and LARS optimizer operators against MXNet 1.9.1
(tests/fixtures/optimizer_multi_mxnet.npz, made by make_optimizer_multi_fixture.py): outputs
and the states they update in place; group_adagrad_update (which MXNet 1.9.1 runs only on
row_sparse gradients) and the error cases against their formulas."""
import importlib.util
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "make_optimizer_multi_fixture",
    os.path.join(HERE, "..", "fixtures", "make_optimizer_multi_fixture.py"))
FIX = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FIX)
DATA = np.load(os.path.join(HERE, "..", "fixtures", "optimizer_multi_mxnet.npz"))


def _fn(path):
    fn = mx.nd
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def _tolerance(*arrays):
    """float16 anywhere in a case: float16's resolution (MXNet rounds float16 squares before
    summing them; mxlite squares in float32)."""
    if any(a.dtype == np.float16 for a in arrays):
        return dict(rtol=2e-3, atol=2e-3)
    return dict(rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(FIX.CASES))
def test_matches_mxnet(case):
    path, _, kwargs = FIX.CASES[case]
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in FIX.inputs(case)]
    tol = _tolerance(*FIX.inputs(case))
    result = _fn(path)(*arrays, **kwargs)
    outs = result if isinstance(result, list) else [result]
    for j, out in enumerate(outs):
        want = DATA[f"{case}/out{j}"]
        if case == "multi_adamw_skip":
            # a skipped step leaves the weight as it is; MXNet left a separate out unwritten
            want = FIX.inputs(case)[4 * j]
        np.testing.assert_allclose(out.asnumpy(), want, **tol, err_msg=f"out{j}")
    for i, a in enumerate(arrays):
        want = DATA[f"{case}/in{i}"]
        np.testing.assert_allclose(a.asnumpy(), want, **tol, err_msg=f"input {i}")


def test_multi_adamw_updates_weights_in_place_with_out():
    arrays = [mx.nd.array(a) for a in FIX.inputs("multi_adamw")]
    weights = arrays[0:8:4]
    mx.nd.contrib.multi_adamw_update(weights, arrays[1:8:4], arrays[2:8:4], arrays[3:8:4],
                                     arrays[8], lrs=(0.1, 0.05), wds=(0.01, 0.2),
                                     etas=(0.5, 1.0), beta1=0.8, beta2=0.9, epsilon=1e-6,
                                     out=weights)
    np.testing.assert_allclose(weights[0].asnumpy(), DATA["multi_adamw/out0"], rtol=1e-5)
    np.testing.assert_allclose(weights[1].asnumpy(), DATA["multi_adamw/out1"], rtol=1e-5)


def test_group_adagrad_follows_its_formula():
    rng = np.random.default_rng(3)
    w, g = rng.uniform(-1, 1, (4, 3)), rng.uniform(-2, 2, (4, 3))
    h = rng.uniform(0, 0.5, (4, 1))
    hist = mx.nd.array(h)
    out = mx.nd.contrib.group_adagrad_update(mx.nd.array(w), mx.nd.array(g), hist, lr=0.1,
                                             rescale_grad=0.5, clip_gradient=0.6,
                                             epsilon=1e-4)
    gc = np.clip(0.5 * g, -0.6, 0.6)
    h_new = h + (gc ** 2).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(hist.asnumpy(), h_new, rtol=1e-5)
    np.testing.assert_allclose(out.asnumpy(), w - 0.1 * gc / np.sqrt(h_new + 1e-4), rtol=1e-5)


@pytest.mark.parametrize("call,match", [
    (lambda: mx.nd.multi_sum_sq(mx.nd.ones(2), num_arrays=2), "num_arrays"),
    (lambda: mx.nd.multi_sum_sq(mx.nd.ones(2), mx.nd.ones(2, dtype="float16"), num_arrays=2),
     "dtype"),
    (lambda: mx.nd.multi_lars(mx.nd.ones(2), mx.nd.ones(3), mx.nd.ones(2), mx.nd.ones(2),
                              eta=1, eps=0), "weights_sum_sq"),
    (lambda: mx.nd._internal._multi_adamw_update(
        mx.nd.ones(2), mx.nd.ones(2), mx.nd.ones(2), mx.nd.ones(2), mx.nd.ones(1),
        lrs=(0.1, 0.2), wds=(0.0,), etas=(1.0,), num_weights=1), "lrs"),
    (lambda: mx.nd._internal._multi_lamb_update(
        mx.nd.ones(2), mx.nd.ones(3), mx.nd.ones(2), mx.nd.ones(2), learning_rates=(0.1,),
        wds=(0.0,), step_count=(1,), num_tensors=1), "grad_0"),
    (lambda: mx.nd._internal._multi_lamb_update(
        mx.nd.ones(2), mx.nd.ones(2), mx.nd.ones(2), mx.nd.ones(2), learning_rates=(0.1,),
        wds=(0.0,), step_count=(0,), num_tensors=1), "step_count"),
    (lambda: mx.nd.contrib.group_adagrad_update(mx.nd.ones((3, 2)), mx.nd.ones((3, 2)),
                                                mx.nd.ones((2, 1)), lr=0.1), "history"),
])
def test_bad_input_is_an_mxnet_error(call, match):
    with pytest.raises(MXNetError, match=match):
        call()
