"""Reductions: sum, mean, prod, max, min, nansum, nanprod, norm, argmax, argmin, sum_to.

Every reduction runs in ``mxlite/_core/reduce`` as ``x[outer, n, inner] -> out[outer, inner]``.
This module normalizes the axes, drops unit dimensions, merges adjacent dimensions that are
all reduced or all kept, and then reduces one contiguous group of reduced axes per kernel call
(largest group first, so the data shrinks fastest). Reducing in steps like this never copies
the input, whatever axes are asked for; later steps run on the accumulator dtype and the
last one applies the final division (mean) or square root (norm).

Shapes follow MXNet 1.x: ``axis=None`` (or ``()``) reduces everything and, without
``keepdims``, gives shape ``(1,)`` rather than NumPy's 0-d.
"""
import functools

import numpy as np

from .._core import reduce as _k
from .._core.dispatch import CpuKernel
from ..base import FLOAT_DTYPES, NARROW_FLOATS, op_error
from .common import F32, kernels
from .registry import NON_DIFFERENTIABLE, OpDef, Param, register
from .shape_utils import normalize_axes, normalize_axis, size_of

F64 = np.dtype("float64")
I64 = np.dtype("int64")
BOOL = np.dtype("bool")
U8 = np.dtype("uint8")

# What each step of a multi-step reduction continues with, on the accumulator array.
_CONTINUE = {"sum": "sum", "nansum": "sum", "abssum": "sum", "sumsq": "sum",
             "prod": "prod", "nanprod": "prod", "max": "max", "min": "min"}
FINAL_NONE, FINAL_MEAN, FINAL_SQRT = 0, 1, 2
# (kernel op, input dtype) -> the accumulator dtype its kernel writes (plans are data: they
# call no kernel module)
_ACC = {(op, np.dtype(dt)): np.dtype(acc) for (op, dt), acc in _k.ACC_DTYPES.items()}


# ---- axis planning ----------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def reduced_axes(op, shape, axis, exclude=False):
    """Sorted tuple of the axes to reduce. ``axis`` None or () means all axes (MXNet 1.x)."""
    ndim = len(shape)
    if axis is None or len(axis) == 0:
        return tuple(range(ndim))
    axes = normalize_axes(op, axis, ndim)
    if exclude:
        return tuple(a for a in range(ndim) if a not in axes)
    return tuple(sorted(axes))


def reduced_shape(shape, axes, keepdims):
    """Output shape: reduced axes dropped (or kept as 1); an empty result becomes (1,)."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return out if out else (1,)


def _groups(shape, axes):
    """Merge dimensions into [size, reduced] groups; unit dimensions disappear."""
    groups = []
    for i, d in enumerate(shape):
        if d == 1:
            continue
        red = i in axes
        if groups and groups[-1][1] == red:
            groups[-1][0] *= d
        else:
            groups.append([d, red])
    return groups


def _kernel_input(x):
    """The array the kernels read: bool as uint8 (same bytes), float16 and bfloat16 as
    float32."""
    if x.dtype == BOOL:
        return x.view(U8)
    if x.dtype in NARROW_FLOATS:
        return x.astype(F32)
    return x


@functools.lru_cache(maxsize=4096)
def _plan(kop, shape, axes, dtype, final):
    """The kernel calls that reduce ``shape`` over ``axes``: one contiguous group of reduced
    dimensions per call, largest first, each on the previous call's partial result.
    Returns (steps, count), a step being (op id, outer, n, inner, accumulator dtype, final)."""
    groups = _groups(shape, axes)
    count = size_of([g[0] for g in groups if g[1]])
    steps, op = [], kop
    while True:
        reds = [i for i, g in enumerate(groups) if g[1]]
        if reds:
            i = max(reds, key=lambda r: groups[r][0])
            outer = size_of([g[0] for g in groups[:i]])
            n = groups[i][0]
            inner = size_of([g[0] for g in groups[i + 1:]])
        else:                       # nothing left to reduce: an element-wise pass
            i, outer, n, inner = None, 1, 1, size_of(shape)
        last = len(reds) <= 1
        acc = _ACC[(op, dtype)]
        steps.append((_k.OP_IDS[op], outer, n, inner, acc, final if last else 0))
        if last:
            return tuple(steps), count
        op, dtype = _CONTINUE[op], acc      # the next step reads this step's partial result
        del groups[i]
        if 0 < i < len(groups) and not groups[i - 1][1] and not groups[i][1]:
            groups[i - 1][0] *= groups[i][0]
            del groups[i]


def run_reduce(rctx, kop, x, axes, out, final=FINAL_NONE):
    """Reduce kernel-typed ``x`` over ``axes`` with kernel op ``kop`` into ``out`` (any shape
    of the right size) on ``rctx``'s device; the result is cast to ``out``'s dtype."""
    if out.size == 0:
        return
    xp, reduce = rctx.xp, kernels(rctx, _k).reduce
    if not out.flags.c_contiguous:          # kernels write C-contiguous buffers only
        tmp = xp.empty(out.shape, out.dtype)
        run_reduce(rctx, kop, x, axes, tmp, final)
        xp.copyto(out, tmp)
        return
    out_flat = out.reshape(-1)
    steps, count = _plan(kop, x.shape, axes, x.dtype, final)
    data = x.reshape(-1)
    for k, (op_id, outer, n, inner, acc, step_final) in enumerate(steps):
        last = k == len(steps) - 1
        dst = out_flat if (last and acc == out_flat.dtype) else xp.empty(outer * inner, acc)
        reduce(op_id, data, dst, outer, n, inner, step_final, count)
        data = dst
    if data is not out_flat:
        xp.cast_into(out_flat, data)


# ---- sum, mean, prod, max, min, nansum, nanprod -------------------------------------------------
# name: (kernel op for floats, kernel op for integers, final step, docstring)
_REDUCE = {
    "sum": ("sum", "sum", FINAL_NONE, "Sum of array elements over the given axes."),
    "mean": ("sum", "sum", FINAL_MEAN, "Mean of array elements over the given axes."),
    "prod": ("prod", "prod", FINAL_NONE, "Product of array elements over the given axes."),
    "nansum": ("nansum", "sum", FINAL_NONE,
               "Sum of array elements over the given axes, treating NaN as 0."),
    "nanprod": ("nanprod", "prod", FINAL_NONE,
                "Product of array elements over the given axes, treating NaN as 1."),
    "max": ("max", "max", FINAL_NONE,
            "Maximum of array elements over the given axes (NaN propagates, as in NumPy)."),
    "min": ("min", "min", FINAL_NONE,
            "Minimum of array elements over the given axes (NaN propagates, as in NumPy)."),
}
_ALIASES = {"sum": ("sum_axis",), "max": ("max_axis",), "min": ("min_axis",)}
# name: (input rows, result of axis=1, result of axis=0 with keepdims) -- worked by hand
_EXAMPLES = {
    "sum": ("[[1, 2, 3], [4, 5, 6]]", "[6.0, 15.0]", "[[5.0, 7.0, 9.0]]"),
    "mean": ("[[1, 2, 3], [4, 5, 6]]", "[2.0, 5.0]", "[[2.5, 3.5, 4.5]]"),
    "prod": ("[[1, 2, 3], [4, 5, 6]]", "[6.0, 120.0]", "[[4.0, 10.0, 18.0]]"),
    "max": ("[[1, 2, 3], [4, 5, 6]]", "[3.0, 6.0]", "[[4.0, 5.0, 6.0]]"),
    "min": ("[[1, 2, 3], [4, 5, 6]]", "[1.0, 4.0]", "[[1.0, 2.0, 3.0]]"),
    "nansum": ("[[1, float('nan'), 3], [4, 5, 6]]", "[4.0, 15.0]", "[[5.0, 5.0, 9.0]]"),
    "nanprod": ("[[1, float('nan'), 3], [4, 5, 6]]", "[3.0, 120.0]", "[[4.0, 5.0, 18.0]]"),
}
_NEEDS_ELEMENTS = ("max", "min")
_DTYPE_NOTE = {
    "sum": "The result keeps the input dtype (MXNet); integers accumulate in int64 and "
           "float16 in float32, float32/float64 use pairwise summation. A bool input gives "
           "the int64 count of true elements.",
    "mean": "The result keeps the input dtype (MXNet): an integer mean is the exact int64 sum "
            "divided by the count, truncated toward zero. A bool input gives float32.",
    "prod": "The result keeps the input dtype (MXNet), wrapping on integer overflow; a bool "
            "input gives int64.",
    "max": "The result keeps the input dtype; reducing an empty axis is an error.",
}
_AXIS_PARAMS = (
    Param("axis", "axes", None, "axis or axes to reduce; None or () reduces all axes"),
    Param("keepdims", "bool", False, "keep the reduced axes as dimensions of size 1"),
    Param("exclude", "bool", False, "reduce over the axes NOT listed in axis"),
)


@functools.lru_cache(maxsize=4096)
def _output_shape(name, shape, axis, exclude, keepdims):
    """The output shape of reduction ``name`` (cached: small calls pay one lookup)."""
    axes = reduced_axes(name, shape, axis, exclude)
    if name in _NEEDS_ELEMENTS and size_of([shape[a] for a in axes]) == 0:
        raise op_error(name, f"cannot reduce over an empty axis: data shape {shape}, "
                       f"axis {axis}")
    return reduced_shape(shape, axes, keepdims)


def _reduce_infer_shape(name):
    def infer_shape(shapes, attrs):
        return [_output_shape(name, shapes[0], attrs["axis"], attrs["exclude"],
                              attrs["keepdims"])]
    return infer_shape


def _reduce_infer_type(name):
    def infer_type(dtypes, attrs):
        dt = dtypes[0]
        if dt == BOOL:
            if name == "mean":
                return [F32]
            if name not in ("max", "min"):
                return [I64]
        return [dt]
    return infer_type


@functools.lru_cache(maxsize=4096)
def _one_step(kop, shape, axis, exclude, dtype, final):
    """(op id, outer, n, inner, count) when reducing ``shape`` is one kernel call whose
    accumulator is ``dtype`` itself (float32/float64 data), else None."""
    axes = reduced_axes(kop, shape, axis, exclude)
    steps, count = _plan(kop, shape, axes, dtype, final)
    if len(steps) != 1 or steps[0][4] != dtype:
        return None
    op_id, outer, n, inner, _, _ = steps[0]
    return op_id, outer, n, inner, count


def _reduce_compute(name):
    float_op, int_op, final, _ = _REDUCE[name]

    def compute(rctx, ins, outs, attrs):
        x, out = ins[0], outs[0]
        if x.dtype.char in "fd" and out.dtype is x.dtype and out.size:
            step = _one_step(float_op, x.shape, attrs["axis"], attrs["exclude"], x.dtype, final)
            if step is not None:        # the common case: one kernel call, no temporaries
                op_id, outer, n, inner, count = step
                kernels(rctx, _k).reduce(op_id, x, out, outer, n, inner, final, count)
                return
        axes = reduced_axes(name, x.shape, attrs.axis, attrs.exclude)
        if name == "mean" and x.dtype == BOOL:
            x = x.astype(F32)
        xk = _kernel_input(x)
        op = float_op if xk.dtype.kind == "f" else int_op
        if final == FINAL_MEAN and xk.dtype.kind != "f" \
                and size_of([x.shape[a] for a in axes]) == 0:
            raise op_error(name, f"the mean of an empty axis is undefined for integer dtype "
                           f"{x.dtype}: data shape {x.shape}, axis {attrs.axis}")
        target = out.view(U8) if out.dtype == BOOL else out
        run_reduce(rctx, op, xk, axes, target, final)
    return compute


# ---- gradients ---------------------------------------------------------------------------------
def _kept_shape(node, axes):
    """The reduced output's shape with the reduced axes kept as size 1."""
    return tuple(1 if i in axes else d for i, d in enumerate(node.input_shapes[0]))


def _axes_of(node):
    """The axes the recorded reduction reduced (its params were validated when it ran)."""
    a = node.attrs
    return reduced_axes("reduce", tuple(node.input_shapes[0]), a.axis, a.get("exclude", False))


def _spread(F, node, g):
    """The head gradient of a reduction, broadcast back over the input: broadcast_to of the
    gradient with the reduced axes kept (broadcast_to's own gradient is sum_to)."""
    in_shape = tuple(node.input_shapes[0])
    if size_of(in_shape) == 0:
        return F.zeros(in_shape, dtype=node.input_dtypes[0], ctx=node.context)
    kept = _kept_shape(node, _axes_of(node))
    if tuple(node.output_shapes[0]) != kept:
        g = F.reshape(g, shape=kept)
    return F.broadcast_to(g, shape=in_shape)


def _kept(F, node, g):
    """The head gradient reshaped to the kept-axes shape (for broadcasting ops)."""
    return F.reshape(g, shape=_kept_shape(node, _axes_of(node)))


def _keep_params(node):
    a = node.attrs
    return {"axis": a.axis, "keepdims": True, "exclude": a.exclude}


def _sum_grad(F, node, ograds):
    """d sum(x)/dx = 1: the head gradient spread over the reduced axes."""
    return [_spread(F, node, ograds[0])]


def _mean_grad(F, node, ograds):
    """d mean(x)/dx = 1/n for the n reduced elements."""
    shape = node.input_shapes[0]
    count = size_of([shape[a] for a in _axes_of(node)])
    return [_spread(F, node, ograds[0]) / max(count, 1)]


def _nansum_grad(F, node, ograds):
    """d nansum(x)/dx = 1 where x is a number, 0 where it is NaN."""
    x = node.inputs[0]
    return [_spread(F, node, ograds[0]) * (x == x)]


def _prod_grad(F, node, ograds):
    """d prod(x)/dx_i = prod(x) / x_i (undefined where x_i = 0, as in MXNet)."""
    x = node.inputs[0]
    p = F.prod(x, **_keep_params(node))
    return [F.broadcast_div(F.broadcast_mul(_kept(F, node, ograds[0]), p), x)]


def _nanprod_grad(F, node, ograds):
    """d nanprod(x)/dx_i = nanprod(x) / x_i where x_i is a number, 0 where it is NaN."""
    x = node.inputs[0]
    is_num = x == x
    filled = F.where(is_num, x, F.ones_like(x))
    p = F.prod(filled, **_keep_params(node))
    return [F.broadcast_div(F.broadcast_mul(_kept(F, node, ograds[0]), p), filled) * is_num]


def _extremum_grad(name):
    def gradient(F, node, ograds):
        x = node.inputs[0]
        m = getattr(F, name)(x, **_keep_params(node))
        return [F.broadcast_mul(_kept(F, node, ograds[0]), F.broadcast_equal(x, m))]
    gradient.__doc__ = (f"d {name}(x)/dx = 1 at the {name}imum, 0 elsewhere (every tied element "
                        "gets the full head gradient, as in MXNet).")
    return gradient


def _norm_grad(F, node, ograds):
    """ord=2: d |x|/dx = x / |x|;  ord=1: d |x|_1/dx = sign(x)."""
    x = node.inputs[0]
    g = ograds[0]
    if node.output_dtypes[0] != node.input_dtypes[0]:
        g = F.cast(g, dtype=node.input_dtypes[0])
    g = _kept(F, node, g)
    if node.attrs.ord == 1:
        return [F.broadcast_mul(g, F.sign(x))]
    n = F.norm(x, ord=2, axis=node.attrs.axis, keepdims=True)
    return [F.broadcast_mul(g, F.broadcast_div(x, n))]


_GRADIENTS = {"sum": (_sum_grad, ()), "mean": (_mean_grad, ()),
              "nansum": (_nansum_grad, ("inputs",)), "prod": (_prod_grad, ("inputs",)),
              "nanprod": (_nanprod_grad, ("inputs",)),
              "max": (_extremum_grad("max"), ("inputs",)),
              "min": (_extremum_grad("min"), ("inputs",))}


def _register_reductions():
    for name, (float_op, _, final, doc) in _REDUCE.items():
        note = _DTYPE_NOTE.get(name) or _DTYPE_NOTE.get(name.replace("nan", "")) \
            or _DTYPE_NOTE["max"]
        register(OpDef(
            name, inputs=("data",), params=_AXIS_PARAMS, aliases=_ALIASES.get(name, ()),
            infer_shape=_reduce_infer_shape(name), infer_type=_reduce_infer_type(name),
            compute={"cpu": _reduce_compute(name)},
            float_rule="reduce",
            cpu_kernel=CpuKernel("reduce_all", _k.reduce, _k.OP_IDS[float_op], final),
            gradient=_GRADIENTS[name][0], grad_needs=_GRADIENTS[name][1],
            doc=f"{doc}\n\n{note}\n\n{_example(name)}"))


def _example(name):
    rows, by_row, by_col = _EXAMPLES[name]
    return (f">>> x = mx.nd.array({rows})\n"
            f">>> mx.nd.{name}(x, axis=1).asnumpy().tolist()\n{by_row}\n"
            f">>> x.{name}(axis=0, keepdims=True).asnumpy().tolist()\n{by_col}\n"
            f">>> mx.nd.{name}(x).shape     # a full reduction has shape (1,), as in MXNet 1.x\n"
            f"(1,)\n")


# ---- norm -------------------------------------------------------------------------------------
def _norm_axes(shape, attrs):
    if attrs.ord not in (1, 2):
        raise op_error("norm", f"parameter 'ord' must be 1 or 2, got {attrs.ord}")
    return reduced_axes("norm", shape, attrs.axis)


def _norm_infer_shape(shapes, attrs):
    axes = _norm_axes(shapes[0], attrs)
    return [reduced_shape(shapes[0], axes, attrs.keepdims)]


def _norm_infer_type(dtypes, attrs):
    if attrs.out_dtype is not None:
        if attrs.out_dtype == BOOL:
            raise op_error("norm", "parameter 'out_dtype' cannot be bool")
        return [attrs.out_dtype]
    return [dtypes[0] if dtypes[0] in FLOAT_DTYPES else F32]


def _norm_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    axes = _norm_axes(x.shape, attrs)
    if x.dtype not in FLOAT_DTYPES:
        x = x.astype(F64)            # exact for every integer up to 2**53
    xk = _kernel_input(x)
    if attrs.ord == 1:
        run_reduce(rctx, "abssum", xk, axes, out)
    else:
        run_reduce(rctx, "sumsq", xk, axes, out, FINAL_SQRT)


def _register_norm():
    register(OpDef(
        "norm", inputs=("data",),
        params=(Param("ord", "int", 2, "order of the norm: 1 or 2"),
                Param("axis", "axes", None, "axis or axes; None flattens the whole array"),
                Param("out_dtype", "dtype", None, "dtype of the result (default: the input's "
                      "float dtype, float32 for integer input)"),
                Param("keepdims", "bool", False, "keep the reduced axes as size-1 dimensions")),
        infer_shape=_norm_infer_shape, infer_type=_norm_infer_type,
        compute={"cpu": _norm_compute}, gradient=_norm_grad,
        doc="L1 (``ord=1``: sum of ``|x|``) or L2 (``ord=2``: sqrt of the sum of x*x) norm over "
            "the given axes. With ``axis=None`` the array is flattened (result shape (1,)); "
            "with a tuple of axes the norm is taken entry-wise over all of them (for two "
            "axes and ord=2 this is the Frobenius norm, as in MXNet). float32 squares are "
            "summed in float64; integer input gives float32.\n\n"
            ">>> x = mx.nd.array([[3, 4], [6, 8]])\n"
            ">>> mx.nd.norm(x, axis=1).asnumpy().tolist()\n[5.0, 10.0]\n"
            ">>> mx.nd.norm(x, ord=1, axis=0).asnumpy().tolist()\n[9.0, 12.0]\n"
            ">>> round(float(mx.nd.norm(x).asscalar()) ** 2, 3)     # 9 + 16 + 36 + 64\n125.0\n"))


# ---- argmax / argmin --------------------------------------------------------------------------
def _arg_infer_shape(name):
    def infer_shape(shapes, attrs):
        shape = shapes[0]
        if attrs.axis is None:
            if size_of(shape) == 0:
                raise op_error(name, f"attempt to get {name} of an empty array: data shape "
                               f"{shape}")
            return [(1,) * len(shape) if attrs.keepdims else (1,)]
        axis = normalize_axis(name, attrs.axis, len(shape))
        out = reduced_shape(shape, (axis,), attrs.keepdims)
        if shape[axis] == 0:
            raise op_error(name, f"cannot reduce over an empty axis: data shape {shape}, "
                           f"axis {attrs.axis}")
        return [out]
    return infer_shape


def _arg_compute(which):
    def compute(rctx, ins, outs, attrs):
        x, out = _kernel_input(ins[0]), outs[0]
        if attrs.axis is None:
            outer, n, inner = 1, x.size, 1
        else:
            axis = normalize_axis("argmax", attrs.axis, x.ndim)
            outer = size_of(x.shape[:axis])
            n = x.shape[axis]
            inner = size_of(x.shape[axis + 1:])
        target = out if out.flags.c_contiguous else rctx.xp.empty(out.shape, out.dtype)
        kernels(rctx, _k).argreduce(which, x.reshape(-1), target.reshape(-1), outer, n, inner)
        if target is not out:
            rctx.xp.copyto(out, target)
    return compute


def _register_arg():
    for which, name in enumerate(("argmax", "argmin")):
        word = "maximum" if name == "argmax" else "minimum"
        register(OpDef(
            name, inputs=("data",),
            params=(Param("axis", "axis", None, "the axis to search; None flattens the array"),
                    Param("keepdims", "bool", False, "keep the axis as a size-1 dimension")),
            infer_shape=_arg_infer_shape(name), infer_type=lambda dtypes, attrs: [I64],
            compute={"cpu": _arg_compute(which)}, gradient=NON_DIFFERENTIABLE,
            doc=f"Index of the {word} along ``axis`` (the first one on ties; a NaN counts as "
                f"the {word}, as in NumPy). Returns int64 indices: MXNet returned float32, "
                f"which cannot represent indices above 2**24 exactly.\n\n"
                f">>> x = mx.nd.array([[1, 5, 5], [7, 2, 7]])\n"
                f">>> mx.nd.{name}(x, axis=1).asnumpy().tolist()\n"
                f"{[1, 0] if name == 'argmax' else [0, 1]}\n"
                f">>> mx.nd.{name}(x).asnumpy().tolist()     # flattened\n"
                f"{[3] if name == 'argmax' else [0]}\n"))


# ---- sum_to -----------------------------------------------------------------------------------
def _sum_to_axes(data_shape, shape):
    """Axes of ``data_shape`` to sum so that the result has ``shape`` (NumPy broadcasting
    from ``shape`` to ``data_shape``, inverted); MXNetError when it doesn't broadcast."""
    if any(d < 0 for d in shape) or len(shape) > len(data_shape) or any(
            s != d and s != 1 for s, d in zip(shape[::-1], data_shape[::-1])):
        raise op_error("sum_to", f"shape {shape} does not broadcast to the data shape "
                       f"{data_shape}")
    lead = len(data_shape) - len(shape)
    return tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and data_shape[lead + i] != 1)


def _sum_to_infer_shape(shapes, attrs):
    _sum_to_axes(shapes[0], attrs.shape)
    return [attrs.shape]


def _sum_to_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    run_reduce(rctx, "sum", _kernel_input(x), _sum_to_axes(x.shape, attrs.shape), out)


def _sum_to_grad(F, node, ograds):
    """y = sum_to(x, shape): each x element adds into exactly one y element, so
    dx = broadcast_to(dy, x.shape) -- whose gradient is sum_to again, for any order.
    An empty x has an empty (constant) gradient: broadcast_to reads a 0 in ``shape`` as
    "keep this dimension", so zeros are built instead."""
    if not node.wants[0]:
        return [None]
    g, in_shape = ograds[0], tuple(node.input_shapes[0])
    if size_of(in_shape) == 0:
        return [F.zeros(in_shape, dtype=node.input_dtypes[0], ctx=node.context)]
    if tuple(node.output_shapes[0]) == in_shape:
        return [g]
    return [F.broadcast_to(g, shape=in_shape)]


def _register_sum_to():
    register(OpDef(
        "sum_to", inputs=("data",), gradient=_sum_to_grad, grad_needs=(),
        params=(Param("shape", "shape", doc="target shape; it must broadcast to data.shape"),),
        infer_shape=_sum_to_infer_shape, infer_type=_reduce_infer_type("sum"),
        compute={"cpu": _sum_to_compute},
        doc="Sum ``data`` down to ``shape``: the exact inverse of broadcasting ``shape`` to "
            "``data.shape`` (leading axes are summed away, size-1 axes summed with keepdims). "
            "It is the gradient of broadcast_to and of every broadcasting binary op.\n\n"
            ">>> x = mx.nd.array([[1, 2, 3], [4, 5, 6]])\n"
            ">>> mx.nd.sum_to(x, shape=(1, 3)).asnumpy().tolist()\n[[5.0, 7.0, 9.0]]\n"
            ">>> mx.nd.sum_to(x, shape=(2, 1)).asnumpy().tolist()\n[[6.0], [15.0]]\n"
            ">>> mx.nd.sum_to(x, shape=(3,)).asnumpy().tolist()\n[5.0, 7.0, 9.0]\n"))


_register_reductions()
_register_norm()
_register_arg()
_register_sum_to()
