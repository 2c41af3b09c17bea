"""Neural-network layers (mxlite/ops/nn.py): values against NumPy formulas written here,
loss-layer gradient semantics, second-order gradients, errors, and the gradient-penalty
weight gradients against torch (or finite differences without torch)."""
import math

import numpy as np
import pytest

from mxlite import MXNetError, autograd, nd
from mxlite.test_utils import check_grads

RNG = np.random.default_rng(7)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946


def _erf(x):
    return np.vectorize(math.erf)(x)


def _grad(f, *arrays, head=None):
    """d sum(head * f(x)) / dx for each x (arrays as NumPy), in float64."""
    xs = [nd.array(a, dtype="float64") for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = f(*xs)
    y.backward(None if head is None else nd.array(head, dtype="float64"))
    return [x.grad.asnumpy() for x in xs]


# ---- FullyConnected ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fully_connected_matches_numpy(dtype):
    x = RNG.standard_normal((4, 2, 3))
    w = RNG.standard_normal((5, 6))
    b = RNG.standard_normal(5)
    got = nd.FullyConnected(nd.array(x, dtype=dtype), nd.array(w, dtype=dtype),
                            nd.array(b, dtype=dtype), num_hidden=5)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got.asnumpy(), x.reshape(4, 6) @ w.T + b, rtol=1e-5, atol=1e-5)
    w3 = RNG.standard_normal((5, 3))
    got = nd.FullyConnected(nd.array(x, dtype=dtype), nd.array(w3, dtype=dtype), num_hidden=5,
                            no_bias=True, flatten=False)
    assert got.shape == (4, 2, 5)
    np.testing.assert_allclose(got.asnumpy(), x @ w3.T, rtol=1e-5, atol=1e-5)


def test_fully_connected_float16_and_zero_sizes():
    x, w = RNG.standard_normal((3, 4)), RNG.standard_normal((2, 4))
    got = nd.FullyConnected(nd.array(x, dtype="float16"), nd.array(w, dtype="float16"),
                            nd.zeros(2, dtype="float16"), num_hidden=2)
    assert got.dtype == np.float16
    want = x.astype(np.float16).astype(np.float32) @ w.astype(np.float16).astype(np.float32).T
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-3, atol=2e-3)
    empty = nd.FullyConnected(nd.zeros((0, 4)), nd.ones((2, 4)), nd.ones(2), num_hidden=2)
    assert empty.shape == (0, 2)
    no_k = nd.FullyConnected(nd.zeros((3, 0)), nd.ones((2, 0)), nd.array([1, 2]), num_hidden=2)
    assert no_k.asnumpy().tolist() == [[1, 2]] * 3


def test_fully_connected_gradients_match_formulas():
    x, w, b = RNG.standard_normal((3, 4)), RNG.standard_normal((2, 4)), RNG.standard_normal(2)
    head = RNG.standard_normal((3, 2))
    dx, dw, db = _grad(lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=2), x, w, b,
                       head=head)
    np.testing.assert_allclose(dx, head @ w)
    np.testing.assert_allclose(dw, head.T @ x)
    np.testing.assert_allclose(db, head.sum(0))


def test_fully_connected_partial_shape_inference():
    op = nd.FullyConnected.op
    attrs = op.parse_attrs({"num_hidden": 16})
    assert op.infer_shape_partial([(8, 4), None, None], attrs) == \
        ([(8, 4), (16, 4), (16,)], [(8, 16)])
    attrs = op.parse_attrs({"num_hidden": 3, "no_bias": True, "flatten": False})
    assert op.infer_shape_partial([(2, 5, 7), None], attrs) == ([(2, 5, 7), (3, 7)], [(2, 5, 3)])
    assert op.list_inputs(attrs) == ("data", "weight")


def test_fully_connected_errors():
    with pytest.raises(MXNetError, match="FullyConnected.*weight has shape"):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 2)), nd.ones(4), num_hidden=4)
    with pytest.raises(MXNetError, match="FullyConnected.*bias has shape"):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)), nd.ones(3), num_hidden=4)
    with pytest.raises(MXNetError, match="FullyConnected.*num_hidden"):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((0, 3)), nd.ones(0), num_hidden=0)
    with pytest.raises(MXNetError, match="FullyConnected.*float"):
        nd.FullyConnected(nd.ones((2, 3), dtype="int32"), nd.ones((4, 3), dtype="int32"),
                          nd.ones(4, dtype="int32"), num_hidden=4)
    with pytest.raises(MXNetError, match="FullyConnected.*bias"):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)), nd.ones(4), num_hidden=4,
                          no_bias=True)
    with pytest.raises(MXNetError, match="FullyConnected.*share one dtype"):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3), dtype="float64"), nd.ones(4),
                          num_hidden=4)


# ---- Activation ----------------------------------------------------------------------------
ACT_REF = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softrelu": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)),
}
ACT_DERIV = {
    "relu": lambda x: (x > 0).astype(float),
    "sigmoid": lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2,
    "tanh": lambda x: 1 / np.cosh(x) ** 2,
    "softrelu": lambda x: 1 / (1 + np.exp(-x)),
    "softsign": lambda x: 1 / (1 + np.abs(x)) ** 2,
}


@pytest.mark.parametrize("act_type", sorted(ACT_REF))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_values_and_gradient(act_type, dtype):
    x = RNG.uniform(-4, 4, (5, 7))
    got = nd.Activation(nd.array(x, dtype=dtype), act_type=act_type).asnumpy()
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, ACT_REF[act_type](x), rtol=tol * 4, atol=tol)
    (dx,) = _grad(lambda x: nd.Activation(x, act_type=act_type), x)
    np.testing.assert_allclose(dx, ACT_DERIV[act_type](x), rtol=1e-12, atol=1e-12)


def test_float32_tanh_accuracy_and_special_values():
    x = np.concatenate([np.linspace(-20, 20, 200001), [0.0, -0.0, 1e-30, -1e-30, 1e-5],
                        [np.inf, -np.inf, np.nan]]).astype(np.float32)
    got = nd.Activation(nd.array(x), act_type="tanh").asnumpy()
    want = np.tanh(x.astype(np.float64))
    finite = ~np.isnan(x)
    assert np.abs(got[finite] - want[finite]).max() < 4e-7
    tiny = np.abs(x) < 1e-3
    np.testing.assert_allclose(got[tiny & finite], want[tiny & finite], rtol=4e-7)
    assert np.isnan(got[-1]) and got[-3] == 1 and got[-2] == -1
    assert np.signbit(got[np.flatnonzero(np.signbit(x) & (x == 0))[0]])


def test_softrelu_is_finite_for_large_inputs():
    got = nd.Activation(nd.array([-1000.0, -50.0, 50.0, 1000.0], dtype="float64"),
                        act_type="softrelu").asnumpy()
    np.testing.assert_allclose(got, [0.0, np.exp(-50.0), 50.0, 1000.0], rtol=1e-12, atol=0)


def test_activation_errors():
    with pytest.raises(MXNetError, match="Activation.*act_type"):
        nd.Activation(nd.ones(3), act_type="swish")
    with pytest.raises(MXNetError, match="Activation.*float"):
        nd.Activation(nd.ones(3, dtype="int32"), act_type="relu")
    with pytest.raises(MXNetError, match="Activation.*act_type"):
        nd.Activation(nd.ones(3))


def test_relu_gradient_at_zero_is_zero():
    (dx,) = _grad(lambda x: nd.Activation(x, act_type="relu"), np.array([-1.0, 0.0, 1.0]))
    assert dx.tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("act_type,keeps", [("relu", "outputs"), ("sigmoid", "outputs"),
                                             ("tanh", "outputs"), ("softrelu", "inputs"),
                                             ("softsign", "inputs")])
def test_activation_tape_keeps_only_what_its_gradient_reads(act_type, keeps):
    """relu, sigmoid and tanh differentiate from the output: the tape keeps y, not x (for
    relu after BatchNorm, the BatchNorm's output is then free after the forward pass)."""
    x = nd.array([[-1.5, 0.25, 2.0]], dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = nd.Activation(x, act_type=act_type)
    node = y._node[0]          # the tape entry: (node, output index)
    assert (node.inputs is not None, node.outputs is not None) == \
        (keeps == "inputs", keeps == "outputs")
    y.backward()
    xs = x.asnumpy()
    ref = {"relu": (xs > 0) * 1.0, "sigmoid": np.exp(-xs) / (1 + np.exp(-xs)) ** 2,
           "tanh": 1 - np.tanh(xs) ** 2, "softrelu": 1 / (1 + np.exp(-xs)),
           "softsign": 1 / (1 + np.abs(xs)) ** 2}[act_type]
    np.testing.assert_allclose(x.grad.asnumpy(), ref, rtol=1e-12)


# ---- LeakyReLU -------------------------------------------------------------------------------
LEAKY_REF = {
    "leaky": (lambda x, s: np.where(x > 0, x, s * x), lambda x, s: np.where(x > 0, 1, s)),
    "elu": (lambda x, s: np.where(x > 0, x, s * np.expm1(x)),
            lambda x, s: np.where(x > 0, 1, s * np.exp(x))),
    "selu": (lambda x, s: SELU_LAMBDA * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
             lambda x, s: SELU_LAMBDA * np.where(x > 0, 1, SELU_ALPHA * np.exp(x))),
    "gelu": (lambda x, s: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
             lambda x, s: 0.5 * (1 + _erf(x / np.sqrt(2)))
             + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)),
}


@pytest.mark.parametrize("act_type", sorted(LEAKY_REF))
def test_leaky_relu_values_and_gradients(act_type):
    x = RNG.uniform(-3, 3, (4, 6))
    f, df = LEAKY_REF[act_type]
    for dtype, tol in (("float32", 2e-6), ("float64", 1e-12)):
        got = nd.LeakyReLU(nd.array(x, dtype=dtype), act_type=act_type, slope=0.3).asnumpy()
        np.testing.assert_allclose(got, f(x, 0.3), rtol=tol, atol=tol)
    (dx,) = _grad(lambda x: nd.LeakyReLU(x, act_type=act_type, slope=0.3), x)
    # selu for x < 0: lambda * alpha * exp(x) (MXNet 1.x's kernel got this branch wrong)
    np.testing.assert_allclose(dx, df(x, 0.3), rtol=1e-12, atol=1e-12)


def test_elu_second_order_is_finite_for_large_inputs():
    x = nd.array([100.0, 800.0, -2.0], dtype="float64")
    check_grads(lambda x: nd.LeakyReLU(x, act_type="elu", slope=0.5), [x], order=3)


def test_prelu_per_channel_and_gamma_gradient():
    x = RNG.uniform(-2, 2, (2, 3, 4))
    gamma = np.array([0.1, 0.2, 0.3])
    got = nd.LeakyReLU(nd.array(x, dtype="float64"), nd.array(gamma, dtype="float64"),
                       act_type="prelu").asnumpy()
    g = gamma.reshape(1, 3, 1)
    np.testing.assert_allclose(got, np.where(x > 0, x, g * x))
    head = RNG.standard_normal(x.shape)
    dx, dgamma = _grad(lambda x, gm: nd.LeakyReLU(x, gm, act_type="prelu"), x, gamma,
                       head=head)
    np.testing.assert_allclose(dx, head * np.where(x > 0, 1, g))
    np.testing.assert_allclose(dgamma, (head * np.where(x > 0, 0, x)).sum(axis=(0, 2)))
    one = nd.LeakyReLU(nd.array(x), nd.array([0.5]), act_type="prelu").asnumpy()
    np.testing.assert_allclose(one, np.where(x > 0, x, 0.5 * x), rtol=1e-6)
    with pytest.raises(MXNetError, match="LeakyReLU.*gamma"):
        nd.LeakyReLU(nd.array(x), nd.ones(4), act_type="prelu")


def test_rrelu_training_and_inference():
    x = nd.array(RNG.uniform(-2, 2, (50, 40)), dtype="float64")
    got = nd.LeakyReLU(x, act_type="rrelu", lower_bound=0.1, upper_bound=0.3).asnumpy()
    xn = x.asnumpy()
    np.testing.assert_allclose(got, np.where(xn > 0, xn, 0.2 * xn))        # inference: mean
    x.attach_grad()
    with autograd.record():                                                  # training
        y = nd.LeakyReLU(x, act_type="rrelu", lower_bound=0.1, upper_bound=0.3)
    y.backward()
    yn = y.asnumpy()
    neg = xn < 0
    slopes = yn[neg] / xn[neg]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    np.testing.assert_array_equal(yn[~neg], xn[~neg])
    np.testing.assert_allclose(x.grad.asnumpy()[neg], slopes, rtol=1e-12)   # the kept slope
    np.testing.assert_array_equal(x.grad.asnumpy()[~neg], 1.0)
    with pytest.raises(MXNetError, match="lower_bound"):
        nd.LeakyReLU(x, act_type="rrelu", lower_bound=0.5, upper_bound=0.3)


def test_leaky_relu_inputs_follow_act_type():
    op = nd.LeakyReLU.op
    assert op.list_inputs(op.parse_attrs({"act_type": "prelu"})) == ("data", "gamma")
    assert op.list_inputs(op.parse_attrs({})) == ("data",)
    with pytest.raises(MXNetError, match="LeakyReLU.*gamma"):
        nd.LeakyReLU(nd.ones(3), nd.ones(1), act_type="leaky")


# ---- softmax family --------------------------------------------------------------------------
def _np_softmax(x, axis, t=1.0):
    z = x / t
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("temperature", [None, 0.5])
def test_softmax_family_values(axis, temperature):
    x = RNG.standard_normal((3, 4, 5)) * 3
    t = 1.0 if temperature is None else temperature
    a = nd.array(x, dtype="float64")
    kw = dict(axis=axis, temperature=temperature)
    p = _np_softmax(x, axis, t)
    np.testing.assert_allclose(nd.softmax(a, **kw).asnumpy(), p, rtol=1e-12)
    np.testing.assert_allclose(nd.log_softmax(a, **kw).asnumpy(), np.log(p), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(nd.softmin(a, **kw).asnumpy(), _np_softmax(-x, axis, t),
                               rtol=1e-12)


def test_softmax_is_stable_and_keeps_dtypes():
    x = np.array([[1000.0, 0.0, -1000.0], [-1e30, -1e30, -1e30]])
    got = nd.softmax(nd.array(x)).asnumpy()
    np.testing.assert_allclose(got, [[1, 0, 0], [1 / 3] * 3], rtol=1e-6)
    ls = nd.log_softmax(nd.array(x)).asnumpy()
    np.testing.assert_allclose(ls[0], [0.0, -1000.0, -2000.0], rtol=1e-6)
    half = nd.softmax(nd.array(x[:1], dtype="float16"))
    assert half.dtype == np.float16 and half.asnumpy().tolist() == [[1, 0, 0]]
    wide = nd.softmax(nd.array([[1.0, 2.0]], dtype="float32"), dtype="float64")
    assert wide.dtype == np.float64
    np.testing.assert_allclose(wide.asnumpy(), _np_softmax(np.array([[1.0, 2.0]]), -1),
                               rtol=1e-7)


def test_softmax_gradient_with_dtype_cast():
    x = nd.array(RNG.standard_normal((2, 3)), dtype="float32")
    x.attach_grad()
    head = RNG.standard_normal((2, 3))
    with autograd.record():
        y = nd.softmax(x, dtype="float64")
    y.backward(nd.array(head, dtype="float64"))
    assert x.grad.dtype == np.float32
    p = _np_softmax(x.asnumpy().astype(np.float64), -1)
    want = p * (head - (head * p).sum(-1, keepdims=True))
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_with_length(name):
    x = RNG.standard_normal((2, 4, 3))
    length = np.array([[1, 4, 2], [3, 0, 4]])
    got = getattr(nd, name)(nd.array(x, dtype="float64"), nd.array(length, dtype="int32"),
                            axis=1, use_length=True).asnumpy()
    for i in range(2):
        for j in range(3):
            n = length[i, j]
            row = x[i, :n, j]
            want = {"softmax": lambda r: _np_softmax(r, 0),
                    "log_softmax": lambda r: np.log(_np_softmax(r, 0)),
                    "softmin": lambda r: _np_softmax(-r, 0)}[name](row) if n else row
            np.testing.assert_allclose(got[i, :n, j], want, rtol=1e-12, atol=1e-12)
            assert (got[i, n:, j] == 0).all()
    ln = nd.array(length, dtype="int64")
    check_grads(lambda a: getattr(nd, name)(a, ln, axis=1, use_length=True),
                [nd.array(x, dtype="float64")], order=2)


def test_softmax_errors():
    with pytest.raises(MXNetError, match="softmax.*axis"):
        nd.softmax(nd.ones((2, 3)), axis=2)
    with pytest.raises(MXNetError, match="softmax.*float"):
        nd.softmax(nd.ones((2, 3), dtype="int32"))
    with pytest.raises(MXNetError, match="log_softmax.*length has shape"):
        nd.log_softmax(nd.ones((2, 3)), nd.ones((3,), dtype="int32"), use_length=True)
    with pytest.raises(MXNetError, match="softmax.*length values"):
        nd.softmax(nd.ones((2, 3)), nd.array([1, 4], dtype="int32"), use_length=True)
    with pytest.raises(MXNetError, match="softmin.*length.*integer"):
        nd.softmin(nd.ones((2, 3)), nd.array([1, 2]), use_length=True)
    with pytest.raises(MXNetError, match="softmax.*temperature"):
        nd.softmax(nd.ones((2, 3)), temperature=0.0)
    with pytest.raises(MXNetError, match="softmax.*dtype"):
        nd.softmax(nd.ones((2, 3)), dtype="int32")


# ---- softmax_cross_entropy ---------------------------------------------------------------
def test_softmax_cross_entropy_value_and_gradient():
    x = RNG.standard_normal((4, 5))
    label = np.array([0, 4, 2, 2])
    got = nd.softmax_cross_entropy(nd.array(x, dtype="float64"), nd.array(label)).asnumpy()
    p = _np_softmax(x, 1)
    assert got.shape == (1,)
    np.testing.assert_allclose(got, [-np.log(p[np.arange(4), label]).sum()], rtol=1e-12)
    (dx,) = _grad(lambda a: nd.softmax_cross_entropy(a, nd.array(label, dtype="float64")), x,
                  head=np.array([2.0]))
    np.testing.assert_allclose(dx, 2 * (p - np.eye(5)[label]), rtol=1e-12, atol=1e-12)


def test_softmax_cross_entropy_errors():
    with pytest.raises(MXNetError, match="softmax_cross_entropy.*labels"):
        nd.softmax_cross_entropy(nd.ones((2, 3)), nd.array([0, 3]))
    with pytest.raises(MXNetError, match="softmax_cross_entropy.*labels"):
        nd.softmax_cross_entropy(nd.ones((2, 3)), nd.array([-1, 0]))
    with pytest.raises(MXNetError, match="softmax_cross_entropy.*2-D"):
        nd.softmax_cross_entropy(nd.ones((2, 3, 1)), nd.array([0, 1]))


# ---- loss layers ---------------------------------------------------------------------------
def _loss_grad(call):
    """The data gradient of a loss layer, as a function of data (differentiable again)."""
    def f(x):
        if x._node is None:
            x = x.copy()
            x.attach_grad()
        with autograd.record():
            y = call(x)
            (g,) = autograd.grad(y, [x], head_grads=nd.ones_like(y) * 7, create_graph=True)
        return g
    return f


def test_softmax_output_default_gradient_ignores_head():
    x = RNG.standard_normal((3, 4))
    label = np.array([1, 0, 3])
    out = nd.SoftmaxOutput(nd.array(x, dtype="float64"), nd.array(label, dtype="float64"))
    p = _np_softmax(x, 1)
    np.testing.assert_allclose(out.asnumpy(), p, rtol=1e-12)
    g = _loss_grad(lambda a: nd.SoftmaxOutput(a, nd.array(label, dtype="float64"),
                                              grad_scale=0.5))(nd.array(x, dtype="float64"))
    np.testing.assert_allclose(g.asnumpy(), 0.5 * (p - np.eye(4)[label]), rtol=1e-12,
                               atol=1e-12)


def test_softmax_output_options():
    x = RNG.standard_normal((4, 3))
    lab = np.array([0, 2, -1, 1.0])
    p, hot = _np_softmax(x, 1), np.eye(3)[[0, 2, 0, 1]]
    keep = (lab != -1)[:, None]

    def grad(**kw):
        return _loss_grad(lambda a: nd.SoftmaxOutput(a, nd.array(lab, dtype="float64"), **kw))(
            nd.array(x, dtype="float64")).asnumpy()
    np.testing.assert_allclose(grad(use_ignore=True), (p - hot) * keep, atol=1e-12)
    np.testing.assert_allclose(grad(use_ignore=True, normalization="valid"),
                               (p - hot) * keep / 3, atol=1e-12)
    np.testing.assert_allclose(grad(use_ignore=True, normalization="batch", grad_scale=2.0),
                               2 * (p - hot) * keep / 4, atol=1e-12)
    lab2 = np.array([0, 2, 1, 1.0])
    smooth = np.eye(3)[lab2.astype(int)] * (1 - 0.3 - 0.15) + 0.15
    g = _loss_grad(lambda a: nd.SoftmaxOutput(a, nd.array(lab2, dtype="float64"),
                                              smooth_alpha=0.3))(nd.array(x, dtype="float64"))
    np.testing.assert_allclose(g.asnumpy(), p - smooth, atol=1e-12)
    probs = _np_softmax(RNG.standard_normal((4, 3)), 1)
    g = _loss_grad(lambda a: nd.SoftmaxOutput(a, nd.array(probs, dtype="float64")))(
        nd.array(x, dtype="float64"))
    np.testing.assert_allclose(g.asnumpy(), p - probs, atol=1e-12)
    # out_grad multiplies by the head gradient (7 in _loss_grad)
    g = _loss_grad(lambda a: nd.SoftmaxOutput(a, nd.array(lab2, dtype="float64"),
                                              out_grad=True))(nd.array(x, dtype="float64"))
    np.testing.assert_allclose(g.asnumpy(), 7 * (p - np.eye(3)[lab2.astype(int)]), atol=1e-12)


def test_softmax_output_multi_output_and_preserve_shape():
    x = RNG.standard_normal((2, 3, 4))
    lab = RNG.integers(0, 3, (2, 4)).astype(float)
    p = _np_softmax(x, 1)
    hot = np.eye(3)[lab.astype(int)].transpose(0, 2, 1)
    out = nd.SoftmaxOutput(nd.array(x, dtype="float64"), nd.array(lab, dtype="float64"),
                           multi_output=True)
    np.testing.assert_allclose(out.asnumpy(), p, rtol=1e-12)
    g = _loss_grad(lambda a: nd.SoftmaxOutput(a, nd.array(lab, dtype="float64"),
                                              multi_output=True))(nd.array(x, dtype="float64"))
    np.testing.assert_allclose(g.asnumpy(), (p - hot) / 4, atol=1e-12)   # MXNet: / positions
    lab3 = RNG.integers(0, 4, (2, 3)).astype(float)
    p3 = _np_softmax(x, 2)
    g = _loss_grad(lambda a: nd.SoftmaxOutput(a, nd.array(lab3, dtype="float64"),
                                              preserve_shape=True))(nd.array(x, dtype="float64"))
    np.testing.assert_allclose(g.asnumpy(), p3 - np.eye(4)[lab3.astype(int)], atol=1e-12)
    with pytest.raises(MXNetError, match="SoftmaxOutput.*label has shape"):
        nd.SoftmaxOutput(nd.array(x), nd.ones((2, 5)), multi_output=True)


@pytest.mark.parametrize("kw", [{}, {"multi_output": True}, {"use_ignore": True,
                                                               "normalization": "valid"}])
def test_softmax_output_second_order(kw):
    """The data gradient differentiates through softmax (finite differences of it)."""
    shape, lab = ((2, 3, 2), [[0, 2], [1, 1]]) if kw.get("multi_output") else \
        ((3, 4), [1, -1, 3])
    label = nd.array(lab, dtype="float64")
    check_grads(_loss_grad(lambda a: nd.SoftmaxOutput(a, label, **kw)),
                [nd.array(RNG.standard_normal(shape), dtype="float64")], order=2)


@pytest.mark.parametrize("name", ["LinearRegressionOutput", "LogisticRegressionOutput",
                                  "MAERegressionOutput"])
def test_regression_outputs(name):
    x = RNG.standard_normal((4, 3))
    label = RNG.standard_normal((4, 3))
    op = getattr(nd, name)
    out = op(nd.array(x, dtype="float64"), nd.array(label, dtype="float64")).asnumpy()
    pred = 1 / (1 + np.exp(-x)) if name == "LogisticRegressionOutput" else x
    np.testing.assert_allclose(out, pred, rtol=1e-12)
    diff = np.sign(x - label) if name == "MAERegressionOutput" else pred - label
    g = _loss_grad(lambda a: op(a, nd.array(label, dtype="float64"), grad_scale=1.5))(
        nd.array(x, dtype="float64"))
    np.testing.assert_allclose(g.asnumpy(), 1.5 / 3 * diff, rtol=1e-12, atol=1e-12)
    # label (n,) for data (n, 1): one output per instance
    g = _loss_grad(lambda a: op(a, nd.array(label[:, 0], dtype="float64")))(
        nd.array(x[:, :1], dtype="float64"))
    np.testing.assert_allclose(g.asnumpy(), diff[:, :1] if name == "MAERegressionOutput" else
                               (pred - label)[:, :1], rtol=1e-12, atol=1e-12)
    with pytest.raises(MXNetError, match=f"{name}.*label has shape"):
        op(nd.ones((4, 3)), nd.ones((4,)))
    if name == "LogisticRegressionOutput":
        check_grads(_loss_grad(lambda a: op(a, nd.array(label, dtype="float64"))),
                    [nd.array(x, dtype="float64")], order=2)


# ---- the gradient penalty ------------------------------------------------------------------
def _penalty_grads_mxlite(layers, x_hat, dtype="float64"):
    params = [(nd.array(w, dtype=dtype), nd.array(b, dtype=dtype)) for w, b in layers]
    for w, b in params:
        w.attach_grad()
        b.attach_grad()
    x = nd.array(x_hat, dtype=dtype)
    x.attach_grad()
    with autograd.record():
        h = x
        for i, (w, b) in enumerate(params):
            h = nd.FullyConnected(h, w, b, num_hidden=w.shape[0])
            if i < len(params) - 1:
                h = nd.Activation(h, act_type="tanh")
        (g,) = autograd.grad(h, [x], head_grads=nd.ones_like(h), create_graph=True)
        penalty = nd.mean(nd.square(nd.sqrt(nd.sum(nd.square(g), axis=1)) - 1))
    penalty.backward()
    return float(penalty.asnumpy()[0]), [p.grad.asnumpy() for wb in params for p in wb]


def _penalty_numpy(layers, x):
    """The penalty with the input gradient written out by hand (tanh MLP, head = ones)."""
    hs, h = [], x
    for w, b in layers[:-1]:
        h = np.tanh(h @ w.T + b)
        hs.append(h)
    g = np.broadcast_to(layers[-1][0], (x.shape[0], layers[-1][0].shape[1]))
    for (w, _), h in zip(reversed(layers[:-1]), reversed(hs)):
        g = (g * (1 - h * h)) @ w
    return np.mean((np.sqrt((g * g).sum(1)) - 1) ** 2)


def test_gradient_penalty_weight_gradients():
    rng = np.random.default_rng(3)
    sizes = (6, 5, 4, 1)
    layers = [(rng.normal(0, 0.6, (o, i)), rng.normal(0, 0.1, (o,)))
              for i, o in zip(sizes[:-1], sizes[1:])]
    x_hat = rng.uniform(-1, 1, (3, 6))
    value, grads = _penalty_grads_mxlite(layers, x_hat)
    assert value == pytest.approx(_penalty_numpy(layers, x_hat), rel=1e-12)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        params = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
                  for w, b in layers]
        x = torch.tensor(x_hat, requires_grad=True)
        h = x
        for i, (w, b) in enumerate(params):
            h = torch.nn.functional.linear(h, w, b)
            if i < len(params) - 1:
                h = torch.tanh(h)
        (g,) = torch.autograd.grad(h, x, torch.ones_like(h), create_graph=True)
        ((g.norm(dim=1) - 1) ** 2).mean().backward()
        want = [np.zeros(p.shape) if p.grad is None else p.grad.numpy()
                for wb in params for p in wb]
        for got, ref in zip(grads, want):
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    # finite differences of the hand-written penalty, weight by weight (always run)
    eps = 1e-6
    for k, (got, (li, which)) in enumerate(zip(grads, [(i, j) for i in range(3)
                                                        for j in range(2)])):
        flat = got.reshape(-1)
        for idx in range(0, flat.size, max(1, flat.size // 5)):
            plus = [(w.copy(), b.copy()) for w, b in layers]
            minus = [(w.copy(), b.copy()) for w, b in layers]
            plus[li][which].reshape(-1)[idx] += eps
            minus[li][which].reshape(-1)[idx] -= eps
            fd = (_penalty_numpy(plus, x_hat) - _penalty_numpy(minus, x_hat)) / (2 * eps)
            assert flat[idx] == pytest.approx(fd, rel=1e-5, abs=1e-8), (k, idx)


# ---- the float32 kernels (mx_act.h) ----------------------------------------------------------
# calls the CPU kernel (mxlite._core.activation) directly; tests/gpu/test_nn.py checks the GPU one
@pytest.mark.cpu_only
def test_float32_exp_kernel_accuracy():
    from mxlite._core import activation as kernels
    x = np.concatenate([np.linspace(-100, 100, 400001),
                        [np.nan, np.inf, -np.inf, 0.0, 88.72, -87.3, -87.4]]).astype(np.float32)
    y = np.empty_like(x)
    kernels.expf(x, y)
    want = np.exp(x.astype(np.float64))
    normal = np.isfinite(want) & (want > np.finfo(np.float32).tiny) & \
        (want < np.finfo(np.float32).max)
    ulp = np.abs(y[normal] - want[normal]) / np.spacing(want[normal].astype(np.float32))
    assert ulp.max() <= 2
    assert np.isnan(y[-7]) and y[-6] == np.inf and y[-5] == 0 and y[-4] == 1
    assert y[-1] == 0          # below -87.34: 0 (the float32 denormal range is not produced)
    assert (y[x > 88.73] == np.inf).all()


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_float32_softmax_matches_float64(axis):
    x = (RNG.standard_normal((7, 33, 5)) * 20).astype(np.float32)
    x[0, :, 0] = -np.inf            # a row of -inf (axis -1 row 0; other axes one column)
    with np.errstate(invalid="ignore", divide="ignore"):
        want = _np_softmax(x.astype(np.float64), axis)
        lwant = np.log(want)
    got = nd.softmax(nd.array(x), axis=axis).asnumpy()
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    lgot = nd.log_softmax(nd.array(x), axis=axis).asnumpy()
    ok = np.isfinite(lwant) & (lwant > -80)
    np.testing.assert_allclose(lgot[ok], lwant[ok], rtol=2e-6, atol=2e-5)
    big = nd.softmax(nd.array(RNG.standard_normal((300, 400)).astype(np.float32))).asnumpy()
    np.testing.assert_allclose(big.sum(axis=1), 1.0, rtol=1e-5)


# ---- float32 ELU / SELU and their derivatives (mx_act.h mx_act_f32) ------------------------
_SELU_A, _SELU_L = 1.6732632423543772, 1.0507009873554805
_ACT_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, -1e-40,
                          1.2e-38, -1.2e-38, 1e-20, -1e-20, 3e38, -3e38,
                          np.finfo(np.float32).max, -np.finfo(np.float32).max, 100.0, -100.0,
                          -40.0, 40.0], dtype=np.float32)


def _act_reference(kind, x, a, b):
    """The float64 value of each ELU / SELU kind at float32 points (libm)."""
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        neg = a * (np.expm1(v) if kind in ("elu", "selu") else np.exp(v))
        pos = v if kind in ("elu", "selu") else 1.0
        return b * np.where(v > 0, pos, neg)


def _f32_ulp_distance(got, want):
    """|got - want| in float32 ulps (the two zeros are one point), both float32."""
    def key(f):
        i = f.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(key(got) - key(want))


# calls the CPU kernel (mxlite._core.activation) directly; tests/gpu/test_nn.py checks the GPU one
@pytest.mark.cpu_only
@pytest.mark.parametrize("kind,a,b", [("elu", 1.0, 1.0), ("elu", 0.25, 1.0),
                                      ("selu", _SELU_A, _SELU_L),
                                      ("d_elu", 1.0, 1.0), ("d_elu", 0.25, 1.0),
                                      ("d_selu", _SELU_A, _SELU_L)])
def test_float32_activation_kernels_within_one_ulp(kind, a, b):
    """The vectorized float32 kernels stay within 1 ulp of the float64 (libm) value rounded
    to float32 on a dense grid of [-20, 20] and on tiny, huge and random points (GELU and its
    derivatives compute in float32 to a few ulps: tests/ops/test_gelu_f32.py)."""
    from mxlite._core import activation as kernels
    x = np.concatenate([np.linspace(-20, 20, 400001),
                        RNG.standard_normal(100000) * 4,
                        np.geomspace(1e-30, 1e30, 2001), -np.geomspace(1e-30, 1e30, 2001),
                        np.linspace(-0.76, -0.74, 20001)]).astype(np.float32)
    y = np.empty_like(x)
    kernels.activation(kernels.ACT_IDS[kind], x, y, a, b)
    want = _act_reference(kind, x, a, b).astype(np.float32)
    assert np.isfinite(want).all() and np.isfinite(y).all()
    dist = _f32_ulp_distance(y, want)
    worst = np.argmax(dist)
    assert dist.max() <= 1, (kind, x[worst], y[worst], want[worst])


# calls the CPU kernel (mxlite._core.activation) directly; tests/gpu/test_nn.py checks the GPU one
@pytest.mark.cpu_only
@pytest.mark.parametrize("kind", ["elu", "selu", "d_elu", "d_selu"])
def test_float32_activation_kernels_special_values(kind):
    """NaN, infinities, signed zeros, tiny and huge inputs give the float64 kernel's results
    (rounded to float32) bit for bit, through the op as well."""
    from mxlite._core import activation as kernels
    x = _ACT_SPECIALS
    a, b = (_SELU_A, _SELU_L) if "selu" in kind else (1.0, 1.0)
    y = np.empty_like(x)
    kernels.activation(kernels.ACT_IDS[kind], x, y, a, b)
    y64 = np.empty(x.shape, np.float64)
    kernels.activation(kernels.ACT_IDS[kind], x.astype(np.float64), y64, a, b)
    with np.errstate(over="ignore"):
        want = y64.astype(np.float32)
    np.testing.assert_array_equal(y.view(np.int32)[~np.isnan(want)],
                                  want.view(np.int32)[~np.isnan(want)])
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    if kind in ("elu", "selu"):
        got = nd.LeakyReLU(nd.array(x), act_type=kind, **({"slope": 1.0} if kind == "elu"
                                                            else {})).asnumpy()
        np.testing.assert_array_equal(got.view(np.int32)[~np.isnan(want)],
                                      want.view(np.int32)[~np.isnan(want)])


def _nearest(value, dtype):
    """The ``dtype`` number nearest the exact rational ``value`` (ties to even), by
    comparing the neighbours of a first guess exactly: no double rounding."""
    from fractions import Fraction
    guess = np.array(float(value), dtype)
    cands = [guess, np.nextafter(guess, np.inf, dtype=dtype),
             np.nextafter(guess, -np.inf, dtype=dtype)]
    dist = [abs(Fraction(float(c)) - value) for c in cands]
    best = min(dist)
    ties = [c for c, d in zip(cands, dist) if d == best]
    bits = f"uint{8 * np.dtype(dtype).itemsize}"
    return min(ties, key=lambda c: int(np.array(c).view(bits)) & 1)     # the even one


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_selu_positive_branch_is_correctly_rounded(dtype):
    """selu(x) = lambda x for x > 0, rounded once from the exact product (MXNet 1.9.1
    multiplied x by lambda rounded to the input dtype first: 0.1 gave 0.10507010668516159 in
    float32, 1.4 ulp off; the correctly rounded value is 0.105070099234581)."""
    from fractions import Fraction
    lam = Fraction("1.0507009873554804934193349852946")
    x = np.concatenate([[0.1, 1e-3, 3.3], np.linspace(1e-4, 6, 1501)]).astype(dtype)
    got = nd.LeakyReLU(nd.array(x, dtype=dtype), act_type="selu").asnumpy()
    want = np.array([_nearest(lam * Fraction(float(v)), dtype) for v in x], dtype)
    np.testing.assert_array_equal(got, want)
    if dtype == "float32":
        assert got[0] == np.float32(0.105070099234581)


# ---- in place: out= the data itself ------------------------------------------------------------
def _stats(shape):
    return lambda: [nd.empty(shape, dtype="float64"), nd.empty(shape, dtype="float64")]


_IN_PLACE = {
    "softmax rows": (lambda x, **o: nd.softmax(x, **o), None),
    "log_softmax middle axis": (lambda x, **o: nd.log_softmax(x, axis=1, **o), None),
    "softmin first axis": (lambda x, **o: nd.softmin(x, axis=0, temperature=0.5, **o), None),
    "SoftmaxOutput": (lambda x, **o: nd.SoftmaxOutput(x, nd.zeros((4,), dtype="float64"),
                                                       **o), None),
    "LayerNorm": (lambda x, **o: nd.LayerNorm(x, nd.ones((5,), dtype="float64"),
                                              nd.zeros((5,), dtype="float64"), **o),
                  _stats((4, 3, 1))),
    "InstanceNorm": (lambda x, **o: nd.InstanceNorm(x, nd.ones((3,), dtype="float64"),
                                                    nd.zeros((3,), dtype="float64"), **o),
                     _stats((4, 3, 1))),
    "L2Normalization": (lambda x, **o: nd.L2Normalization(x, mode="channel", **o), None),
    "_norm_project": (lambda x, **o: nd._internal._norm_project(
        x, x, nd.ones((4, 1, 1), dtype="float64"), nd.ones((1,), dtype="float64"),
        nd.ones((4, 1, 1), dtype="float64") * 2, nd.zeros((4, 1, 1), dtype="float64"),
        axis=(1, 2), **o), None),
    "_pool_max_scatter": (lambda x, **o: nd._internal._pool_max_scatter(
        x, nd.ones((4, 3, 2), dtype="float64"), kernel=(3,), stride=(2,), pad=(0,),
        pool_type="max", **o), None),
}


@pytest.mark.parametrize("name", sorted(_IN_PLACE))
def test_row_wise_layers_run_in_place(name, device):
    """out= the data itself gives the result of a call into a new array (the kernels read
    a row, a plane or a group before they write it)."""
    call, hidden = _IN_PLACE[name]
    data = RNG.standard_normal((4, 3, 5))
    want = call(nd.array(data, dtype="float64"))
    want = (want[0] if isinstance(want, list) else want).asnumpy()
    x = nd.array(data, dtype="float64")
    call(x, out=[x] + hidden() if hidden else x)
    np.testing.assert_array_equal(x.asnumpy(), want)


@pytest.mark.parametrize("call", [
    lambda x: nd.Activation(x, act_type="tanh"),
    lambda x: nd.Activation(x, act_type="softrelu"),
    lambda x: nd.LeakyReLU(x, act_type="elu", slope=0.3),
    lambda x: nd.LeakyReLU(x, act_type="gelu"),
    lambda x: nd.LogisticRegressionOutput(x, nd.zeros_like(x)),
    lambda x: nd._internal._rrelu_slope(x, x * 0.25),
])
def test_float16_elementwise_layers_in_blocks_equal_one_pass(call, monkeypatch):
    """float16 element-wise layers compute through float32 a block at a time: the same
    values as one pass over the whole array."""
    from mxlite.ops import common
    x = nd.array(np.random.default_rng(2).normal(size=(7, 1000)), dtype="float16")
    whole = call(x).asnumpy()
    monkeypatch.setattr(common, "FLOAT16_BLOCK", 512)
    blocked = call(x).asnumpy()
    assert blocked.dtype == np.float16
    np.testing.assert_array_equal(blocked, whole)
