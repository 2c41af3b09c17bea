"""Fused optimizer updates (MXNet 1.x ``src/operator/optimizer_op.cc``, ``contrib/adamw.cc``).

Each operator reads the weight and the gradient, updates its optimizer states **in place**
(declared in ``mutate_inputs``, MXNet's FMutateInputs: ``mom``, ``mean``/``var``, ``n``,
...) and writes the new weight into its output. MXNet's optimizers call them with
``out=weight``, so the weight is updated in place too; without ``out=`` a new array holds
the new weight. Every write bumps the written arrays' version counters (``out=`` targets
and mutated inputs alike), so a value the autograd tape saved before the update makes
``backward`` raise instead of reading the new contents.

One kernel pass per call (``mxlite/_core/optim.pyx``), float32 and float64; float16
weights are refused (keep float32 master weights: ``multi_precision`` is not supported).
The operators are not differentiable.

Shared rules (MXNet's): ``rescale_grad`` multiplies the gradient first; ``clip_gradient``
clips it to ``[-clip_gradient, clip_gradient]`` when it is positive (MXNet documented
"<= 0 turns clipping off" but its kernels clipped for ``clip_gradient >= 0``, so 0 zeroed
every gradient; here 0 turns clipping off, as documented; ``clip_weights`` likewise). ``lazy_update`` only concerns
row_sparse gradients, which mxlite does not have: it is accepted and has no effect.
Parameters are checked: non-finite values, decay rates outside ``[0, 1)`` (momentum and
``gamma2``: ``[0, 1]``), negative
``epsilon`` or a non-positive ``lr`` where the formula divides by it raise MXNetError
(MXNet accepted them and produced NaN).
"""
import math

import numpy as np

from .._core import optim as _k
from ..base import op_error
from .common import F32, kernels
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, register

_F64 = np.dtype("float64")
_FLOATS = (F32, _F64)

# ---- shared parameter documentation --------------------------------------------------------
_DOC = {
    "lr": "Learning rate",
    "wd": "Weight decay augments the objective function with a regularization term that "
          "penalizes large weights. The penalty scales with the square of the magnitude of "
          "each weight.",
    "rescale_grad": "Rescale gradient to grad = rescale_grad*grad.",
    "clip_gradient": "Clip gradient to the range of [-clip_gradient, clip_gradient]. If "
                     "clip_gradient <= 0, gradient clipping is turned off. "
                     "grad = max(min(grad, clip_gradient), -clip_gradient).",
    "clip_weights": "Clip weights to the range of [-clip_weights, clip_weights]. If "
                    "clip_weights <= 0, weight clipping is turned off.",
    "lazy_update": "If true, lazy updates are applied if gradient's stype is row_sparse "
                   "(mxlite has dense arrays only: no effect).",
    "momentum": "The decay rate of momentum estimates at each epoch.",
    "beta1": "The decay rate for the 1st moment estimates.",
    "beta2": "The decay rate for the 2nd moment estimates.",
    "epsilon": "A small constant for numerical stability.",
}


def _p(name, default=None, doc=None, kind="float"):
    """A Param of the update ops; ``default=None`` makes it required (``lr``, ``eta``)."""
    return Param(name, kind, REQUIRED if default is None else default, doc or _DOC[name])


_LR = _p("lr")
_WD = _p("wd", 0.0)
_RESCALE = _p("rescale_grad", 1.0)
_CLIP = _p("clip_gradient", -1.0)
_LAZY = _p("lazy_update", True, kind="bool")
_CLIP_W = _p("clip_weights", -1.0)

# parameter checks: name -> (predicate, what it must be)
_RATE = (lambda v: 0.0 <= v < 1.0, "in [0, 1)")
_CHECKS = {
    "momentum": (lambda v: 0.0 <= v <= 1.0, "in [0, 1]"),
    "beta1": _RATE, "beta2": _RATE, "gamma1": _RATE, "gamma2": (lambda v: 0.0 <= v <= 1.0,
                                                                  "in [0, 1]"),
    "epsilon": (lambda v: v >= 0.0, ">= 0"),
    "lamda1": (lambda v: v >= 0.0, ">= 0"),
    "beta": (lambda v: v >= 0.0, ">= 0"),
}


class _Spec:
    """One update operator: its algorithm in ``optim.pyx``, inputs, states and params."""

    def __init__(self, name, algo, inputs, states, params, doc, aliases=(), scale_input=False,
                 lr_divides=False):
        self.name, self.algo, self.inputs, self.states = name, algo, inputs, states
        self.params, self.doc, self.aliases = params, doc, aliases
        self.scale_input = scale_input      # rescale_grad is an input array (_adamw_update)
        self.lr_divides = lr_divides        # the formula divides by lr (ftrl)


def _infer_shape(spec):
    name = spec.name
    n_arrays = len(spec.inputs) - (1 if spec.scale_input else 0)

    def infer_shape(shapes, attrs):
        for key, value in attrs.items():
            if type(value) is float and not math.isfinite(value):
                raise op_error(name, f"parameter {key!r} must be finite, got {value}")
            check = _CHECKS.get(key)
            if check is not None and not check[0](value):
                raise op_error(name, f"parameter {key!r} must be {check[1]}, got {value}")
        if spec.lr_divides and attrs.lr <= 0:
            raise op_error(name, f"parameter 'lr' must be > 0 (the update divides by it), "
                           f"got {attrs.lr}")
        weight = shapes[0]
        for i in range(1, n_arrays):
            if shapes[i] != weight:
                raise op_error(name, f"input {spec.inputs[i]!r} has shape {shapes[i]}, but "
                               f"weight has shape {weight} (every array must have the "
                               "weight's shape)")
        if spec.scale_input:
            s = shapes[-1]
            if math.prod(s) != 1:
                raise op_error(name, f"input 'rescale_grad' must hold one element, got shape "
                               f"{s}")
        return [weight]
    return infer_shape


def _infer_type(spec):
    name = spec.name
    n_arrays = len(spec.inputs) - (1 if spec.scale_input else 0)

    def infer_type(dtypes, attrs):
        weight = dtypes[0]
        if weight not in _FLOATS:
            hint = (" (float16 weights need float32 master weights; multi_precision is not "
                    "supported)" if weight == np.dtype("float16") else "")
            raise op_error(name, f"weight has dtype {weight}; expected float32 or "
                           f"float64{hint}")
        for i in range(1, n_arrays):
            if dtypes[i] != weight:
                raise op_error(name, f"input {spec.inputs[i]!r} has dtype {dtypes[i]}, but "
                               f"weight has dtype {weight} (every array must have the "
                               "weight's dtype)")
        if spec.scale_input and dtypes[-1] not in _FLOATS:
            raise op_error(name, f"input 'rescale_grad' has dtype {dtypes[-1]}; expected "
                           "float32 or float64")
        return [weight]
    return infer_type


def _compute(spec):
    name = spec.name
    algo = _k.ALGOS[spec.algo][0]
    n_states = len(spec.states)
    labels = ("weight", "grad", "out") + spec.states

    def compute(rctx, ins, outs, attrs):
        scale = ins[-1] if spec.scale_input else None
        clash = kernels(rctx, _k).update(algo, ins[0], ins[1], ins[2:2 + n_states], outs[0],
                                         attrs, scale)
        if clash is not None:       # checked before anything was written
            first, second = (labels[i] for i in clash)
            raise op_error(name, f"{first!r} and {second!r} share memory; each optimizer "
                           "state needs its own array, and out= may alias only the weight")
    return compute


# ---- the operators ---------------------------------------------------------------------------
_SPECS = [
    _Spec("sgd_update", "sgd", ("weight", "grad"), (),
          (_LR, _WD, _RESCALE, _CLIP, _LAZY), """\
Update function for Stochastic Gradient Descent (SGD) optimizer (no momentum)::

    grad = clip(rescale_grad * grad, clip_gradient)
    weight = (1 - lr * wd) * weight - lr * grad

>>> w = mx.nd.array([1.0, 2.0]); g = mx.nd.array([0.5, -1.0])
>>> _ = mx.nd.sgd_update(w, g, lr=0.1, wd=0.1, out=w)
>>> [round(v, 4) for v in w.asnumpy().tolist()]
[0.94, 2.08]
"""),
    _Spec("sgd_mom_update", "sgd_mom", ("weight", "grad", "mom"), ("mom",),
          (_LR, _p("momentum", 0.0), _WD, _RESCALE, _CLIP, _LAZY), """\
Momentum update function for Stochastic Gradient Descent (SGD) optimizer::

    grad = clip(rescale_grad * grad, clip_gradient)
    mom = momentum * mom - lr * wd * weight - lr * grad     (in place)
    weight = weight + mom

>>> w = mx.nd.array([1.0]); g = mx.nd.array([1.0]); m = mx.nd.zeros((1,))
>>> for _ in range(2):
...     _ = mx.nd.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, out=w)
>>> round(float(m.asscalar()), 4), round(float(w.asscalar()), 4)
(-0.19, 0.71)
"""),
    _Spec("nag_mom_update", "nag_mom", ("weight", "grad", "mom"), ("mom",),
          (_LR, _p("momentum", 0.0), _WD, _RESCALE, _CLIP), """\
Update function for the Nesterov Accelerated Gradient (NAG) optimizer, as MXNet's kernel::

    grad = lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)
    mom = momentum * mom
    weight = weight - mom + (momentum + 1) * (mom - grad)
    mom = mom - grad                                        (in place)

With ``state = -mom / lr`` this is the NAG optimizer's ``state = momentum * state + g;
weight -= lr * (g + momentum * state)`` for ``g = grad + wd * weight``.

``grad`` always uses the weight before the update. MXNet's kernel wrote the output first
and then read ``weight`` again for the momentum, so with ``out=weight`` (how its NAG
optimizer called it) and ``wd > 0`` the momentum took the decay of the *new* weight.
"""),
    _Spec("adam_update", "adam", ("weight", "grad", "mean", "var"), ("mean", "var"),
          (_LR, _p("beta1", 0.9), _p("beta2", 0.999), _p("epsilon", 1e-8), _WD, _RESCALE,
           _CLIP, _LAZY), """\
Update function for the Adam optimizer (bias correction is the caller's: ``mx.optimizer.Adam``
scales ``lr`` by ``sqrt(1 - beta2**t) / (1 - beta1**t)``)::

    grad = clip(rescale_grad * grad + wd * weight, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad                (in place)
    var = beta2 * var + (1 - beta2) * grad**2               (in place)
    weight = weight - lr * mean / (sqrt(var) + epsilon)

>>> w = mx.nd.array([1.0, 1.0]); g = mx.nd.array([1.0, -4.0])
>>> mean, var = mx.nd.zeros((2,)), mx.nd.zeros((2,))
>>> _ = mx.nd.adam_update(w, g, mean, var, lr=0.01, out=w)
>>> [round(v, 4) for v in w.asnumpy().tolist()]
[0.9684, 1.0316]
>>> [round(v, 4) for v in mean.asnumpy().tolist()]
[0.1, -0.4]
"""),
    _Spec("_adamw_update", "adamw", ("weight", "grad", "mean", "var", "rescale_grad"),
          ("mean", "var"),
          (_LR, _p("beta1", 0.9), _p("beta2", 0.999), _p("epsilon", 1e-8), _WD,
           _p("eta", None, "Learning rate schedule multiplier"), _CLIP), """\
Update function for the AdamW optimizer (Loshchilov & Hutter, decoupled weight decay), MXNet's
``contrib.adamw_update``::

    grad = clip(rescale_grad * grad, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad                (in place)
    var = beta2 * var + (1 - beta2) * grad**2               (in place)
    weight = weight - eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)

``rescale_grad`` is a one-element array (a dynamic loss scale can change without a new
call signature); when it is NaN, infinite or 0 the update is skipped: the states are left
as they are and the output gets the weight unchanged (MXNet left a separate ``out``
unwritten).

>>> w = mx.nd.array([1.0]); g = mx.nd.array([2.0])
>>> mean, var = mx.nd.zeros((1,)), mx.nd.zeros((1,))
>>> _ = mx.nd.contrib.adamw_update(w, g, mean, var, mx.nd.array([0.5]), lr=1.0, eta=0.1,
...                                wd=0.1, out=w)
>>> [round(v, 4) for v in w.asnumpy().tolist()]
[0.6738]
""", aliases=("_contrib_adamw_update",), scale_input=True),
    _Spec("rmsprop_update", "rmsprop", ("weight", "grad", "n"), ("n",),
          (_LR, _p("gamma1", 0.95, "The decay rate of momentum estimates."),
           _p("epsilon", 1e-8), _WD, _RESCALE, _CLIP, _CLIP_W), """\
Update function for the RMSProp optimizer (Tieleman & Hinton, 2012)::

    grad = clip(rescale_grad * grad + wd * weight, clip_gradient)
    n = (1 - gamma1) * grad**2 + gamma1 * n                 (in place)
    weight = clip(weight - lr * grad / sqrt(n + epsilon), clip_weights)
"""),
    _Spec("rmspropalex_update", "rmspropalex", ("weight", "grad", "n", "g", "delta"),
          ("n", "g", "delta"),
          (_LR, _p("gamma1", 0.95, "Decay rate."), _p("gamma2", 0.9, "Decay rate."),
           _p("epsilon", 1e-8), _WD, _RESCALE, _CLIP, _CLIP_W), """\
Update function for the centered RMSProp optimizer (Graves, 2013, eq. 38-45)::

    grad = clip(rescale_grad * grad + wd * weight, clip_gradient)
    n = (1 - gamma1) * grad**2 + gamma1 * n                 (in place)
    g = (1 - gamma1) * grad + gamma1 * g                    (in place)
    delta = gamma2 * delta - lr * grad / sqrt(n - g**2 + epsilon)   (in place)
    weight = clip(weight + delta, clip_weights)
"""),
    _Spec("signsgd_update", "signsgd", ("weight", "grad"), (),
          (_LR, _WD, _RESCALE, _CLIP), """\
Update function for the SignSGD optimizer::

    weight = (1 - lr * wd) * weight - lr * sign(grad)

``rescale_grad`` and ``clip_gradient`` have no effect (as in MXNet: they do not change the
sign of a gradient scaled by a positive factor).
"""),
    _Spec("signum_update", "signum", ("weight", "grad", "mom"), ("mom",),
          (_LR, _p("momentum", 0.0), _WD, _RESCALE, _CLIP,
           _p("wd_lh", 0.0, "The amount of weight decay that does not go into gradient/"
                            "momentum calculations otherwise do weight decay algorithmically "
                            "only.")), """\
Update function for the Signum optimizer (signSGD with momentum)::

    grad = clip(rescale_grad * grad, clip_gradient)
    mom = momentum * mom - (1 - momentum) * (wd * weight + grad)     (in place)
    weight = (1 - lr * wd_lh) * weight + lr * sign(mom)
"""),
    _Spec("ftrl_update", "ftrl", ("weight", "grad", "z", "n"), ("z", "n"),
          (_LR, _p("lamda1", 0.01, "The L1 regularization coefficient."),
           _p("beta", 1.0, "Per-coordinate learning rate correlation parameter."), _WD,
           _RESCALE, _CLIP), """\
Update function for the Ftrl optimizer (McMahan et al., 2013)::

    grad = clip(rescale_grad * grad, clip_gradient)
    z += grad - (sqrt(n + grad**2) - sqrt(n)) * weight / lr          (in place)
    n += grad**2                                                     (in place)
    weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)

``lr`` must be positive (the update divides by it).
""", lr_divides=True),
]


def _register_all():
    for spec in _SPECS:
        register(OpDef(
            spec.name, inputs=spec.inputs, params=spec.params, aliases=spec.aliases,
            infer_shape=_infer_shape(spec), infer_type=_infer_type(spec),
            compute={"cpu": _compute(spec)}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
            mutate_inputs=spec.states, elementwise=True,
            doc=spec.doc + _IN_PLACE_NOTE.format(
                states=", ".join(f"``{s}``" for s in spec.states) or "no state")))


_IN_PLACE_NOTE = """
Updates {states} in place; the new weight goes to the output (pass ``out=weight`` to update
the weight in place, as ``mx.optimizer`` does). Every array has the weight's shape and dtype
(float32 or float64). Not differentiable.
"""

_register_all()
