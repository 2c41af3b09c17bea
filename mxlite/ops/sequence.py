"""Sequence operators: SequenceMask, SequenceLast, SequenceReverse (and ``_sequence_last_grad``,
the scatter behind SequenceLast's gradient).

Data is laid out ``(T, B, ...)`` with ``axis=0`` (time first, MXNet's default) or
``(B, T, ...)`` with ``axis=1``. ``sequence_length`` (shape ``(B,)``, any numeric dtype;
floats are truncated) is an input only with ``use_sequence_length=True``; without it every
sequence has length T. It never gets a gradient. The kernels move whole rows (any dtype).
"""
import numpy as np

from .._core import sorting as _k
from ..base import op_error
from .common import float_grad_type
from .registry import OpDef, Param, register
from .shape_utils import size_of

I64 = np.dtype(np.int64)

_USE = Param("use_sequence_length", "bool", False,
             "take sequence_length as an input; otherwise every sequence has length T")


def _axis_param(doc="the time axis: 0 for (T, B, ...), 1 for (B, T, ...)"):
    return Param("axis", "int", 0, doc)


def _inputs(*names):
    """list_inputs: sequence_length only with use_sequence_length."""
    def list_inputs(attrs):
        return names if attrs.use_sequence_length else tuple(n for n in names
                                                              if n != "sequence_length")
    return list_inputs


def _layout(op, data, lengths, attrs):
    """(T, B, R) of ``data``; checks axis and sequence_length's shape."""
    data = tuple(data)
    if attrs.axis not in (0, 1):
        raise op_error(op, f"axis must be 0 (time first) or 1 (batch first), got {attrs.axis}")
    if len(data) < 2:
        raise op_error(op, f"data must have at least 2 dimensions (time and batch), got shape "
                       f"{data}")
    T, B = (data[0], data[1]) if attrs.axis == 0 else (data[1], data[0])
    if lengths is not None and tuple(lengths) != (B,):
        raise op_error(op, f"sequence_length has shape {tuple(lengths)}; expected ({B},) (the "
                       f"batch size of data {data} with axis={attrs.axis})")
    return T, B, size_of(data[2:])


def _shapes(op, shapes, attrs):
    n = 2 if attrs.use_sequence_length else 1
    if len(shapes) != n:
        raise op_error(op, f"expected {n} input(s) with use_sequence_length="
                       f"{attrs.use_sequence_length}, got {len(shapes)}")
    return shapes[0], (shapes[1] if n == 2 else None)


def _lengths(rctx, op, ins, attrs, B, T, lo, hi, count_bad=None, to_int64=None):
    """int64 lengths (T for every sequence without use_sequence_length), checked to lie in
    [lo, hi] when given (hi None: no upper bound) by ``count_bad(lengths, lo, hi)`` ->
    (count, first position); ``to_int64(raw)`` converts other dtypes (NaN and values beyond
    int64 to its minimum, as NumPy on x86). Defaults: the CPU kernel's and NumPy's."""
    xp = rctx.xp
    if not attrs.use_sequence_length:
        lengths = xp.empty((B,), I64)
        lengths.fill(T)
        return lengths
    raw = ins[-1]
    lengths = xp.ascontiguousarray(raw if raw.dtype == I64 else
                                   to_int64(raw) if to_int64 else raw.astype(I64))
    bad, first = (count_bad or _k.seq_count_bad)(lengths, lo, 2 ** 62 if hi is None else hi)
    if bad:
        where = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise op_error(op, f"sequence_length[{first}] = {raw.reshape(-1)[first].item()} is "
                       f"outside {where} (T={T}); {bad} bad length(s)")
    return lengths


# ---- SequenceMask --------------------------------------------------------------------------
def _mask_shape(shapes, attrs):
    data, lengths = _shapes("SequenceMask", shapes, attrs)
    _layout("SequenceMask", data, lengths, attrs)
    return [tuple(data)]


def _mask_compute(rctx, ins, outs, attrs):
    data, out = ins[0], outs[0]
    T, B, R = _layout("SequenceMask", data.shape, None, attrs)
    rctx.xp.copyto(out, data)
    if not attrs.use_sequence_length:
        return
    lengths = _lengths(rctx, "SequenceMask", ins, attrs, B, T, -2 ** 62, None)
    value = rctx.xp.scalar(attrs.value, out.dtype)
    _k.seq_mask(out, lengths, value, T, B, R, attrs.axis)


def _mask_gradient(F, node, ograds):
    """Linear in data: the masked positions get zero, the others the head gradient."""
    a = node.attrs
    rest = node.inputs[1:]
    g = F.SequenceMask(ograds[0], *rest, use_sequence_length=a.use_sequence_length,
                       value=0.0, axis=a.axis)
    return [g] + [None] * len(rest)


register(OpDef(
    "SequenceMask", inputs=("data", "sequence_length"),
    params=(_USE, Param("value", "float", 0.0, "the value written at masked positions"),
            _axis_param()),
    list_inputs=_inputs("data", "sequence_length"), infer_shape=_mask_shape,
    infer_type=lambda dtypes, attrs: [dtypes[0]], compute={"cpu": _mask_compute},
    gradient=_mask_gradient,
    doc="""Set every step at or after a sequence's length to ``value``.

With ``use_sequence_length=True``, ``out[t, b, ...] = value`` for ``t >= sequence_length[b]``
(``axis=0``; ``out[b, t, ...]`` for ``axis=1``) and data elsewhere; without it the data is
returned unchanged. A length above T masks nothing, a negative one masks everything. The
value is cast to data's dtype. The gradient is the head gradient masked with 0.

>>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])          # (T=3, B=2)
>>> mx.nd.SequenceMask(x, mx.nd.array([1, 3]), use_sequence_length=True,
...                    value=-1).asnumpy().tolist()
[[1.0, 2.0], [-1.0, 4.0], [-1.0, 6.0]]
"""))


# ---- SequenceLast --------------------------------------------------------------------------
def _last_shape(shapes, attrs):
    data, lengths = _shapes("SequenceLast", shapes, attrs)
    _layout("SequenceLast", data, lengths, attrs)
    data = tuple(data)
    return [data[1:] if attrs.axis == 0 else data[:1] + data[2:]]


def _last_compute(rctx, ins, outs, attrs):
    data = ins[0]
    T, B, R = _layout("SequenceLast", data.shape, None, attrs)
    if B * R == 0:
        return
    if T == 0:
        raise op_error("SequenceLast", f"data has no time steps (shape {data.shape})")
    lengths = _lengths(rctx, "SequenceLast", ins, attrs, B, T, 1, T)
    _k.seq_last(data, lengths, outs[0], T, B, R, attrs.axis)


def _last_gradient(F, node, ograds):
    """The head gradient goes to the step each output was read from
    (``_sequence_last_grad``); sequence_length gets none."""
    a = node.attrs
    data, rest = node.inputs[0], node.inputs[1:]
    g = F._internal._sequence_last_grad(ograds[0], data, *rest,
                                        use_sequence_length=a.use_sequence_length, axis=a.axis)
    return [g] + [None] * len(rest)


register(OpDef(
    "SequenceLast", inputs=("data", "sequence_length"),
    params=(_USE, _axis_param()),
    list_inputs=_inputs("data", "sequence_length"), infer_shape=_last_shape,
    infer_type=lambda dtypes, attrs: [dtypes[0]], compute={"cpu": _last_compute},
    gradient=_last_gradient,
    doc="""The last step of every sequence: ``out[b, ...] = data[sequence_length[b] - 1, b, ...]``
(``axis=0``; ``data[b, sequence_length[b] - 1, ...]`` for ``axis=1``); without
``use_sequence_length`` the step ``T - 1``. The time axis is dropped. A length outside
``[1, T]`` is an MXNetError (MXNet read out of bounds).

>>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])          # (T=3, B=2)
>>> mx.nd.SequenceLast(x, mx.nd.array([1, 3]), use_sequence_length=True).asnumpy().tolist()
[1.0, 6.0]
>>> mx.nd.SequenceLast(x).asnumpy().tolist()
[5.0, 6.0]
"""))


def _last_grad_shape(shapes, attrs):
    n = 3 if attrs.use_sequence_length else 2
    if len(shapes) != n:
        raise op_error("_sequence_last_grad", f"expected {n} inputs, got {len(shapes)}")
    grad, data = tuple(shapes[0]), tuple(shapes[1])
    _layout("_sequence_last_grad", data, shapes[2] if n == 3 else None, attrs)
    expected = _last_shape([data], attrs.__class__(attrs, use_sequence_length=False))[0]
    if grad != expected:
        raise op_error("_sequence_last_grad", f"grad has shape {grad}; SequenceLast of data "
                       f"{data} with axis={attrs.axis} has shape {expected}")
    return [data]


_last_grad_type = float_grad_type("_sequence_last_grad")


def _last_grad_compute(rctx, ins, outs, attrs):
    grad, data = ins[0], ins[1]
    out = outs[0]
    T, B, R = _layout("_sequence_last_grad", data.shape, None, attrs)
    rctx.xp.fill_zero(out)
    if B * R == 0:
        return
    lengths = _lengths(rctx, "_sequence_last_grad", ins, attrs, B, T, 1, T)
    _k.seq_last_scatter(rctx.xp.ascontiguousarray(grad), lengths, out, T, B, R, attrs.axis)


def _last_grad_gradient(F, node, ograds):
    """Linear in grad: its adjoint is SequenceLast; data and sequence_length get none."""
    a = node.attrs
    rest = node.inputs[2:]
    g = F.SequenceLast(ograds[0], *rest, use_sequence_length=a.use_sequence_length,
                       axis=a.axis)
    return [g, None] + [None] * len(rest)


register(OpDef(
    "_sequence_last_grad", inputs=("grad", "data", "sequence_length"),
    params=(_USE, _axis_param()),
    list_inputs=_inputs("grad", "data", "sequence_length"), infer_shape=_last_grad_shape,
    infer_type=_last_grad_type, compute={"cpu": _last_grad_compute},
    gradient=_last_grad_gradient,
    doc="""The adjoint of ``SequenceLast``: zeros of data's shape (grad's dtype) with
``grad[b]`` written at the step SequenceLast read for sequence b. ``data`` is read for its
shape only.

>>> g = mx.nd._internal._sequence_last_grad(mx.nd.array([7, 8]), mx.nd.zeros((3, 2)),
...                                         mx.nd.array([1, 2]), use_sequence_length=True)
>>> g.asnumpy().tolist()
[[7.0, 0.0], [0.0, 8.0], [0.0, 0.0]]
"""))


# ---- SequenceReverse -----------------------------------------------------------------------
def _reverse_shape(shapes, attrs):
    data, lengths = _shapes("SequenceReverse", shapes, attrs)
    _layout("SequenceReverse", data, lengths, attrs)
    return [tuple(data)]


def _reverse_compute(rctx, ins, outs, attrs):
    data = ins[0]
    T, B, R = _layout("SequenceReverse", data.shape, None, attrs)
    if data.size == 0:
        return
    lengths = _lengths(rctx, "SequenceReverse", ins, attrs, B, T, 0, T)
    _k.seq_reverse(data, lengths, outs[0], T, B, R, attrs.axis)


def _reverse_gradient(F, node, ograds):
    """A permutation that is its own inverse: the gradient is the reversed head gradient."""
    a = node.attrs
    rest = node.inputs[1:]
    g = F.SequenceReverse(ograds[0], *rest, use_sequence_length=a.use_sequence_length,
                          axis=a.axis)
    return [g] + [None] * len(rest)


register(OpDef(
    "SequenceReverse", inputs=("data", "sequence_length"),
    params=(_USE, _axis_param("the time axis: 0 for (T, B, ...) (MXNet supported only 0); 1 "
                              "for (B, T, ...)")),
    list_inputs=_inputs("data", "sequence_length"), infer_shape=_reverse_shape,
    infer_type=lambda dtypes, attrs: [dtypes[0]], compute={"cpu": _reverse_compute},
    gradient=_reverse_gradient,
    doc="""Reverse the first ``sequence_length[b]`` steps of every sequence; later steps are
kept in place (MXNet). Without ``use_sequence_length`` the whole time axis is reversed. A
length outside ``[0, T]`` is an MXNetError.

>>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])          # (T=3, B=2)
>>> mx.nd.SequenceReverse(x, mx.nd.array([2, 3]), use_sequence_length=True).asnumpy().tolist()
[[3.0, 6.0], [1.0, 4.0], [5.0, 2.0]]
"""))
