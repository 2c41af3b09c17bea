"""Large-tensor rows: reductions, finiteness scans, sorting, cumsum, hardmax, take_along_axis,
npx's constraint check.

The big array is a ``t.big`` array (a fill value with markers at ``t.marks(n)``) of
``n = P32 + W`` elements, also seen as ``(P32 / W + 1, W)`` rows of ``W = 256`` (wide enough
that per-row overheads do not dominate, narrow enough for uint8 sort positions). Every row
checks up to three ways of reducing it:

* the whole array, against a closed form of the fill and the markers (``_fold``): a count
  or a sum past 2**32, an argmax that must name a marker past 2**32;
* along the rows (axis 1), against the same op on the rows read back as a small array (the
  rows at the head, around 2**31 and 2**32, those holding a marker and the last one);
* down the columns (axis 0, the strided kernels), against the closed form per column.

``sum`` counts the true elements of a bool array (int64, past 2**32); ``sum_to`` sums int8
ones, wrapping modulo 256; an integer ``mean`` divides the exact int64 sum by the count.
Sort, argsort, topk, cumsum, hardmax and argmax_channel work along the rows, so their
oracle is the same op on the rows read back (argsort and topk positions fit uint8);
cumsum also runs over the flat array (closed form; int8 output, as int64 would be 32 GiB).
argmax_channel must refuse a channel axis whose indices its float32 output cannot hold.
``_has_nan``, ``_has_inf`` and ``all_finite`` scan a float16 array (the smallest dtype with
NaN and infinity) holding one bad value past 2**32, then at the tail. ``_take_along_axis``
gathers at int64 positions above 2**32.

Rows that stop at 2**31 are float32 rows: ``norm`` (integer input is reduced through a
float64 copy, float16 through a float32 copy: more than 16 GiB at 2**32),
``nansum``/``nanprod`` (NaN only exists in floats; float16 is reduced through a float32
copy, 24 GiB at 2**32) and ``_take_along_axis_grad`` (its output has data's shape in the
gradient's float dtype).
"""
import itertools
import math

import numpy as np

import mxlite as mx

from . import Row
from .sparse import also, sum_part

W = 256                          # row width of the 2-D view
MARKS = (3, -5, 7, 9)            # int8 markers at t.marks(n): the largest is the last
F32_NAN_REASON = ("NaN only exists in floats: float16 is reduced through a float32 copy "
                  "(8 + 16 GiB at 2**32) and float32 at 2**32 is 16 GiB, over the peak")


# ---- building --------------------------------------------------------------------------------
def _grid(t, dtype, fill=0, values=MARKS, size="2**32"):
    """(x, marked, R): the flat big array of ``P + W`` elements (P = P32 or P31), {flat
    position: value} of its markers, and its number of rows of W."""
    n = (t.P32 if size == "2**32" else t.P31) + W
    x = t.big(dtype, n, values=values, fill=fill)
    marked = dict(zip(t.marks(n), itertools.cycle(values)))
    return x, marked, n // W


def _probe_rows(t, n):
    """Rows (of W) that hold a position ``t.positions(n)`` reads or a marker."""
    return sorted({p // W for p in itertools.chain(t.positions(n), t.marks(n))})


def _cells(rows, width):
    """Flat positions of every element of ``rows`` in a (rows, width) array."""
    return [r * width + j for r in rows for j in range(width)]


def _list(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


# ---- closed forms ------------------------------------------------------------------------------
def _fold(kind, length, fill, vals):
    """Reduction ``kind`` of ``length`` elements: ``vals`` ({position: value}) and ``fill``
    everywhere else, in exact Python arithmetic."""
    rest = length - len(vals)
    v = list(vals.values())
    num = [a for a in v if a == a]                     # NaN dropped (nansum, nanprod)
    if kind in ("sum", "mean", "nansum"):
        s = fill * rest + sum(num if kind == "nansum" else v)
        if kind != "mean":
            return s
        return (abs(s) // length) * (1 if s >= 0 else -1)      # integer mean: truncated
    if kind in ("prod", "nanprod"):
        return fill ** rest * math.prod(num if kind == "nanprod" else v)
    if kind == "norm2":
        return math.sqrt(fill * fill * rest + sum(a * a for a in v))
    if kind in ("max", "min"):
        return (max if kind == "max" else min)(v + ([fill] if rest else []))
    if kind in ("argmax", "argmin"):
        best = _fold(kind[3:], length, fill, vals)
        first = [p for p in sorted(vals) if vals[p] == best]
        if fill == best and rest:                      # the first unmarked position
            first.append(next(i for i in range(length) if i not in vals))
        return min(first)
    raise ValueError(kind)


def _as(values, dtype):
    """Exact Python numbers as a NumPy array of ``dtype`` (integers wrap, as the kernels)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        bits = 8 * dtype.itemsize
        raw = np.array([int(v) % 2 ** bits for v in values], dtype=f"uint{bits}")
        return raw.view(dtype) if dtype.kind != "b" else raw.astype(bool)
    return np.array(values, dtype=np.float64).astype(dtype)


def _column_marks(marked, c):
    """{row: value} of the markers in column ``c`` of the (R, W) view."""
    return {p // W: v for p, v in marked.items() if p % W == c}


# ---- checks ------------------------------------------------------------------------------------
def _check_rows(t, x, call, what):
    """Every output of ``call`` on x seen as (R, W) rows (each output has R rows) equals, in
    the probed rows, ``call`` on those rows alone."""
    n, R = int(x.size), int(x.size) // W
    rows = _probe_rows(t, n)
    got = _list(call(x.reshape((R, W))))
    want = _list(call(t.small(x, _cells(rows, W)).reshape((len(rows), W))))
    for k, (g, w) in enumerate(zip(got, want)):
        t.check(g.shape[0] == R and g.shape[1:] == w.shape[1:],
                f"{what}: output {k} has shape {g.shape}, want ({R},) + {w.shape[1:]}")
        t.equal(t.values(g, _cells(rows, g.size // R)), w.asnumpy().reshape(-1),
                f"{what}: output {k} in rows {rows}")
    del got


def _check_whole(t, y, kind, n, fill, marked, what):
    t.shape(y, (1,), what)
    t.equal(y, _as([_fold(kind, n, fill, marked)], y.dtype), what)


def _check_columns(t, y, kind, R, fill, marked, what):
    t.check(y.size == W, f"{what}: {y.size} results, want {W}")
    want = [_fold(kind, R, fill, _column_marks(marked, c)) for c in range(W)]
    t.equal(y.asnumpy().reshape(-1), _as(want, y.dtype), what)


# ---- row builders ------------------------------------------------------------------------------
def _reduction(dtype="int8", fill=0, values=MARKS, size="2**32", reason=None, whole=None,
               rows=None, columns=None):
    """A row reducing the big array: ``whole`` and ``columns`` are (call, closed-form kind),
    checked against ``_fold``; ``rows`` is a call along axis 1, checked on the rows alone."""
    def run(t):
        x, marked, R = _grid(t, dtype, fill, values, size)
        n = int(x.size)
        if whole:
            call, kind = whole
            _check_whole(t, call(x), kind, n, fill, marked, f"{kind} of all {n} elements")
        if rows:
            _check_rows(t, x, rows, "along the rows")
        if columns:
            call, kind = columns
            _check_columns(t, call(x.reshape((R, W))), kind, R, fill, marked,
                           f"{kind} down the columns")
    return Row(run, dtype, size, reason)


def _axis_reduction(name, kind, **kw):
    """A row for reduction ``mx.nd.<name>`` (axis=None, 1 and 0)."""
    op = getattr(mx.nd, name)
    return _reduction(whole=(op, kind), rows=lambda a: op(a, axis=1),
                      columns=(lambda a: op(a, axis=0), kind), **kw)


def _along_rows(call, values=MARKS):
    """A row for an op working along the last axis of the (R, W) view (same-shape or
    (R, k) outputs), checked on the probed rows alone."""
    def run(t):
        x, _, _ = _grid(t, "int8", values=values)
        _check_rows(t, x, call, "along the rows")
    return Row(run, "int8")


def _scan(call, bad, found):
    """A row for a finiteness scan ``call(x)`` (a (1,) float32 flag): a float16 array with
    finite markers gives ``1 - found``; one ``bad`` value past 2**32, then only at the tail,
    gives ``found``."""
    def run(t):
        n = t.N
        x = t.big("float16", n, values=(1, 2, 3, 4))
        t.equal(call(x), np.array([1.0 - found], np.float32), "all finite")
        for p, keep in ((t.P32 + 3, 3), (n - 1, 4)):
            x[p] = bad
            t.equal(call(x), np.array([found], np.float32), f"{bad} at {p} only")
            x[p] = keep
    return Row(run, "float16")


# ---- rows with their own shape -----------------------------------------------------------------
def _cumsum(t):
    """Over the flat array (closed form at the probed positions and markers), then along
    the rows; int8 output (dtype='int8': the default int64 output would be 32 GiB)."""
    x, marked, _ = _grid(t, "int8")
    n = int(x.size)
    y = mx.nd.cumsum(x, dtype="int8")
    t.shape(y, (n,), "flat cumsum")
    pos = sorted(set(t.positions(n)) | set(marked))
    want = [_fold("sum", p + 1, 0, {q: v for q, v in marked.items() if q <= p}) for p in pos]
    t.equal(t.values(y, pos), _as(want, "int8"), "flat cumsum")
    del y
    _check_rows(t, x, lambda a: mx.nd.cumsum(a, axis=1, dtype="int8"), "cumsum along rows")


def _hardmax(t):
    """Along the rows (the same op on the probed rows), and down the columns: the one-hot of
    each column's first maximum (closed form) in the probed rows."""
    x, marked, R = _grid(t, "int8")
    _check_rows(t, x, mx.nd.contrib.hardmax, "hardmax along the rows")
    y = mx.nd.contrib.hardmax(x.reshape((R, W)), axis=0)
    t.shape(y, (R, W), "hardmax down the columns")
    rows = _probe_rows(t, int(x.size))
    top = [_fold("argmax", R, 0, _column_marks(marked, c)) for c in range(W)]
    want = [int(r == top[c]) for r in rows for c in range(W)]
    t.equal(t.values(y, _cells(rows, W)), _as(want, "int8"), "hardmax down the columns")


def _argmax_channel(t):
    """Along the rows (channels), then a channel axis too long for the float32 output's
    exact indices (2**24 + 2 channels), which must be an error, not a rounded index."""
    x, _, _ = _grid(t, "int8")
    _check_rows(t, x, mx.nd.argmax_channel, "argmax_channel along the rows")
    try:
        mx.nd.argmax_channel(mx.nd.zeros((1, 2 ** 24 + 2), dtype="int8"))
    except mx.base.MXNetError:
        return
    t.check(False, "argmax_channel over 2**24 + 2 channels gave rounded float32 indices")


def _constraint_check(t):
    """A bool array past 2**32 elements, all true: a 0-d True; one false element past
    2**32, then only at the tail: the error."""
    n = t.N
    x = t.big("bool", n, values=(1,), fill=1)
    t.equal(mx.nd._internal._npx_constraint_check(x, msg="all"), np.array(True), "all true")
    for p in (t.P32 + 3, n - 1):
        x[p] = 0
        try:
            mx.nd._internal._npx_constraint_check(x, msg="all")
            t.check(False, f"a false element at {p} passed the check")
        except mx.base.MXNetError as e:
            t.check("all" in str(e), f"the error does not carry the message: {e}")
        x[p] = 1


def _i64(values):
    """int64 positions (exact above 2**32) on the trial's device."""
    return mx.nd.array(np.array(values, dtype=np.int64), dtype="int64")


def _take_along_axis(t):
    """Gathers at flat positions above 2**32 (axis=None), then along the rows at the
    markers' columns (each row's own index)."""
    x, marked, R = _grid(t, "int8")
    n = int(x.size)
    far = sorted(set(marked) | {0, t.P31 - 1, t.P32, n - 2}, reverse=True)
    y = mx.nd._internal._take_along_axis(x, _i64(far), axis=None)
    t.equal(y, _as([marked.get(p, 0) for p in far], "int8"), "gather at flat positions")
    idx = mx.nd.zeros((R, 2), dtype="int64")
    idx[:, 1] = W - 1
    for p in marked:
        idx[p // W, 0] = p % W
    y = mx.nd._internal._take_along_axis(x.reshape((R, W)), idx, axis=1)
    t.shape(y, (R, 2), "gather along rows")
    rows = _probe_rows(t, n)
    cols = t.values(idx, _cells(rows, 2))
    want = [marked.get(r * W + int(c), 0) for r, c in zip(np.repeat(rows, 2), cols)]
    t.equal(t.values(y, _cells(rows, 2)), _as(want, "int8"), "gather along rows")


def _take_along_axis_grad(t):
    """The scatter-add adjoint into a float32 array past 2**31 at flat positions above 2**31
    (one twice: duplicates accumulate); ``data`` gives the shape only (never touched)."""
    n = t.P31 + W
    data = mx.nd.zeros((n,), dtype="int8")
    far = [n - 1, t.P31 + 5, 3, t.P31 + 5, t.P31 - 1]
    g = mx.nd.array([1, 2, 3, 4, 5], dtype="float32")
    y = mx.nd._internal._take_along_axis_grad(g, _i64(far), data, axis=None)
    t.shape(y, (n,), "scatter-add")
    pos = sorted(set(t.positions(n)) | set(far) | {p - t.P31 for p in far if p >= t.P31})
    want = [sum(k + 1 for k, q in enumerate(far) if q == p) for p in pos]
    t.equal(t.values(y, pos), _as(want, "float32"), "scatter-add at the far end")


F32_GRAD_REASON = ("the output has data's shape in the gradient's float dtype: float32 at "
                   "2**32 is 16 GiB, float16 is accumulated in a float32 scratch (8 + 16 GiB)")
NORM_REASON = ("integer input is reduced through a float64 copy and float16 through a "
               "float32 copy (over 16 GiB at 2**32); float32 at 2**32 is 16 GiB")

ROWS = {
    # a count of true elements past 2**32 (int64): all, per row, per column
    "sum": also(_axis_reduction("sum", "sum", dtype="bool", fill=1, values=(0,)), sum_part),
    "mean": _axis_reduction("mean", "mean", fill=1, values=(100, -128, 127, 50)),
    "prod": _axis_reduction("prod", "prod", fill=1, values=(3, 5, -7, 9)),
    "max": _axis_reduction("max", "max"),
    "min": _axis_reduction("min", "min", values=(-3, -5, -7, -128)),
    "argmax": _axis_reduction("argmax", "argmax"),
    "argmin": _axis_reduction("argmin", "argmin", values=(-3, -5, -7, -128)),
    "nansum": _axis_reduction("nansum", "nansum", dtype="float32", values=(3, np.nan, 5),
                              size="2**31", reason=F32_NAN_REASON),
    "nanprod": _axis_reduction("nanprod", "nanprod", dtype="float32", fill=1,
                               values=(2, np.nan, 3), size="2**31", reason=F32_NAN_REASON),
    "norm": _reduction(dtype="float32", values=(3, 4, 12), size="2**31", reason=NORM_REASON,
                       whole=(mx.nd.norm, "norm2"),
                       rows=lambda a: mx.nd.norm(a, ord=1, axis=1),
                       columns=(lambda a: mx.nd.norm(a, axis=0), "norm2")),
    # int8 sums of ones wrap modulo 256: a count off by 2**32 or a lost marker shows
    "sum_to": _reduction(fill=1, whole=(lambda a: mx.nd.sum_to(a, shape=(1,)), "sum"),
                         rows=lambda a: mx.nd.sum_to(a, shape=(a.shape[0], 1)),
                         columns=(lambda a: mx.nd.sum_to(a, shape=(1, W)), "sum")),
    "argmax_channel": Row(_argmax_channel, "int8"),
    "sort": _along_rows(mx.nd.sort),
    "argsort": _along_rows(lambda a: mx.nd.argsort(a, is_ascend=False, dtype="uint8")),
    "topk": _along_rows(lambda a: mx.nd.topk(a, k=3, ret_typ="both", dtype="uint8")),
    "cumsum": Row(_cumsum, "int8"),
    "_contrib_hardmax": Row(_hardmax, "int8"),
    "_has_nan": _scan(mx.nd._internal._has_nan, np.nan, 1.0),
    "_has_inf": _scan(mx.nd._internal._has_inf, -np.inf, 1.0),
    "_contrib_all_finite": _scan(
        lambda x: mx.nd.contrib.all_finite(mx.nd.ones((3,), dtype="float16"), x), np.inf, 0.0),
    "_npx_constraint_check": Row(_constraint_check, "bool"),
    "_take_along_axis": Row(_take_along_axis, "int8"),
    "_take_along_axis_grad": Row(_take_along_axis_grad, "float32", "2**31", F32_GRAD_REASON),
}
