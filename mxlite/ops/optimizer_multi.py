"""Multi-tensor optimizer steps over the single-weight updates of ``optimizer_ops``:
MXNet's ``_multi_adamw_update`` / ``_multi_mp_adamw_update`` (AdamW on several weights with
one ``rescale_grad`` array), ``_multi_lamb_update`` / ``_multi_mp_lamb_update`` (the whole
LAMB step: phase 1, the two norms, phase 2), the LARS helpers ``multi_sum_sq`` and
``multi_lars``, and ``contrib.group_adagrad_update``.

Each compute function runs the registered operators' compute functions on the call's device
(``rctx.kernels``), so one definition serves every device. None is differentiable.
"""
import math

import numpy as np

from ..base import MXNetError, dtype_kind, op_error
from .common import F32
from .optimizer_ops import SPECS
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, get_op, register

_F64 = np.dtype("float64")
_FLOATS = (F32, _F64)
_ATTRS = {}
_BLOCK = 1 << 24        # elements per block of the blocked computes (bounded scratch memory)


def _attrs(name, **kw):
    """Parsed attrs of op ``name`` for keywords ``kw`` (memoised: steps repeat them)."""
    key = (name, tuple(sorted(kw.items())))
    if key not in _ATTRS:
        if len(_ATTRS) > 4096:          # a bounded memo: schedules change lr every step
            _ATTRS.clear()
        _ATTRS[key] = get_op(name).parse_attrs(kw)
    return _ATTRS[key]


def _run(rctx, name, ins, outs, **kw):
    get_op(name).compute[rctx.kernels](rctx, ins, outs, _attrs(name, **kw))


# ---- multi-tensor AdamW and LAMB --------------------------------------------------------------
class _MultiStepOpDef(OpDef):
    """Inputs: ``count`` groups (``weight_i``, ``grad_i``, the states, ``weight32_i`` for the
    mp_ forms), then ``tail`` (AdamW's ``rescale_grad`` array); output ``i`` is weight
    ``i``'s update. ``single`` is the single-weight record whose types each group follows."""

    __slots__ = ("group", "tail", "count_param", "single")

    def list_inputs(self, attrs):
        n = attrs[self.count_param]
        return tuple(f"{k}_{i}" for i in range(n) for k in self.group) + self.tail

    def mutated_indices(self, attrs):
        per = len(self.group)
        written = [j for j, k in enumerate(self.group) if k in self.single.mutated]
        return tuple(i * per + j for i in range(attrs[self.count_param]) for j in written)


def _groups(op, items, attrs):
    n, per = attrs[op.count_param], len(op.group)
    want = n * per + len(op.tail)
    if n < 1 or len(items) != want:
        raise op_error(op.name, f"{op.count_param}={n} takes {want} inputs ({per} per weight"
                       f"{' and ' + ', '.join(op.tail) if op.tail else ''}), got "
                       f"{len(items)}")
    return [list(items[i * per:(i + 1) * per]) for i in range(n)], list(items[n * per:])


def _per_weight_params(op, attrs):
    """The per-weight tuples (lrs, wds, ...) checked against the weight count."""
    n = attrs[op.count_param]
    lists = {p.name: attrs[p.name] for p in op.params if p.kind in ("floats", "shape")}
    for key, values in lists.items():
        if len(values) != n:
            raise op_error(op.name, f"parameter {key!r} has {len(values)} values for "
                           f"{op.count_param}={n}")
    return lists


def _multi_shape(op):
    def infer_shape(shapes, attrs):
        groups, tail = _groups(op, shapes, attrs)
        lists = _per_weight_params(op, attrs)
        for key, values in lists.items():
            bad = [v for v in values if not math.isfinite(v)]
            if bad:
                raise op_error(op.name, f"parameter {key!r} must be finite, got {bad[0]}")
        for key in ("beta1", "beta2"):
            if not 0.0 <= attrs[key] < 1.0:
                raise op_error(op.name, f"parameter {key!r} must be in [0, 1), got "
                               f"{attrs[key]}")
        if attrs.epsilon < 0:
            raise op_error(op.name, f"parameter 'epsilon' must be >= 0, got {attrs.epsilon}")
        for t in lists.get("step_count", ()):
            if t < 1:
                raise op_error(op.name, f"every step_count must be >= 1, got {t}")
        for i, group in enumerate(groups):
            for k, shape in zip(op.group[1:], group[1:]):
                if shape != group[0]:
                    raise op_error(op.name, f"input '{k}_{i}' has shape {shape}, but "
                                   f"'weight_{i}' has shape {group[0]}")
        for k, shape in zip(op.tail, tail):
            if math.prod(shape) != 1:
                raise op_error(op.name, f"input {k!r} must hold one element, got shape "
                               f"{shape}")
        return [group[0] for group in groups]
    return infer_shape


def _multi_type(op):
    def infer_type(dtypes, attrs):
        groups, tail = _groups(op, dtypes, attrs)
        single = get_op(op.single.name)
        out = []
        for i, group in enumerate(groups):
            try:
                out.append(single.infer_type(group + tail, None)[0])
            except MXNetError as e:
                raise op_error(op.name, f"weight {i}: {e}") from None
        return out
    return infer_type


def _adamw_compute(op):
    def compute(rctx, ins, outs, attrs):
        groups, (scale,) = _groups(op, ins, attrs)
        for group, out, lr, wd, eta in zip(groups, outs, attrs.lrs, attrs.wds, attrs.etas):
            _run(rctx, op.single.name, group + [scale], [out], lr=lr, wd=wd, eta=eta,
                 beta1=attrs.beta1, beta2=attrs.beta2, epsilon=attrs.epsilon,
                 clip_gradient=attrs.clip_gradient)
    return compute


def _lamb_compute(op):
    mp = "weight32" in op.group
    phase1 = "mp_lamb_update_phase1" if mp else "lamb_update_phase1"
    phase2 = "mp_lamb_update_phase2" if mp else "lamb_update_phase2"

    def compute(rctx, ins, outs, attrs):
        xp = rctx.xp
        groups, _ = _groups(op, ins, attrs)
        for group, out, lr, wd, t in zip(groups, outs, attrs.learning_rates, attrs.wds,
                                         attrs.step_count):
            weight = group[-1] if mp else group[0]      # the float32 master copy with mp
            g = xp.empty(weight.shape, weight.dtype)
            _run(rctx, phase1, group, [g], beta1=attrs.beta1, beta2=attrs.beta2,
                 epsilon=attrs.epsilon, t=t, bias_correction=attrs.bias_correction, wd=wd,
                 rescale_grad=attrs.rescale_grad, clip_gradient=attrs.clip_gradient)
            r1, r2 = xp.empty((1,), weight.dtype), xp.empty((1,), weight.dtype)
            _run(rctx, "norm", [weight], [r1])
            _run(rctx, "norm", [g], [r2])
            ins2 = [group[0], g, r1, r2] + ([weight] if mp else [])
            _run(rctx, phase2, ins2, [out], lr=lr, lower_bound=attrs.lower_bound,
                 upper_bound=attrs.upper_bound)
    return compute


_CLIP = Param("clip_gradient", "float", -1.0,
              "Clip gradient to the range of [-clip_gradient, clip_gradient]. If "
              "clip_gradient <= 0, gradient clipping is turned off.")

_ADAMW_PARAMS = (
    Param("lrs", "floats", REQUIRED, "Learning rates, one per weight."),
    Param("beta1", "float", 0.9, "The decay rate for the 1st moment estimates."),
    Param("beta2", "float", 0.999, "The decay rate for the 2nd moment estimates."),
    Param("epsilon", "float", 1e-8, "A small constant for numerical stability."),
    Param("wds", "floats", REQUIRED, "Weight decays, one per weight."),
    Param("etas", "floats", REQUIRED, "Learning rate schedule multipliers, one per weight."),
    _CLIP,
    Param("num_weights", "int", 1, "Number of updated weights."))

_LAMB_PARAMS = (
    Param("learning_rates", "floats", REQUIRED, "Learning rates, one per weight."),
    Param("beta1", "float", 0.9, "Exponential decay rate for the first moment estimates."),
    Param("beta2", "float", 0.999, "Exponential decay rate for the second moment estimates."),
    Param("epsilon", "float", 1e-6, "Small value to avoid division by 0."),
    Param("wds", "floats", REQUIRED, "Weight decays, one per weight."),
    Param("rescale_grad", "float", 1.0, "Gradient rescaling factor."),
    Param("lower_bound", "float", -1.0, "Lower limit of the weight norm (<= 0: not set)."),
    Param("upper_bound", "float", -1.0, "Upper limit of the weight norm (<= 0: not set)."),
    _CLIP,
    Param("bias_correction", "bool", True, "Whether to use bias correction."),
    Param("step_count", "shape", REQUIRED, "The step count of each weight."),
    Param("num_tensors", "int", 1, "Number of updated weights."))

_ADAMW_DOC = """\
AdamW on ``num_weights`` weights in one call: for each ``i``, ``{single}`` of group ``i``
with ``lr=lrs[i], wd=wds[i], eta=etas[i]`` and the one shared ``rescale_grad`` array (when
it is NaN, infinite or 0 every update is skipped). The inputs are the groups one after
another ({group}), then ``rescale_grad``; ``mx.nd.contrib.{public}`` takes the lists.
Updates the states in place; output ``i`` is weight ``i``'s new value. Not differentiable.
"""

_LAMB_DOC = """\
The whole LAMB step (You et al., 2019) on ``num_tensors`` weights in one call: for each
``i``, phase 1 (``{phase1}`` with ``t=step_count[i]``, ``wd=wds[i]``) gives the direction
``g``; ``r1 = ||weight||`` ({master}), ``r2 = ||g||``; phase 2 (``{phase2}``, ``lr =
learning_rates[i]``, the norm bounds) writes the new weight. The inputs are the groups one
after another ({group}); ``mx.nd.contrib.{public}`` takes the lists. Updates the states in
place; output ``i`` is weight ``i``'s new value. Not differentiable.
"""


def _register_multi_steps():
    for name, single, group, params, compute, count, tail, doc in (
            ("_multi_adamw_update", "_adamw_update", ("weight", "grad", "mean", "var"),
             _ADAMW_PARAMS, _adamw_compute, "num_weights", ("rescale_grad",), _ADAMW_DOC),
            ("_multi_mp_adamw_update", "_mp_adamw_update",
             ("weight", "grad", "mean", "var", "weight32"), _ADAMW_PARAMS, _adamw_compute,
             "num_weights", ("rescale_grad",), _ADAMW_DOC),
            ("_multi_lamb_update", "lamb_update_phase1", ("weight", "grad", "mean", "var"),
             _LAMB_PARAMS, _lamb_compute, "num_tensors", (), _LAMB_DOC),
            ("_multi_mp_lamb_update", "mp_lamb_update_phase1",
             ("weight", "grad", "mean", "var", "weight32"), _LAMB_PARAMS, _lamb_compute,
             "num_tensors", (), _LAMB_DOC)):
        mp = "weight32" in group
        op = _MultiStepOpDef(
            name, inputs=(), variadic=True, params=params, infer_shape=None, infer_type=None,
            compute={}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
            num_outputs=lambda attrs, count=count: attrs[count], elementwise=True,
            doc=doc.format(single=single, group=", ".join(f"``{k}_i``" for k in group),
                           public=name.lstrip("_"),
                           phase1="mp_lamb_update_phase1" if mp else "lamb_update_phase1",
                           phase2="mp_lamb_update_phase2" if mp else "lamb_update_phase2",
                           master="of the float32 master copy" if mp else "the weight"))
        op.group, op.tail, op.count_param = group, tail, count
        op.single = next(spec for spec in SPECS if spec.name == single)
        op.infer_shape, op.infer_type = _multi_shape(op), _multi_type(op)
        op.compute = {"cpu": compute(op)}
        op.mutate_inputs = ("states",)      # which ones: mutated_indices(attrs)
        register(op)


# ---- LARS: multi_sum_sq and multi_lars --------------------------------------------------------
def _sum_sq_shape(shapes, attrs):
    if attrs.num_arrays != len(shapes) or not shapes:
        raise op_error("multi_sum_sq", f"num_arrays={attrs.num_arrays} but {len(shapes)} "
                       "arrays were given")
    return [(len(shapes),)]


def _sum_sq_type(dtypes, attrs):
    for i, dt in enumerate(dtypes):
        if dtype_kind(dt) != "f" or dt != dtypes[0]:
            raise op_error("multi_sum_sq", f"array {i} has dtype {dt}; every array must have "
                           f"array 0's float dtype {dtypes[0]}")
    return [F32]


def _blocks(n, size=_BLOCK):
    """(start, stop) of the blocks of at most ``size`` elements that cover ``n``."""
    return [(i, min(i + size, n)) for i in range(0, n, size)] if n else []


def _sum_sq_compute(rctx, ins, outs, attrs):
    """Each sum accumulated in float64 over blocks (a float32 or float64 square of each
    block: float16 squares would overflow), so the scratch memory stays one block."""
    xp = rctx.xp
    for i, x in enumerate(ins):
        flat = x.reshape(-1)
        work = _F64 if x.dtype == _F64 else F32
        total = 0.0
        for lo, hi in _blocks(flat.size):
            block = flat[lo:hi]
            if block.dtype != work:
                wide = xp.empty(block.shape, work)
                xp.cast_into(wide, block)
                block = wide
            sq = xp.empty(block.shape, work)
            _run(rctx, "square", [block], [sq])
            part = xp.empty((1,), work)
            _run(rctx, "sum", [sq], [part], axis=(0,), keepdims=True)
            total += float(xp.asnumpy(part)[0])
        outs[0][i:i + 1].fill(total)


def _lars_shape(shapes, attrs):
    lrs = shapes[0]
    if len(lrs) != 1:
        raise op_error("multi_lars", f"lrs must be 1-d, got shape {lrs}")
    for name, shape in zip(("weights_sum_sq", "grads_sum_sq", "wds"), shapes[1:]):
        if shape != lrs:
            raise op_error("multi_lars", f"{name} has shape {shape}, but lrs has shape {lrs}")
    return [lrs]


def _lars_type(dtypes, attrs):
    for name, dt in zip(("lrs", "weights_sum_sq", "grads_sum_sq", "wds"), dtypes):
        if dt != F32:
            raise op_error("multi_lars", f"{name} has dtype {dt}; expected float32")
    return [F32]


def _lars_compute(rctx, ins, outs, attrs):
    """lr_i * eta * |w| / (|g| + wd_i * |w| + eps) where both norms are positive, else lr_i
    (|g| = sqrt(grads_sum_sq) * rescale_grad), with registered ops one block at a time."""
    xp = rctx.xp
    for lo, hi in _blocks(ins[0].shape[0]):
        lrs, w2, g2, wds = (a[lo:hi] for a in ins)
        w, g, t = (xp.empty(lrs.shape, F32) for _ in range(3))
        _run(rctx, "sqrt", [w2], [w])
        _run(rctx, "sqrt", [g2], [g])
        _run(rctx, "_mul_scalar", [g], [g], scalar=attrs.rescale_grad)
        ok = xp.empty(lrs.shape, F32)                   # w > 0 and g > 0
        _run(rctx, "_greater_scalar", [w], [ok], scalar=0.0)
        _run(rctx, "_greater_scalar", [g], [t], scalar=0.0)
        _run(rctx, "elemwise_mul", [ok, t], [ok])
        _run(rctx, "elemwise_mul", [wds, w], [t])       # denominator g + wd * w + eps
        _run(rctx, "elemwise_add", [t, g], [t])
        _run(rctx, "_plus_scalar", [t], [t], scalar=attrs.eps)
        _run(rctx, "elemwise_mul", [lrs, w], [g])       # numerator lr * eta * w
        _run(rctx, "_mul_scalar", [g], [g], scalar=attrs.eta)
        _run(rctx, "elemwise_div", [g, t], [g])
        _run(rctx, "where", [ok, g, lrs], [outs[0][lo:hi]])


def _check_lars(attrs):
    for key in ("eta", "eps", "rescale_grad"):
        if not math.isfinite(attrs[key]):
            raise op_error("multi_lars", f"parameter {key!r} must be finite, got {attrs[key]}")


def _register_lars():
    register(OpDef(
        "multi_sum_sq", inputs=("data",), variadic=True, key_var_num_args="num_arrays",
        params=(Param("num_arrays", "int", REQUIRED, "number of input arrays."),),
        infer_shape=_sum_sq_shape, infer_type=_sum_sq_type, compute={"cpu": _sum_sq_compute},
        gradient=NON_DIFFERENTIABLE, grad_needs=(),
        doc="""The sum of squares of each input array, as one float32 vector:
``out[i] = sum(data[i] ** 2)`` (computed in the array's dtype, float16 in float32).
What the LARS optimizer feeds to ``multi_lars``. Not differentiable.

>>> mx.nd.multi_sum_sq(mx.nd.array([1, 2]), mx.nd.array([[3.0]]), num_arrays=2).asnumpy()
array([5., 9.], dtype=float32)
"""))

    def lars_shape(shapes, attrs):
        _check_lars(attrs)
        return _lars_shape(shapes, attrs)

    register(OpDef(
        "multi_lars", inputs=("lrs", "weights_sum_sq", "grads_sum_sq", "wds"),
        params=(Param("eta", "float", REQUIRED, "LARS eta"),
                Param("eps", "float", REQUIRED, "LARS eps"),
                Param("rescale_grad", "float", 1.0, "Gradient rescaling factor")),
        infer_shape=lars_shape, infer_type=_lars_type, compute={"cpu": _lars_compute},
        gradient=NON_DIFFERENTIABLE, grad_needs=(),
        doc="""The LARS learning rates (You et al., 2017) of several weights from their sums of
squares::

    w = sqrt(weights_sum_sq); g = sqrt(grads_sum_sq) * rescale_grad
    out = lrs * eta * w / (g + wds * w + eps)   where w > 0 and g > 0, else lrs

Not differentiable.

>>> mx.nd.multi_lars(mx.nd.array([0.1, 0.2]), mx.nd.array([4.0, 0.0]), mx.nd.array([1.0, 4.0]),
...                  mx.nd.array([0.0, 0.0]), eta=0.5, eps=0.0).asnumpy()
array([0.1, 0.2], dtype=float32)
"""))


# ---- group AdaGrad -----------------------------------------------------------------------------
def _group_adagrad_shape(shapes, attrs):
    name = "_contrib_group_adagrad_update"
    weight, grad, history = shapes
    if not math.isfinite(attrs.lr) or attrs.epsilon < 0:
        raise op_error(name, f"lr must be finite and epsilon >= 0, got lr={attrs.lr}, "
                       f"epsilon={attrs.epsilon}")
    if grad != weight:
        raise op_error(name, f"grad has shape {grad}, but weight has shape {weight}")
    if len(weight) < 1 or tuple(history) not in ((weight[0], 1), (weight[0],)):
        raise op_error(name, f"history must have shape ({weight[0] if weight else '?'}, 1) "
                       f"(one value per row of weight {weight}), got {history}")
    return [weight]


def _group_adagrad_type(dtypes, attrs):
    name = "_contrib_group_adagrad_update"
    if dtypes[0] not in _FLOATS or any(dt != dtypes[0] for dt in dtypes):
        raise op_error(name, f"weight, grad and history must share one dtype, float32 or "
                       f"float64; got {[str(d) for d in dtypes]}")
    return [dtypes[0]]


def _group_adagrad_compute(rctx, ins, outs, attrs):
    """Over blocks of whole rows, with registered ops: g = clip(rescale * grad); history +=
    mean(g**2 over each row); out = weight - lr * g / sqrt(history + epsilon). The scratch
    memory stays one block."""
    xp = rctx.xp
    weight, grad, history = ins
    rows = weight.shape[0]
    cols = weight.size // rows if rows else 0
    w2, g2, o2 = (a.reshape(rows, cols) for a in (weight, grad, outs[0]))
    h2 = history.reshape(rows, 1)
    for lo, hi in _blocks(rows, max(1, _BLOCK // max(cols, 1))):
        g = xp.empty((hi - lo, cols), grad.dtype)
        _run(rctx, "_mul_scalar", [g2[lo:hi]], [g], scalar=attrs.rescale_grad)
        if attrs.clip_gradient > 0:
            _run(rctx, "clip", [g], [g], a_min=-attrs.clip_gradient,
                 a_max=attrs.clip_gradient)
        sq = xp.empty(g.shape, g.dtype)
        _run(rctx, "square", [g], [sq])
        row_mean = xp.empty((hi - lo, 1), g.dtype)
        _run(rctx, "mean", [sq], [row_mean], axis=(1,), keepdims=True)
        h = h2[lo:hi]
        _run(rctx, "elemwise_add", [h, row_mean], [h])
        denom = row_mean            # reused: sqrt(history + epsilon)
        _run(rctx, "_plus_scalar", [h], [denom], scalar=attrs.epsilon)
        _run(rctx, "sqrt", [denom], [denom])
        _run(rctx, "broadcast_div", [g, denom], [sq])
        _run(rctx, "_mul_scalar", [sq], [sq], scalar=attrs.lr)
        _run(rctx, "elemwise_sub", [w2[lo:hi], sq], [o2[lo:hi]])


def _register_group_adagrad():
    register(OpDef(
        "_contrib_group_adagrad_update", inputs=("weight", "grad", "history"),
        params=(Param("lr", "float", REQUIRED, "Learning rate"),
                Param("rescale_grad", "float", 1.0, "Rescale gradient to grad = "
                                                     "rescale_grad*grad."),
                Param("clip_gradient", "float", -1.0, "Clip gradient to the range of "
                      "[-clip_gradient, clip_gradient]; <= 0 turns clipping off."),
                Param("epsilon", "float", 1e-5, "Epsilon for numerical stability")),
        infer_shape=_group_adagrad_shape, infer_type=_group_adagrad_type,
        compute={"cpu": _group_adagrad_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
        mutate_inputs=("history",), in_place=True,
        doc="""Group AdaGrad (one learning rate per row of the weight; Duchi et al., 2011)::

    grad = clip(rescale_grad * grad, clip_gradient)
    history += mean(grad ** 2 over each row)          (in place; shape (rows, 1))
    weight = weight - lr * grad / sqrt(history + epsilon)

Weight decay is not part of it (MXNet's GroupAdaGrad refuses one). Not differentiable.
"""))


_register_multi_steps()
_register_lars()
_register_group_adagrad()
