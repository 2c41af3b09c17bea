"""``_sparse_adagrad_update`` (``mx.nd.sparse.adagrad_update``, MXNet's AdaGrad step)::

    grad = clip(rescale_grad * grad, clip_gradient)
    history += grad**2                                  (in place)
    weight = weight - lr * grad / sqrt(history + epsilon)

Weight decay is refused (``wd`` must be 0: MXNet's rule for this operator). With a
row_sparse gradient the update is lazy (``mxlite.ops.sparse.optim``): only the gradient's
rows of the weight and of the history change. The dense kernel uses array arithmetic alone,
so it runs on every device.
"""
import numpy as np

from ...base import op_error
from ..optimizer_ops import _LR, _RESCALE, _CLIP, _p
from ..registry import NON_DIFFERENTIABLE, OpDef, Param, register

NAME = "_sparse_adagrad_update"


def _shape(shapes, attrs):
    if len(shapes) != 3 or not shapes[0] == shapes[1] == shapes[2]:
        raise op_error(NAME, f"weight, grad and history must have one shape, got {shapes}")
    if attrs.wd != 0:
        raise op_error(NAME, f"wd must be 0 (weight decay is not part of this update), got "
                       f"{attrs.wd}")
    if attrs.epsilon < 0:
        raise op_error(NAME, f"epsilon must be >= 0, got {attrs.epsilon}")
    return [tuple(shapes[0])]


def _type(dtypes, attrs):
    if not all(d == dtypes[0] for d in dtypes) or dtypes[0].kind != "f":
        raise op_error(NAME, f"weight, grad and history must share one float dtype, got "
                       f"{[str(d) for d in dtypes]}")
    return [dtypes[0]]


CHUNK = 1 << 20          # elements per step: the temporaries stay small whatever the size


def _compute(rctx, ins, outs, attrs):
    weight, grad, history = (a.reshape(-1) for a in ins)
    out = outs[0].reshape(-1)
    with np.errstate(all="ignore"):     # IEEE results (inf, NaN), as the other kernels
        _chunks(weight, grad, history, out, attrs)


def _chunks(weight, grad, history, out, attrs):
    for start in range(0, weight.shape[0], CHUNK):
        part = slice(start, start + CHUNK)
        g = grad[part] * attrs.rescale_grad
        if attrs.clip_gradient > 0:
            g = g.clip(-attrs.clip_gradient, attrs.clip_gradient)
        h = history[part]
        h += g * g
        out[part] = weight[part] - attrs.lr * (g / (h + attrs.epsilon) ** 0.5)


register(OpDef(
    NAME, inputs=("weight", "grad", "history"),
    params=(_LR, Param("epsilon", "float", 1e-7, "A small constant for numerical stability."),
            _p("wd", 0.0, "Weight decay: must be 0 for this update."), _RESCALE, _CLIP),
    infer_shape=_shape, infer_type=_type, compute={"cpu": _compute},
    mutate_inputs=("history",), gradient=NON_DIFFERENTIABLE, grad_needs=(), elementwise=True,
    doc="""AdaGrad's update
(MXNet's sparse AdaGrad)::

    grad = clip(rescale_grad * grad, clip_gradient)
    history += grad**2
    weight = weight - lr * grad / sqrt(history + epsilon)

``history`` is updated in place; the new weight is the output (MXNet's optimizers pass
``out=weight``). ``wd`` must be 0. With a row_sparse gradient only its rows change (a lazy
update).

>>> w, h = mx.nd.ones((2,)), mx.nd.zeros((2,))
>>> _ = mx.nd.sparse.adagrad_update(w, mx.nd.array([1.0, 0.0]), h, lr=0.5, out=w)
>>> [round(v, 3) for v in w.asnumpy().tolist()]
[0.5, 1.0]
"""))
