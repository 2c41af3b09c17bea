"""GPU compute functions of the element-wise operators (``mxlite/ops/elemwise.py``): unary
math, ``broadcast_*`` / ``elemwise_*``, the ``_*_scalar`` ops, comparisons, logical ops,
``_polygamma`` and ``add_n``; with them (imported below) the creation ops and casts, ``where``
and ``clip``.

One launch per call, on the kernels of ``elemwise_kernels`` (generated from kernel_table.py).
The dtype rules are the CPU's: mixed input dtypes are first cast to the output dtype (as the
CPU casts them to its work dtype; float16 stays float16, its kernels compute in float32), and
a scalar operand follows ``_scalar_compute``'s rules (``int_scalar`` for integer and bool
arrays, the work float type for float arrays), passed to the kernel by value.
"""
import math

import numpy as np

from ...base import op_error
from ..._core.kernel_table import BINARY as _BINARY_TABLE, UNARY as _UNARY_TABLE
from ...ops.elemwise import (SCALAR_OPS, as_dtype, _F32_MAX, _as_float, _in_range, int_scalar,
                             same_shape_binary_name, scalar_value, sum_compute)
from ..casts import BY_CHAR, fill
from ..layout import layout
from . import attach
from .elemwise_kernels import binary_kernels, polygamma_kernels, unary_kernels

__all__ = ["broadcast_layout"]

_F32 = np.dtype(np.float32)
_LOGICAL = ("logical_and", "logical_or", "logical_xor")


def _by_char(table):
    """``table`` keyed by dtype name, re-keyed by NumPy dtype char (one lookup per call)."""
    return {char: table[name] for char, name in BY_CHAR.items() if name in table}


def _kernel_for(op, table, x):
    k = table.get(x.dtype.char)
    if k is None:
        raise op_error(op, f"no GPU kernel for dtype {x.dtype}")
    return k


# ---- unary ---------------------------------------------------------------------------------
def _unary_compute(name):
    table = _by_char(unary_kernels(name))

    def compute(rctx, ins, outs, attrs):
        x, y = ins[0], outs[0]
        k = _kernel_for(name, table, x)
        if y.dtype.char != k.char and y.dtype != k.out:
            raise op_error(name, f"output dtype {y.dtype} differs from the kernel's {k.out}")
        n = y.size
        rctx.xp.launch(k.kernel, n, x, y, np.int64(n))
    return compute


def _polygamma_compute():
    table = _by_char(polygamma_kernels())

    def compute(rctx, ins, outs, attrs):
        x, y = ins[0], outs[0]
        k = _kernel_for("_polygamma", table, x)
        n = y.size
        rctx.xp.launch(k.kernel, n, x, y, np.int32(attrs.n), np.int64(n))
    return compute


# ---- binary --------------------------------------------------------------------------------
_LAYOUTS = {}       # (shape of a, shape of b, output shape) -> mx_layout record


def _broadcast_strides(shape, out_shape):
    """Element strides of a C-contiguous ``shape`` broadcast to ``out_shape`` (0 on the
    repeated axes)."""
    strides, step = [0] * len(out_shape), 1
    for d in range(1, len(shape) + 1):
        n = shape[-d]
        strides[-d] = step if n != 1 else 0
        step *= n
    return tuple(strides)


def broadcast_layout(a_shape, b_shape, out_shape):
    """The layout of ``out = f(a, b)`` for C-contiguous operands broadcast to ``out_shape``
    (memoised: the common shapes of a program repeat)."""
    key = (a_shape, b_shape, out_shape)
    lay = _LAYOUTS.get(key)
    if lay is None:
        if len(_LAYOUTS) >= 512:
            _LAYOUTS.clear()
        lay = _LAYOUTS[key] = layout(out_shape, _broadcast_strides(a_shape, out_shape),
                                     _broadcast_strides(b_shape, out_shape),
                                     _broadcast_strides(out_shape, out_shape))
    return lay


def _binary_compute(op, kname):
    table = _by_char(binary_kernels(kname))

    def compute(rctx, ins, outs, attrs):
        a, b = ins
        out = outs[0]
        dt = out.dtype
        xp = rctx.xp
        if a.dtype != dt or b.dtype != dt:      # mixed dtypes: the CPU casts them too
            a, b = as_dtype(xp, a, dt), as_dtype(xp, b, dt)
        ks = _kernel_for(op, table, out)
        n = out.size
        if n == 0:
            return
        if a.size == n and b.size == n:       # no axis repeats: one flat order
            xp.launch(ks["vv"], n, a, b, out, np.int64(n))
        elif b.size == 1:
            xp.launch(ks["v1"], n, a, b, out, np.int64(n))
        elif a.size == 1:
            xp.launch(ks["1v"], n, a, b, out, np.int64(n))
        else:
            xp.launch(ks["lay"], n, a, b, out, broadcast_layout(a.shape, b.shape, out.shape),
                      np.int64(n))
    return compute


# ---- scalar --------------------------------------------------------------------------------
def _scalar_operand(name, kname, x, out, value):
    """(constant result or None, scalar of the kernel's work type): ``_scalar_compute``'s
    rules for the scalar operand."""
    odt = out.dtype
    if odt.kind != "f":                     # integer/bool kernels: exact operand rules
        if type(value) is int and kname not in _LOGICAL and _in_range(value, odt):
            operand = value
        else:
            const, operand = int_scalar(name, kname, value, x.dtype)
            if const is not None:
                return const, None
        return None, (np.uint8(operand) if odt.char == "?" else odt.type(operand))
    f = value if type(value) is float else _as_float(value)
    if odt.char != "d":                     # float32, and float16's work type
        if abs(f) > _F32_MAX and f == f:
            f = math.copysign(math.inf, f)  # overflows, as a cast
        return None, np.float32(f)
    return None, np.float64(f)


def _scalar_compute(name, kname, reverse):
    table = _by_char(binary_kernels(kname))
    variant = "sv" if reverse else "vs"

    def compute(rctx, ins, outs, attrs):
        x, out = ins[0], outs[0]
        value = attrs["scalar"]
        if type(value) is not float and type(value) is not int:
            value = scalar_value(name, value)
        const, s = _scalar_operand(name, kname, x, out, value)
        if const is not None:
            fill(rctx.xp, out, const)
            return
        if x.dtype != out.dtype:            # bool/int input of a float result
            x = as_dtype(rctx.xp, x, out.dtype)
        k = _kernel_for(name, table, out)[variant]
        n = out.size
        if reverse:
            rctx.xp.launch(k, n, s, x, out, np.int64(n))
        else:
            rctx.xp.launch(k, n, x, s, out, np.int64(n))
    return compute


# ---- add_n ---------------------------------------------------------------------------------
def _gpu_pair_add():
    """``add_n``'s pairwise step on GPU: ``out = a + b`` for same-shape arrays of ``out``'s
    dtype, one launch of the binary ``add`` kernel (``out`` may be ``a``)."""
    table = _by_char(binary_kernels("add"))

    def pair_add(rctx, a, b, out):
        n = out.size
        if n:
            rctx.xp.launch(_kernel_for("add_n", table, out)["vv"], n, a, b, out, np.int64(n))
    return pair_add


def _attach_all():
    for name in _UNARY_TABLE:
        attach(name, _unary_compute(name))
    for kname in _BINARY_TABLE:
        attach(f"broadcast_{kname}", _binary_compute(f"broadcast_{kname}", kname))
    for kname in _BINARY_TABLE:
        name, _ = same_shape_binary_name(kname)
        attach(name, _binary_compute(name, kname))
    for name, (kname, reverse) in SCALAR_OPS.items():
        attach(name, _scalar_compute(name, kname, reverse))
    attach("_polygamma", _polygamma_compute())
    attach("add_n", sum_compute(_gpu_pair_add()))


_attach_all()

from . import creation, where_clip      # noqa: E402,F401  (attach on import)
