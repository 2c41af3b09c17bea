"""Bad or extreme inputs to creation ops (issue 7): exact fill values, exact integer ranges,
impossible allocations and non-integer shapes are exact results or a clear MXNetError naming
the operator and the argument, never a raw NumPy/Python error, a clamp, a wrap or a crash.

Oracles: Python integers and ``fractions.Fraction`` (exact), NumPy where it is exact.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.ops import shape_utils

INTS = ("int8", "uint8", "int32", "int64")
FLOATS = ("float16", "float32", "float64")
NAN, INF = float("nan"), float("inf")


def _eq(got, expected):
    """dtype, shape and exact values of an NDArray against a NumPy array."""
    assert isinstance(got, mx.nd.NDArray)
    g = got.asnumpy()
    assert g.dtype == expected.dtype, (g.dtype, expected.dtype)
    assert g.shape == expected.shape, (g.shape, expected.shape)
    np.testing.assert_array_equal(g, expected)


# ---- item 1: fill values are exact or an error ---------------------------------------------
# Every creation op taking a value, as fill(value, dtype) -> NDArray, and the argument's name.
FILLERS = {
    "full": (lambda v, dt: mx.nd.full((3,), v, dtype=dt), "val"),
    "one_hot.on_value": (lambda v, dt: mx.nd.one_hot(mx.nd.array([0, 1, 2]), 3, on_value=v,
                                                     off_value=0, dtype=dt), "on_value"),
    "one_hot.off_value": (lambda v, dt: mx.nd.one_hot(mx.nd.array([0, 1, 2]), 3, on_value=1,
                                                      off_value=v, dtype=dt), "off_value"),
}


def _values(filler, got):
    """The filled value(s) that came from ``v``."""
    a = got.asnumpy()
    if filler == "full":
        return a
    return np.diagonal(a) if filler == "one_hot.on_value" else a[~np.eye(3, dtype=bool)]


@pytest.mark.parametrize("filler", sorted(FILLERS))
@pytest.mark.parametrize("dtype", INTS)
def test_integer_fill_values_at_the_limits_are_exact(filler, dtype):
    fill, _ = FILLERS[filler]
    info = np.iinfo(dtype)
    for v in (int(info.min), int(info.max), int(info.max) - 1, 0, float(min(info.max, 2 ** 40))):
        got = fill(v, dtype)
        assert got.dtype == np.dtype(dtype)
        assert all(int(e) == int(v) for e in _values(filler, got)), (v, got)


def test_full_int64_extremes_are_exact():
    _eq(mx.nd.full((2,), 2 ** 63 - 1, dtype="int64"), np.array([2 ** 63 - 1] * 2, np.int64))
    _eq(mx.nd.full((2,), -2 ** 63, dtype="int64"), np.array([-2 ** 63] * 2, np.int64))
    _eq(mx.nd.full((1,), 2 ** 53 + 1, dtype="int64"), np.array([2 ** 53 + 1], np.int64))
    _eq(mx.nd.full((1,), np.uint64(2 ** 63 - 1), dtype="int64"),
        np.array([2 ** 63 - 1], np.int64))


@pytest.mark.parametrize("filler", sorted(FILLERS))
@pytest.mark.parametrize("dtype", INTS)
def test_unrepresentable_integer_fill_values_are_errors(filler, dtype):
    fill, arg = FILLERS[filler]
    info = np.iinfo(dtype)
    cases = [(NAN, "not a finite number"), (INF, "not a finite number"),
             (-INF, "not a finite number"), (2.5, "not an integer"), (-0.5, "not an integer"),
             (int(info.min) - 1, "outside the range"), (int(info.max) + 1, "outside the range"),
             (float(2 ** 70), "outside the range")]
    op = filler.split(".")[0]
    for v, why in cases:
        with pytest.raises(MXNetError, match=rf"{op}: {arg}=.*{why}.*"):
            fill(v, dtype)


def test_the_issue_examples():
    with pytest.raises(MXNetError, match=r"full: val=nan .*int32"):
        mx.nd.full((2,), NAN, dtype="int32")
    with pytest.raises(MXNetError, match=r"full: val=-1 is outside the range of uint8 \[0, 255\]"):
        mx.nd.full((2,), -1, dtype="uint8")
    with pytest.raises(MXNetError, match=r"full: val=300 is outside the range of int8"):
        mx.nd.full((2,), 300, dtype="int8")


@pytest.mark.parametrize("filler", sorted(FILLERS))
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_fill_values_round_but_never_overflow(filler, dtype):
    fill, arg = FILLERS[filler]
    big = float(np.finfo(dtype).max)
    for v in (0.1, -big, big, NAN, INF, -INF, 1e-30, 2048 if dtype == "float16" else 2 ** 53 + 1):
        got = _values(filler, fill(v, dtype))
        np.testing.assert_array_equal(got, np.full(got.shape, v).astype(dtype))
    op = filler.split(".")[0]
    for v in (big * 1.01 if dtype != "float64" else 10 ** 309, -2 * big if dtype != "float64"
              else -(10 ** 400)):
        with pytest.raises(MXNetError, match=rf"{op}: {arg}=.*outside the range of {dtype}"):
            fill(v, dtype)


def test_float16_overflow_named():
    with pytest.raises(MXNetError, match=r"full: val=100000.0 .*float16.*infinity"):
        mx.nd.full((2,), 1e5, dtype="float16")
    _eq(mx.nd.full((1,), 65519, dtype="float16"), np.array([65504], np.float16))   # rounds


@pytest.mark.parametrize("filler", sorted(FILLERS))
def test_bool_fill_takes_the_truth_value(filler):
    fill, _ = FILLERS[filler]
    for v, want in ((0, False), (1, True), (7, True), (-0.0, False), (0.5, True), (True, True)):
        assert (_values(filler, fill(v, "bool")) == want).all()


@pytest.mark.parametrize("filler", sorted(FILLERS))
def test_non_numbers_are_errors(filler):
    fill, arg = FILLERS[filler]
    op = filler.split(".")[0]
    for v in ("abc", "5x", None, 1 + 2j, [1], b"1"):
        with pytest.raises(MXNetError, match=rf"{op}: {arg} must be a real number"):
            fill(v, "float32")


@pytest.mark.parametrize("filler", sorted(FILLERS))
def test_mxnet_string_forms_are_numbers(filler):
    """A symbol JSON holds every parameter as a string: "5" is 5 (exact), "2.5" is 2.5."""
    fill, _ = FILLERS[filler]
    assert (_values(filler, fill("5", "int64")) == 5).all()
    assert (_values(filler, fill(str(2 ** 62 + 1), "int64")) == 2 ** 62 + 1).all()
    assert (_values(filler, fill("2.5", "float32")) == 2.5).all()


def test_zeros_ones_every_dtype():
    for dt in INTS + FLOATS + ("bool",):
        _eq(mx.nd.zeros((2,), dtype=dt), np.zeros(2, dt))
        _eq(mx.nd.ones((2,), dtype=dt), np.ones(2, dt))


# ---- item 2: arange -------------------------------------------------------------------------
def _exact_arange(start, stop, step, dtype, repeat=1):
    """The exact values start + k*step before stop (Fractions), rounded once to dtype."""
    if stop is None:
        start, stop = 0, start
    n = max(math.ceil((Fraction(stop) - Fraction(start)) / Fraction(step)), 0)
    vals = [Fraction(start) + k * Fraction(step) for k in range(n)]
    dt = np.dtype(dtype)
    if dt.kind in "iub":
        out = np.array([int(v) for v in vals], dtype=object).astype(dt) if vals else \
            np.zeros(0, dt)
    else:
        out = np.array([float(v) for v in vals], dtype=np.float64).astype(dt)
    return np.repeat(out, repeat)


@pytest.mark.parametrize("start, stop, step, dtype", [
    (2 ** 53, 2 ** 53 + 4, 1, "int64"),
    (2 ** 62, 2 ** 62 + 10, 3, "int64"),
    (2 ** 63 - 3, 2 ** 63, 1, "int64"),                      # up to the largest int64
    (-2 ** 63, -2 ** 63 + 3, 1, "int64"),
    (-2 ** 63, 2 ** 63 - 1, 2 ** 64 - 2, "int64"),           # a step beyond int64
    (2 ** 62, -2 ** 62, -2 ** 61, "int64"),
    (10, -10, -7, "int32"), (-128, 128, 51, "int8"), (0, 256, 85, "uint8"),
    (2 ** 31 - 5, 2 ** 31 - 1, 1, "int32"),
    (0, 5.5, 2, "int32"), (0.0, 6.0, 2.0, "int64"), (0, 2, 1, "bool"),
    (2 ** 53, 2 ** 53 + 4, 1, "float64"), (2 ** 24, 2 ** 24 + 8, 2, "float32"),
])
def test_integer_ranges_are_exact(start, stop, step, dtype):
    _eq(mx.nd.arange(start, stop, step, dtype=dtype), _exact_arange(start, stop, step, dtype))


def test_arange_issue_example_and_repeat():
    _eq(mx.nd.arange(2 ** 53, 2 ** 53 + 4, dtype="int64"),
        np.arange(2 ** 53, 2 ** 53 + 4, dtype=np.int64))
    _eq(mx.nd.arange(2 ** 62, 2 ** 62 + 6, 2, repeat=3, dtype="int64"),
        _exact_arange(2 ** 62, 2 ** 62 + 6, 2, "int64", repeat=3))
    _eq(mx.nd.arange(5, repeat=2, dtype="int8"), np.repeat(np.arange(5, dtype=np.int8), 2))


@pytest.mark.parametrize("start, stop, step", [
    (0, 1, 0.1), (1, 1.3, 0.1), (-1.5, 2.5, 0.75), (0, 0.3, 0.1), (10, 0, -3), (0, 1e-3, 1e-4),
    (0.5, 0.5, 1), (3, 1, 1), (60000, 65504, 500), (1e7, 1e7 + 10, 0.5),
])
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_ranges(start, stop, step, dtype):
    if dtype == "float16" and start > 65504:
        with pytest.raises(MXNetError, match="arange: start=.*outside the range of float16"):
            mx.nd.arange(start, stop, step, dtype=dtype)
        return
    got = mx.nd.arange(start, stop, step, dtype=dtype).asnumpy()
    want = _exact_arange(start, stop, step, dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol={"float16": 1e-3, "float32": 1e-7,
                                                "float64": 1e-15}[dtype])


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(start=0, stop=NAN), "stop must be a finite number, got nan"),
    (dict(start=0, stop=INF), "stop must be a finite number, got inf"),
    (dict(start=0, stop=-INF, step=-1), "stop must be a finite number"),
    (dict(start=NAN), "stop must be a finite number"),           # start alone is the stop
    (dict(start=NAN, stop=3), "start must be a finite number"),
    (dict(start=0, stop=3, step=NAN), "step must be a finite number"),
    (dict(start=0, stop=3, step=INF), "step must be a finite number"),
    (dict(start=0, stop="5x"), "stop must be a real number.*'5x'"),
    (dict(start="a", stop=5), "start must be a real number"),
    (dict(start=0, stop=5, step="one"), "step must be a real number"),
    (dict(start=0, stop=5, step=None), "step must be a real number"),
    (dict(start=0, stop=5, step=0), "step must not be 0"),
    (dict(start=0, stop=5, repeat=0), "repeat must be >= 1"),
    (dict(start=0, stop=300, dtype="int8"), r"last value=299 is outside the range of int8"),
    (dict(start=-1, stop=3, dtype="uint8"), r"start=-1 is outside the range of uint8"),
    (dict(start=2 ** 63 - 2, stop=2 ** 63 + 2, dtype="int64"), "outside the range of int64"),
    (dict(start=0, stop=5, step=0.5, dtype="int32"), "step=0.5 is not an integer"),
    (dict(start=0.5, stop=5, dtype="int64"), "start=0.5 is not an integer"),
    (dict(start=0, stop=1e5, step=1e4, dtype="float16"), "outside the range of float16"),
    (dict(start=0, stop=2 ** 70, dtype="int64"), "outside the range of int64|int64 indexing"),
    (dict(start=0, stop=2 ** 62 * 4.0), "more elements than int64 indexing allows"),
    (dict(start=0, stop=3, step=1 + 1j), "step must be a real number"),
])
def test_arange_errors(kwargs, pattern):
    with pytest.raises(MXNetError, match="arange: .*" + pattern):
        mx.nd.arange(**kwargs)


def test_arange_reads_mxnet_string_forms():
    """start/stop/step as a symbol JSON holds them: integers stay exact, floats are floats."""
    _eq(mx.nd.arange("2", "11", "3", dtype="int64"), np.array([2, 5, 8], np.int64))
    _eq(mx.nd.arange("0", stop=str(2 ** 62 + 2), step=str(2 ** 62), dtype="int64"),
        np.array([0, 2 ** 62], np.int64))
    _eq(mx.nd.arange("0.5", "2", "0.5"), np.array([0.5, 1.0, 1.5], np.float32))
    _eq(mx.nd.arange("3", stop="None"), np.array([0, 1, 2], np.float32))


# ---- item 3: impossible allocations ---------------------------------------------------------
def test_one_hot_absurd_depth():
    idx = mx.nd.array([1, 2])
    with pytest.raises(MXNetError, match=r"one_hot: .*\(2, 4611686018427387904\)"):
        mx.nd.one_hot(idx, depth=2 ** 62)
    with pytest.raises(MXNetError, match=r"one_hot: .*\(2, 2305843009213693952\)"):
        mx.nd.one_hot(idx, depth=2 ** 61)                # 2**62 elements, 2**64 bytes
    with pytest.raises(MXNetError, match=r"one_hot: output shape \(2, 1125899906842624\) of "
                                         r"float32 needs 9007199254740992 bytes"):
        mx.nd.one_hot(idx, depth=2 ** 50)
    with pytest.raises(MXNetError, match="one_hot: depth must be non-negative, got -1"):
        mx.nd.one_hot(idx, depth=-1)
    with pytest.raises(MXNetError, match="one_hot: depth must be non-negative"):
        mx.nd.one_hot(idx, depth=-2 ** 62)


@pytest.mark.parametrize("make", [
    lambda: mx.nd.zeros((2 ** 25, 2 ** 25)),
    lambda: mx.nd.ones((2 ** 50,), dtype="int8"),
    lambda: mx.nd.full((2 ** 48, 8), 3, dtype="int64"),
    lambda: mx.nd.arange(0, 2 ** 52),
    lambda: mx.nd.arange(0, 2 ** 30, repeat=2 ** 22),
    lambda: mx.nd.random.uniform(shape=(2 ** 50,)),
    lambda: mx.nd.random.normal(shape=(2 ** 20, 2 ** 30), dtype="float64"),
])
def test_impossible_allocations_are_errors(make):
    """Petabytes: more than any machine's memory and swap, and below 2**62 elements (so it is
    the allocation check that answers, before NumPy's MemoryError)."""
    with pytest.raises(MXNetError, match=r"(zeros|ones|full|arange|_random_\w+): .*shape "
                                         r"\(.*\) of \w+ needs \d+ bytes, more than this "
                                         r"machine's memory and swap"):
        make()


def test_allocation_limit_is_exact(monkeypatch):
    monkeypatch.setattr(shape_utils, "_memory_limit", 1000)
    assert mx.nd.zeros((250,)).shape == (250,)                  # 1000 bytes
    with pytest.raises(MXNetError, match=r"zeros: shape \(251,\) of float32 needs 1004 bytes"):
        mx.nd.zeros((251,))
    assert mx.nd.one_hot(mx.nd.array([0]), 1000, dtype="int8").shape == (1, 1000)
    with pytest.raises(MXNetError, match=r"one_hot: .*\(1, 1001\) of int8 needs 1001 bytes"):
        mx.nd.one_hot(mx.nd.array([0]), 1001, dtype="int8")


def test_memory_limit_is_sane():
    limit = shape_utils.memory_limit()
    assert 2 ** 26 <= limit <= 2 ** 63 - 1


def test_negative_sizes():
    for make in (lambda: mx.nd.zeros((2, -1)), lambda: mx.nd.full((-3,), 1),
                 lambda: mx.nd.random.uniform(shape=(-1,))):
        with pytest.raises(MXNetError, match="negative dimension"):
            make()


# ---- item 4: shapes must be integers --------------------------------------------------------
@pytest.mark.parametrize("shape", ["ab", ("a", 2), (2.5,), (None,), ("2",), (2, [3]),
                                   (True, 2), (1 + 0j,)])
def test_non_integer_shapes_are_errors(shape):
    x = mx.nd.ones((2,))
    for name, make in (("reshape", lambda: x.reshape(shape)),
                       ("reshape", lambda: mx.nd.reshape(x, shape=shape)),
                       ("zeros", lambda: mx.nd.zeros(shape)),
                       ("ones", lambda: mx.nd.ones(shape)),
                       ("full", lambda: mx.nd.full(shape, 1.0)),
                       ("empty", lambda: mx.nd.empty(shape)),
                       ("_random_uniform", lambda: mx.nd.random.uniform(shape=shape))):
        with pytest.raises(MXNetError, match=rf"{name}: .*(shape|integer)"):
            make()


def test_reshape_issue_examples_and_integral_floats():
    x = mx.nd.arange(6)
    with pytest.raises(MXNetError, match=r"reshape: shape must be a tuple of integers"):
        x.reshape("ab")
    with pytest.raises(MXNetError, match=r"reshape: .*shape"):
        mx.nd.reshape(x, shape="ab")
    with pytest.raises(MXNetError, match=r"reshape: .*entry 2.5 is not an integer"):
        x.reshape(2.5, 2)
    assert x.reshape(2.0, 3).shape == (2, 3)                    # integral floats, as the registry
    assert x.reshape(np.int64(3), -1).shape == (3, 2)
    assert mx.nd.zeros((np.int32(2), 3.0)).shape == (2, 3)


def test_impossible_outputs_of_any_op_are_mxnet_errors():
    with pytest.raises(MXNetError, match="empty"):
        mx.nd.empty((2**40, 2**30))
    with pytest.raises(MXNetError, match=r"tile: cannot allocate .*\(10000000, 100000000\)"):
        mx.nd.tile(mx.nd.ones((1000,)), reps=(10**7, 10**5))
    with pytest.raises(MXNetError, match="'high'.*beyond the float64 range"):
        mx.nd.random.uniform(0, 10**400, shape=(2,))
