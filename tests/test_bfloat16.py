"""bfloat16 arrays (ml_dtypes' dtype): creation, casts rounded once to nearest even, the
operators that compute in float32 and store bfloat16 (as float16 is handled), MXNet's type
flag 12 in .params files, and clear refusals where an operator has no bfloat16 path.

Expected values come from NumPy computed in float32 and rounded by ml_dtypes (a single
rounding of a float32 value), or from closed forms; the .params fixture was written by
MXNet 1.9.1 (tests/fixtures/make_bfloat16_fixture.py)."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "bfloat16_mxnet.params")


def bits(a):
    """The 16-bit patterns of a bfloat16 array (NaN == NaN, -0 != 0)."""
    a = a.asnumpy() if isinstance(a, mx.nd.NDArray) else np.asarray(a)
    assert a.dtype == BF16, a.dtype
    return a.view(np.uint16)


def rounded(x):
    """float32 values rounded once to bfloat16 by ml_dtypes."""
    return np.asarray(x, np.float32).astype(BF16)


def bf16_array(values):
    return mx.nd.array(np.asarray(values, np.float32), dtype="bfloat16")


# ---- the dtype ---------------------------------------------------------------------------------
def test_bfloat16_arrays_hold_ml_dtypes_bfloat16():
    for spelling in ("bfloat16", ml_dtypes.bfloat16, BF16,
                     np.dtype([("bfloat16", np.uint16)])):   # MXNet 1.9.1's stand-in dtype
        a = mx.nd.array([1.0, 2.5], dtype=spelling)
        assert a.dtype == BF16
        host = a.asnumpy()
        assert isinstance(host, np.ndarray) and host.dtype == BF16
        np.testing.assert_array_equal(host.astype(np.float32), [1.0, 2.5])
    for make in (mx.nd.zeros, mx.nd.ones):
        assert make((2, 3), dtype="bfloat16").dtype == BF16
    assert mx.nd.full((2,), 3.3, dtype="bfloat16").asnumpy()[0] == rounded(3.3)
    assert mx.nd.arange(0, 3, dtype="bfloat16").dtype == BF16
    assert mx.base.normalize_dtype("bfloat16") == BF16
    assert mx.base.dtype_range("bfloat16") == (-float(ml_dtypes.finfo(BF16).max),
                                               float(ml_dtypes.finfo(BF16).max))


def test_a_value_bfloat16_cannot_hold_is_refused_at_creation():
    with pytest.raises(MXNetError, match="overflows bfloat16"):
        mx.nd.array([1e39], dtype="bfloat16")


# ---- casts: one rounding to nearest even, NaN and infinities kept -----------------------------
ULP = 2.0 ** -7                          # bfloat16's spacing in [1, 2)
SPECIAL = [0.0, -0.0, 1.0, -2.75, 1 + ULP / 2, 1 + 3 * ULP / 2, 1 + ULP / 2 + 2.0 ** -20,
           1 + ULP / 2 - 2.0 ** -20, 3.3895313892515355e38, 3.4e38, -3.4e38, 1e-40,
           np.inf, -np.inf, np.nan, 65504.0, -12345.678]


@pytest.mark.parametrize("how", ["array", "astype", "cast", "Cast", "amp_cast",
                                 "amp_multicast"])
def test_float32_to_bfloat16_rounds_as_ml_dtypes(how):
    src = np.array(SPECIAL, np.float32)
    x = mx.nd.array(src)
    out = {"array": lambda: _array_of(src),
           "astype": lambda: x.astype("bfloat16"),
           "cast": lambda: mx.nd.cast(x, dtype="bfloat16"),
           "Cast": lambda: mx.nd.Cast(x, dtype="bfloat16"),
           "amp_cast": lambda: mx.nd.amp_cast(x, dtype="bfloat16"),
           "amp_multicast": lambda: mx.nd.amp_multicast(
               x, mx.nd.ones((1,), dtype="bfloat16"), num_outputs=2, cast_narrow=True)[0],
           }[how]()
    np.testing.assert_array_equal(bits(out), bits(rounded(src)))
    back = out.astype("float32").asnumpy()
    # ties went to the even neighbour; past the largest finite value is infinity
    assert back[4] == 1.0 and back[5] == 1 + 2 * ULP
    assert back[6] == 1 + ULP and back[7] == 1.0
    assert back[9] == np.inf and back[10] == -np.inf and np.isnan(back[14])
    assert np.signbit(back[1]) and back[1] == 0


def _array_of(src):
    """``mx.nd.array(src, dtype='bfloat16')``, whose values past bfloat16's largest finite
    one are refused (test_a_value_bfloat16_cannot_hold_is_refused_at_creation): those are
    given as the infinities a cast makes of them."""
    fits = np.abs(src) <= ml_dtypes.finfo(BF16).max
    return mx.nd.array(np.where(fits | np.isnan(src), src, np.copysign(np.inf, src)),
                       dtype="bfloat16")


def test_bfloat16_to_wider_floats_is_exact_and_to_integers_truncates():
    x = bf16_array([1.5, -2.75, 300.0, np.inf, np.nan])
    np.testing.assert_array_equal(x.astype("float32").asnumpy(),
                                  [1.5, -2.75, 300.0, np.inf, np.nan])
    np.testing.assert_array_equal(x.astype("float64").asnumpy(),
                                  [1.5, -2.75, 300.0, np.inf, np.nan])
    np.testing.assert_array_equal(x[:3].astype("int32").asnumpy(), [1, -2, 300])
    # to float16: 300 is exact, infinity stays infinity
    np.testing.assert_array_equal(x.astype("float16").asnumpy(),
                                  np.array([1.5, -2.75, 300.0, np.inf, np.nan], np.float16))


def test_float64_and_int64_to_bfloat16_round_once():
    """ml_dtypes goes through float32 and rounds twice: 1 + 2**-8 + 2**-40 first becomes the
    float32 tie 1 + 2**-8 and then 1.0; one rounding gives 1 + 2**-7."""
    above_tie = 1 + ULP / 2 + 2.0 ** -40
    assert np.float64(above_tie).astype(np.float32) == 1 + ULP / 2     # the float32 tie
    x64 = mx.nd.array([above_tie, -above_tie, 1 + ULP / 2, 1e300, 2.0 ** -140],
                      dtype="float64")
    want = [1 + ULP, -(1 + ULP), 1.0, np.inf, 0.0]
    for out in (x64.astype("bfloat16"), mx.nd.cast(x64, dtype="bfloat16"),
                _array_of(x64.asnumpy())):
        np.testing.assert_array_equal(out.asnumpy().astype(np.float64), want)
    # 2**24 + 2**16 + 1 lies above the tie between 2**24 and 2**24 + 2**17 (through float32
    # it becomes the tie itself and then 2**24)
    n = 2 ** 24 + 2 ** 16 + 1
    i64 = mx.nd.array([n, -n], dtype="int64")
    np.testing.assert_array_equal(i64.astype("bfloat16").asnumpy().astype(np.float64),
                                  [2 ** 24 + 2 ** 17, -(2 ** 24 + 2 ** 17)])


def test_cast_gradient_flows_back_to_bfloat16():
    x = bf16_array([1.5, -2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = (x.astype("float32") * mx.nd.array([3.0, 5.0])).sum()
    y.backward()
    assert x.grad.dtype == BF16
    np.testing.assert_array_equal(x.grad.asnumpy().astype(np.float32), [3.0, 5.0])


# ---- operators: float32 compute, bfloat16 storage ---------------------------------------------
def _inputs(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rounded(rng.uniform(-2, 2, size=s)) for s in shapes]


def _f32(*arrays):
    return [a.astype(np.float32) for a in arrays]


CASES = {
    # name: (input shapes, mxlite call, NumPy float32 reference)
    "sin": ([(3, 4)], lambda a: mx.nd.sin(a), np.sin),
    "exp": ([(3, 4)], lambda a: mx.nd.exp(a), np.exp),
    "broadcast_add": ([(3, 4), (1, 4)], lambda a, b: a + b, np.add),
    "mul_scalar": ([(5,)], lambda a: a * 2.5, lambda a: a * np.float32(2.5)),
    "rdiv_scalar": ([(5,)], lambda a: 1.5 / a, lambda a: np.float32(1.5) / a),
    "maximum_scalar": ([(5,)], lambda a: mx.nd.maximum(a, 0.3),
                       lambda a: np.maximum(a, np.float32(0.3))),
    "sum_axis": ([(3, 4)], lambda a: mx.nd.sum(a, axis=1), lambda a: a.sum(axis=1)),
    "mean": ([(3, 4)], lambda a: mx.nd.mean(a), lambda a: a.mean()),
    "max_axis0": ([(3, 4)], lambda a: mx.nd.max(a, axis=0), lambda a: a.max(axis=0)),
    "clip": ([(3, 4)], lambda a: mx.nd.clip(a, 0.1, 0.6),
             lambda a: np.clip(a, np.float32(0.1), np.float32(0.6))),
    "relu": ([(3, 4)], lambda a: mx.nd.Activation(a, act_type="relu"),
             lambda a: np.maximum(a, 0)),
    "sigmoid": ([(3, 4)], lambda a: mx.nd.sigmoid(a), lambda a: 1 / (1 + np.exp(-a))),
    "softmax": ([(3, 4)], lambda a: mx.nd.softmax(a),
                lambda a: np.exp(a - a.max(1, keepdims=True))
                / np.exp(a - a.max(1, keepdims=True)).sum(1, keepdims=True)),
    "dot": ([(3, 4), (4, 2)], lambda a, b: mx.nd.dot(a, b), np.dot),
    "FullyConnected": ([(3, 4), (5, 4), (5,)],
                       lambda x, w, b: mx.nd.FullyConnected(x, w, b, num_hidden=5),
                       lambda x, w, b: x @ w.T + b),
    "Pooling_avg": ([(1, 1, 4, 4)],
                    lambda a: mx.nd.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="avg"),
                    lambda a: a.reshape(1, 1, 2, 2, 2, 2).mean(axis=(3, 5))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_computes_in_float32_and_stores_bfloat16(name):
    shapes, call, ref = CASES[name]
    xs = _inputs(sum(map(ord, name)), *shapes)
    out = call(*[mx.nd.array(x, dtype="bfloat16") for x in xs])
    assert out.dtype == BF16
    want = rounded(ref(*_f32(*xs)))
    got = out.asnumpy()
    # one rounding of the float32 result; a sum in another order may differ in float32's last
    # bits, so a neighbouring bfloat16 value is allowed where the float32 result is near a tie
    diff = np.abs(got.view(np.uint16).astype(np.int32) - want.view(np.uint16).astype(np.int32))
    assert diff.max() <= 1, (got, want)


def test_autograd_through_bfloat16_ops():
    x = bf16_array([0.5, -1.25, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sum(x * x)
    y.backward()
    assert x.grad.dtype == BF16
    np.testing.assert_array_equal(x.grad.asnumpy().astype(np.float32), [1.0, -2.5, 4.0])


def test_finiteness_checks_read_bfloat16():
    x = bf16_array([1.0, np.inf, -np.inf, np.nan, -2.0])
    np.testing.assert_array_equal(mx.nd.contrib.isfinite(x).asnumpy().astype(np.float32),
                                  [1, 0, 0, 0, 1])
    np.testing.assert_array_equal(mx.nd.contrib.isnan(x).asnumpy().astype(np.float32),
                                  [0, 0, 0, 1, 0])
    assert mx.nd.contrib.isinf(x).dtype == BF16
    assert mx.nd.contrib.all_finite(x).asscalar() == 0.0
    assert mx.nd.contrib.all_finite(bf16_array([1.0, 3e38])).asscalar() == 1.0
    np.testing.assert_array_equal(
        mx.nd.contrib.hardmax(bf16_array([[1, 3, 2]])).asnumpy().astype(np.float32),
        [[0, 1, 0]])


@pytest.mark.parametrize("call,op", [
    (lambda x: mx.nd.Dropout(x, p=0.5), "Dropout"),
    (lambda x: mx.nd.LayerNorm(x, mx.nd.ones((4,)), mx.nd.zeros((4,))), "LayerNorm"),
    (lambda x: mx.nd.random.uniform_like(x), "uniform_like"),
    (lambda x: mx.nd.random.uniform(shape=(2,), dtype="bfloat16"), "uniform"),
    (lambda x: mx.nd.CTCLoss(x.reshape((1, 3, 4)), mx.nd.ones((3, 1))), "CTCLoss"),
    (lambda x: mx.nd.sgd_update(x, x, lr=0.1), "sgd_update"),
    (lambda x: mx.nd.random.multinomial(mx.nd.array([0.5, 0.5]), dtype="bfloat16"),
     "multinomial"),
])
def test_operators_without_a_bfloat16_path_refuse_clearly(call, op):
    x = mx.nd.ones((3, 4), dtype="bfloat16")
    with pytest.raises(MXNetError, match=f"{op}.*bfloat16"):
        call(x)


def test_amp_multicast_of_float16_and_bfloat16():
    h = mx.nd.ones((2,), dtype="float16")
    b = mx.nd.ones((2,), dtype="bfloat16")
    # widest: neither holds the other, so float32 (MXNet took whichever came first)
    assert [o.dtype for o in mx.nd.amp_multicast(h, b, num_outputs=2)] == [np.float32] * 2
    assert [o.dtype for o in mx.nd.amp_multicast(b, h, num_outputs=2)] == [np.float32] * 2
    # bfloat16 with float32: float32; narrow: bfloat16; float64 passes through
    f, d = mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64")
    assert [o.dtype for o in mx.nd.amp_multicast(b, f, d, num_outputs=3)] == [
        np.float32, np.float32, np.float64]
    assert [o.dtype for o in mx.nd.amp_multicast(b, f, d, num_outputs=3, cast_narrow=True)] \
        == [BF16, BF16, np.float64]
    with pytest.raises(MXNetError, match="amp_multicast.*float16 and bfloat16"):
        mx.nd.amp_multicast(h, b, num_outputs=2, cast_narrow=True)
    # amp_cast leaves float64 alone, as MXNet 1.9.1
    assert mx.nd.amp_cast(d, dtype="bfloat16").dtype == np.float64


def test_symbol_variables_and_type_inference_take_bfloat16():
    v = mx.sym.var("x", dtype="bfloat16")
    assert v.attr("__dtype__") == "12"           # MXNet's flag
    _, out, _ = mx.sym.relu(v).infer_type()
    assert out == [BF16]


# ---- .params: MXNet's type flag 12 ------------------------------------------------------------
def test_params_written_by_mxnet_load_as_bfloat16():
    d = mx.nd.load(FIXTURE)
    for src, bf in (("src", "bf16"), ("src_2d", "bf16_2d")):
        assert d[bf].dtype == BF16 and d[bf].shape == d[src].shape
        # MXNet's cast and ml_dtypes' agree bit for bit (NaN included)
        np.testing.assert_array_equal(bits(d[bf]), bits(rounded(d[src].asnumpy())))
        np.testing.assert_array_equal(bits(d[src].astype("bfloat16")), bits(d[bf]))


def test_params_round_trip_with_flag_12(tmp_path):
    a = bf16_array([[1.5, -2.7, np.nan], [np.inf, -0.0, 3e38]])
    path = str(tmp_path / "a.params")
    mx.nd.save(path, {"w": a, "f": mx.nd.ones((2,))})
    raw = open(path, "rb").read()
    # V2 record of w: magic, stype, ndim 2, shape (2, 3), then device type, id and flag 12
    assert (12).to_bytes(4, "little") in raw
    back = mx.nd.load(path)
    assert back["w"].dtype == BF16
    np.testing.assert_array_equal(bits(back["w"]), bits(a))


# ---- every operator of the gradient table: bfloat16 or a clear refusal ------------------------
# operators whose output dtype does not follow the input's, by contract
OWN_OUTPUT_DTYPE = {"_image_to_tensor": "ToTensor always gives float32, as MXNet"}


def _spec_inputs(spec, rng):
    if spec.sample is not None:
        return [np.asarray(a) for a in spec.sample(rng)]
    return [rng.uniform(*spec.domain(i), size=shape) for i, shape in enumerate(spec.shapes)]


def test_every_operator_takes_bfloat16_or_refuses_with_mxneterror():
    """For each row of the gradient table: the op on bfloat16 inputs either raises
    MXNetError or matches the op on the same values in float32, within bfloat16's precision
    (compositions round at every step). A TypeError, KeyError or crash from a kernel that
    met a dtype it does not know fails."""
    from gradspecs import all_specs
    wrong, checked = [], 0
    for name, spec in sorted(all_specs().items()):
        raw = _spec_inputs(spec, np.random.default_rng(0))
        floats = [a.dtype.kind == "f" for a in raw]
        inputs = [rounded(a).astype(np.float32) if f else a for a, f in zip(raw, floats)]
        try:
            ref = spec.call(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
        except MXNetError:
            continue                    # the row's inputs need float64 or other dtypes
        bf = [mx.nd.array(a, dtype="bfloat16" if f else a.dtype)
              for a, f in zip(inputs, floats)]
        try:
            out = spec.call(mx.nd, *bf)
        except MXNetError:
            continue                    # a clear refusal
        checked += 1
        refs = ref if isinstance(ref, (list, tuple)) else [ref]
        outs = out if isinstance(out, (list, tuple)) else [out]
        for r, o in zip(refs, outs):
            if r.dtype == np.float32 and o.dtype != BF16 and name not in OWN_OUTPUT_DTYPE:
                wrong.append(f"{name}: output dtype {o.dtype}")
            rv, ov = r.asnumpy().astype(np.float64), o.asnumpy().astype(np.float64)
            if not np.allclose(ov, rv, rtol=2e-2, atol=2e-2, equal_nan=True):
                wrong.append(f"{name}: off by {np.nanmax(np.abs(ov - rv))}")
    assert checked > 150
    assert not wrong, wrong


@pytest.mark.parametrize("call", [
    lambda x: mx.nd.Activation(x, act_type="sigmoid"),
    lambda x: mx.nd.LeakyReLU(x, act_type="elu", slope=0.3),
])
def test_large_bfloat16_activations_compute_in_float32_blocks(call, monkeypatch):
    """As for float16: the float32 copies hold one block of FLOAT16_BLOCK elements, not
    the whole array, and the values equal one pass over the whole array."""
    from mxlite.device import cpu
    from mxlite.ops import common
    x = mx.nd.array(np.random.default_rng(2).normal(size=(7, 1000)), dtype="bfloat16")
    whole = call(x).asnumpy()
    sizes, empty = [], cpu.empty

    def spy(shape, dtype):
        if np.dtype(dtype) == np.float32:
            sizes.append(int(np.prod(shape)))
        return empty(shape, dtype)
    monkeypatch.setattr(common, "FLOAT16_BLOCK", 512)
    monkeypatch.setattr(cpu, "empty", spy)
    blocked = call(x).asnumpy()
    np.testing.assert_array_equal(bits(blocked), bits(whole))
    assert sizes and max(sizes) <= 512


def test_every_forward_only_operator_takes_bfloat16_or_refuses_with_mxneterror():
    """The rows of the duality table's forward-only ops (comparisons, arg-reductions,
    optimizer updates, random ops, ...) with their float inputs in bfloat16: a result, or
    an MXNetError; never a TypeError from a kernel that met a dtype it does not know."""
    from test_duality import FORWARD
    ran = 0
    for name, row in sorted(FORWARD.items()):
        values = [np.asarray(v) for v in row.sample(np.random.default_rng(0))]
        arrays = [mx.nd.array(rounded(v), dtype="bfloat16") if v.dtype.kind == "f"
                  else mx.nd.array(v, dtype=v.dtype) for v in values]
        mx.random.seed(0)
        try:
            out = row.call(mx.nd, *arrays)
        except MXNetError:
            continue
        for o in out if isinstance(out, (list, tuple)) else [out]:
            o.asnumpy()
        ran += 1
    assert ran > 100


def test_where_reads_a_bfloat16_condition():
    cond = bf16_array([0.0, -0.0, 1.0, np.nan, -2.0, 1e-40])
    out = mx.nd.where(cond, mx.nd.ones((6,)), mx.nd.zeros((6,)))
    np.testing.assert_array_equal(out.asnumpy(), [0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(
        mx.nd.argmax_channel(bf16_array([[1, 3, 2], [5, 1, 5]])).asnumpy(), [1, 0])
    np.testing.assert_allclose(mx.nd.multi_sum_sq(bf16_array([3, 4]), num_arrays=1).asnumpy(),
                               [25.0])


def test_test_utils_compare_bfloat16_with_their_own_tolerances():
    from mxlite.test_utils import (assert_almost_equal, default_atols, default_numeric_eps,
                                   default_rtols)
    assert (default_rtols()[BF16], default_atols()[BF16]) == (4e-2, 1e-1)
    assert default_numeric_eps()[BF16] == 2.0 ** -3
    x = bf16_array([1.0, 3.14159, -250.0])
    assert_almost_equal(x, np.array([1.0, 3.14159, -250.0], np.float32))    # rounded once
    with pytest.raises(AssertionError):
        assert_almost_equal(x, np.array([1.0, 3.6, -250.0], np.float32))


@pytest.mark.parametrize("other,want", [
    ("float16", np.float32), ("float32", np.float32), ("float64", np.float64),
    ("int8", BF16), ("uint8", BF16), ("bool", BF16), ("int32", np.float64),
    ("int64", np.float64)])
def test_mixed_dtype_arithmetic_promotes(other, want):
    """NumPy's promotion where ml_dtypes has one; with float16 float32 (neither holds the
    other), with int32/int64 float64 (as float16 with them), where ml_dtypes has none."""
    b = bf16_array([1.5, -2.0])
    o = mx.nd.array([2, 1], dtype=other)
    for out in (b + o, o * b, mx.nd.broadcast_sub(b, o)):
        assert out.dtype == np.dtype(want)
    np.testing.assert_array_equal((b + o).asnumpy().astype(np.float64),
                                  np.array([1.5, -2.0]) + o.asnumpy().astype(np.float64))


def test_a_large_float64_cast_to_bfloat16_rounds_a_block_at_a_time(monkeypatch):
    """The float32-rounded-to-odd temporaries of a float64 -> bfloat16 cast hold one block
    (not five times the array), and the blocks give the whole array's result."""
    from mxlite import base
    from mxlite.device import cpu
    rng = np.random.default_rng(5)
    x = mx.nd.array(rng.standard_normal(5000) * 1e3, dtype="float64")
    whole = x.astype("bfloat16").asnumpy()
    seen, real = [], base.bfloat16_source

    def spy(src):
        seen.append(src.size)
        return real(src)
    monkeypatch.setattr(cpu, "bfloat16_source", spy)
    monkeypatch.setattr(cpu, "_BFLOAT16_BLOCK", 512)
    blocked = x.astype("bfloat16").asnumpy()
    np.testing.assert_array_equal(bits(blocked), bits(whole))
    assert seen and max(seen) <= 512 and sum(seen) == 5000
    np.testing.assert_array_equal(bits(whole), bits(_array_of(x.asnumpy())))


def test_creation_checks_bfloat16_sources():
    """A bfloat16 source has float32's range in 2 bytes: a value past float16's largest is
    refused when converting to float16, as from float32; initializers take bfloat16."""
    src = rounded([1.5, 3e38])
    with pytest.raises(MXNetError, match="overflows float16"):
        mx.nd.array(src, dtype="float16")
    np.testing.assert_array_equal(mx.nd.array(src[:1], dtype="float16").asnumpy(), [1.5])
    w = mx.nd.zeros((2,))
    mx.init.Constant(bf16_array([1.5, -2.0]))(mx.init.InitDesc("w_weight"), w)
    np.testing.assert_array_equal(w.asnumpy(), [1.5, -2.0])
    b = mx.nd.zeros((3, 4), dtype="bfloat16")
    mx.init.Uniform(0.5)(mx.init.InitDesc("b_weight"), b)           # float32 draws, cast
    assert b.dtype == BF16 and 0 < np.abs(b.asnumpy().astype(np.float32)).max() <= 0.5
