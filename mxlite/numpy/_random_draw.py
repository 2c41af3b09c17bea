"""The machinery behind ``mx.np.random`` and ``mx.npx.random``: one call's arguments resolved
once (``prepare``), standard draws from the registered samplers (``Draw.noise``,
``Draw.gamma``) and the result finished in the requested dtype and ``out`` (``Draw.finish``).

A distribution is a transform, written with ``mx.np`` functions, of standard draws of the
output's shape: uniform [0, 1), N(0, 1), Exp(1) (``_random_uniform``, ``_random_normal``,
``_random_exponential``) or Gamma(alpha, 1) (``_random_gamma``, or ``_sample_gamma`` when
alpha is an array). The draws come from the device's stream, so ``mx.random.seed`` replays
them as it replays ``mx.nd.random``; the transforms are recorded operators, so the samples
differentiate with respect to array parameters (the reparameterisation gradient).

Parameters are numbers or arrays (``mx.np``/``mx.nd`` arrays, or anything ``mx.np.array``
takes) and broadcast against each other. ``size`` follows NumPy: when given it is the
output shape and the parameters must broadcast to it; when None the output has the
parameters' broadcast shape (``()`` for numbers). The ``_n`` functions of ``mx.npx.random``
put ``batch_shape`` in front of that shape instead.

Parameter values are checked before anything is drawn: numbers directly, arrays through a
host copy (a check, not part of the result). Symbols (a hybridized block) are not checked;
their shape is unknown until the graph is bound, so draws for them come from the
``_random_*_like`` samplers of a zero template of the parameters' broadcast shape.
"""
import math
import numbers
import operator

import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import as_dtype
from .multiarray import array, to_ctx

__all__ = ["prepare", "as_size", "Draw", "FLOATS", "output_shape", "broadcast_shapes",
           "is_number", "is_symbol"]

_F32, _F64 = _onp.dtype(_onp.float32), _onp.dtype(_onp.float64)
FLOATS = (_onp.dtype(_onp.float16), _F32, _F64)

# rule -> (test of a float64 host array, test of a Python float, what a valid value is)
_RULES = {
    "real": (lambda v: _onp.isfinite(v), math.isfinite, "finite"),
    "nonneg": (lambda v: _onp.isfinite(v) & (v >= 0), lambda v: math.isfinite(v) and v >= 0,
               "non-negative and finite"),
    "pos": (lambda v: _onp.isfinite(v) & (v > 0), lambda v: math.isfinite(v) and v > 0,
            "positive and finite"),
    "prob": (lambda v: (v >= 0) & (v <= 1), lambda v: 0 <= v <= 1, "in [0, 1]"),
}
_PLAIN = (int, float)


def as_size(fn, size, what="size"):
    """``size`` (None, an int or a sequence of ints) as None or a tuple of non-negative
    ints; MXNetError naming ``fn`` otherwise."""
    if size is None:
        return None
    if type(size) is tuple and all(type(d) is int and d >= 0 for d in size):
        return size
    if isinstance(size, (numbers.Integral, _onp.integer)) and not isinstance(size, bool):
        size = (size,)
    try:
        dims = tuple(operator.index(d) for d in size)
    except TypeError:
        raise op_error(fn, f"{what} must be None, an int or a tuple of ints, "
                       f"got {size!r}") from None
    if any(d < 0 for d in dims):
        raise op_error(fn, f"{what} must not have negative dimensions, got {dims}")
    return dims


def _is_number(v):
    if type(v) in _PLAIN:
        return True
    return isinstance(v, (numbers.Real, _onp.generic)) and not isinstance(v, NDArray)


def is_symbol(v):
    """True for a Symbol (a graph being built)."""
    from ..symbol.symbol import Symbol
    return isinstance(v, Symbol)


def _check_number(fn, name, value, rule):
    """MXNetError when the Python float ``value`` breaks ``rule``."""
    _, test, want = _RULES[rule]
    if not test(value):
        raise op_error(fn, f"{name} must be {want}, got {value!r}")


def _check(fn, name, value, rule):
    """MXNetError when the host float64 array ``value`` breaks ``rule``."""
    test, _, want = _RULES[rule]
    ok = test(value)
    if ok.all():
        return
    bad = _onp.flatnonzero(~ok)
    raise op_error(fn, f"{name} must be {want}; element {int(bad[0])} of {name} (shape "
                   f"{value.shape}) is {float(value.flat[bad[0]])!r} ({bad.size} bad "
                   "element(s))")


def broadcast_shapes(fn, names, shapes):
    """The broadcast of ``shapes`` (of the parameters ``names``), or MXNetError."""
    try:
        return tuple(_onp.broadcast_shapes(*shapes))
    except ValueError:
        raise op_error(fn, "the parameters cannot be broadcast together: " + ", ".join(
            f"{n} {s}" for n, s in zip(names, shapes))) from None


class Draw:
    """One sampling call, resolved: ``values`` (the parameters: Python floats, or arrays
    / Symbols in the working dtype ``work``), the output ``dtype``, device ``ctx``, output
    ``shape`` (None while unknown: Symbols), ``numbers`` (every parameter a number),
    ``symbolic`` and ``out``."""

    def __init__(self, fn, values, dtype, work, ctx, shape, numbers_only, symbolic, out,
                 template):
        self.fn, self.values, self.dtype, self.work = fn, values, dtype, work
        self.ctx, self.shape, self.numbers, self.symbolic = ctx, shape, numbers_only, symbolic
        self.out, self._template = out, template

    def _call(self, op, inputs, **attrs):
        if self.symbolic and not inputs:
            with _front.symbolic_creation():
                return _front.call(op, inputs, **attrs)
        return _front.call(op, inputs, **attrs)

    def noise(self, kind, dtype=None, **attrs):
        """Standard draws of the output's shape in ``work``: ``kind`` 'uniform' ([0, 1)),
        'normal' (N(0, 1)) or 'exponential' (Exp(1)), unless ``attrs`` set the
        registered sampler's own parameters (``loc``, ``scale``, ``low``, ...). ``dtype``:
        draw in another dtype (the output's, for the samplers' own rounding guarantees:
        float16 uniform samples stay below high)."""
        if self.shape is not None:
            return self._call(f"_random_{kind}", [], shape=self.shape,
                              dtype=self.work if dtype is None else dtype, ctx=self.ctx,
                              **attrs)
        return self._call(f"_random_{kind}_like", [self._template], **attrs)

    def broadcast(self, value):
        """An array parameter broadcast to the output's shape (a recorded operator)."""
        if self.shape is not None:
            if not self.symbolic and tuple(value.shape) == self.shape:
                return value
            return self._call("broadcast_to", [value], shape=self.shape)
        return self._call("broadcast_like", [value, self._template])

    def gamma(self, alpha):
        """Gamma(alpha, 1) draws of the output's shape in ``work`` (not differentiable in
        alpha: the samplers have no gradient)."""
        if _is_number(alpha):
            return self.noise("gamma", alpha=alpha, beta=1.0)
        alpha = self.broadcast(alpha)
        return self._call("_sample_gamma", [alpha, self._call("ones_like", [alpha])],
                          shape=(), dtype=self.work)

    def finish(self, y):
        """``y`` in the output dtype, written into ``out`` when given."""
        if self.symbolic or y.dtype != self.dtype:
            y = _front.call("cast", [y], dtype=self.dtype)
        if self.out is not None:
            return _front.call("_copy", [y], out=self.out)
        return y


def _resolve_out(fn, out, size, dtype):
    if out is None:
        return size, dtype
    if not isinstance(out, NDArray):
        raise op_error(fn, f"out must be an mx.np.ndarray, got {type(out).__name__}")
    return (tuple(out.shape) if size is None else size), (out.dtype if dtype is None else dtype)


def _float_dtype(fn, dtype):
    dt = as_dtype(dtype, fn)
    if dt not in FLOATS:
        raise op_error(fn, f"dtype must be float16, float32 or float64, got {dt}")
    return dt


def _host(value):
    return _onp.asarray(value.asnumpy(), _onp.float64)


def prepare(fn, params, size=None, dtype=None, ctx=None, out=None, batch=None, work=None,
            float_out=True):
    """Resolve a sampling call: ``params`` is ``((name, value, rule), ...)`` with ``rule``
    one of 'real', 'nonneg', 'pos', 'prob' (every value finite, and that sign); ``size``
    NumPy's output shape, or ``batch`` the leading shape of ``mx.npx.random``'s ``_n``
    functions; ``dtype`` the output dtype (None: ``out``'s, else the default float); ``work``
    the dtype of the draws (default float64 for float64 output, else float32)."""
    fn = f"np.random.{fn}" if "." not in fn else fn
    size = as_size(fn, size)
    batch = as_size(fn, batch, "batch_shape")
    if batch is None:
        size, dtype = _resolve_out(fn, out, size, dtype)
    dt = _float_dtype(fn, dtype) if float_out else as_dtype(dtype, fn)
    work = _onp.dtype(work) if work is not None else (_F64 if dt == _F64 else _F32)
    names = [n for n, _, _ in params]
    values = [v for _, v, _ in params]
    symbolic = _front.is_symbolic([v for v in values if not _is_number(v)])
    if symbolic and out is not None:
        raise op_error(fn, "out= cannot be used while building a graph (Symbol parameters)")
    arrays = [v for v in values if isinstance(v, NDArray)]
    if symbolic:
        ctx = None if ctx is None else to_ctx(ctx)
    else:
        ctx = to_ctx(ctx if ctx is not None else (arrays[0]._ctx if arrays else None))
    resolved = []
    for name, value, rule in params:
        if _is_number(value):
            value = float(value)
            _check_number(fn, name, value, rule)
            resolved.append(value)
            continue
        if not isinstance(value, NDArray) and not is_symbol(value):
            value = array(value, dtype=_F64, ctx=None if symbolic else ctx)
        if not symbolic:
            if value._ctx != ctx:
                value = value.as_in_context(ctx)
            _check(fn, name, _host(value), rule)
            if value.dtype != work:
                value = _front.call("cast", [value], dtype=work)
        else:
            value = _front.call("cast", [value], dtype=work)
        resolved.append(value)
    shape, template = output_shape(fn, names, resolved, size, batch, symbolic)
    if out is not None and shape is not None and tuple(out.shape) != shape:
        raise op_error(fn, f"out has shape {tuple(out.shape)}, the samples have shape {shape}")
    if out is not None and out.dtype != dt:
        raise op_error(fn, f"out has dtype {out.dtype}, the samples have dtype {dt}")
    return Draw(fn, resolved, dt, work, ctx, shape, all(_is_number(v) for v in resolved),
                symbolic, out, template)


def output_shape(fn, names, values, size, batch, symbolic):
    """(output shape or None, zero template of the output's shape for Symbols or None)."""
    arrays = [(n, v) for n, v in zip(names, values) if not _is_number(v)]
    if not symbolic:
        if not arrays:
            return (batch if batch is not None else size or ()), None
        base = broadcast_shapes(fn, [n for n, _ in arrays], [tuple(v.shape) for _, v in arrays])
        if batch is not None:
            return batch + base, None
        if size is None:
            return base, None
        if broadcast_shapes(fn, [n for n, _ in arrays] + ["size"],
                      [tuple(v.shape) for _, v in arrays] + [size]) != size:
            raise op_error(fn, f"the parameters' broadcast shape {base} does not fit the "
                           f"output shape size={size}")
        return size, None
    if batch is None and size is not None:
        return size, None
    if not arrays:
        return (batch or ()), None
    template = None
    for _, v in arrays:
        zeros = _front.call("zeros_like", [v])
        template = zeros if template is None else _front.call("broadcast_add", [template, zeros])
    if batch:
        for _ in batch:
            template = _front.call("expand_dims", [template], axis=0)
        template = _front.call("broadcast_axis", [template], axis=tuple(range(len(batch))),
                               size=batch)
    return None, template


def is_number(value):
    """True for a Python or NumPy number (not an array)."""
    return _is_number(value)
