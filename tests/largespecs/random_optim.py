"""Large-tensor rows: random samplers, shuffle, multinomial, fused optimizer updates.

Random rows are exact. mxlite's generator is counter-based (mxlite/_core/philox.h): element
``i`` of a call is a pure function of the call's stream ``(seed, offset)`` and ``i``, so a row
reads the stream the call will use (``get_state``) and computes, in Python, the element at
each checked position from its Philox words (philox.h written again in Python): uniform,
randint, exponential and normal from the direct words, gamma from the element stream by the
same Marsaglia-Tsang steps in float32 scalars (its log, exp, sin and cos are arithmetic, as in
philox.h, so the bits agree on the CPU and the GPU), multinomial from the 64-bit draws (uint8 samples, past 2**31 only
for time), shuffle's permutation of 16 rows of 2**28 uint8 by the same Fisher-Yates draws.
A wrapped 32-bit element index draws another element's words, so the value at 2**31 or 2**32
differs. CPU values are bit-identical (the oracle calls the same libm); a
GPU's libm may differ by an ulp in the transcendental samplers (see ``mx.random.seed``), so
there normal, exponential and gamma are compared within a few ulp.

Float samplers write float32 (float16 draws through a float32 buffer) and stop past 2**31:
2**32 float32 elements are 16 GiB. The ``*_like`` rows pass ``data`` as an untouched
``empty`` array (its values are not read; its pages stay unmapped). The count samplers
(Poisson, negative binomials) run with parameters whose samples are all 0 (rate 0, p = 1),
written over marker values: the element stream's per-element cost (a few Philox blocks and
transcendentals) would take over a minute past 2**31 on two cores. Gamma has no such
parameter and draws for real.

Optimizer updates are float32 only (float16 weights are refused), updating the weight in
place (``out=weight``); the gradient is an ``empty`` array with markers (read only: its
untouched pages are the zero page). The result and every state at the checked positions
equal the same update on a small array of those elements. Every state is written in full, so
an update writes 1 + (number of states) float32 arrays of the weight's size: past 2**31 that
is 8 GiB each, and the CPU rows stop at the largest power of two that keeps them within the
16 GiB peak (2**31 without a state, 2**30 with one or two, 2**29 with three); on a GPU every
update runs past 2**31.

Slow on two CPU cores: gamma (~15 s past 2**31: one Philox block and a vectorized float
try per element), normal (~20 s: logf and sincosf per pair), multinomial (~10 s).
"""
import ctypes
import ctypes.util
import math

import numpy as np

import mxlite as mx
from mxlite.device import rng as _rng

from . import Row
from .sparse import also, sgd_part

F32_REASON = ("float32 output (the sampler's float16 draws through a float32 buffer): 2**32 "
              "float32 elements are 16 GiB, over the 16 GiB peak")
OPT_REASON = ("optimizer updates run on float32 or float64 weights (float16 weights through "
              "a float32 master copy): 2**32 float32 elements are 16 GiB")
_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
for _fn in ("logf", "cosf", "sinf"):
    getattr(_LIBM, _fn).restype = ctypes.c_float
    getattr(_LIBM, _fn).argtypes = (ctypes.c_float,)
MULTINOMIAL_REASON = ("time: a sample costs its share of a Philox block and a search of its "
                      "row, ~10 s per 2**31 uint8 samples on two cores")
HOST_PEAK = 16 * 2 ** 30       # tests/large/test_large_table.py's PEAK_LIMIT_GB
GPU_ULPS = 4            # a GPU's libm against the host's, in the transcendental samplers


# ---- the Philox oracle -----------------------------------------------------------------------
def _stream_of_next_call(t):
    """``(key, offset)`` of the next random call on the trial's device."""
    return _rng.get_state(_rng.device_key(t.ctx))


def _block(key, offset, index):
    """Philox4x32-10 block ``index`` of the stream (key, offset): 4 words (philox.h,
    written again here so the oracle shares no code with the kernels)."""
    M32 = 0xFFFFFFFF
    c = [index & M32, (index >> 32) & M32, offset & M32, (offset >> 32) & M32]
    k0, k1 = key & M32, (key >> 32) & M32
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1, p0 & M32]
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c


def _word(key, offset, t):
    return _block(key, offset, t >> 2)[t & 3]


def _draw64(key, offset, j):
    b = _block(key, offset, j >> 1)
    return (b[0] | b[1] << 32) if j % 2 == 0 else (b[2] | b[3] << 32)


def _open32(w):
    return (w + 0.5) * (1.0 / 4294967296.0)


def _unit64(x):
    return (x >> 11) * (1.0 / 9007199254740992.0)


class _Stream:
    """Element ``i``'s stream of words (philox.h's mx_stream)."""

    def __init__(self, key, offset, i):
        self.key, self.offset, self.index = key, offset, (1 << 63) | (i & ((1 << 48) - 1))
        self.attempt, self.buf = 0, []

    def next32(self):
        if not self.buf:
            self.buf = list(_block(self.key, self.offset,
                                   self.index | (self.attempt & 0x7FFF) << 48))
            self.attempt += 1
        return self.buf.pop(0)

    def next64(self):
        lo = self.next32()
        return lo | self.next32() << 32

    def uniform(self):
        return _unit64(self.next64())

    def open(self):
        return ((self.next64() >> 11) + 0.5) * (1.0 / 9007199254740992.0)

    def normal(self):
        u1, u2 = self.open(), self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)

    def gamma(self, alpha):
        """Gamma(alpha) in float (philox.h's mx_sample_gamma_f), in float32 scalars: the
        same IEEE operations in the same order, so the same bits."""
        f = np.float32
        boosted = alpha < 1.0
        inv_alpha = f(1.0 / alpha)
        d64 = (alpha + 1.0 if boosted else alpha) - 1.0 / 3.0
        d, c = f(d64), f(1.0 / math.sqrt(9.0 * d64))
        boost = _exp_neg_f(_log_f(_open_f(self.next32())) * inv_alpha) if boosted else None
        while True:
            wr, wa, wu = self.next32(), self.next32(), self.next32()
            x = _normal_f(wr, wa)
            y = c * x
            v, u, x2 = f(1) + y, _open_f(wu), x * x
            y4 = (y * y) * (y * y)
            series = f(0.05882353)
            for coef in (-0.0625, 0.06666667, -0.071428575, 0.07692308, -0.083333336,
                         0.09090909, -0.1, 0.11111111, -0.125, 0.14285715, -0.16666667, 0.2,
                         -0.25):
                series = f(coef) + y * series
            direct = ((_log_f(v) - y) + f(0.5) * (y * y)) - (y * y) * y * f(0.33333334)
            rem = y4 * series if (y < f(0.25)) and (y > f(-0.25)) else direct
            squeeze = u < f(1) - f(0.0331) * (x2 * x2)
            full = _log_f(u) < f(3) * d * rem
            if v > 0 and (squeeze or full):
                out = d * (v * v * v)
                return out * boost if boosted else out


def _bits_f(x):
    return int(np.float32(x).view(np.uint32))


def _from_bits_f(u):
    return np.uint32(u & 0xFFFFFFFF).view(np.float32)


def _open_f(w):
    return (np.float32(w >> 1) + np.float32(0.5)) * np.float32(4.656612873077393e-10)


def _log_f(x):
    """philox.h's mx_log_f."""
    f = np.float32
    b = (_bits_f(x) - 0x3F3504F3) & 0xFFFFFFFF
    k = (b - (1 << 32) if b >= 1 << 31 else b) >> 23
    m = _from_bits_f((b & 0x007FFFFF) + 0x3F3504F3)
    s = (m - f(1)) / (m + f(1))
    s2 = s * s
    p = f(0.22222222)
    for coef in (0.2857143, 0.4, 0.6666667):
        p = f(coef) + s2 * p
    return f(k) * f(0.6931472) + (f(2) * s + s * (s2 * p))


def _exp_neg_f(y):
    """philox.h's mx_exp_neg_f (y <= 0)."""
    f = np.float32
    ok = y >= f(-104)
    y = y if ok else f(-104)
    k = int(y * f(1.442695) - f(0.5))                 # C truncation toward zero
    r = (y - f(k) * f(0.69311523)) - f(k) * f(3.1946183e-05)
    p = f(0.0001984127)
    for coef in (0.0013888889, 0.008333334, 0.041666668, 0.16666667, 0.5):
        p = f(coef) + r * p
    p = f(1) + r * (f(1) + r * p)
    k1 = int(k / 2)
    e = p * _from_bits_f((k1 + 127) << 23) * _from_bits_f((k - k1 + 127) << 23)
    return e if ok else f(0)


def _normal_f(wr, wa):
    """philox.h's mx_gamma_normal_f."""
    f = np.float32
    u1 = _open_f(wr)
    r = np.sqrt(f(-2) * _log_f(u1))
    phi = (f(wa & 0x3FFFFFFF) + f(0.5)) * f(7.3145906e-10)
    p2 = phi * phi
    c = f(1) + p2 * (f(-0.5) + p2 * (f(0.041666668) + p2 * (f(-0.0013888889)
                                                              + p2 * f(2.4801588e-05))))
    sn = phi * (f(1) + p2 * (f(-0.16666667) + p2 * (f(0.008333334) + p2 * (f(-0.0001984127)
                                                                            + p2 * f(2.7557319e-06)))))
    z = r * (c if wa & 0x40000000 else sn)
    return -z if wa & 0x80000000 else z


def _lemire(first, more, span, bits):
    """Lemire's multiply-shift on [0, span) with ``bits``-bit draws: ``first`` (the direct
    draw), then ``more()`` (the element stream's) while the low half is below the threshold."""
    threshold, low = (1 << bits) % span, (1 << bits) - 1
    m = first * span
    while (m & low) < threshold:
        m = more() * span
    return m >> bits


def _bounded32(key, offset, i, span):
    """randint's value in [0, span) for element i (32-bit draws)."""
    stream = _Stream(key, offset, i)
    return _lemire(_word(key, offset, i), stream.next32, span, 32)


def _bounded64(key, offset, j, span):
    """mx_bounded64: uniform on [0, span) for element j (64-bit draws)."""
    stream = _Stream(key, offset, j)
    return _lemire(_draw64(key, offset, j), stream.next64, span, 64)


# ---- checks ----------------------------------------------------------------------------------
def _close(t, got, want, what, ulps=0):
    """Exact on the CPU; within ``ulps`` float32 ulps of the oracle on a GPU."""
    want = np.asarray(want, dtype=got.dtype)
    if t.ctx.compute_device == "cpu" or not ulps:
        t.equal(got, want, what)
        return
    tol = ulps * np.spacing(np.maximum(np.abs(want), np.float32(1)))
    bad = np.flatnonzero(~(np.abs(got - want) <= tol))
    t.check(bad.size == 0, f"{what}: {bad.size} differ by more than {ulps} ulp, first at "
                           f"{bad[:5].tolist()}: got {got[bad[:5]].tolist()}, want "
                           f"{want[bad[:5]].tolist()}")


def _sparse(t, dtype, n, values=None):
    """An ``empty`` array of ``n`` elements (its untouched pages cost no memory; the ops that
    take it never read its values, or a check reads them first) with ``values`` at
    ``t.marks(n)``."""
    x = mx.nd.empty((n,), dtype=dtype)
    for i, pos in enumerate(t.marks(n) if values else ()):
        x[pos] = values[i % len(values)]
    t.seen(x)
    return x


def _checked(t, n):
    return sorted(set(t.positions(n)) | set(t.marks(n)))


# ---- samplers --------------------------------------------------------------------------------
def _sampler(name, params, element, ulps=0, like=False, dtype="float32", size="2**31"):
    """A row drawing ``name`` (``mx.nd.random.<name>``, or ``<name>_like`` on an ``empty``
    data array) past ``size``; ``element(key, offset, i)`` is the oracle of element i."""
    def run(t):
        n = t.N31 if size == "2**31" else t.N
        key, offset = _stream_of_next_call(t)
        if like:
            y = getattr(mx.nd.random, name + "_like")(_sparse(t, dtype, n), **params)
        else:
            y = getattr(mx.nd.random, name)(shape=(n,), dtype=dtype, **params)
        t.shape(y, (n,), name)
        t.check(y.dtype == np.dtype(dtype), f"{name}: dtype {y.dtype}, want {dtype}")
        pos = _checked(t, n)
        _close(t, t.values(y, pos), [element(key, offset, i) for i in pos],
               f"{name} at the far end", ulps)
    return Row(run, dtype, size, F32_REASON if size == "2**31" else None)


def _uniform(low, high):
    top = np.nextafter(np.float32(high), np.float32(-np.inf))

    def element(key, offset, i):
        u = (_word(key, offset, i) >> 8) * (1.0 / (1 << 24))
        return min(np.float32(low + (high - low) * u), top)
    return element


def _uniform16(low, high):
    """float16 samples: the float32 sample, kept at most the largest float16 below high, then
    rounded to nearest (drawn in float32 blocks, never a whole float32 temporary)."""
    top = np.float32(np.nextafter(np.float16(high), np.float16(-np.inf)))

    def element(key, offset, i):
        u = (_word(key, offset, i) >> 8) * (1.0 / (1 << 24))
        return np.float16(min(np.float32(low + (high - low) * u), top))
    return element


def _exponential(lam):
    """float(-log(u) * (1 / lam)) in double, as mx_exponential32."""
    return lambda key, offset, i: np.float32(-math.log(_open32(_word(key, offset, i)))
                                             * (1.0 / lam))


def _normal(loc, scale):
    """Box-Muller pairs (2p, 2p + 1) in float32 through the C library's logf, cosf and
    sinf, as mx_normal32_pair."""
    f = np.float32

    def element(key, offset, i):
        x0, x1 = _word(key, offset, i & ~1), _word(key, offset, i | 1)
        r = f(math.sqrt(f(-2.0 * _LIBM.logf(f(_open32(x0))))))
        theta = f(2 * math.pi * (x1 * (1.0 / 4294967296.0)))
        z = f(r * f(_LIBM.cosf(theta) if i % 2 == 0 else _LIBM.sinf(theta)))
        return f(loc + scale * float(z))
    return element


def _gamma(alpha, beta):
    return lambda key, offset, i: np.float32(float(_Stream(key, offset, i).gamma(alpha)) * beta)


def _randint_row(low, high):
    span = high - low

    def run(t):
        key, offset = _stream_of_next_call(t)
        y = mx.nd.random.randint(low, high, shape=(t.N31,), dtype="int32")
        t.shape(y, (t.N31,), "randint")
        pos = _checked(t, t.N31)
        want = [low + _bounded32(key, offset, i, span) for i in pos]
        t.equal(t.values(y, pos), np.array(want, np.int32), "randint at the far end")
    return Row(run, "int32", "2**31", "randint gives int32 or int64 only: 2**32 int32 "
               "elements are 16 GiB, over the 16 GiB peak")


def _zero_counts(name, params, like=False):
    """A count sampler whose parameters make every sample 0, written over ``t.big``'s
    markers (``out=``): every element up to the tail is written, and nothing else."""
    def run(t):
        y = t.big("float32", t.N31, values=(3, 5, 7, 9))
        if like:
            getattr(mx.nd.random, name + "_like")(_sparse(t, "float32", t.N31), out=y,
                                                  **params)
        else:
            getattr(mx.nd.random, name)(shape=(t.N31,), out=y, **params)
        pos = _checked(t, t.N31)
        t.equal(t.values(y, pos), np.zeros(len(pos), np.float32), f"{name} at the far end")
    return Row(run, "float32", "2**31", F32_REASON)


# ---- multinomial, shuffle --------------------------------------------------------------------
_PROBS = np.array([[0.125, 0.5, 0.375], [0.75, 0.0, 0.25], [0.2, 0.3, 0.5],
                   [0.0, 0.0, 1.0]], np.float32)


def _multinomial_row(t):
    """Four distributions of 3 categories, N31/4 uint8 samples each; sample g of the flat
    output reads the 64-bit draw g of the stream."""
    rows, k = _PROBS.shape
    per_row = t.N31 // rows
    key, offset = _stream_of_next_call(t)
    y = mx.nd.random.multinomial(mx.nd.array(_PROBS), shape=(per_row,), dtype="uint8")
    t.shape(y, (rows, per_row), "multinomial")
    cum = np.cumsum(_PROBS.astype(np.float64), axis=1)        # sequential sums, as the kernel
    pos = _checked(t, t.N31)
    want = []
    for g in pos:
        r = g // per_row
        target = _unit64(_draw64(key, offset, g)) * cum[r, -1]
        want.append(int(np.searchsorted(cum[r], target, side="right")))
    t.equal(t.values(y, pos), np.array(want, np.uint8), "multinomial at the far end")


def _shuffle_row(t):
    """16 rows of N/16 uint8 elements: row r holds r + 1 in its first and 100 + r in its last
    column, and t.big's markers; each output row is the input row the Fisher-Yates draws
    pick, the far end of the last row included."""
    rows = 16
    cols = t.N // rows
    x = t.big("uint8", t.N, shape=(rows, cols), values=(30, 50, 70, 90))
    for r in range(rows):
        x[r, 0] = r + 1
        x[r, cols - 1] = 100 + r
    before = t.values(x)
    key, offset = _stream_of_next_call(t)
    y = mx.nd.random.shuffle(x)
    t.shape(y, (rows, cols), "shuffle")
    perm = list(range(rows))
    for j in range(rows - 1):
        r = j + _bounded64(key, offset, j, rows - j)
        perm[j], perm[r] = perm[r], perm[j]
    first = y[:, 0].asnumpy()
    t.equal(first, np.array([p + 1 for p in perm], np.uint8), "shuffle: the row order")
    # output position q holds input position perm[q // cols] * cols + q % cols
    pos = _checked(t, t.N)
    src = [perm[q // cols] * cols + q % cols for q in pos]
    want = t.values(x, src)
    t.equal(t.values(y, pos), want, "shuffle: rows moved whole")
    t.equal(t.values(x), before, "shuffle: the input is unchanged")


# ---- optimizer updates -----------------------------------------------------------------------
_MARKS = {"weight": (1.5, -2.25, 3.0, 0.75), "grad": (0.5, 0.25, -1.0, 2.0),
          "mom": (0.125, -0.5, 0.25, 1.0), "mean": (0.125, -0.5, 0.25, 1.0),
          "var": (0.5, 1.5, 2.0, 0.25), "n": (4.0, 2.0, 9.0, 1.5),
          "g": (1.0, -0.5, 2.0, 0.25), "delta": (0.25, 0.5, -0.75, 0.125),
          "z": (0.5, -1.5, 0.25, 2.0), "d": (0.75, 1.25, 2.0, 0.5),
          "v": (0.5, 1.5, 2.0, 0.25), "weight32": (1.5, -2.25, 3.0, 0.75),
          "history": (0.5, 2.0, 4.0, 1.0)}


def _update(name, states, **params):
    """``name(weight, grad, *states, out=weight)`` on float32 past 2**31: the new weight and
    states at the checked positions equal the same update on those elements alone."""
    scale_input = name in ("_adamw_update", "_mp_adamw_update")

    arrays = 1 + len(states)                    # written in full: the weight, each state
    power = next(p for p in (31, 30, 29) if arrays * 2 ** p * 4 <= HOST_PEAK - 2 ** 30)
    size = f"2**{power}"

    def run(t):
        n = (t.P31 if t.ctx.compute_device == "gpu" else t.power(size)) + 16
        weight = t.big("float32", n, values=_MARKS["weight"])
        grad = _sparse(t, "float32", n, _MARKS["grad"])
        held = [t.big("float32", n, values=_MARKS[s]) for s in states]
        extra = [mx.nd.array([1.0])] if scale_input else []
        pos = _checked(t, n)
        small = [t.small(a, pos) for a in [weight, grad] + held]
        op = getattr(mx.nd._internal if name.startswith("_") else mx.nd, name)
        op(*small, *extra, out=small[0], **params)
        op(weight, grad, *held, *extra, out=weight, **params)
        for label, big, ref in zip(("weight",) + tuple(states), [weight] + held,
                                   [small[0]] + small[2:]):
            t.equal(t.values(big, pos), ref, f"{name}: {label} at the far end")
    return Row(run, "float32", size, OPT_REASON if power == 31 else OPT_REASON + (
        f"; it writes {arrays} float32 arrays of the weight's size: past 2**31 that is "
        f"{arrays * 8} GiB, so the CPU row stops past {size} (past 2**31 on a GPU)"))


def _lamb_phase2(name, mp):
    """``name(weight, g, r1, r2[, weight32], out=weight)`` past 2**31: the weight (and the
    master copy) at the checked positions equal the same step on those elements alone."""
    held = ("weight32",) if mp else ()
    arrays = 2 + len(held)
    power = next(p for p in (31, 30, 29) if arrays * 2 ** p * 4 <= HOST_PEAK - 2 ** 30)
    size = f"2**{power}"

    def run(t):
        n = (t.P31 if t.ctx.compute_device == "gpu" else t.power(size)) + 16
        weight = t.big("float32", n, values=_MARKS["weight"])
        g = t.big("float32", n, values=_MARKS["g"])
        masters = [t.big("float32", n, values=_MARKS[h]) for h in held]
        norms = [mx.nd.array([2.0]), mx.nd.array([0.5])]
        pos = _checked(t, n)
        small = [t.small(a, pos) for a in [weight, g] + masters]
        op = getattr(mx.nd, name)
        op(small[0], small[1], *norms, *small[2:], lr=0.25, out=small[0])
        op(weight, g, *norms, *masters, lr=0.25, out=weight)
        for label, big, ref in zip(("weight",) + held, [weight] + masters,
                                   [small[0]] + small[2:]):
            t.equal(t.values(big, pos), ref, f"{name}: {label} at the far end")
    return Row(run, "float32", size, OPT_REASON if power == 31 else OPT_REASON + (
        f"; it writes {arrays} float32 arrays of the weight's size, so the CPU row stops "
        f"past {size} (past 2**31 on a GPU)"))


def _multi_update(name, group, **params):
    """The multi-tensor update ``name`` of one weight (groups run one by one) past 2**31,
    with its rates as parameters or, for ``preloaded_``, as arrays."""
    preloaded = name.startswith("preloaded_")
    states = group[2:]
    arrays = 1 + len(states)
    power = next(p for p in (31, 30, 29) if arrays * 2 ** p * 4 <= HOST_PEAK - 2 ** 30)
    size = f"2**{power}"
    rates = {} if preloaded else dict(lrs=(0.25,), wds=(0.125,))

    def run(t):
        n = (t.P31 if t.ctx.compute_device == "gpu" else t.power(size)) + 16
        weight = t.big("float32", n, values=_MARKS["weight"])
        grad = _sparse(t, "float32", n, _MARKS["grad"])
        held = [t.big("float32", n, values=_MARKS[s]) for s in states]
        extra = [mx.nd.array([0.25]), mx.nd.array([0.125])] if preloaded else []
        pos = _checked(t, n)
        small = [t.small(a, pos) for a in [weight, grad] + held]
        op = getattr(mx.nd, name)
        op(*small, *extra, out=[small[0]], num_weights=1, **rates, **params)
        op(weight, grad, *held, *extra, out=[weight], num_weights=1, **rates, **params)
        for label, big, ref in zip(("weight",) + tuple(states), [weight] + held,
                                   [small[0]] + small[2:]):
            t.equal(t.values(big, pos), ref, f"{name}: {label} at the far end")
    return Row(run, "float32", size, OPT_REASON if power == 31 else OPT_REASON + (
        f"; it writes {arrays} float32 arrays of the weight's size, so the CPU row stops "
        f"past {size} (past 2**31 on a GPU)"))


def _multi_step(name, group, count, rates, tail=(), scratch=0, **params):
    """A multi-tensor step of ``optimizer_multi`` (``_multi_adamw_update``,
    ``_multi_lamb_update``, their mp_ forms) on one weight past 2**29 or more: ``rates``
    are its per-weight tuples, ``tail`` the trailing one-element arrays, ``scratch`` the
    weight-sized arrays the step allocates (LAMB's direction)."""
    states = group[2:]
    arrays = 1 + len(states) + scratch
    power = next(p for p in (31, 30, 29) if arrays * 2 ** p * 4 <= HOST_PEAK - 2 ** 30)
    size = f"2**{power}"

    def run(t):
        n = (t.P31 if t.ctx.compute_device == "gpu" else t.power(size)) + 16
        weight = t.big("float32", n, values=_MARKS["weight"])
        # LAMB reads every gradient value (its norms): zeros but at the markers, so the
        # norms of the big arrays are those of the checked elements
        grad = (t.big("float32", n, values=_MARKS["grad"]) if scratch
                else _sparse(t, "float32", n, _MARKS["grad"]))
        held = [t.big("float32", n, values=_MARKS[s]) for s in states]
        extra = [mx.nd.array([v]) for v in tail]
        pos = _checked(t, n)
        small = [t.small(a, pos) for a in [weight, grad] + held]
        op = getattr(mx.nd._internal, name)
        op(*small, *extra, out=[small[0]], **{count: 1}, **rates, **params)
        op(weight, grad, *held, *extra, out=[weight], **{count: 1}, **rates, **params)
        for label, big, ref in zip(("weight",) + tuple(states), [weight] + held,
                                   [small[0]] + small[2:]):
            t.equal(t.values(big, pos), ref, f"{name}: {label} at the far end")
    return Row(run, "float32", size, OPT_REASON + (
        f"; it writes {arrays} float32 arrays of the weight's size, so the CPU row stops "
        f"past {size} (past 2**31 on a GPU)"))


def _multi_sum_sq_row(t):
    """multi_sum_sq of a float16 array past 2**32 (summed in float64 over float32 blocks)
    and a small one: the big sum against its closed form (the markers over a fill of 1)."""
    n = t.N
    x = t.big("float16", n, values=(3, 5, 7, 9), fill=1)
    marks = t.marks(n)
    want = n - len(marks) + sum((3, 5, 7, 9)[i % 4] ** 2 for i in range(len(marks)))
    out = mx.nd.multi_sum_sq(x, mx.nd.array([2.0, 1.0], dtype="float16"), num_arrays=2)
    t.equal(out, np.array([want, 5.0], np.float32), "multi_sum_sq of the big array")


def _multi_lars_row(t):
    """multi_lars over 2**29 weights' sums of squares (four float32 vectors): the rates at
    the far end equal the call on those elements alone."""
    n = t.power("2**29") + 16
    arrays = [t.big("float32", n, values=v, fill=f) for v, f in (
        ((0.5, 0.25, 0.125, 1.0), 0.1), ((4.0, 0.0, 9.0, 2.25), 1.0),
        ((1.0, 4.0, 0.0, 0.5), 2.0), ((0.01, 0.0, 0.1, 0.02), 0.0))]
    pos = _checked(t, n)
    small = [t.small(a, pos) for a in arrays]
    out = mx.nd.multi_lars(*arrays, eta=0.5, eps=1e-3, rescale_grad=2.0)
    t.equal(t.values(out, pos), mx.nd.multi_lars(*small, eta=0.5, eps=1e-3, rescale_grad=2.0),
            "multi_lars at the far end")


def _group_adagrad_row(t):
    """group_adagrad_update of a (rows, 16) float32 weight past 2**30 elements, in place:
    the rows at the far end (weight and history) equal the update of those rows alone."""
    n = t.power("2**30") + 16
    rows = n // 16
    weight = t.big("float32", rows * 16, values=_MARKS["weight"]).reshape((rows, 16))
    # every value of a checked row is read (its mean square): zeros but at the markers
    grad = t.big("float32", rows * 16, values=_MARKS["grad"]).reshape((rows, 16))
    hist = t.big("float32", rows, values=(0.5, 1.5, 2.0, 0.25)).reshape((rows, 1))
    picked = sorted({p // 16 for p in _checked(t, rows * 16)})
    elements = [r * 16 + c for r in picked for c in range(16)]      # whole rows
    small = [t.small(weight, elements).reshape((len(picked), 16)),
             t.small(grad, elements).reshape((len(picked), 16)), t.small(hist, picked)
             .reshape((len(picked), 1))]
    kw = dict(lr=0.25, rescale_grad=0.5, clip_gradient=1.0)
    mx.nd.contrib.group_adagrad_update(*small, out=small[0], **kw)
    mx.nd.contrib.group_adagrad_update(weight, grad, hist, out=weight, **kw)
    t.equal(t.values(weight, elements), small[0].reshape((-1,)), "weight rows at the far end")
    t.equal(t.values(hist, picked), small[2].reshape((-1,)), "history rows at the far end")


ROWS = {
    "_random_uniform": _sampler("uniform", dict(low=-2.0, high=2.0), _uniform16(-2.0, 2.0),
                                dtype="float16", size="2**32"),
    "_random_uniform_like": _sampler("uniform", dict(low=-2.0, high=2.0), _uniform(-2.0, 2.0),
                                     like=True),
    "_random_normal": _sampler("normal", dict(loc=0.0, scale=1.0), _normal(0.0, 1.0),
                               ulps=GPU_ULPS),
    "_random_normal_like": _sampler("normal", dict(loc=0.0, scale=1.0), _normal(0.0, 1.0),
                                    ulps=GPU_ULPS, like=True),
    "_random_exponential": _sampler("exponential", dict(lam=1.0), _exponential(1.0),
                                    ulps=GPU_ULPS),
    "_random_exponential_like": _sampler("exponential", dict(lam=1.0), _exponential(1.0),
                                         ulps=GPU_ULPS, like=True),
    "_random_gamma": _sampler("gamma", dict(alpha=2.5, beta=0.5), _gamma(2.5, 0.5),
                              ulps=GPU_ULPS),
    "_random_gamma_like": _sampler("gamma", dict(alpha=2.5, beta=0.5), _gamma(2.5, 0.5),
                                   ulps=GPU_ULPS, like=True),
    "_random_poisson": _zero_counts("poisson", dict(lam=0.0)),
    "_random_poisson_like": _zero_counts("poisson", dict(lam=0.0), like=True),
    "_random_negative_binomial": _zero_counts("negative_binomial", dict(k=3, p=1.0)),
    "_random_negative_binomial_like": _zero_counts("negative_binomial", dict(k=3, p=1.0),
                                                   like=True),
    "_random_generalized_negative_binomial": _zero_counts(
        "generalized_negative_binomial", dict(mu=0.0, alpha=0.0)),
    "_random_generalized_negative_binomial_like": _zero_counts(
        "generalized_negative_binomial", dict(mu=0.0, alpha=0.0), like=True),
    "_random_randint": _randint_row(-1000, 1_000_003),
    "_sample_multinomial": Row(_multinomial_row, "uint8", "2**31", MULTINOMIAL_REASON),
    "_shuffle": Row(_shuffle_row, "uint8"),
    "sgd_update": also(_update("sgd_update", (), lr=0.25, wd=0.125), sgd_part),
    "_sparse_adagrad_update": _update("_sparse_adagrad_update", ("history",), lr=0.25),
    "signsgd_update": _update("signsgd_update", (), lr=0.25, wd=0.125),
    "sgd_mom_update": _update("sgd_mom_update", ("mom",), lr=0.25, momentum=0.875, wd=0.125),
    "nag_mom_update": _update("nag_mom_update", ("mom",), lr=0.25, momentum=0.875, wd=0.125),
    "signum_update": _update("signum_update", ("mom",), lr=0.25, momentum=0.875, wd_lh=0.01),
    "rmsprop_update": _update("rmsprop_update", ("n",), lr=0.25, gamma1=0.9, epsilon=1e-6),
    "rmspropalex_update": _update("rmspropalex_update", ("n", "g", "delta"), lr=0.25,
                                  gamma1=0.9, gamma2=0.875, epsilon=1e-6),
    "adam_update": _update("adam_update", ("mean", "var"), lr=0.25, beta1=0.875, beta2=0.75,
                           epsilon=1e-6, wd=0.125),
    "_adamw_update": _update("_adamw_update", ("mean", "var"), lr=0.25, eta=0.5, beta1=0.875,
                             beta2=0.75, epsilon=1e-6, wd=0.125),
    "ftrl_update": _update("ftrl_update", ("z", "n"), lr=0.25, lamda1=0.01, beta=1.0,
                           wd=0.125),
    "ftml_update": _update("ftml_update", ("d", "v", "z"), lr=0.25, t=2, beta1=0.5, wd=0.125),
    "mp_sgd_update": _update("mp_sgd_update", ("weight32",), lr=0.25, wd=0.125),
    "mp_sgd_mom_update": _update("mp_sgd_mom_update", ("mom", "weight32"), lr=0.25,
                                 momentum=0.875, wd=0.125),
    "mp_nag_mom_update": _update("mp_nag_mom_update", ("mom", "weight32"), lr=0.25,
                                 momentum=0.875, wd=0.125),
    "lamb_update_phase1": _update("lamb_update_phase1", ("mean", "var"), t=2, wd=0.125),
    "mp_lamb_update_phase1": _update("mp_lamb_update_phase1", ("mean", "var", "weight32"),
                                     t=2, wd=0.125),
    **{pre + "multi_" + base + "_update": _multi_update(
        pre + "multi_" + base + "_update", group, **({"momentum": 0.875} if "mom" in group
                                                     else {}))
       for pre in ("", "preloaded_")
       for base, group in (("sgd", ("weight", "grad")), ("sgd_mom", ("weight", "grad", "mom")),
                           ("mp_sgd", ("weight", "grad", "weight32")),
                           ("mp_sgd_mom", ("weight", "grad", "mom", "weight32")))},
    "_mp_adamw_update": _update("_mp_adamw_update", ("mean", "var", "weight32"), lr=0.25,
                                eta=0.5, beta1=0.875, beta2=0.75, epsilon=1e-6, wd=0.125),
    **{name: _multi_step(name, group, "num_weights",
                         dict(lrs=(0.25,), wds=(0.125,), etas=(0.5,)), tail=(1.0,),
                         beta1=0.875, beta2=0.75, epsilon=1e-6)
       for name, group in (("_multi_adamw_update", ("weight", "grad", "mean", "var")),
                           ("_multi_mp_adamw_update",
                            ("weight", "grad", "mean", "var", "weight32")))},
    **{name: _multi_step(name, group, "num_tensors",
                         dict(learning_rates=(0.25,), wds=(0.125,), step_count=(2,)),
                         scratch=1, beta1=0.875, beta2=0.75, epsilon=1e-6)
       for name, group in (("_multi_lamb_update", ("weight", "grad", "mean", "var")),
                           ("_multi_mp_lamb_update",
                            ("weight", "grad", "mean", "var", "weight32")))},
    "multi_sum_sq": Row(_multi_sum_sq_row, "float16"),
    "multi_lars": Row(_multi_lars_row, "float32", "2**29", OPT_REASON + (
        "; multi_lars takes four float32 vectors of one value per weight (a model's weight "
        "count, far below 2**29): past 2**29 they are 8 GiB")),
    "_contrib_group_adagrad_update": Row(_group_adagrad_row, "float32", "2**30", OPT_REASON + (
        "; the weight and gradient of the row are 8 GiB past 2**30")),
    "lamb_update_phase2": _lamb_phase2("lamb_update_phase2", False),
    "mp_lamb_update_phase2": _lamb_phase2("mp_lamb_update_phase2", True),
}
