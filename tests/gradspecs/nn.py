"""Gradient specs: dense layers, activations, the softmax family and the loss layers."""
from . import Spec

X = (3, 4)


def _away_from_zero(shape, rng):
    """|x| in [0.2, 1.5] with random signs: no finite difference straddles a kink at 0."""
    return rng.uniform(0.2, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _fc(nd, x, w, b):
    """With bias and flatten, and without bias on the last axis (flatten=False). (A
    ``(num_hidden, 1)`` bias: tests/ops/test_fc_column_bias.py.)"""
    y = nd.FullyConnected(x, w, b, num_hidden=3)                                 # (2, 3)
    z = nd.FullyConnected(x.reshape((2, 1, 6)), w, num_hidden=3, no_bias=True,
                          flatten=False)                                          # (2, 1, 3)
    return y * z.reshape((2, 3)) + y


def _activation(nd, x):
    return sum(nd.Activation(x, act_type=a) * (i + 1)
               for i, a in enumerate(("relu", "sigmoid", "tanh", "softrelu", "softsign")))


def _leaky(nd, x, gamma):
    total = nd.LeakyReLU(x, gamma, act_type="prelu") * x
    for act_type, slope in (("leaky", 0.2), ("elu", 0.7), ("selu", 0.25), ("gelu", 0.25)):
        total = total + nd.LeakyReLU(x, act_type=act_type, slope=slope) * (x + slope)
    # rrelu with equal bounds: one deterministic slope, so the finite differences (inference
    # mode) and the recorded pass (training mode) see the same function
    return total + nd.LeakyReLU(x, act_type="rrelu", lower_bound=0.3, upper_bound=0.3) * x


SPECS = {
    "FullyConnected": Spec([(2, 6), (3, 6), (3,)], _fc),
    "Activation": Spec([X], _activation, sample=lambda rng: [_away_from_zero(X, rng)]),
    "LeakyReLU": Spec([(2, 3, 2), (3,)], _leaky, sample=lambda rng: [
        _away_from_zero((2, 3, 2), rng), rng.uniform(0.1, 0.5, size=(3,))]),
}


def _softmaxes(name):
    def call(nd, x):
        op = getattr(nd, name)
        return (op(x) * x + op(x, axis=0, temperature=0.7) * (x + 1)
                + op(x, nd.array([[2, 3, 1], [4, 1, 2]], dtype="int64"), axis=1,
                     use_length=True) * x
                + op(x, dtype="float64") * x)
    return Spec([(2, 4, 3)], call, rtol=1e-5)


def _softmax_grads(name):
    """Along the last axis and the first, with y a softmax output (or its log) of the
    sample, as the op is used."""
    def call(nd, x, g):
        y = nd.softmax(x, axis=-1)
        y0 = nd.softmax(x, axis=0)
        if name == "_log_softmax_grad":
            y, y0 = nd.log(y), nd.log(y0)
        op = getattr(nd._internal, name)
        return op(y, g, axis=-1) * x + op(y0, g * g, axis=0)
    return Spec([(2, 4, 3), (2, 4, 3)], call, rtol=1e-5)


_LOSS_REASON = ("a loss layer's gradient is the loss gradient, not the derivative of its "
                "forward output, by definition (MXNet's semantics); tests/ops/test_nn.py checks "
                "it against its formula and its second order against finite differences of it")
_LOSS_LABEL = [[0, 2, 1], [1, 1, 0]]

SPECS.update({
    "softmax": _softmaxes("softmax"),
    "log_softmax": _softmaxes("log_softmax"),
    "softmin": _softmaxes("softmin"),
    "_gelu_derivative": Spec([(3, 4)], lambda nd, x: nd._internal._gelu_derivative(x) * x
                             + nd._internal._gelu_derivative(x, order=2),
                             [(-3.0, 3.0)]),
    "_softmax_grad": _softmax_grads("_softmax_grad"),
    "_log_softmax_grad": _softmax_grads("_log_softmax_grad"),
    "softmax_cross_entropy": Spec([(3, 4)], lambda nd, x: nd.softmax_cross_entropy(
        x * x, nd.array([0, 3, 1], dtype="float64")) * nd.sum(x)),
    "SoftmaxOutput": Spec([(2, 3, 3)], lambda nd, x: nd.SoftmaxOutput(
        x, nd.array(_LOSS_LABEL, dtype="float64"), multi_output=True), order=0,
        reason=_LOSS_REASON),
    "LinearRegressionOutput": Spec([(3, 2)], lambda nd, x: nd.LinearRegressionOutput(
        x, nd.ones((3, 2), dtype="float64")), order=0, reason=_LOSS_REASON),
    "LogisticRegressionOutput": Spec([(3, 2)], lambda nd, x: nd.LogisticRegressionOutput(
        x, nd.ones((3, 2), dtype="float64")), order=0, reason=_LOSS_REASON),
    "MAERegressionOutput": Spec([(3, 2)], lambda nd, x: nd.MAERegressionOutput(
        x, nd.ones((3, 2), dtype="float64")), order=0, reason=_LOSS_REASON),
})
