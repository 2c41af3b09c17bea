"""The loss-layer operators (SoftmaxOutput, Linear/Logistic/MAERegressionOutput) against
MXNet 1.9.1: forward output and data gradient for every normalization / grad_scale /
ignore_label / use_ignore / preserve_shape / multi_output / smooth_alpha combination
(tests/fixtures/loss_layers_mxnet.npz, made by make_loss_layer_fixture.py), imperative and
through the symbolic executor, on every device; and the cases MXNet has no answer for
against NumPy."""
import os
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, nd
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
from make_loss_layer_fixture import CASES  # noqa: E402

FIXTURE = np.load(os.path.join(HERE, "..", "fixtures", "loss_layers_mxnet.npz"))
# MXNet multiplies by its softmax output there (see test_out_grad_is_the_head_gradient)
OUT_GRAD = sorted(c for c in CASES if CASES[c][2].get("out_grad"))
COMPARED = sorted(c for c in CASES if c not in OUT_GRAD)


def _inputs(case):
    _, name, _ = CASES[case]
    return FIXTURE[f"{name}/data"], FIXTURE[f"{name}/label"]


def _imperative(case, head=None):
    """(output, data gradient) of mxlite on the case's inputs, backward() with ``head``."""
    op, _, kw = CASES[case]
    data, label = _inputs(case)
    x = nd.array(data)
    x.attach_grad()
    with autograd.record():
        y = getattr(nd, op)(x, nd.array(label), **kw)
    y.backward(head)
    return y.asnumpy(), x.grad.asnumpy()


def _expected_grad(case):
    """MXNet's data gradient, but 0 where MAERegressionOutput's data equals its label: the
    subgradient of |d - l| there that is 0 at the optimum (MXNet's -1 kept pushing)."""
    want = FIXTURE[f"{case}/grad"]
    if CASES[case][0] == "MAERegressionOutput":
        data, label = _inputs(case)
        want = np.where(data == label.reshape(data.shape), 0, want)
    return want


def _check(case, out, grad):
    np.testing.assert_allclose(out, FIXTURE[f"{case}/out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, _expected_grad(case), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", COMPARED)
def test_imperative_matches_mxnet(case):
    _check(case, *_imperative(case))


@pytest.mark.parametrize("case", COMPARED)
def test_executor_matches_mxnet(case):
    """simple_bind infers the label's shape; backward() needs no head gradient."""
    op, _, kw = CASES[case]
    data, label = _inputs(case)
    net = getattr(mx.sym, op)(mx.sym.var("data"), mx.sym.var("label"), **kw)
    exe = net.simple_bind(mx.current_context(), data=data.shape, label=label.shape,
                          grad_req={"data": "write", "label": "null"})
    exe.arg_dict["data"][:] = data
    exe.arg_dict["label"][:] = label
    exe.forward(is_train=True)
    exe.backward()
    _check(case, exe.outputs[0].asnumpy(), exe.grad_dict["data"].asnumpy())


@pytest.mark.parametrize("case", OUT_GRAD)
def test_out_grad_is_the_head_gradient(case):
    """MXNet 1.9.1's out_grad=True multiplied the gradient by the softmax output, not by the
    head gradient it documents; mxlite multiplies by the head gradient, so with the softmax
    output as head gradient it gives MXNet's number."""
    out, _ = _imperative(case)
    _, grad = _imperative(case, head=nd.array(out))
    _check(case, out, grad)
    _, doubled = _imperative(case, head=nd.array(2 * out))
    np.testing.assert_allclose(doubled, 2 * FIXTURE[f"{case}/grad"], rtol=1e-5, atol=1e-6)


def test_fixture_covers_every_option():
    """Each SoftmaxOutput option is varied with the others in the fixture."""
    so = [kw for op, _, kw in CASES.values() if op == "SoftmaxOutput"]
    for key, values in (("normalization", {"null", "batch", "valid"}),
                        ("use_ignore", {False, True}), ("smooth_alpha", {0.0, 0.3}),
                        ("ignore_label", {-1.0, 2.0, 1.5}), ("grad_scale", {1.0, 0.5}),
                        ("preserve_shape", {True}), ("multi_output", {True})):
        assert values <= {kw.get(key) for kw in so}, key
    for op in ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"):
        assert {0.5, 1.0} <= {kw["grad_scale"] for o, _, kw in CASES.values() if o == op}


# ---- closed forms where MXNet has no usable answer -----------------------------------------
def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _grad(call, x):
    x = nd.array(x, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = call(x)
    y.backward()
    return x.grad.asnumpy()


def test_flattened_rows_take_one_label_per_instance(rng):
    """data (n, a, b) without preserve_shape: one softmax over each flattened instance,
    label (n,); 'batch' divides by n (MXNet wanted an (n, a) label and used n of them)."""
    x = rng.normal(size=(4, 2, 3))
    lab = np.array([5, 0, -1, 3.0])
    p = _softmax(x.reshape(4, 6), 1)
    hot = np.zeros((4, 6))
    hot[[0, 1, 3], [5, 0, 3]] = 1
    g = _grad(lambda a: nd.SoftmaxOutput(a, nd.array(lab, dtype="float64"),
                                         normalization="batch"), x)
    np.testing.assert_allclose(g, ((p - hot) / 4).reshape(x.shape), atol=1e-12)


@pytest.mark.parametrize("norm", ["null", "batch", "valid"])
def test_empty_batch_has_an_empty_gradient(norm):
    for kw, shape, lshape in (({}, (0, 5), (0,)), ({"preserve_shape": True}, (0, 3, 5), (0, 3)),
                              ({"multi_output": True}, (0, 3, 2), (0, 2))):
        g = _grad(lambda a: nd.SoftmaxOutput(a, nd.zeros(lshape, dtype="float64"),
                                             normalization=norm, **kw), np.zeros(shape))
        assert g.shape == shape


def test_one_class_with_smoothing(rng):
    """k = 1: the target is 1 - alpha on the label; a label out of range has no target
    (MXNet divided alpha by k - 1 = 0 there and gave -inf)."""
    x = rng.normal(size=(3, 1))
    g = _grad(lambda a: nd.SoftmaxOutput(a, nd.array([0, -1, 0], dtype="float64"),
                                         smooth_alpha=0.3), x)
    np.testing.assert_allclose(g, [[0.3], [1.0], [0.3]], atol=1e-12)


def test_valid_count_is_exact_in_float16():
    """The 'valid' factor grad_scale / count is formed in float32, then cast: a float16
    count of 2103 would be 2104."""
    lab = np.zeros(3000)
    lab[:897] = -1                                # 2103 counted
    xs = nd.zeros((3000, 2), dtype="float16")
    xs.attach_grad()
    with autograd.record():
        y = nd.SoftmaxOutput(xs, nd.array(lab, dtype="float16"), normalization="valid",
                             grad_scale=2103.0)
    y.backward()
    # grad_scale / count = 1 exactly: the class-0 gradient is softmax - 1 = -0.5
    np.testing.assert_array_equal(xs.grad.asnumpy()[-2:, 0], [-0.5, -0.5])


def test_regression_label_of_data_size(rng):
    """MXNet's rule: a label of data's size and first dimension, read in data's order."""
    x, lab = rng.normal(size=(3, 2, 2)), rng.normal(size=(3, 4))
    g = _grad(lambda a: nd.LinearRegressionOutput(a, nd.array(lab, dtype="float64"),
                                                  grad_scale=2.0), x)
    np.testing.assert_allclose(g, 2.0 / 4 * (x - lab.reshape(x.shape)), atol=1e-12)
    with pytest.raises(MXNetError, match=r"LinearRegressionOutput.*label has shape \(4, 3\)"
                                         r".*size 12 with first dimension 3"):
        nd.LinearRegressionOutput(nd.ones((3, 2, 2)), nd.ones((4, 3)))
    g = _grad(lambda a: nd.MAERegressionOutput(a, nd.zeros((2, 0), dtype="float64")),
              np.zeros((2, 0)))
    assert g.shape == (2, 0)


def test_symbolic_label_shapes_are_mxnet_s():
    """simple_bind without a label shape infers MXNet 1.9.1's."""
    def label_shape(net, **shapes):
        args, _, _ = net.infer_shape(**shapes)
        return dict(zip(net.list_arguments(), args))["label"]
    d, lab = mx.sym.var("data"), mx.sym.var("label")
    assert label_shape(mx.sym.SoftmaxOutput(d, lab, multi_output=True),
                       data=(3, 4, 2, 2)) == (3, 4)
    assert label_shape(mx.sym.SoftmaxOutput(d, lab, preserve_shape=True),
                       data=(2, 3, 5)) == (2, 3)
    assert label_shape(mx.sym.LinearRegressionOutput(d, lab), data=(5, 1)) == (5,)
    assert label_shape(mx.sym.LinearRegressionOutput(d, lab), data=(5, 2)) == (5, 2)


@pytest.mark.parametrize("kw, shape, lab", [
    ({"normalization": "valid"}, (4, 3), [0, -1, 2, 1]),
    ({"normalization": "batch", "preserve_shape": True, "smooth_alpha": 0.2}, (2, 3, 4),
     [[0, 3, -1], [2, 2, 1]]),
    ({"normalization": "valid", "multi_output": True, "use_ignore": True, "grad_scale": 0.5},
     (2, 3, 2), [[0, -1], [1, 2]]),
])
def test_data_gradient_differentiates_again(kw, shape, lab, rng):
    """The normalised gradient is a graph of registered ops: its own gradient agrees with
    finite differences (the label-dependent count is a constant of data)."""
    from mxlite.test_utils import check_grads
    label = nd.array(lab, dtype="float64")

    def data_grad(x):
        if x._node is None:      # a fresh array becomes a leaf; a recorded one keeps its graph
            x = x.copy()
            x.attach_grad()
        with autograd.record():
            y = nd.SoftmaxOutput(x, label, **kw)
            (g,) = autograd.grad(y, [x], create_graph=True)
        return g
    check_grads(data_grad, [nd.array(rng.normal(size=shape), dtype="float64")], order=2)


@pytest.mark.parametrize("alpha", [1.5, -0.1, float("nan")])
def test_smooth_alpha_outside_unit_interval_is_an_error(alpha):
    """MXNet's range for smooth_alpha is [0, 1]; outside it the target is no distribution."""
    with pytest.raises(MXNetError, match=r"SoftmaxOutput.*smooth_alpha must lie in \[0, 1\]"):
        nd.SoftmaxOutput(nd.ones((2, 3)), nd.array([0, 1]), smooth_alpha=alpha)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "float64"])
def test_label_dtype_does_not_change_the_gradient(dtype, rng):
    """Class indices of any numeric dtype: the ignore mask and the 'valid' count too."""
    x = rng.normal(size=(5, 4))
    lab = np.array([0, -1, 3, 2, -1])
    kw = {"use_ignore": True, "normalization": "valid", "grad_scale": 0.5}
    want = _grad(lambda a: nd.SoftmaxOutput(a, nd.array(lab, dtype="float32"), **kw), x)
    got = _grad(lambda a: nd.SoftmaxOutput(a, nd.array(lab, dtype=dtype), **kw), x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    hot = np.zeros((5, 4))
    hot[[0, 2, 3], [0, 3, 2]] = 1
    keep = (lab != -1)[:, None]
    np.testing.assert_allclose(want, 0.5 * (_softmax(x, 1) - hot) * keep / 3, atol=1e-12)
