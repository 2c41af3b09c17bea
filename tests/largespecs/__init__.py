"""The large-tensor table: one row per registered operator, run past 2**32 elements.

Each family module defines ``ROWS = {op_name: Row(...)}``; ``all_rows()`` merges them.
tests/large/test_large_table.py fails for any registered op without a row, runs every row at
a small scale (2**12 standing for 2**32) on every device in the ordinary suite, so the rows
themselves are tested everywhere, and at full scale under ``-m large``.

A row is a function of a :class:`Trial`. The trial gives the scale (``t.P32`` is 2**32 at
full scale, ``t.N`` = P32 + 16 elements), the device (``t.ctx`` is current while the row
runs) and exact checks that read an array at its head, around 2**31 and 2**32 and at its
tail. A wrapped 32-bit index shows as a wrong value at one of those positions: a marker
written past 2**32 read back at its wrapped position, or the other way round.
"""
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

import mxlite as mx

# The power of two a row's big tensor passes: 2**32 unless a reason says why less fits.
SIZES = ("2**32", "2**31", "2**30", "2**29")


class RowFailure(AssertionError):
    """A check of a row failed (the message names what was checked)."""


@dataclass
class Row:
    """How to run one op past 2**32 (or 2**31) elements.

    ``run(t)`` does it on the trial ``t``; ``dtype`` is the dtype of the big tensor;
    ``size`` is the power of two its element count passes, "2**32" unless ``reason`` says
    why only "2**31" fits (a float32-only op whose 2**32 elements would pass the 16 GiB peak)
    or less (an optimizer update writing several float32 arrays of the weight's size).
    """

    run: Callable
    dtype: str
    size: str = "2**32"
    reason: Optional[str] = None


class Trial:
    """What a row sees: the scale, the device, and exact checks at the far end."""

    def __init__(self, p32, ctx):
        self.P32 = p32                 # stands for 2**32
        self.P31 = p32 // 2            # stands for 2**31
        self.N = p32 + 16              # an element count past 2**32
        self.N31 = self.P31 + 16       # an element count past 2**31
        self.ctx = ctx
        self.largest = 0               # the most elements of an array the row built or read

    def power(self, size):
        """The element count ``size`` ("2**32", "2**31", ...) stands for at this scale."""
        return self.P32 >> (32 - int(size.split("**")[1]))

    # ---- building --------------------------------------------------------------------------
    def marks(self, n):
        """Flat positions the marker values go to: one in the head, past 2**31, past 2**32
        (when ``n`` passes it) and the last element."""
        if n <= self.P31 + 5:          # a row below 2**31: past the largest power below n
            tops = [p + 5 for p in (self.P31 >> 2, self.P31 >> 1) if p + 5 < n]
            return sorted({min(3, n - 1), n - 1} | set(tops[-1:])) if n > 0 else []
        return sorted({3, self.P31 + 5, n - 1} | ({self.P32 + 3} if n > self.P32 + 3 else set()))

    def big(self, dtype, n=None, shape=None, values=(3, 5, 7, 9), fill=0):
        """A ``fill``-ed array of ``n`` elements (default N; ``shape`` reshapes it) on the
        trial's device, with ``values`` at ``marks(n)`` (cycled)."""
        n = self.N if n is None else n
        x = mx.nd.full((n,), fill, dtype=dtype) if fill else mx.nd.zeros((n,), dtype=dtype)
        for i, pos in enumerate(self.marks(n)):
            x[pos] = values[i % len(values)]
        self.seen(x)
        return x if shape is None else x.reshape(shape)

    def seen(self, *arrays):
        """Record the arrays a row works on (the largest must pass the row's size)."""
        for a in arrays:
            self.largest = max(self.largest, int(a.size))

    # ---- reading ---------------------------------------------------------------------------
    def positions(self, n):
        """Flat positions a check reads in an array of ``n`` elements: the first 8, 4 either
        side of 2**31 and of 2**32 (and of 2**29 and 2**30 in a smaller array), the last 8
        and the marker positions ``marks(n)``."""
        pts = set(range(8)) | set(range(n - 8, n)) | set(self.marks(n))
        below = (self.P31 >> 2, self.P31 >> 1) if n <= self.P31 + 16 else ()
        for p in below + (self.P31, self.P32):
            pts |= set(range(p - 4, p + 5))
        return sorted(i for i in pts if 0 <= i < n)

    def values(self, arr, positions=None):
        """NumPy copy of ``arr``'s elements at flat ``positions`` (default ``positions``),
        read through views of the flattened array: only those elements cross to the host."""
        self.seen(arr)
        flat = arr.reshape((-1,))
        positions = self.positions(arr.size) if positions is None else list(positions)
        runs, start = [], 0
        for k in range(1, len(positions) + 1):         # contiguous runs of positions
            if k == len(positions) or positions[k] != positions[k - 1] + 1:
                runs.append(flat[positions[start]:positions[k - 1] + 1].asnumpy())
                start = k
        return np.concatenate(runs) if runs else np.empty(0, arr.dtype)

    def small(self, arr, positions=None):
        """``arr``'s elements at ``positions`` as a small NDArray on the same device: the
        input of a small-array oracle."""
        return mx.nd.array(self.values(arr, positions), dtype=arr.dtype)

    # ---- checking --------------------------------------------------------------------------
    def check(self, cond, what):
        if not cond:
            raise RowFailure(what)

    def equal(self, got, want, what):
        """Exact equality (dtype, shape, values; NaN equals NaN) of two arrays, NDArray or
        NumPy."""
        got = got.asnumpy() if isinstance(got, mx.nd.NDArray) else np.asarray(got)
        want = want.asnumpy() if isinstance(want, mx.nd.NDArray) else np.asarray(want)
        self.check(got.dtype == want.dtype, f"{what}: dtype {got.dtype}, want {want.dtype}")
        self.check(got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}")
        same = (got == want) | ((got != got) & (want != want))
        bad = np.flatnonzero(~same)
        self.check(bad.size == 0, f"{what}: {bad.size} of {got.size} differ, first at "
                                  f"{bad[:5].tolist()}: got {got.ravel()[bad[:5]].tolist()}, "
                                  f"want {want.ravel()[bad[:5]].tolist()}")

    def shape(self, arr, want, what):
        self.check(tuple(arr.shape) == tuple(want), f"{what}: shape {arr.shape}, want {want}")

    def like_small(self, got, x, call, what, positions=None):
        """``got = call(x)`` of an element-wise op, checked at ``positions`` against
        ``call`` on those elements of ``x`` alone (the same kernel on a small array)."""
        self.shape(got, x.shape, what)
        want = call(self.small(x, positions))
        self.equal(self.values(got, positions), want, what)


def elementwise(call, dtype="int8", values=(3, 5, 7, 9), size="2**32", reason=None,
                inplace=False):
    """A row for an element-wise op ``call(x)`` (or ``call(x, out=x)`` with ``inplace``,
    which halves the memory of a float32 row): the result at the head, around 2**31 and
    2**32 and at the tail equals ``call`` on those elements alone."""
    def run(t):
        n = t.N if size == "2**32" else t.N31
        x = t.big(dtype, n, values=values)
        pos = t.positions(n)
        before = t.small(x, pos)
        y = call(x, out=x) if inplace else call(x)
        t.shape(y, (n,), "result")
        t.equal(t.values(y, pos), call(before), "result at the far end")
    return Row(run, dtype, size, reason)


def all_rows():
    """{op name: Row} merged over every module of this package."""
    rows = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        overlap = set(rows) & set(module.ROWS)
        assert not overlap, f"ops with two large-tensor rows: {sorted(overlap)}"
        rows.update(module.ROWS)
    return rows


def run_row(name, row, p32, ctx):
    """Run ``row`` at scale ``p32`` on ``ctx``; fail unless it worked on an array past its
    size (2**32 or 2**31 at full scale)."""
    t = Trial(p32, ctx)
    with ctx:
        row.run(t)
        mx.nd.waitall()
    need = t.power(row.size)
    t.check(t.largest > need, f"{name}: the largest array the row touched has {t.largest} "
                              f"elements, not past {row.size} ({need})")
