"""``_softmax_grad`` and ``_log_softmax_grad``: the input gradients of softmax and
log-softmax as one op each, from the forward op's output ``y`` and its output gradient ``g``:

* ``_softmax_grad(y, g) = y * (g - sum(g * y))``,
* ``_log_softmax_grad(y, g) = g - exp(y) * sum(g)``,

the sums along ``axis`` (kept for broadcasting). The FGradients of ``softmax``,
``log_softmax`` and ``softmin`` are these ops, so a backward pass reads y and g once (one
oneDNN softmax-backward primitive for float32 on the CPU) where the composed graph made
four passes and three temporaries. Elsewhere (other dtypes and devices, small problems)
the compute composes the registered element-wise and reduction kernels of the device, in
row blocks so that the temporaries stay small. Each op's own gradient is a graph of
registered ops (these two among them), so every order exists.
"""
from ..base import FLOAT_DTYPES, op_error
from . import onednn
from .common import in_work_dtype, write_back
from .registry import OpDef, Param, get_op, register

_AXIS = Param("axis", "int", -1, "the axis the softmax ran along")
# elements of one block of rows composed at a time (temporaries of this size)
_BLOCK = 1 << 22


def _shape(name):
    def infer_shape(shapes, attrs):
        if len(shapes) != 2:
            raise op_error(name, f"expected inputs (output, ograd), got {len(shapes)}")
        y, g = (tuple(s) for s in shapes)
        if y != g:
            raise op_error(name, f"output {y} and ograd {g} must have one shape")
        if y and not -len(y) <= attrs.axis < len(y):
            raise op_error(name, f"axis {attrs.axis} is out of range for shape {y}")
        return [y]
    return infer_shape


def _type(name):
    def infer_type(dtypes, attrs):
        if dtypes[0] not in FLOAT_DTYPES or dtypes[1] != dtypes[0]:
            raise op_error(name, f"output and ograd must share one float dtype, got "
                           f"{[str(d) for d in dtypes]}")
        return [dtypes[0]]
    return infer_type


def _run(rctx, name, ins, shape, dtype, **kw):
    """The registered op ``name``'s kernel on this device, into a new array."""
    op = get_op(name)
    out = rctx.xp.empty(shape, dtype)
    op.compute[rctx.kernels](rctx, ins, [out], op.parse_attrs(kw) if kw else op.default_attrs)
    return out


def _composed(rctx, y, g, target, axis, log):
    """``target`` from the device's element-wise and reduction kernels."""
    kept = tuple(1 if i == axis else d for i, d in enumerate(y.shape))
    dt = target.dtype
    if log:
        total = _run(rctx, "sum", [g], kept, dt, axis=axis, keepdims=True)
        scaled = _run(rctx, "broadcast_mul", [_run(rctx, "exp", [y], y.shape, dt), total],
                      y.shape, dt)
        get_op("elemwise_sub").compute[rctx.kernels](rctx, [g, scaled], [target],
                                                     get_op("elemwise_sub").default_attrs)
    else:
        prod = _run(rctx, "elemwise_mul", [g, y], y.shape, dt)
        total = _run(rctx, "sum", [prod], kept, dt, axis=axis, keepdims=True)
        diff = _run(rctx, "broadcast_sub", [g, total], y.shape, dt)
        get_op("elemwise_mul").compute[rctx.kernels](rctx, [y, diff], [target],
                                                     get_op("elemwise_mul").default_attrs)


def _innermost(shape, axis):
    """Whether the sums run along the last axis that is not 1: the only layout oneDNN's
    softmax backward is fast for. Along an outer axis (an (N, 4, 512) batch over axis 1) it
    took 20-50 times the composed kernels' time (11 ns an element against 0.3-0.5 on two
    cores), so those run composed, as smaller problems and other dtypes do."""
    return all(d == 1 for d in shape[axis + 1:])


def _compute_fn(log):
    def compute(rctx, ins, outs, attrs):
        out = outs[0]
        if out.size == 0:
            return
        xp = rctx.xp
        axis = attrs.axis % out.ndim if out.ndim else 0
        _, (y, g), target = in_work_dtype(xp, ins, out)
        if out.ndim == 0:
            y, g, target = y.reshape(1), g.reshape(1), target.reshape(1)
        if not (_innermost(y.shape, axis)
                and onednn.run(xp, "softmax_backward", (y, g, target), axis, log)):
            # blocks of whole leading-axis items when the sums run along another axis
            step = y.shape[0] if axis == 0 else max(1, _BLOCK // (y.size // y.shape[0]))
            for s in range(0, y.shape[0], step):
                _composed(rctx, y[s:s + step], g[s:s + step], target[s:s + step], axis, log)
        write_back(xp, target.reshape(out.shape), out)
    return compute


def _softmax_grad_grad(F, node, ograds):
    """out = y (g - S), S = sum(g y):  dy = h (g - S) - g sum(h y),  dg = y (h - sum(h y))
    (= _softmax_grad(y, h))."""
    y, g = node.inputs
    (h,) = ograds
    ax = node.attrs.axis
    dy = dg = None
    if node.wants[0]:
        s = F.sum(g * y, axis=ax, keepdims=True)
        dy = F.broadcast_sub(h * F.broadcast_sub(g, s),
                             F.broadcast_mul(g, F.sum(h * y, axis=ax, keepdims=True)))
    if node.wants[1]:
        dg = F._internal._softmax_grad(y, h, axis=ax)
    return [dy, dg]


def _log_softmax_grad_grad(F, node, ograds):
    """out = g - exp(y) G, G = sum(g):  dg = h - sum(h exp(y)),  dy = -h exp(y) G."""
    y, g = node.inputs
    (h,) = ograds
    ax = node.attrs.axis
    e = F.exp(y)
    dy = dg = None
    if node.wants[0]:
        dy = -F.broadcast_mul(h * e, F.sum(g, axis=ax, keepdims=True))
    if node.wants[1]:
        dg = F.broadcast_sub(h, F.sum(h * e, axis=ax, keepdims=True))
    return [dy, dg]


for _name, _log, _grad, _formula in (
        ("_softmax_grad", False, _softmax_grad_grad, "y * (g - sum(g * y, axis))"),
        ("_log_softmax_grad", True, _log_softmax_grad_grad, "g - exp(y) * sum(g, axis)")):
    register(OpDef(
        _name, inputs=("output", "ograd"), params=(_AXIS,),
        infer_shape=_shape(_name), infer_type=_type(_name),
        compute={"cpu": _compute_fn(_log)}, gradient=_grad, in_place=True,
        doc=f"""The input gradient of {'log_softmax' if _log else 'softmax'} from its output
``y`` and output gradient ``g``: ``{_formula}``, the sum kept along ``axis`` (the
softmax's axis). One oneDNN pass for float32 on the CPU; differentiable to any order.
Each row of the result sums to 0 (the softmax's outputs sum to 1 whatever its input).

>>> y = mx.nd.softmax(mx.nd.array([[1., 2., 3.]]))
>>> dx = mx.nd._internal.{_name}({'mx.nd.log(y)' if _log else 'y'}, mx.nd.array([[1., 0., 0.]]))
>>> bool(abs(dx.sum().asscalar()) < 1e-6)
True
"""))

