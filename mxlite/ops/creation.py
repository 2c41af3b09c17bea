"""Array creation and conversion: zeros, ones, full, arange, zeros_like, ones_like, cast.

Values are exact. A fill value (``full``'s ``val``) and every value ``arange`` produces must be
representable in the output dtype: integer dtypes take only integers inside their range, so
NaN, infinity, a fraction or an out-of-range value is an ``MXNetError``, never truncated,
clamped or wrapped; float dtypes round to the nearest value but refuse a finite value that
would become infinity; bool takes a value's truth (non-zero is True). Integers are kept as Python ints (a
``float`` parameter would lose everything past 2**53). An output that could never be
allocated (more bytes than int64 or this machine's memory and swap) is an ``MXNetError``
naming the operator and the shape, raised before anything is allocated.
"""
import math
from fractions import Fraction

import numpy as np

from ..base import as_number, exact_value, normalize_dtype, op_error
from .common import F32, same_shape, truncates
from .registry import NON_DIFFERENTIABLE, OpDef, Param, register
from .shape_utils import check_alloc

_CTX = Param("ctx", "ctx", None, "device context (default: current context)")
_DTYPE = Param("dtype", "dtype", None, "element dtype (default float32)")


def _out_dtype(attrs):
    return attrs.dtype if attrs.dtype is not None else F32


def _dtype_param(dtypes, attrs):
    return [_out_dtype(attrs)]


_FILL_DOC = {
    "zeros": "An array of zeros.",
    "ones": "An array of ones.",
    "full": "An array filled with ``val``.\n\n``val`` must be representable in ``dtype``: for "
            "integer dtypes an integer inside the dtype's range, kept exact "
            "(``full((2,), 2**63 - 1, dtype='int64')`` holds ``2**63 - 1``); NaN, infinity, a "
            "fraction or an out-of-range value is an MXNetError (MXNet cast the value, "
            "truncating fractions and wrapping out-of-range integers). Float dtypes round "
            "``val`` to the nearest value but refuse a finite value that would overflow to "
            "infinity (1e5 in float16). bool takes the truth value of ``val`` (non-zero is "
            "True), as NumPy and MXNet do.",
}


def _fill_value(name, attrs):
    if name == "full":
        return exact_value("full", "val", attrs.val, _out_dtype(attrs))
    return _out_dtype(attrs).type(0 if name == "zeros" else 1)


# MXNet's nd.zeros(..., stype=): a sparse stype is made by the op's storage rule
# (mxlite/ops/sparse/convert.py)
_STYPE = Param("stype", "str", None, "storage type: None or 'default' (dense), 'csr' or "
               "'row_sparse' (nothing stored)", choices=("default", "csr", "row_sparse"))


def _fill_shape(name):
    def infer_shape(shapes, attrs):
        shape = check_alloc(name, attrs.shape, _out_dtype(attrs), "shape")
        _fill_value(name, attrs)        # checked before anything is allocated
        return [shape]
    return infer_shape


def _fill_compute(name):
    def compute(rctx, ins, outs, attrs):
        outs[0].fill(_fill_value(name, attrs))
    return compute


def _zeros_result(xp, shape, dtype):
    return xp.zeros(shape, dtype)


for _name in ("zeros", "ones", "full"):
    register(OpDef(
        _name, inputs=(), infer_shape=_fill_shape(_name), infer_type=_dtype_param,
        # MXNet's internal names (what its Python mx.nd.zeros called)
        aliases=(f"_{_name}",) + (("_zeros_without_dtype",) if _name == "zeros" else ()),
        params=(Param("shape", "shape", doc="output shape"),)
        + ((Param("val", "number", doc="fill value: an int or a float, exact in dtype"),)
           if _name == "full" else ())
        + (_CTX, _DTYPE) + ((_STYPE,) if _name == "zeros" else ()),
        compute={"cpu": _fill_compute(_name)}, gradient=NON_DIFFERENTIABLE,
        # zeros on the CPU: NumPy's zeroed allocation (calloc), which maps a large array
        # (past malloc's mmap threshold) without writing it: pages are zeroed on first use
        cpu_result=_zeros_result if _name == "zeros" else None,
        doc=_FILL_DOC[_name] + "\n\n``shape`` may be an int or a tuple of ints; dtype defaults "
            "to float32."))


# ---- arange -----------------------------------------------------------------------------------
def _arange_plan(a):
    """``(start, step, n, dtype)`` of an arange call: start and step exact (Python ints where
    the call gave integers), n the number of values ``start + k * step`` (computed exactly)
    strictly before ``stop``. Raises MXNetError for bad parameters or unrepresentable values."""
    op = "arange"
    dt = _out_dtype(a)
    start = as_number(op, "start", a.start)
    stop = None if a.stop is None else as_number(op, "stop", a.stop)
    step = as_number(op, "step", a.step)
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, float) and not math.isfinite(v):
            raise op_error(op, f"{name} must be a finite number, got {v} (start={start}, "
                           f"stop={stop}, step={step})")
    if step == 0:
        raise op_error(op, "step must not be 0")
    if a.repeat < 1:
        raise op_error(op, f"repeat must be >= 1, got {a.repeat}")
    if dt.kind in "iub":
        for name, v in (("start", start), ("step", step)):
            if isinstance(v, float):
                if not v.is_integer():
                    raise op_error(op, f"{name}={v} is not an integer; an arange of {dt} needs "
                                   "an integer start and step")
        start, step = int(start), int(step)
    # n = ceil((stop - start) / step), exactly (floats are exact rationals)
    q = (Fraction(stop) - Fraction(start)) / Fraction(step)
    n = max(math.ceil(q), 0)
    if n:
        last = Fraction(start) + (n - 1) * Fraction(step)
        last = int(last) if last.denominator == 1 else float(last)
        exact_value(op, "start", start, dt)
        exact_value(op, "the last value", last, dt)
    return start, step, n, dt


def _arange_shape(shapes, attrs):
    _, _, n, dt = _arange_plan(attrs)
    return [check_alloc("arange", (n * attrs.repeat,), dt)]


_I64 = (-(1 << 63), (1 << 63) - 1)
_BLOCK = 1 << 20        # values computed at a time: the 8-byte temporaries stay O(_BLOCK)


def _arange_compute(rctx, ins, outs, attrs):
    start, step, n, dt = _arange_plan(attrs)
    if n == 0:
        return
    last = start + (n - 1) * step
    exact = isinstance(start, int) and isinstance(step, int) and \
        _I64[0] <= min(start, last) and max(start, last) <= _I64[1]
    rows = outs[0].reshape(n, attrs.repeat)
    for b in range(0, n, _BLOCK):
        m = min(_BLOCK, n - b)
        if exact:
            # exact integers: start + k*step in 64-bit modular arithmetic (the true values
            # fit int64, so the wrapped intermediate products do not matter), one rounding
            # for floats
            k = rctx.xp.arange(m, np.uint64) + np.uint64(b)
            with np.errstate(over="ignore"):
                values = (k * np.uint64(step % (1 << 64)) + np.uint64(start % (1 << 64))) \
                    .view(np.int64)
        else:       # k + b is exact in float64 (n is far below 2**53)
            values = float(start) + float(step) * (rctx.xp.arange(m, np.float64) + float(b))
        rctx.xp.cast_into(rows[b:b + m], values.reshape(m, 1))


register(OpDef(
    "arange", aliases=("_arange",), inputs=(), infer_shape=_arange_shape,
    infer_type=_dtype_param,
    params=(Param("start", "number", doc="start of the interval (the stop when stop is None)"),
            Param("stop", "number", None, "end of the interval, exclusive"),
            Param("step", "number", 1, "spacing between values"),
            Param("repeat", "int", 1, "times each value is repeated"),
            Param("infer_range", "bool", False, "unused; kept for MXNet compatibility"),
            _CTX, _DTYPE),
    compute={"cpu": _arange_compute}, gradient=NON_DIFFERENTIABLE,
    doc="""Evenly spaced values ``start + k * step`` in [start, stop), each repeated ``repeat``
times (MXNet arange).

The number of values is ``ceil((stop - start) / step)`` computed exactly (floats are taken as
the exact rationals they hold). start, stop and step must be finite real numbers (NaN,
infinity or a non-numeric string is an MXNetError; MXNet's string forms ``'5'``, ``'2.5'`` are
numbers) and step non-zero. Integer start and step give exact
values however large (``arange(2**53, 2**53 + 4, dtype='int64')``; MXNet went through float
and lost them); for integer dtypes (and bool) start and step must be integers and every value
must fit the dtype (bool: non-zero is True), for float dtypes every value must be finite in
the dtype.

>>> mx.nd.arange(2, 11, 3).asnumpy().tolist()
[2.0, 5.0, 8.0]
>>> mx.nd.arange(0, 3, repeat=2, dtype='int32').asnumpy().tolist()
[0, 0, 1, 1, 2, 2]
"""))

for _name, _value in (("zeros_like", 0), ("ones_like", 1)):
    register(OpDef(
        _name, inputs=("data",), infer_shape=same_shape, backward_shape="same",
        infer_type=lambda dtypes, attrs: [dtypes[0]],
        compute={"cpu": lambda rctx, ins, outs, attrs, v=_value: outs[0].fill(v)},
        gradient=NON_DIFFERENTIABLE,
        doc=f"An array of {'zeros' if _value == 0 else 'ones'} with the shape and dtype of ``data``."))


def _cast_compute(rctx, ins, outs, attrs):
    rctx.xp.cast_into(outs[0], ins[0])


def _cast_grad(F, node, ograds):
    """d cast(x)/dx = 1 (the head gradient cast back to the input dtype), except from float
    to integer or bool, where the cast is piecewise constant and dx = 0."""
    grad = ograds[0]
    if truncates(node.input_dtypes[0], node.output_dtypes[0]):
        grad = F.zeros_like(grad)
    return [F.cast(grad, dtype=node.input_dtypes[0])]


register(OpDef(
    "cast", inputs=("data",), aliases=("Cast",), infer_shape=same_shape, backward_shape="same",
    infer_type=lambda dtypes, attrs: [normalize_dtype(attrs.dtype, "cast")],
    params=(Param("dtype", "dtype", doc="target dtype"),),
    compute={"cpu": _cast_compute}, elementwise=True, gradient=_cast_grad, grad_needs=(),
    doc="""Convert ``data`` to ``dtype`` (float to integer truncates toward zero).

The gradient is the head gradient cast back, except from a float dtype to an integer or bool
one: that map is piecewise constant, so no gradient flows through it (MXNet 1.9.1 passed the
head gradient through, so ``x.astype('int32') * 3`` had gradient 3; torch detaches)."""))
