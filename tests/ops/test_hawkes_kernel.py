"""The compiled kernels of contrib.hawkesll and _hawkesll_scan (mxlite/_core/hawkes.pyx)
against the vectorised NumPy path they replace on the CPU (mxlite/ops/hawkes.py, kept for
other devices and selected here by making ``_on_host`` answer False): every float dtype,
marks of several integer dtypes, K = 1..5, valid_length 0, fractional and T, the scan
forward and reversed, in place and not, and the batch split among threads. The values of
both paths against MXNet and the model are in test_hawkes.py.

How close: both paths run the same float64 operations in the same order, so the outputs are
equal bit for bit here (glibc: 2000 log-likelihoods and states per dtype, rows of 13 and 400
points, measured); the forward's tests still allow a few float64 ulps (libm's exp/log and
the element-wise operators' may differ in the last bit elsewhere), so one output ulp for
float16/float32 where a float64 value sits on a rounding boundary. The scan (products and
sums only) must be equal bit for bit."""
import zlib

import numpy as np
import pytest

import mxlite as mx
import mxlite.ops.hawkes as hawkes
from mxlite._core import hawkes as kernel
from mxlite.base import MXNetError

pytestmark = pytest.mark.cpu_only       # compares the CPU kernels with the NumPy path

FLOATS = ("float16", "float32", "float64")
MARKS = ("int8", "uint8", "int32", "int64")        # the integer dtypes of NDArray
# the forward's agreement, relative and absolute, by output dtype: float64 a few ulps (the
# sums of up to T terms), the narrower dtypes one output ulp
CLOSE = {"float64": (1e-13, 1e-13), "float32": (2 ** -23, 1e-6), "float16": (2 ** -10, 1e-3)}


def _lengths(rng, n, t):
    """Each row's valid_length: 0, T, a fractional one and random integers."""
    v = rng.integers(0, t + 1, n).astype("float64")
    v[:3] = [0.0, t, max(t - 0.5, 0.0)][:min(n, 3)]
    return v


def _forward_case(rng, n, k, t, mark_dtype):
    length = _lengths(rng, n, t)
    marks = rng.integers(0, k, (n, t))
    lags = rng.exponential(0.7, (n, t))
    pad = np.arange(t)[None, :] >= np.ceil(length)[:, None]
    lags[pad] = np.nan                                      # padding is never read
    if np.dtype(mark_dtype).kind == "i":
        marks[pad] = -3
    return dict(lda=rng.uniform(0.2, 1.5, (n, k)), alpha=rng.uniform(0.1, 0.8, k),
                beta=rng.uniform(0.5, 3.0, k), state=rng.uniform(0.0, 2.0, (n, k)), lags=lags,
                marks=marks.astype(mark_dtype), length=length,
                max_time=rng.uniform(0.5, 8.0, n))


def _forward(case, dtype):
    args = [mx.nd.array(case[name], dtype=dtype) for name in
            ("lda", "alpha", "beta", "state", "lags")]
    args += [mx.nd.array(case["marks"], dtype=case["marks"].dtype),
             mx.nd.array(case["length"], dtype="float64"),
             mx.nd.array(case["max_time"], dtype=dtype)]
    return [o.asnumpy() for o in mx.nd.contrib.hawkesll(*args)]


def _numpy_path(monkeypatch, fn):
    """fn() computed by the NumPy path (as on another device)."""
    with monkeypatch.context() as m:
        m.setattr(hawkes, "_on_host", lambda rctx: False)
        return fn()


def _assert_close(got, want, dtype):
    rtol, atol = CLOSE[dtype]
    for g, w in zip(got, want):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_allclose(g.astype("float64"), w.astype("float64"), rtol=rtol,
                                   atol=atol)


# ---- the forward --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mark_dtype", MARKS)
def test_forward_matches_the_numpy_path(monkeypatch, dtype, mark_dtype):
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {mark_dtype}".encode()))
    for k in range(1, 6):
        case = _forward_case(rng, 9, k, 13, mark_dtype)
        got = _forward(case, dtype)
        want = _numpy_path(monkeypatch, lambda: _forward(case, dtype))
        _assert_close(got, want, dtype)


def test_forward_float64_within_a_few_ulps(monkeypatch):
    """Long rows (sums of 400 terms): still within 1e-13 relative of the NumPy path."""
    case = _forward_case(np.random.default_rng(3), 5, 3, 400, "int32")
    got = _forward(case, "float64")
    want = _numpy_path(monkeypatch, lambda: _forward(case, "float64"))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-13)


def test_forward_threads_over_the_batch(monkeypatch):
    """Enough points for the parallel loop (PARALLEL_MIN): every sample as computed alone."""
    case = _forward_case(np.random.default_rng(4), 2500, 2, 40, "int64")
    got = _forward(case, "float64")
    want = _numpy_path(monkeypatch, lambda: _forward(case, "float64"))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-13, atol=1e-13)


def _one_point_per_mark(init, b, pre_dtype):
    """(pre, final) of a one-sample scan whose point j has mark j and a = 0: pre[j] =
    init[j] (written from double in ``pre_dtype``), final[j] = 0 * init[j] + b[j] (b read
    in its own dtype)."""
    b = np.asarray(b).reshape(1, -1)
    t = b.shape[1]
    z = np.array(init, dtype="float64").reshape(1, t)
    pre = np.empty((1, t), pre_dtype)
    kernel.scan(np.zeros_like(b), b, np.arange(t).reshape(1, t), np.array([t]), False, z, pre)
    return pre[0], z[0]


def test_float16_is_read_exactly():
    """Every float16 bit pattern widened to double as NumPy widens it (NaNs as NaNs)."""
    every = np.arange(1 << 16, dtype="uint16").view("float16")
    _, got = _one_point_per_mark(np.zeros(every.size), every, "float64")
    np.testing.assert_array_equal(got, every.astype("float64"))


def test_float16_is_written_rounded_to_nearest_even():
    """Doubles written as float16 as NumPy casts them: ties to even in the normal and
    subnormal ranges, the overflow threshold 65520, signed zeros, infinities, NaN."""
    halves = np.arange(0x7c00, dtype="uint16").view("float16").astype("float64")
    ties = (halves[:-1] + halves[1:]) / 2                      # exactly halfway: to even
    near = np.concatenate([np.nextafter(ties, 0), np.nextafter(ties, np.inf)])
    rng = np.random.default_rng(12)
    odd = [65504.0, 65519.99, 65520.0, 1e300, 2.0 ** -25, 2.0 ** -24 * 1.5, 2.0 ** -26, 1e-300,
           -0.0, np.inf, np.nan]
    values = np.concatenate([ties, near, rng.normal(scale=100.0, size=2000),
                             np.exp(rng.uniform(-20, 12, 2000)), odd])
    values = np.concatenate([values, -values])
    got, _ = _one_point_per_mark(values, np.zeros(values.size), "float16")
    with np.errstate(over="ignore"):                          # 1e300 and 65520: inf
        want = values.astype("float16")
    np.testing.assert_array_equal(got.view("uint16")[~np.isnan(want)],
                                  want.view("uint16")[~np.isnan(want)])
    assert np.isnan(got[np.isnan(want)]).all()


# ---- the scan -----------------------------------------------------------------------------------
def _scan_case(rng, n, k, t, dtype, mark_dtype):
    length = _lengths(rng, n, t)
    marks = rng.integers(0, k, (n, t)).astype(mark_dtype)
    return ([mx.nd.array(rng.normal(size=s), dtype=dtype) for s in ((n, t), (n, t), (n, k))]
            + [mx.nd.array(marks, dtype=mark_dtype), mx.nd.array(length, dtype="float32")])


def _scan(args, reverse, in_place):
    """(pre, final) of the scan; in place writes pre over a copy of ``a``."""
    if not in_place:
        return [o.asnumpy() for o in mx.nd._internal._hawkesll_scan(*args, reverse=reverse)]
    a = args[0].copy()
    final = mx.nd.empty(args[2].shape, dtype=args[2].dtype)
    mx.nd._internal._hawkesll_scan(a, *args[1:], reverse=reverse, out=[a, final])
    return [a.asnumpy(), final.asnumpy()]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mark_dtype", ("int8", "uint8", "int64"))
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("in_place", [False, True])
def test_scan_matches_the_numpy_path(monkeypatch, dtype, mark_dtype, reverse, in_place):
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {mark_dtype} {reverse} {in_place}".encode()))
    for k in range(1, 6):
        args = _scan_case(rng, 8, k, 11, dtype, mark_dtype)
        got = _scan(args, reverse, in_place)
        want = _numpy_path(monkeypatch, lambda: _scan(args, reverse, in_place))
        for g, w in zip(got, want):
            assert g.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(g, w)


def test_scan_in_place_over_b_and_init(monkeypatch):
    """out= may be ``b`` and ``init``: each block is read before it is written."""
    args = _scan_case(np.random.default_rng(6), 6, 3, 9, "float64", "int32")
    want = [o.asnumpy() for o in mx.nd._internal._hawkesll_scan(*args, reverse=True)]
    mx.nd._internal._hawkesll_scan(*args, reverse=True, out=[args[1], args[2]])
    np.testing.assert_array_equal(args[1].asnumpy(), want[0])
    np.testing.assert_array_equal(args[2].asnumpy(), want[1])


def test_scan_threads_over_the_batch(monkeypatch):
    args = _scan_case(np.random.default_rng(7), 3000, 4, 30, "float32", "uint8")
    for reverse in (False, True):
        got = _scan(args, reverse, True)
        want = _numpy_path(monkeypatch, lambda: _scan(args, reverse, True))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


# ---- checks before anything is written -----------------------------------------------------------
def test_a_bad_mark_in_a_later_block_writes_nothing(monkeypatch):
    """Every counted mark is checked before the first block is computed: out= keeps its
    values (the NumPy path wrote the blocks before the bad one)."""
    monkeypatch.setattr(hawkes, "_BLOCK", 40)               # one sample a block
    args = _scan_case(np.random.default_rng(8), 4, 2, 5, "float64", "int32")
    marks = args[3].asnumpy()
    marks[3, 1] = 2
    args[3] = mx.nd.array(marks, dtype="int32")
    pre, final = mx.nd.full((4, 5), 7.0, dtype="float64"), mx.nd.full((4, 2), 7.0, dtype="float64")
    with pytest.raises(MXNetError, match=r"_hawkesll_scan: marks must lie in \[0, 2\).*"
                                         r"marks\[3, 1\] is 2"):
        mx.nd._internal._hawkesll_scan(*args, out=[pre, final])
        pre.wait_to_read()
    assert (pre.asnumpy() == 7.0).all() and (final.asnumpy() == 7.0).all()


@pytest.mark.parametrize("dtype", MARKS + ("int16", "uint16", "uint32", "uint64"))
def test_first_bad_mark_names_the_smallest_point_then_sample(dtype):
    marks = np.zeros((3, 6), dtype)
    marks[2, 1] = 3                       # the smallest point index
    marks[0, 4] = 200 if np.dtype(dtype).itemsize > 1 or dtype == "uint8" else 100
    marks[1, 5] = 9                       # past sample 1's valid_length: not counted
    steps = np.array([6, 5, 6], "int64")
    assert kernel.first_bad_mark(marks, steps, 3) == (2, 1)
    assert kernel.first_bad_mark(marks[:2], steps[:2], 3) == (0, 4)
    assert kernel.first_bad_mark(marks[:, :1], np.array([1, 1, 1], "int64"), 3) is None


def test_negative_marks_are_bad():
    marks = np.array([[0, -1, 0]], "int8")
    assert kernel.first_bad_mark(marks, np.array([3], "int64"), 1) == (0, 1)
    assert kernel.first_bad_mark(marks, np.array([1], "int64"), 1) is None


def test_the_kernels_check_their_block():
    """A caller's mistake is a ValueError, never an out-of-range read."""
    one = np.ones((2, 3))
    marks = np.zeros((2, 3), "int64")
    with pytest.raises(ValueError, match=r"steps\[1\] = 4 outside \[0, 3\]"):
        kernel.scan(one, one, marks, np.array([3, 4], "int64"), False, np.zeros((2, 1)),
                    np.empty((2, 3)))
    with pytest.raises(ValueError, match="agree in shape"):
        kernel.loglik(one, marks, np.array([3, 3], "int64"), np.ones((2, 2)), np.ones(2),
                      np.ones(2), np.ones((2, 2)), np.ones(2), np.empty(1), np.empty((2, 2)),
                      np.empty((1, 4)))
    with pytest.raises(ValueError, match="share a dtype"):
        kernel.loglik(one, marks, np.array([3, 3], "int64"), np.ones((2, 2), "float32"),
                      np.ones(2), np.ones(2), np.ones((2, 2)), np.ones(2), np.empty(2),
                      np.empty((2, 2)), np.empty((1, 4)))


def test_one_thread_and_every_thread_agree():
    """The forward's scratch rows are its threads: one row runs the batch on the calling
    thread; the threaded run (where the machine is not contended) gives the same bits."""
    case = _forward_case(np.random.default_rng(13), 3000, 3, 30, "int8")
    steps = np.ceil(case["length"]).astype("int64")

    def run(threads):
        ll, out = np.empty(3000), np.empty((3000, 3))
        kernel.loglik(np.nan_to_num(case["lags"]), case["marks"], steps, case["lda"],
                      case["alpha"], case["beta"], case["state"], case["max_time"], ll, out,
                      np.empty((threads, 6)))
        return ll, out

    for one, every in zip(run(1), run(max(2, kernel.max_threads()))):
        np.testing.assert_array_equal(one, every)
