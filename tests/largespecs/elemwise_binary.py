"""Large-tensor rows: element-wise binary, broadcast and scalar ops, where.

A row runs one op on a big int8 operand ``x`` (bool for the logical ops) of N = 2**32 + 16
elements (+ 256 for rows of 256) from ``t.big`` and a second operand laid out by a
:data:`LAYOUTS` entry: a small one broadcast along the inner axis ("row"; "wide": rows of 256
for the ops slow per short row), the outer axis ("lead"), the outer and inner axes of three
("mid") or every element ("one"), a column of N/16 elements ("col"), a second big array
("same"), x itself ("self"), or the ``scalar`` parameter.
Most rows write the result over ``x`` (``out=``), so a row holds one 4 GiB array. The windows
the checks read (head, around 2**31 and 2**32, tail) hold values drawn at random from the
row's set, a different draw in each, so an index wrapped to the head reads other values.

Two checks, both exact: the result at the head, around 2**31 and 2**32, at the markers and at
the tail equals the same op on those elements alone (a small array, the same kernel); and
the sum of the whole result (int8 sums wrap modulo 256, bool sums count) equals its closed
form, computed from the operands' known contents, so an element written twice, skipped or
written elsewhere shows. Comparisons keep the input's dtype; the result dtype is checked.

hypot gives float32 for integer input: 2**32 float32 elements are 16 GiB, the whole peak,
so its rows run on float32 in place past 2**31 (no checksum: a float sum rounds).
"""
from collections import Counter

import numpy as np

import mxlite as mx

from . import Row

F32_REASON = ("hypot computes in float32 (integer input gives float32): 2**32 float32 "
              "elements are 16 GiB, the whole peak; in place on float32 past 2**31 is 8 GiB")

# layout: (elements past 2**32 or 2**31, shape of x, shape of the other operand, flat index
# into the other operand of flat output position p) for n elements
LAYOUTS = {
    "row": (16, lambda n: (n // 16, 16), lambda n: (16,), lambda p, n: p % 16),
    "wide": (256, lambda n: (n // 256, 256), lambda n: (256,), lambda p, n: p % 256),
    "lead": (16, lambda n: (16, n // 16), lambda n: (16, 1), lambda p, n: p // (n // 16)),
    "col": (16, lambda n: (n // 16, 16), lambda n: (n // 16, 1), lambda p, n: p // 16),
    "mid": (16, lambda n: (n // 16, 2, 8), lambda n: (2, 1), lambda p, n: p // 8 % 2),
    "one": (16, lambda n: (n,), lambda n: (1,), lambda p, n: 0),
    "same": (16, lambda n: (n,), lambda n: (n,), lambda p, n: p),
    "self": (16, lambda n: (n,), lambda n: (n,), lambda p, n: p),
}


def _check_positions(t, n):
    """``t.positions(n)`` and the markers of ``t.big``."""
    return sorted(set(t.positions(n)) | set(t.marks(n)))


class _Content:
    """A flat array's contents as ``fill`` everywhere but ``writes`` ({position: value}),
    so a checksum over it has a closed form."""

    def __init__(self, size, fill, writes):
        self.size, self.fill, self.writes = size, fill, dict(writes)

    def at(self, k):
        return self.writes.get(k, self.fill)

    def counts(self):
        c = Counter(self.writes.values())
        c[self.fill] += self.size - len(self.writes)
        return c


def _windows(t, n):
    """The windows a check reads in an array of ``n`` elements (head, around 2**31 and 2**32,
    tail) with a margin: they hold every marker of ``t.big``."""
    spans = [(0, 16), (t.P31 - 8, t.P31 + 8), (t.P32 - 8, t.P32 + 8), (n - 16, n)]
    return [(lo, min(hi, n)) for lo, hi in spans if lo < n]


def _patterned(t, dtype, n, values, fill, seed):
    """``t.big(dtype, n)`` with the windows filled with ``values`` and ``fill`` drawn at
    random (fixed ``seed``), different in each window, so an index wrapped to the head reads
    other values; returns the array and its :class:`_Content`."""
    x = t.big(dtype, n, values=values, fill=fill)
    rng = np.random.RandomState(seed)
    choices = np.array(list(values) + [fill], dtype=dtype)
    writes = {}
    for lo, hi in _windows(t, n):
        part = choices[rng.randint(0, len(choices), hi - lo)]
        x[lo:hi] = mx.nd.array(part, dtype=dtype)
        writes.update(zip(range(lo, hi), part.tolist()))
    return x, _Content(n, fill, writes)


def _make_other(t, layout, n, dtype, rhs, rfill, pos):
    """The second operand (an NDArray) and its :class:`_Content`."""
    _, _, oshape, index = LAYOUTS[layout]
    shape = oshape(n)
    size = int(np.prod(shape))
    if layout == "same":
        return _patterned(t, dtype, n, rhs, rfill, seed=2)
    if size <= 16:
        content = _Content(size, rfill, {k: rhs[k % len(rhs)] for k in range(size)})
        vals = [content.at(k) for k in range(size)]
        return mx.nd.array(np.array(vals, dtype=dtype).reshape(shape), dtype=dtype), content
    used = sorted({index(p, n) for p in pos})
    content = _Content(size, rfill, {k: rhs[i % len(rhs)] for i, k in enumerate(used)})
    other = mx.nd.full(shape, rfill, dtype=dtype)
    flat = other.reshape((-1,))
    for k, v in content.writes.items():
        flat[k] = v
    return other, content


def _as_operand(values, dtype):
    return mx.nd.array(np.array(values, dtype=dtype), dtype=dtype)


def _checksum(t, out, apply, n, x, other, index):
    """Sum of the whole result against the closed form: every (x, other) pair of values with
    its count, the pairs evaluated by the op on a small array."""
    pairs = Counter()
    scale = n // other.size
    for v, c in other.counts().items():
        pairs[(x.fill, v)] += c * scale
    for m, xv in x.writes.items():
        r = other.at(index(m, n))
        pairs[(x.fill, r)] -= 1
        pairs[(xv, r)] += 1
    keys = [k for k, c in pairs.items() if c]
    res = apply([a for a, _ in keys], [b for _, b in keys]).asnumpy()
    total = sum(int(v) * pairs[k] for v, k in zip(res.tolist(), keys))
    got = mx.nd.sum(out)
    if out.dtype == np.bool_:
        want = np.array([total], np.int64)
    else:                                   # an int8 sum wraps modulo 256, as MXNet's
        want = np.array([(total + 128) % 256 - 128], np.int8)
    t.equal(got.reshape((1,)), want, "sum of the whole result")


def _binary(call, layout, dtype="int8", rhs=(2, -3, 5, 7), rfill=1, fill=0,
            values=(3, 5, 7, 9), swap=False, inplace=True, out_dtype=None, scalar=None,
            size="2**32", reason=None):
    """A row for ``call(x, other)`` (``call(other, x)`` with ``swap``) in ``layout``, or for
    a scalar op ``call(x, scalar=scalar)`` with ``scalar`` set; ``rhs`` are the other
    operand's values, ``rfill`` its background (col, same)."""
    pad, xshape, _, index = LAYOUTS["one" if scalar is not None else layout]
    out_dtype = np.dtype(out_dtype or dtype)

    def run(t):
        n = (t.P32 if size == "2**32" else t.P31) + pad
        pos = _check_positions(t, n)
        x, xc = _patterned(t, dtype, n, values, fill, seed=1)
        x = x.reshape(xshape(n))
        if scalar is not None:
            other, oc = scalar, _Content(1, scalar, {})

            def apply(a, b):
                return call(_as_operand(a, dtype), scalar=scalar)

            def op(a, b, **kw):
                return call(a, scalar=scalar, **kw)
        else:
            other, oc = (x, xc) if layout == "self" else \
                _make_other(t, layout, n, dtype, rhs, rfill, pos)

            def op(a, b, **kw):
                return call(b, a, **kw) if swap else call(a, b, **kw)

            def apply(a, b):
                return op(_as_operand(a, dtype), _as_operand(b, dtype))
        before = t.small(x, pos)
        near = other if scalar is not None else \
            _as_operand([oc.at(index(p, n)) for p in pos], dtype)
        y = op(x, other, out=x) if inplace else op(x, other)
        t.shape(y, xshape(n), "result")
        t.check(y.dtype == out_dtype, f"result dtype {y.dtype}, want {out_dtype}")
        t.equal(t.values(y, pos), op(before, near), "result at the far end")
        if out_dtype.kind != "f":
            _checksum(t, y, apply, n, xc, oc, index)
    return Row(run, dtype, size, reason)


def _broadcast(name, layout, **kw):
    return _binary(getattr(mx.nd, name), layout, **kw)


def _same(name, **kw):
    """A same-shape binary op of ``mx.nd._internal`` (``_mod``, ``_greater``, ...)."""
    return _binary(getattr(mx.nd._internal, name), "same", **kw)


def _scalar(name, scalar, **kw):
    return _binary(getattr(mx.nd._internal, name), None, scalar=scalar, **kw)


def _where_sum(t, out, content, n, cond_at):
    """Sum of a where result against its closed form: out[p] = c[p] if cond_at(p) else
    c[p + 2], zero wherever c is (its fill is 0)."""
    near = {p + d for p in content.writes for d in (-2, -1, 0)}
    total = sum(content.at(p) if cond_at(p) else content.at(p + 2)
                for p in near if 0 <= p < n)
    want = np.array([(total + 128) % 256 - 128], np.int8)
    t.equal(mx.nd.sum(out).reshape((1,)), want, "sum of the whole where result")


def _where(t):
    """where(cond, x, y) with condition, x and y three shifted views of one buffer c
    (cond = c[1:], x = c[:-2], y = c[2:]): 4 GiB of input for three operands past 2**32.
    Then the row form: a condition of N/16 values choosing whole rows of 16."""
    n = t.N
    c, content = _patterned(t, "int8", n + 2, (3, -5, 7, -9, 1, -1), 0, seed=3)
    cond, x, y = c[1:n + 1], c[0:n], c[2:n + 2]
    pos = _check_positions(t, n)
    want = mx.nd.where(t.small(cond, pos), t.small(x, pos), t.small(y, pos))
    out = mx.nd.where(cond, x, y)
    t.shape(out, (n,), "where")
    t.check(out.dtype == np.int8, f"where dtype {out.dtype}")
    t.equal(t.values(out, pos), want, "where at the far end")
    _where_sum(t, out, content, n, lambda p: content.at(p + 1) != 0)
    del out
    rows = n // 16
    rcond = mx.nd.zeros((rows,), dtype="bool")
    chosen = {r for i, r in enumerate(sorted({p // 16 for p in content.writes if p < n}))
              if i % 2 == 0}
    for r in chosen:
        rcond[r] = True
    out = mx.nd.where(rcond, x.reshape((rows, 16)), y.reshape((rows, 16)))
    t.shape(out, (rows, 16), "where by rows")
    near = mx.nd.array(t.values(rcond, [p // 16 for p in pos]), dtype="bool")
    want = mx.nd.where(near, t.small(x, pos), t.small(y, pos))
    t.equal(t.values(out, pos), want, "where by rows at the far end")
    _where_sum(t, out, content, n, lambda p: p // 16 in chosen)


_NONZERO = (2, -3, 5, -1, 7, 4, -8, 3)       # divisors: -1 has a case of its own
_COMPARE = (5, 0, 7, 3, -1, 9, 6, 4)          # hits the markers 3, 5, 7, 9 and misses
_BOOL = dict(dtype="bool", values=(True,), rhs=(True, False, False, True), rfill=False)

ROWS = {
    # rows + arange(16), as in tests/large/test_large_tensors.py
    "broadcast_add": _broadcast("broadcast_add", "row", rhs=tuple(range(16))),
    "broadcast_sub": _broadcast("broadcast_sub", "row", swap=True),
    "broadcast_mul": _broadcast("broadcast_mul", "lead", rhs=(3, -2, 0, 5)),
    "broadcast_div": _broadcast("broadcast_div", "wide", rhs=_NONZERO,
                                values=(-100, 99, -128, 127)),
    "broadcast_mod": _broadcast("broadcast_mod", "wide", rhs=_NONZERO, values=(-7, 9, -128, 13),
                                fill=5),
    "broadcast_power": _broadcast("broadcast_power", "wide", rhs=(0, 1, 2, 3, -1, 7),
                                  values=(3, -1, 2, -5), fill=1),
    "broadcast_maximum": _broadcast("broadcast_maximum", "col", rhs=_COMPARE, rfill=-4,
                                    values=(-3, 5, -7, 9)),
    "broadcast_minimum": _broadcast("broadcast_minimum", "lead", rhs=_COMPARE,
                                    values=(-3, 5, -7, 9)),
    "broadcast_hypot": _broadcast("broadcast_hypot", "row", dtype="float32",
                                  rhs=(4.0, -12.0, 0.5, 3e-3), values=(3, 5, -7.5, 1e30),
                                  size="2**31", reason=F32_REASON),
    "broadcast_equal": _broadcast("broadcast_equal", "mid", rhs=_COMPARE),
    "broadcast_not_equal": _broadcast("broadcast_not_equal", "col", rhs=_COMPARE, rfill=0),
    "broadcast_greater": _broadcast("broadcast_greater", "lead", rhs=_COMPARE),
    "broadcast_greater_equal": _broadcast("broadcast_greater_equal", "one", rhs=(5,)),
    "broadcast_lesser": _broadcast("broadcast_lesser", "row", rhs=_COMPARE, swap=True),
    "broadcast_lesser_equal": _broadcast("broadcast_lesser_equal", "col", rhs=_COMPARE),
    "broadcast_logical_and": _broadcast("broadcast_logical_and", "row", **_BOOL),
    "broadcast_logical_or": _broadcast("broadcast_logical_or", "col",
                                       **dict(_BOOL, rhs=(False, True, False))),
    "broadcast_logical_xor": _broadcast("broadcast_logical_xor", "lead", **_BOOL),
    # two big operands: a + a into a fresh result (the old hand-written case), the others
    # with a second big array and the result over the first
    "elemwise_add": _binary(mx.nd.elemwise_add, "self", values=(3, 9, 60, 100), inplace=False),
    # three inputs (x, x, x): the pairwise pass and an accumulating pass, 3x wrapping in int8
    "add_n": _binary(lambda a, b, **kw: mx.nd.add_n(a, b, a, **kw), "self",
                     values=(3, 9, 60, 100), inplace=False),
    "elemwise_sub": _binary(mx.nd.elemwise_sub, "same", rhs=(-2, 4, -6, 8), rfill=3),
    "elemwise_mul": _binary(mx.nd.elemwise_mul, "same", rhs=(-2, 4, -6, 8), rfill=3,
                            fill=-1),
    "elemwise_div": _binary(mx.nd.elemwise_div, "same", rhs=(-2, 4, -1, 8), rfill=3,
                            values=(-128, 99, 100, 127), fill=7),
    # MXNet's same-shape forms of the other kernels: a second big operand, as elemwise_sub
    "_mod": _same("_mod", rhs=_NONZERO, rfill=5, values=(-7, 9, -128, 13), fill=5),
    "_power": _same("_power", rhs=(0, 1, 2, 3, -1, 7), values=(3, -1, 2, -5), fill=1),
    "_maximum": _same("_maximum", rhs=_COMPARE, rfill=-4, values=(-3, 5, -7, 9)),
    "_minimum": _same("_minimum", rhs=_COMPARE, values=(-3, 5, -7, 9)),
    # x hypot x over x itself: a second float32 operand of 2**31 would pass the memory limit
    "_hypot": _binary(mx.nd._internal._hypot, "self", dtype="float32",
                      values=(3, 5, -7.5, 1e30), size="2**31", reason=F32_REASON),
    **{f"_{n}": _same(f"_{n}", rhs=_COMPARE) for n in (
        "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal")},
    **{f"_{n}": _same(f"_{n}", **_BOOL) for n in ("logical_and", "logical_or", "logical_xor")},
    "_plus_scalar": _scalar("_plus_scalar", 100),
    "_minus_scalar": _scalar("_minus_scalar", 3),
    "_rminus_scalar": _scalar("_rminus_scalar", -7),
    "_mul_scalar": _scalar("_mul_scalar", -37),
    "_div_scalar": _scalar("_div_scalar", -2, values=(-128, 5, 127, -9)),
    "_rdiv_scalar": _scalar("_rdiv_scalar", 100, values=(-3, 5, 0, 9), fill=7),
    "_mod_scalar": _scalar("_mod_scalar", -4, values=(-3, 5, -7, 9), fill=6),
    "_rmod_scalar": _scalar("_rmod_scalar", 100, values=(-3, 5, 0, 9), fill=7),
    "_power_scalar": _scalar("_power_scalar", 3, values=(-3, 5, 7, -9), fill=2),
    "_rpower_scalar": _scalar("_rpower_scalar", 3, values=(-1, 5, 2, 4), fill=1),
    "_maximum_scalar": _scalar("_maximum_scalar", 6, values=(-3, 5, 7, 9)),
    "_minimum_scalar": _scalar("_minimum_scalar", 6, values=(-3, 5, 7, 9), fill=8),
    "_hypot_scalar": _scalar("_hypot_scalar", 4.0, dtype="float32", values=(3, -5, 7.5, -1e30),
                             size="2**31", reason=F32_REASON),
    "_equal_scalar": _scalar("_equal_scalar", 5),
    "_not_equal_scalar": _scalar("_not_equal_scalar", 7),
    "_greater_scalar": _scalar("_greater_scalar", 5),
    "_greater_equal_scalar": _scalar("_greater_equal_scalar", 7),
    "_lesser_scalar": _scalar("_lesser_scalar", 5, fill=6),
    "_lesser_equal_scalar": _scalar("_lesser_equal_scalar", 7, fill=6),
    "_logical_and_scalar": _scalar("_logical_and_scalar", 1, **_BOOL),
    "_logical_or_scalar": _scalar("_logical_or_scalar", 0, **_BOOL),
    "_logical_xor_scalar": _scalar("_logical_xor_scalar", 1, **_BOOL),
    "where": Row(_where, "int8"),
}
