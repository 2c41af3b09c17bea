"""GPU-specific checks of the data movement, index, sorting and linear-algebra kernels
(mxlite/cuda/ops/index.py and the modules it imports): results equal the CPU's bit for bit
where the CPU order is defined (scatter-adds, cumsum), for any launch configuration, with
64-bit index arithmetic, and the CPU's errors."""
import re

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.cuda import emulator, kernels

pytestmark = pytest.mark.gpu

FAMILIES = ("gather", "index", "sequence", "linalg", "sorting")


def _both(fn):
    """fn(ctx) on the CPU and on the GPU, as NumPy arrays (a list for several outputs)."""
    out = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        r = fn(ctx)
        out.append([a.asnumpy() for a in r] if isinstance(r, (list, tuple)) else r.asnumpy())
    return out


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), (a, b)


@pytest.fixture(params=[(1, 1), (2, 3), (3, 64)], ids=lambda p: f"grid{p[0]}x{p[1]}")
def launch_config(request, monkeypatch):
    """Run the emulated kernels with another launch configuration: grid-stride loops must
    give the same result for every one."""
    from mxlite.cuda import runtime
    if runtime.backend() != "emulator":
        pytest.skip("launch configurations are chosen by the emulator")
    monkeypatch.setattr(emulator, "GRID", request.param[0])
    monkeypatch.setattr(emulator, "BLOCK", request.param[1])
    return request.param


# ---- the kernels' source ---------------------------------------------------------------------
def test_kernel_indices_are_64_bit():
    """Every kernel of these families is a grid-stride loop, and none declares a plain
    ``int``/``unsigned``/``size_t`` (indices, sizes and offsets are mx_idx / long long)."""
    for fam in FAMILIES:
        for name, k in kernels.family(fam).items():
            code = re.sub(r"//[^\n]*", "", k.code)
            assert "MX_GRID_LOOP(" in code, (fam, name)
            assert not re.search(r"\b(int|unsigned|size_t)\s+\w+\s*[=;,)]", code), (fam, name)


def test_positions_of_indices_beyond_2_to_32():
    """Index arithmetic past 2^32 (no data needed: the position kernel alone)."""
    from mxlite.cuda.ops.index import positions
    from mxlite.cuda import runtime
    xp = runtime.namespace()
    n = 2 ** 41
    idx = np.array([2 ** 40 + 5, 2 ** 45, -3, 2 ** 33], np.int64)
    pos = xp.to_host(positions(xp, "take", xp.from_host(idx), n, "clip", 0))
    assert pos.tolist() == [2 ** 40 + 5, n - 1, 0, 2 ** 33]
    pos = xp.to_host(positions(xp, "take", xp.from_host(idx), n, "wrap", 0))
    assert pos.tolist() == [2 ** 40 + 5, 2 ** 45 % n, n - 3, 2 ** 33]
    fidx = np.array([2.0 ** 40 + 0.75, -(2.0 ** 34) - 0.5, 1e30], np.float64)
    pos = xp.to_host(positions(xp, "take", xp.from_host(fidx), n, "wrap", 0))
    assert pos.tolist() == [2 ** 40, n - 2 ** 34, (2 ** 63 - 1) % n]


# ---- scatter-adds: deterministic, the CPU's order ---------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int8"])
def test_take_grad_equals_the_cpu_bit_for_bit(dtype, launch_config, rng):
    g = (rng.standard_normal((3, 200, 5)) * 100 if dtype[0] == "f"
         else rng.integers(-100, 100, (3, 200, 5)))
    idx = rng.integers(0, 4, 200).astype(np.float32)     # 200 indices into 4 rows: repeats
    data = np.zeros((3, 4, 5), dtype)

    def run(ctx):
        return mx.nd._internal._take_grad(mx.nd.array(g, dtype=dtype, ctx=ctx),
                                          mx.nd.array(idx, ctx=ctx),
                                          mx.nd.array(data, dtype=dtype, ctx=ctx), axis=1)
    cpu, gpu = _both(run)
    _same_bits(cpu, gpu)
    # against a NumPy reference: float sums in index order (float16 in float32, rounded once)
    work = np.float32 if dtype == "float16" else dtype
    ref = np.zeros((3, 4, 5), work)
    np.add.at(ref, (slice(None), idx.astype(np.int64)), g.astype(dtype).astype(work))
    if np.dtype(dtype).kind == "f":
        np.testing.assert_array_equal(gpu, ref.astype(dtype))
    else:
        np.testing.assert_array_equal(gpu, ref)


def test_take_along_axis_grad_equals_the_cpu_bit_for_bit(launch_config, rng):
    g = (rng.standard_normal((4, 50)) * 1e3).astype(np.float32)
    idx = rng.integers(0, 3, (4, 50))
    data = np.zeros((4, 3), np.float32)
    cpu, gpu = _both(lambda ctx: mx.nd._internal._take_along_axis_grad(
        mx.nd.array(g, ctx=ctx), mx.nd.array(idx, dtype="int64", ctx=ctx),
        mx.nd.array(data, ctx=ctx), axis=1))
    _same_bits(cpu, gpu)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_advanced_index_scatter_equals_numpy_add_at(dtype, launch_config, rng):
    """_getitem_scatter (the adjoint of x[idx]) accumulates repeats as numpy.add.at does;
    float16 rounds after every addition there."""
    key = (np.array([0, 2, 0, 0, 1]), slice(None), np.array([1, 1, 1, 0, 1]))
    v = (rng.standard_normal((5, 3)) * 10).astype(dtype)
    ref = np.zeros((3, 3, 2), dtype)
    np.add.at(ref, key, v)
    cpu, gpu = _both(lambda ctx: mx.nd._internal._getitem_scatter(
        mx.nd.array(v, dtype=dtype, ctx=ctx), key=key, shape=(3, 3, 2)))
    _same_bits(cpu, gpu)
    _same_bits(ref, gpu)


# ---- advanced indexing ----------------------------------------------------------------------
KEYS = [
    (np.array([2, 0, 2]),),
    (np.array([[1, -1], [0, 2]]), slice(1, None)),
    (slice(None), np.array([0, 1]), np.array([3, 2])),           # adjacent index arrays
    (np.array([0, 2]), slice(None), np.array([1, 0])),           # separated: moved first
    (Ellipsis, np.array([3, 0, 0])),
    (None, np.array([True, False, True]), 1),
    (np.array([[True, False, True, True], [False] * 4, [True] * 4]),),
    (1, np.array([2, 2, 0]), None, slice(None, None, -1)),
]


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_getitem_with_index_arrays(key, rng):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    cpu, gpu = _both(lambda ctx: mx.nd.array(x, ctx=ctx)[key])
    np.testing.assert_array_equal(gpu, x[key])
    _same_bits(cpu, gpu)


def test_setitem_with_repeated_indices_keeps_the_last_write(launch_config):
    x = np.zeros((4, 3), np.float32)
    key = (np.array([1, 3, 1, 1]),)
    value = np.arange(12, dtype=np.float32).reshape(4, 3)

    def run(ctx):
        a = mx.nd.array(x, ctx=ctx)
        a[key] = mx.nd.array(value, ctx=ctx)
        return a
    cpu, gpu = _both(run)
    _same_bits(cpu, gpu)
    assert gpu[1].tolist() == [9.0, 10.0, 11.0] and gpu[3].tolist() == [3.0, 4.0, 5.0]


def test_setitem_broadcasts_the_value():
    def run(ctx):
        a = mx.nd.zeros((3, 4), ctx=ctx)
        a[np.array([2, 0]), 1:3] = mx.nd.array([5, 6], ctx=ctx)
        return a
    cpu, gpu = _both(run)
    _same_bits(cpu, gpu)
    assert gpu[2].tolist() == [0, 5, 6, 0]


def test_getitem_gradient_on_gpu():
    x = mx.nd.array(np.arange(6.0).reshape(2, 3), ctx=mx.gpu(0))
    x.attach_grad()
    with mx.autograd.record():
        y = x[np.array([1, 1, 0]), np.array([2, 2, 0])]
    y.backward(mx.nd.array([1.0, 2.0, 4.0], ctx=mx.gpu(0)))
    assert x.grad.asnumpy().tolist() == [[4.0, 0.0, 0.0], [0.0, 0.0, 3.0]]


# ---- index ops: errors and float16 ----------------------------------------------------------
def test_take_errors_match_the_cpu():
    for ctx in (mx.cpu(), mx.gpu(0)):
        x = mx.nd.array([[1, 2], [3, 4]], ctx=ctx)
        with pytest.raises(MXNetError, match=r"take: index 5.0 at position 1 .* size 2"):
            mx.nd.take(x, mx.nd.array([0, 5], ctx=ctx), mode="raise")
        with pytest.raises(MXNetError, match="take: index nan at position 2 .*not a number"):
            mx.nd.take(x, mx.nd.array([0, 1, np.nan], ctx=ctx))
        with pytest.raises(MXNetError, match="pick: cannot index axis 1 of size 0"):
            mx.nd.pick(mx.nd.zeros((2, 0), ctx=ctx), mx.nd.array([0, 0], ctx=ctx))


@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
def test_take_modes_and_index_dtypes(mode, launch_config, rng):
    x = rng.standard_normal((3, 5, 2)).astype(np.float16)
    for dt in ("float16", "float64", "int8", "uint8", "int32", "int64"):
        raw = [0, 4, 2, 3] if mode == "raise" else [-7, 9, 2.9, -1.5]
        if dt == "uint8":
            raw = [0, 4, 2 if mode == "raise" else 9, 1]
        idx = np.array(raw, np.float64).astype(dt)
        cpu, gpu = _both(lambda ctx: mx.nd.take(mx.nd.array(x, dtype="float16", ctx=ctx),
                                                mx.nd.array(idx, dtype=dt, ctx=ctx), axis=1,
                                                mode=mode))
        _same_bits(cpu, gpu)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")    # the CPU's cast
def test_nan_and_out_of_range_indices_along_an_axis_raise():
    for ctx in (mx.cpu(), mx.gpu(0)):
        x = mx.nd.array([[1, 2, 3]], ctx=ctx)
        for bad in (np.nan, 3, -1, 1e30):
            with pytest.raises(MXNetError, match=r"_take_along_axis: 1 index value\(s\) outside"):
                mx.nd._internal._take_along_axis(x, mx.nd.array([[0, bad]], ctx=ctx), axis=1)


def test_one_hot_pick_and_pick_grad(launch_config):
    idx = np.array([[0, 3], [2, -1]], np.float32)
    cpu, gpu = _both(lambda ctx: mx.nd.one_hot(mx.nd.array(idx, ctx=ctx), 3, on_value=7,
                                               off_value=-1, dtype="int8"))
    _same_bits(cpu, gpu)
    data = np.arange(12, dtype=np.float64).reshape(3, 4)
    cpu, gpu = _both(lambda ctx: mx.nd.pick(mx.nd.array(data, dtype="float64", ctx=ctx),
                                            mx.nd.array([3, 0, 9], ctx=ctx), axis=1,
                                            mode="wrap"))
    assert gpu.tolist() == [3.0, 4.0, 9.0]
    _same_bits(cpu, gpu)
    cpu, gpu = _both(lambda ctx: mx.nd._internal._pick_grad(
        mx.nd.array([1, 2, 3], ctx=ctx), mx.nd.array([3, 0, 1], ctx=ctx),
        mx.nd.zeros((3, 4), ctx=ctx), axis=1))
    assert gpu.tolist() == [[0, 0, 0, 1], [2, 0, 0, 0], [0, 3, 0, 0]]


# ---- sorting, scans ----------------------------------------------------------------------------
def test_sort_orders_ties_and_nan_as_the_cpu(launch_config):
    x = np.array([[3, np.nan, 1, 3, -0.0, 0.0, np.nan, 1]], np.float32)
    for asc in (True, False):
        cpu, gpu = _both(lambda ctx: mx.nd.argsort(mx.nd.array(x, ctx=ctx), is_ascend=asc,
                                                   dtype="int64"))
        _same_bits(cpu, gpu)
        cpu, gpu = _both(lambda ctx: mx.nd.sort(mx.nd.array(x, ctx=ctx), is_ascend=asc))
        _same_bits(cpu, gpu)
        cpu, gpu = _both(lambda ctx: mx.nd.topk(mx.nd.array(x, ctx=ctx), k=3, ret_typ="both",
                                                is_ascend=asc))
        for c, g in zip(cpu, gpu):
            _same_bits(c, g)
    ref = np.argsort(x[0], kind="stable")
    assert gpu_argsort_ascending(x).tolist() == ref.tolist()


def gpu_argsort_ascending(x):
    return mx.nd.argsort(mx.nd.array(x, ctx=mx.gpu(0)), dtype="int64").asnumpy()[0]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_cumsum_equals_the_cpu_bit_for_bit(dtype, launch_config, rng):
    x = (rng.standard_normal((3, 70, 2)) * 50).astype(dtype)
    for axis in (None, 1):
        cpu, gpu = _both(lambda ctx: mx.nd.cumsum(mx.nd.array(x, dtype=dtype, ctx=ctx),
                                                  axis=axis))
        _same_bits(cpu, gpu)
    ref = np.cumsum(x.astype(np.int64) if dtype == "int8" else x.astype(np.float64), axis=1)
    np.testing.assert_allclose(gpu, ref, rtol=1e-2 if dtype == "float16" else 1e-5,
                               atol=0.5 if dtype == "float16" else 1e-3)


def test_sequence_ops_with_lengths(launch_config):
    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    lengths = np.array([1, 4, 2], np.float32)
    for axis in (0, 1):
        data = x if axis == 0 else x.transpose(1, 0, 2).copy()
        for op in (mx.nd.SequenceMask, mx.nd.SequenceLast, mx.nd.SequenceReverse):
            cpu, gpu = _both(lambda ctx: op(mx.nd.array(data, ctx=ctx),
                                            mx.nd.array(lengths, ctx=ctx),
                                            use_sequence_length=True, axis=axis))
            _same_bits(cpu, gpu)
    for op, lo in ((mx.nd.SequenceReverse, 0), (mx.nd.SequenceMask, None)):
        with pytest.raises(MXNetError, match=r"sequence_length\[2\] = nan is outside"):
            op(mx.nd.array(x, ctx=mx.gpu(0)), mx.nd.array([1, 2, np.nan], ctx=mx.gpu(0)),
               use_sequence_length=True)
    with pytest.raises(MXNetError, match=r"sequence_length\[1\] = 5.0 is outside \[1, 4\]"):
        mx.nd.SequenceLast(mx.nd.array(x, ctx=mx.gpu(0)), mx.nd.array([1, 5, 2], ctx=mx.gpu(0)),
                           use_sequence_length=True)


# ---- linear algebra ----------------------------------------------------------------------------
def test_potrf_of_a_non_positive_definite_matrix_raises():
    a = mx.nd.array([[1, 2], [2, 1]], dtype="float64", ctx=mx.gpu(0))
    with pytest.raises(MXNetError, match="potrf: the matrix is not positive definite"):
        mx.nd.linalg.potrf(a)
    with pytest.raises(MXNetError, match="inverse: the matrix is singular"):
        mx.nd.linalg.inverse(mx.nd.zeros((2, 2), ctx=mx.gpu(0)))


def test_potrf_reads_only_the_selected_triangle(rng):
    m = rng.standard_normal((2, 3, 3))
    spd = m @ m.transpose(0, 2, 1) + 3 * np.eye(3)
    junk = spd + np.triu(rng.standard_normal((3, 3)) * 100, 1)      # garbage above
    for lower in (True, False):
        a = junk if lower else junk.transpose(0, 2, 1)
        cpu, gpu = _both(lambda ctx: mx.nd.linalg.potrf(mx.nd.array(a, dtype="float64",
                                                                    ctx=ctx), lower=lower))
        np.testing.assert_allclose(gpu, cpu, rtol=1e-12, atol=1e-12)
        L = gpu if lower else gpu.transpose(0, 2, 1)
        np.testing.assert_allclose(L @ L.transpose(0, 2, 1), spd, rtol=1e-10)
