"""Gradient specs: element-wise unary, binary, scalar, polygamma, cast, control and linalg ops."""
from . import Spec

POS = (0.3, 2.0)         # domains of log, sqrt, ... ; away from 0
UNIT = (-0.8, 0.8)       # inside (-1, 1) for arcsin, arctanh, erfinv
S = (3, 4)

_UNARY_DOMAINS = {
    "reciprocal": POS, "sqrt": POS, "rsqrt": POS, "cbrt": POS, "rcbrt": POS,
    "log": POS, "log2": POS, "log10": POS, "log1p": POS, "arcsin": UNIT, "arccos": UNIT,
    "arctanh": UNIT, "erfinv": UNIT, "arccosh": (1.2, 3.0), "gamma": POS, "gammaln": POS,
    "tan": (-1.0, 1.0),
}
_UNARY = ["abs", "negative", "reciprocal", "square", "sqrt", "rsqrt", "cbrt", "rcbrt", "exp",
          "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos",
          "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "degrees",
          "radians", "sigmoid", "relu", "softsign", "erf", "erfinv", "gamma", "gammaln"]


def _unary(name):
    return Spec([S], lambda nd, x: getattr(nd, name)(x), [_UNARY_DOMAINS.get(name, (-1.0, 1.0))])


def _binary(name, domains=((-1.0, 1.0),), shapes=((3, 4), (1, 4))):
    """A row for ``nd.<name>(a, b)``; ``name`` may be dotted (``_internal._mod``)."""
    def call(nd, a, b):
        fn = nd
        for part in name.split("."):
            fn = getattr(fn, part)
        return fn(a, b)
    return Spec(list(shapes), call, list(domains))


def _scalar(name, scalar, domain=(-1.0, 1.0)):
    return Spec([S], lambda nd, x: getattr(nd._internal, name)(x, scalar=scalar), [domain])


SPECS = {name: _unary(name) for name in _UNARY}
SPECS.update({
    "broadcast_add": _binary("broadcast_add"),
    "broadcast_sub": _binary("broadcast_sub", shapes=((3, 1), (1, 4))),
    "broadcast_mul": _binary("broadcast_mul", shapes=((2, 3, 4), (3, 1))),
    "broadcast_div": _binary("broadcast_div", [(-1.0, 1.0), POS]),
    "broadcast_mod": _binary("broadcast_mod", [(2.1, 2.9), (1.1, 1.9)]),
    "broadcast_power": _binary("broadcast_power", [POS, (-1.0, 1.0)]),
    # abs, relu, maximum, minimum: a sample within eps of the kink has probability ~1e-6
    "broadcast_maximum": _binary("broadcast_maximum"),
    "broadcast_minimum": _binary("broadcast_minimum"),
    "broadcast_hypot": _binary("broadcast_hypot", [POS]),
    "elemwise_add": _binary("elemwise_add", shapes=(S, S)),
    "elemwise_sub": _binary("elemwise_sub", shapes=(S, S)),
    "elemwise_mul": _binary("elemwise_mul", shapes=(S, S)),
    "elemwise_div": _binary("elemwise_div", [(-1.0, 1.0), POS], shapes=(S, S)),
    # MXNet's same-shape forms of the other binary kernels (_mod, _power, ...)
    "_mod": _binary("_internal._mod", [(2.1, 2.9), (1.1, 1.9)], shapes=(S, S)),
    "_power": _binary("_internal._power", [POS, (-1.0, 1.0)], shapes=(S, S)),
    "_maximum": _binary("_internal._maximum", shapes=(S, S)),
    "_minimum": _binary("_internal._minimum", shapes=(S, S)),
    "_hypot": _binary("_internal._hypot", [POS], shapes=(S, S)),
    # squared: add_n is linear, so without it every order past the first would be zero
    "add_n": Spec([S, S, S], lambda nd, a, b, c: nd.square(nd.add_n(a, b, c))),
    "_plus_scalar": _scalar("_plus_scalar", 2.5),
    "_minus_scalar": _scalar("_minus_scalar", 2.5),
    "_rminus_scalar": _scalar("_rminus_scalar", 2.5),
    "_mul_scalar": _scalar("_mul_scalar", -1.5),
    "_div_scalar": _scalar("_div_scalar", -1.5),
    "_rdiv_scalar": _scalar("_rdiv_scalar", 1.5, POS),
    "_mod_scalar": _scalar("_mod_scalar", 0.7, (0.1, 0.6)),
    "_rmod_scalar": _scalar("_rmod_scalar", 2.5, (1.3, 2.4)),
    "_power_scalar": _scalar("_power_scalar", 2.5, POS),
    "_rpower_scalar": _scalar("_rpower_scalar", 1.7),
    "_maximum_scalar": _scalar("_maximum_scalar", 0.05),
    "_minimum_scalar": _scalar("_minimum_scalar", 0.05),
    "_hypot_scalar": _scalar("_hypot_scalar", 0.7),
    "_polygamma": Spec([S], lambda nd, x: nd._internal._polygamma(x, n=1), [POS]),
    "cast": Spec([S], lambda nd, x: nd.cast(x, dtype="float64") * x),
    "_copy": Spec([S], lambda nd, x: nd._internal._copy(x) * x),
    # rhs lends its shape only: its gradient is zero, as the output does not read it
    "_identity_with_attr_like_rhs": Spec(
        [S, S], lambda nd, x, y: nd._internal._identity_with_attr_like_rhs(x, y) * x),
    "BlockGrad": Spec([S], lambda nd, x: nd.BlockGrad(x) * x + x, order=0,
                      reason="its gradient is zero by definition, which finite differences "
                             "cannot see; tests/test_autograd.py checks it to order 3"),
    # a loss: its gradient is grad_scale / normaliser, not the derivative of its output
    "MakeLoss": Spec([S], lambda nd, x: [
        nd.MakeLoss(x * x, normalization="valid", valid_thresh=0.2, grad_scale=3.0),
        nd.make_loss(nd.sin(x)) * 2, nd.MakeLoss(x, normalization="batch")], order=0,
        reason="a loss's gradient is defined (grad_scale / normaliser), not the derivative "
               "of its forward output; tests/ops/test_make_loss.py checks every order"),
    "dot": Spec([(3, 4), (4, 2)], lambda nd, a, b: nd.dot(a, b)),
    "batch_dot": Spec([(2, 3, 4), (2, 4, 2)], lambda nd, a, b: nd.batch_dot(a, b)),
})
