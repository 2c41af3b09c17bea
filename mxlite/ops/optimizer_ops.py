"""Fused optimizer updates (MXNet 1.x ``src/operator/optimizer_op.cc``, ``contrib/adamw.cc``).

Each operator reads the weight and the gradient, updates its optimizer states **in place**
(declared in ``mutate_inputs``, MXNet's FMutateInputs: ``mom``, ``mean``/``var``, ``n``,
...) and writes the new weight into its output. MXNet's optimizers call them with
``out=weight``, so the weight is updated in place too; without ``out=`` a new array holds
the new weight. Every write bumps the written arrays' version counters (``out=`` targets
and mutated inputs alike), so a value the autograd tape saved before the update makes
``backward`` raise instead of reading the new contents.

One kernel pass per call (``mxlite/_core/optim.pyx``), float32 and float64. float16 weights
go through the ``mp_`` operators (MXNet's multi-precision updates): they take a float32
master copy ``weight32`` (updated in place, with float32 states) and write the new weight,
cast from it, into their output (two casts around the one kernel pass); the plain operators
refuse float16. The operators are not differentiable.

Shared rules (MXNet's): ``rescale_grad`` multiplies the gradient first; ``clip_gradient``
clips it to ``[-clip_gradient, clip_gradient]`` when it is positive (MXNet documented
"<= 0 turns clipping off" but its kernels clipped for ``clip_gradient >= 0``, so 0 zeroed
every gradient; here 0 turns clipping off, as documented; ``clip_weights`` likewise).
``lazy_update`` only concerns row_sparse gradients, which mxlite does not have: it is
accepted and has no effect. Parameters are checked: non-finite values, decay rates outside
``[0, 1)`` (momentum and ``gamma2``: ``[0, 1]``), negative ``epsilon``, a step count ``t``
below 1, or a non-positive ``lr`` where the formula divides by it raise MXNetError (MXNet
accepted them and produced NaN).

The ``multi_`` operators (and ``preloaded_multi_``, whose rates are arrays) update several
weights in one call, each through the single-weight kernel.
"""
import math

import numpy as np

from .._core import optim as _k
from ..base import MXNetError, op_error
from .common import F32, kernels, run_in, write_back
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, register

_F16 = np.dtype("float16")
_F64 = np.dtype("float64")
_FLOATS = (F32, _F64)
_MP_WEIGHTS = (_F16, F32)      # weights of the mp_ operators

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
    "t": (lambda v: v >= 1, ">= 1 (the bias corrections divide by 1 - beta**t)"),
}


class _Spec:
    """One update operator: its algorithm in ``optim.pyx``, inputs, states and params.

    ``mp`` marks a multi-precision operator: its last input is the float32 master weight
    ``weight32``, which the kernel updates (with float32 states and the gradient cast to
    float32) and the output gets cast from. ``derived(attrs)`` gives kernel parameters computed
    from the operator's (bias corrections, renamed parameters). ``output`` is "weight" for an
    update, "direction" for LAMB's phase 1 (its output is the step, float32 with ``mp``).
    """

    def __init__(self, name, algo, inputs, states, params, doc, aliases=(), scale_input=False,
                 lr_divides=False, mp=False, derived=None, output="weight"):
        self.name, self.algo, self.inputs, self.states = name, algo, inputs, states
        self.params, self.doc, self.aliases = params, doc, aliases
        self.scale_input = scale_input      # rescale_grad is an input array (_adamw_update)
        self.lr_divides = lr_divides        # the formula divides by lr (ftrl, ftml)
        self.mp, self.derived, self.output = mp, derived, output

    @property
    def mutated(self):
        """The inputs the operator writes in place: the states (and ``weight32``)."""
        return self.states + (("weight32",) if self.mp else ())


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
        if spec.mp:
            return _mp_types(name, spec, dtypes)
        if weight not in _FLOATS:
            hint = (" (float16 weights update through a float32 master copy: the mp_ "
                    "operators, as mx.optimizer's multi_precision=True)"
                    if weight == _F16 else "")
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


def _mp_types(name, spec, dtypes):
    """The output dtype of multi-precision operator ``spec``: float16 or float32 weight and
    gradient, float32 states and ``weight32``."""
    weight = dtypes[0]
    if weight not in _MP_WEIGHTS:
        raise op_error(name, f"weight has dtype {weight}; expected float16 or float32")
    if dtypes[1] != weight:
        raise op_error(name, f"input {spec.inputs[1]!r} has dtype {dtypes[1]}, but weight has "
                       f"dtype {weight}")
    for i in range(2, len(spec.inputs)):
        if dtypes[i] != F32:
            raise op_error(name, f"input {spec.inputs[i]!r} has dtype {dtypes[i]}; expected "
                           "float32 (the states and the master weight are float32)")
    return [F32 if spec.output == "direction" else weight]


def _compute(spec):
    name = spec.name
    algo = _k.ALGOS[spec.algo][0]
    n_states = len(spec.states)
    updates = spec.output == "weight"
    if spec.mp:     # the kernel updates weight32 (in place, or writes the direction to out)
        labels = ("weight32", "grad", "weight32" if updates else "out") + spec.states
    else:
        labels = ("weight", "grad", "out") + spec.states

    def compute(rctx, ins, outs, attrs):
        scale = ins[-1] if spec.scale_input else None
        params = attrs if spec.derived is None else {**attrs, **spec.derived(attrs)}
        weight, grad, target = ins[0], ins[1], outs[0]
        if spec.mp:
            weight = ins[2 + n_states]
            (grad,) = run_in(F32, [grad])
            if updates:
                target = weight
        clash = kernels(rctx, _k).update(algo, weight, grad, list(ins[2:2 + n_states]), target,
                                         params, scale)
        if clash is not None:       # checked before anything was written
            first, second = (labels[i] for i in clash)
            raise op_error(name, f"{first!r} and {second!r} share memory; each optimizer "
                           "state needs its own array, and out= may alias only the weight")
        if target is not outs[0]:
            write_back(rctx.xp, target, outs[0])
    return compute


def _bias_corrections(beta1, beta2, t):
    """``{'bias1': 1 - beta1**t, 'bias2': 1 - beta2**t}`` (in double, as the kernel's
    parameters)."""
    return {"bias1": 1.0 - beta1 ** t, "bias2": 1.0 - beta2 ** t}


def _ftml_derived(attrs):
    # MXNet's ftml_update calls its clipping parameter clip_grad
    return {**_bias_corrections(attrs.beta1, attrs.beta2, attrs.t),
            "clip_gradient": attrs.clip_grad}


def _lamb_derived(attrs):
    if attrs.bias_correction:
        return _bias_corrections(attrs.beta1, attrs.beta2, attrs.t)
    return {"bias1": 1.0, "bias2": 1.0}


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
    _Spec("_mp_adamw_update", "adamw",
          ("weight", "grad", "mean", "var", "weight32", "rescale_grad"), ("mean", "var"),
          (_LR, _p("beta1", 0.9), _p("beta2", 0.999), _p("epsilon", 1e-8), _WD,
           _p("eta", None, "Learning rate schedule multiplier"), _CLIP), """\
Mixed-precision AdamW (``contrib.mp_adamw_update``): ``_adamw_update`` on the float32 master
copy ``weight32`` (float32 states; the float16 or float32 gradient read as float32), the new
weight cast from it into the output. When ``rescale_grad`` is NaN, infinite or 0 the update
is skipped and the output gets the weight unchanged.
""", aliases=("_contrib_mp_adamw_update",), scale_input=True, mp=True),
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


_MP_NOTE = """
Multi-precision: ``weight32`` is the float32 master copy of the float16 (or float32) ``weight``;
the update runs on it in float32 (the gradient cast to float32) and the output gets the new
``weight32`` cast to the weight's dtype."""
_T = _p("t", None, "Number of update (the step count, from 1).", kind="int")

_SPECS += [
    _Spec("mp_sgd_update", "sgd", ("weight", "grad", "weight32"), (),
          (_LR, _WD, _RESCALE, _CLIP, _LAZY), """\
Updater function for multi-precision sgd optimizer: ``sgd_update`` on ``weight32``::

    grad = clip(rescale_grad * float32(grad), clip_gradient)
    weight32 = (1 - lr * wd) * weight32 - lr * grad                 (in place)
    weight = cast(weight32, weight.dtype)
""" + _MP_NOTE, mp=True),
    _Spec("mp_sgd_mom_update", "sgd_mom", ("weight", "grad", "mom", "weight32"), ("mom",),
          (_LR, _p("momentum", 0.0), _WD, _RESCALE, _CLIP, _LAZY), """\
Updater function for multi-precision sgd optimizer with momentum: ``sgd_mom_update`` on
``weight32`` with a float32 ``mom``::

    grad = clip(rescale_grad * float32(grad), clip_gradient)
    mom = momentum * mom - lr * wd * weight32 - lr * grad           (in place)
    weight32 = weight32 + mom                                       (in place)
    weight = cast(weight32, weight.dtype)

>>> w = mx.nd.array([1.0, 2.0], dtype='float16'); w32 = w.astype('float32')
>>> mom = mx.nd.zeros((2,)); g = mx.nd.array([1.0, -1.0], dtype='float16')
>>> _ = mx.nd.mp_sgd_mom_update(w, g, mom, w32, lr=0.5, momentum=0.9, out=w)
>>> w.dtype.__name__, w.asnumpy().tolist(), w32.asnumpy().tolist()
('float16', [0.5, 2.5], [0.5, 2.5])
""" + _MP_NOTE, mp=True),
    _Spec("mp_nag_mom_update", "nag_mom", ("weight", "grad", "mom", "weight32"), ("mom",),
          (_LR, _p("momentum", 0.0), _WD, _RESCALE, _CLIP), """\
Update function for multi-precision Nesterov Accelerated Gradient (NAG) optimizer:
``nag_mom_update`` on ``weight32`` with a float32 ``mom``, the new weight cast to the weight's
dtype.
""" + _MP_NOTE, mp=True),
    _Spec("ftml_update", "ftml", ("weight", "grad", "d", "v", "z"), ("d", "v", "z"),
          (_LR, _p("beta1", 0.6, "Generally close to 0.5."),
           _p("beta2", 0.999, "Generally close to 1."),
           _p("epsilon", 1e-8, "Epsilon to prevent div 0."), _T, _WD, _RESCALE,
           _p("clip_grad", -1.0, _DOC["clip_gradient"])), """\
The FTML optimizer (Zheng & Kwok, 2017, *Follow the Moving Leader in Deep Learning*), at
step ``t``::

    grad = clip(rescale_grad * grad + wd * weight, clip_grad)
    v = beta2 * v + (1 - beta2) * grad**2                                   (in place)
    d_new = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)
    z = beta1 * z + (1 - beta1) * grad - (d_new - beta1 * d) * weight       (in place)
    d = d_new                                                               (in place)
    weight = -z / d

(MXNet's operator documentation writes ``(1 - beta1**t) * grad`` in the ``z`` line; its
kernel, and this one, use ``(1 - beta1) * grad``.) ``lr`` must be positive and ``t`` at least
1 (the update divides by both).

>>> w = mx.nd.array([1.0]); g = mx.nd.array([0.5])
>>> d, v, z = mx.nd.zeros((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
>>> _ = mx.nd.ftml_update(w, g, d, v, z, lr=0.1, t=1, beta1=0.5, beta2=0.5, epsilon=0.0,
...                       out=w)
>>> [round(x, 4) for x in (float(w.asscalar()), float(d.asscalar()), float(z.asscalar()))]
[0.9, 2.5, -2.25]
""", lr_divides=True, derived=_ftml_derived),
    _Spec("lamb_update_phase1", "lamb1", ("weight", "grad", "mean", "var"), ("mean", "var"),
          (_p("beta1", 0.9), _p("beta2", 0.999), _p("epsilon", 1e-6), _T,
           _p("bias_correction", True, "Whether to use bias correction.", kind="bool"),
           _p("wd", None, _DOC["wd"]), _RESCALE, _CLIP), """\
Phase I of the LAMB update (You et al., 2019): the moments and the step direction ``g``
(the output; the weight is left alone)::

    grad = clip(rescale_grad * grad, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad                (in place)
    var = beta2 * var + (1 - beta2) * grad**2               (in place)
    g = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight

with ``mean_hat = mean / (1 - beta1**t)`` and ``var_hat = var / (1 - beta2**t)`` when
``bias_correction``, else ``mean`` and ``var``. Phase II (``lamb_update_phase2``) scales the
step by the trust ratio ``norm(weight) / norm(g)``.
""", derived=_lamb_derived, output="direction"),
    _Spec("mp_lamb_update_phase1", "lamb1", ("weight", "grad", "mean", "var", "weight32"),
          ("mean", "var"),
          (_p("beta1", 0.9), _p("beta2", 0.999), _p("epsilon", 1e-6), _T,
           _p("bias_correction", True, "Whether to use bias correction.", kind="bool"),
           _p("wd", None, _DOC["wd"]), _RESCALE, _CLIP), """\
Mixed-precision phase I of the LAMB update: ``lamb_update_phase1`` on the float32 master
weight ``weight32`` (the gradient cast to float32, float32 ``mean`` and ``var``); the output
``g`` is float32.
""", mp=True, derived=_lamb_derived, output="direction"),
]


def _phase2_shape(name, mp):
    def infer_shape(shapes, attrs):
        for key in ("lower_bound", "upper_bound"):
            if not math.isfinite(attrs[key]):
                raise op_error(name, f"parameter {key!r} must be finite, got {attrs[key]}")
        weight = shapes[0]
        if shapes[1] != weight:
            raise op_error(name, f"input 'g' has shape {shapes[1]}, but weight has shape "
                           f"{weight}")
        for i, key in ((2, "r1"), (3, "r2")):
            if math.prod(shapes[i]) != 1:
                raise op_error(name, f"input {key!r} must hold one element (a norm), got "
                               f"shape {shapes[i]}")
        if mp and shapes[4] != weight:
            raise op_error(name, f"input 'weight32' has shape {shapes[4]}, but weight has "
                           f"shape {weight}")
        return [weight]
    return infer_shape


def _phase2_type(name, mp):
    def infer_type(dtypes, attrs):
        weight = dtypes[0]
        allowed = _MP_WEIGHTS if mp else _FLOATS
        if weight not in allowed:
            raise op_error(name, f"weight has dtype {weight}; expected one of "
                           f"{[str(d) for d in allowed]}")
        step = F32 if mp else weight
        for i, key in ((1, "g"), (4, "weight32")):
            if i < len(dtypes) and dtypes[i] != step:
                raise op_error(name, f"input {key!r} has dtype {dtypes[i]}; expected {step}")
        for i, key in ((2, "r1"), (3, "r2")):
            if dtypes[i] not in _FLOATS + (_F16,):
                raise op_error(name, f"input {key!r} has dtype {dtypes[i]}; expected a float "
                               "dtype")
        return [weight]
    return infer_type


def _trust_lr(lr, r1, r2, lower_bound, upper_bound):
    """LAMB's layer learning rate ``lr * r1 / r2``, ``r1`` first bounded (a bound <= 0 is not
    set); ``lr`` itself when either norm is 0."""
    if lower_bound > 0:
        r1 = max(r1, lower_bound)
    if upper_bound > 0:
        r1 = min(r1, upper_bound)
    return lr if r1 == 0.0 or r2 == 0.0 else lr * (r1 / r2)


def _phase2_compute(name, mp):
    sgd = _k.ALGOS["sgd"][0]

    def compute(rctx, ins, outs, attrs):
        weight, g, r1, r2 = ins[:4]
        # the norms are read on the host: the layer's rate is one scalar
        lr = _trust_lr(attrs.lr, float(r1.reshape(-1)[0]), float(r2.reshape(-1)[0]),
                       attrs.lower_bound, attrs.upper_bound)
        target = ins[4] if mp else outs[0]
        if mp:
            weight = target
        # weight - lr * g is sgd_update with wd = 0, rescale_grad = 1, no clipping
        clash = kernels(rctx, _k).update(sgd, weight, g, [], target,
                                         {"lr": lr, "rescale_grad": 1.0})
        if clash is not None:
            raise op_error(name, "'g' and the output share memory")
        if target is not outs[0]:
            write_back(rctx.xp, target, outs[0])
    return compute


_PHASE2_DOC = """\
Phase II of the LAMB update: the step ``g`` of phase I scaled by the trust ratio::

    r1 = max(r1, lower_bound)      if lower_bound > 0
    r1 = min(r1, upper_bound)      if upper_bound > 0
    lr = lr if r1 == 0 or r2 == 0 else lr * r1 / r2
    weight = weight - lr * g

``r1`` is the weight's L2 norm and ``r2`` g's (one-element arrays; read on the host). MXNet
documented ``max`` for the upper bound (its kernel, like this one, takes the minimum) and
applied a bound of 0; here a bound <= 0 is not set, as its parameter documentation says.
"""


def _register_phase2():
    bounds = (_p("lower_bound", -1.0, "Lower limit of norm of weight. If lower_bound <= 0, "
                                      "Lower limit is not set"),
              _p("upper_bound", -1.0, "Upper limit of norm of weight. If upper_bound <= 0, "
                                      "Upper limit is not set"))
    for name, mp in (("lamb_update_phase2", False), ("mp_lamb_update_phase2", True)):
        inputs = ("weight", "g", "r1", "r2") + (("weight32",) if mp else ())
        doc = _PHASE2_DOC + (_MP_NOTE if mp else "") + "\nNot differentiable.\n"
        register(OpDef(
            name, inputs=inputs, params=(_LR,) + bounds, infer_shape=_phase2_shape(name, mp),
            infer_type=_phase2_type(name, mp), compute={"cpu": _phase2_compute(name, mp)},
            gradient=NON_DIFFERENTIABLE, grad_needs=(), elementwise=True,
            mutate_inputs=("weight32",) if mp else (), doc=doc))



def _register_all():
    for spec in _SPECS:
        register(OpDef(
            spec.name, inputs=spec.inputs, params=spec.params, aliases=spec.aliases,
            infer_shape=_infer_shape(spec), infer_type=_infer_type(spec),
            compute={"cpu": _compute(spec)}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
            mutate_inputs=spec.mutated, elementwise=True,
            doc=spec.doc + _in_place_note(spec)))


def _in_place_note(spec):
    states = ", ".join(f"``{s}``" for s in spec.mutated) or "no state"
    if spec.output == "direction":
        return (f"\nUpdates {states} in place; the output is the step ``g``, of the weight's "
                "shape. Not differentiable.\n")
    if spec.mp:
        return (f"\nUpdates {states} in place; the new weight goes to the output (pass "
                "``out=weight``, as ``mx.optimizer`` does). Not differentiable.\n")
    return _IN_PLACE_NOTE.format(states=states)



# ---- multi-tensor updates: one call updates num_weights weights -------------------------------
class _MultiUpdateOpDef(OpDef):
    """``multi_sgd_update`` & co.: the inputs are ``num_weights`` groups (``weight_i``,
    ``grad_i``, then the group's states and master weight), plus, for the ``preloaded_``
    operators, the arrays ``lrs`` and ``wds``; output ``i`` is weight ``i``'s update. Each
    group runs the single-weight operator ``single`` with its own ``lr`` and ``wd``."""

    __slots__ = ("single", "group", "preloaded")

    def list_inputs(self, attrs):
        names = tuple(f"{k}_{i}" for i in range(attrs.num_weights) for k in self.group)
        return names + (("lrs", "wds") if self.preloaded else ())

    def mutated_indices(self, attrs):
        per = len(self.group)
        written = [j for j, k in enumerate(self.group) if k in self.single.mutated]
        return tuple(i * per + j for i in range(attrs.num_weights) for j in written)


def _multi_groups(op, items, attrs):
    """``items`` (shapes, dtypes or arrays) cut into the weights' groups, and the preloaded
    ``(lrs, wds)`` (None otherwise); MXNetError when the count is not the declared one."""
    n, per = attrs.num_weights, len(op.group)
    want = n * per + (2 if op.preloaded else 0)
    if n < 1 or len(items) != want:
        raise op_error(op.name, f"num_weights={n} takes {want} inputs ({per} per weight"
                       f"{' and lrs, wds' if op.preloaded else ''}), got {len(items)}")
    groups = [items[i * per:(i + 1) * per] for i in range(n)]
    return groups, (tuple(items[-2:]) if op.preloaded else None)


def _multi_shape(op):
    def infer_shape(shapes, attrs):
        groups, rates = _multi_groups(op, shapes, attrs)
        n = attrs.num_weights
        if rates is None:
            for key in ("lrs", "wds"):
                if len(attrs[key]) != n:
                    raise op_error(op.name, f"parameter {key!r} has {len(attrs[key])} values "
                                   f"for num_weights={n}")
        else:
            for key, shape in zip(("lrs", "wds"), rates):
                if math.prod(shape) != n:
                    raise op_error(op.name, f"input {key!r} has shape {shape}; expected "
                                   f"{n} values (one per weight)")
        for key in ("rescale_grad", "clip_gradient", "momentum"):
            if key in attrs and not math.isfinite(attrs[key]):
                raise op_error(op.name, f"parameter {key!r} must be finite, got {attrs[key]}")
        if "momentum" in attrs and not 0.0 <= attrs.momentum <= 1.0:
            raise op_error(op.name, f"parameter 'momentum' must be in [0, 1], got "
                           f"{attrs.momentum}")
        for i, group in enumerate(groups):
            for k, shape in zip(op.group[1:], group[1:]):
                if shape != group[0]:
                    raise op_error(op.name, f"input '{k}_{i}' has shape {shape}, but "
                                   f"'weight_{i}' has shape {group[0]}")
        return [group[0] for group in groups]
    return infer_shape


def _multi_type(op):
    single = op.single

    def infer_type(dtypes, attrs):
        groups, rates = _multi_groups(op, dtypes, attrs)
        out = []
        for i, group in enumerate(groups):
            try:
                out += (_mp_types if single.mp else _plain_types)(single.name, single, group)
            except MXNetError as e:
                raise op_error(op.name, f"weight {i}: {e}") from None
        for key, dtype in zip(("lrs", "wds"), rates or ()):
            if dtype not in _FLOATS:
                raise op_error(op.name, f"input {key!r} has dtype {dtype}; expected float32 "
                               "or float64")
        return out
    return infer_type


def _plain_types(name, spec, dtypes):
    """The output dtype of one weight of a plain (not mp_) update: float32 or float64, every
    array the weight's dtype."""
    weight = dtypes[0]
    if weight not in _FLOATS:
        raise op_error(name, f"weight has dtype {weight}; expected float32 or float64")
    for k, dtype in zip(spec.inputs[1:], dtypes[1:]):
        if dtype != weight:
            raise op_error(name, f"input {k!r} has dtype {dtype}, but weight has dtype "
                           f"{weight}")
    return [weight]


def _multi_compute(op):
    step = _compute(op.single)

    def compute(rctx, ins, outs, attrs):
        groups, rates = _multi_groups(op, ins, attrs)
        if rates is None:
            lrs, wds = attrs.lrs, attrs.wds
        else:       # the preloaded rates are read on the host: one scalar pair per weight
            lrs, wds = (r.reshape(-1).tolist() for r in rates)
        for group, out, lr, wd in zip(groups, outs, lrs, wds):
            step(rctx, group, [out], {**attrs, "lr": lr, "wd": wd})
    return compute


_MULTI_DOC = """\
Update {n} weights with ``{single}`` in one call::

    for i in range(num_weights):
        {single}({args}, lr={lr}, wd={wd}, out=weights[i])

The inputs are the weights' groups one after another ({group}){rates}. Weights may differ
in shape. Updates the states in place; output ``i`` is weight ``i``'s new value (pass
``out=`` the list of weights, as ``mx.optimizer.SGD`` does). Not differentiable.
"""


def _register_multi():
    rates = (Param("lrs", "floats", doc="Learning rates, one per weight."),
             Param("wds", "floats", doc="Weight decays, one per weight."))
    count = Param("num_weights", "int", 1, "Number of updated weights.")
    for single_name, group in (("sgd_update", ("weight", "grad")),
                               ("sgd_mom_update", ("weight", "grad", "mom")),
                               ("mp_sgd_update", ("weight", "grad", "weight32")),
                               ("mp_sgd_mom_update", ("weight", "grad", "mom", "weight32"))):
        single = next(spec for spec in _SPECS if spec.name == single_name)
        base = single_name[:-len("_update")]
        kept = tuple(p for p in single.params if p.name not in ("lr", "wd", "lazy_update"))
        for preloaded in (False, True):
            name = ("preloaded_" if preloaded else "") + "multi_" + base + "_update"
            doc = _MULTI_DOC.format(
                n="``num_weights``", single=single_name,
                args=", ".join(f"{k}s[i]" for k in group),
                lr="lrs[i]", wd="wds[i]", group=", ".join(f"``{k}_i``" for k in group),
                rates=", then the arrays ``lrs`` and ``wds`` (read on the host)"
                if preloaded else "")
            op = _MultiUpdateOpDef(
                name, inputs=(), variadic=True,
                params=kept + (() if preloaded else rates) + (count,),
                infer_shape=None, infer_type=None, compute={}, doc=doc,
                gradient=NON_DIFFERENTIABLE, grad_needs=(),
                num_outputs=lambda attrs: attrs.num_weights, elementwise=True)
            op.single, op.group, op.preloaded = single, group, preloaded
            op.infer_shape, op.infer_type = _multi_shape(op), _multi_type(op)
            op.compute = {"cpu": _multi_compute(op)}
            op.mutate_inputs = ("states",)      # which ones: mutated_indices(attrs)
            register(op)


_IN_PLACE_NOTE = """
Updates {states} in place; the new weight goes to the output (pass ``out=weight`` to update
the weight in place, as ``mx.optimizer`` does). Every array has the weight's shape and dtype
(float32 or float64). Not differentiable.
"""

_register_all()
_register_phase2()
_register_multi()
SPECS = tuple(_SPECS)       # the single-weight updates (optimizer_multi groups them)
