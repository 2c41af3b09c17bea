"""Runtime CPU dispatch (mxlite/_core/mx_simd.h): every SIMD level gives the same bits.

The element-wise and reduction loops are compiled once per level (baseline x86-64, AVX2,
AVX-512) and the best level the CPU runs is used. These tests run every kernel at every
level this CPU offers on inputs full of edge cases (NaN, signed zeros, infinities, halves,
values that round, odd lengths that leave loop tails) and require bit-identical output --
except the sign and payload of a NaN, which IEEE 754 leaves open when several NaNs meet
(x86 returns the first operand's, and a compiler may swap the operands of a commutative
add) -- so a level that reorders a sum or mishandles a tail fails here, whatever CPU CI has.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite._core import elemwise as ek
from mxlite._core import reduce as rk

pytestmark = pytest.mark.cpu_only     # SIMD levels of the CPU kernels

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = ("float32", "float64", "int8", "uint8", "int32", "int64", "bool")
LEVELS = {"elemwise": ek.available_simd(), "reduce": rk.available_simd()}


def _special(dtype, n, seed):
    """n values of ``dtype``: edge cases first, then random ones of mixed magnitude."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.startswith("float"):
        edge = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 0.5, -0.5, 1.5, -2.5, 1e-40,
                -1e-310, 3.0, -7.0, 1e30, -1e30, 2.0 ** 52 + 0.5, 0.49999997]
        x = np.concatenate([edge, rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)])
        x[rng.integers(0, x.size, n // 50)] = np.nan
        return x[:n].astype(dtype)
    info = np.iinfo(dtype)
    edge = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, info.min + 1, info.max - 1]
    x = np.concatenate([np.array(edge, dtype), rng.integers(info.min, info.max, n,
                                                            dtype=dtype, endpoint=True)])
    return x[:n]


def _bits(a):
    """The bytes of ``a`` with every NaN made the same NaN (a NaN's sign and payload are not
    part of the contract); signed zeros and everything else keep their bits."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.array(np.nan, a.dtype), a)
    return a.tobytes()


def _at_every_level(module, run):
    """[bytes of run() at each SIMD level]; the best level is restored afterwards."""
    out = []
    try:
        for level in LEVELS[module.__name__.rsplit(".", 1)[1]]:
            assert module.use_simd(level) == level
            out.append(run())
    finally:
        module.use_simd(None)
    return out


def _same(results, what):
    for level, got in zip(LEVELS["elemwise"], results):
        assert got == results[0], f"{what}: SIMD level {level} differs from baseline"


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_kernels_agree_across_levels(dtype):
    x = _special(dtype, 2051, 1)                 # one chunk and a tail, not a multiple of 64
    for name, op_id in ek.UNARY_IDS.items():
        if not ek.supports_unary(op_id, dtype):
            continue

        def run():
            y = np.empty_like(x)
            with np.errstate(all="ignore"):
                ek.unary(op_id, x, y)
            return _bits(y)
        _same(_at_every_level(ek, run), f"{name} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_kernels_agree_across_levels(dtype):
    a = _special(dtype, 3 * 701, 2).reshape(3, 701)
    b = _special(dtype, 3 * 701, 3).reshape(3, 701)
    b[0, :100] = a[0, :100]                       # equal operands for the comparisons
    # contiguous, scalar-broadcast on either side, and a strided broadcast (column)
    cases = [(a, b), (a, b[1:2, 5:6].copy()), (a[2:3, 7:8].copy(), b), (a, b[:, :1].copy()),
             (a[:1].copy(), b)]
    for name, op_id in ek.BINARY_IDS.items():
        if not ek.supports_binary(op_id, dtype):
            continue
        for k, (u, v) in enumerate(cases):
            def run():
                out = np.empty(np.broadcast_shapes(u.shape, v.shape), dtype)
                with np.errstate(all="ignore"):
                    ek.binary(op_id, u, v, out)
                return _bits(out)
            _same(_at_every_level(ek, run), f"{name} {dtype} case {k}")


def test_elementwise_parallel_path_agrees_across_levels():
    """Above PARALLEL_MIN elements the work is split into chunks run in parallel."""
    a, b = _special("float32", 300_001, 4), _special("float32", 300_001, 5)
    x, y = mx.nd.array(a), mx.nd.array(b)
    _same(_at_every_level(ek, lambda: (_bits(mx.nd.maximum(x, y).asnumpy())
                                       + _bits(mx.nd.rint(x).asnumpy())
                                       + _bits((x / y).asnumpy()))), "parallel")


# (outer, n, inner) layouts: short rows (< 32 accumulators), one leaf, several leaves,
# rows longer than a parallel chunk (2**15), columns with and without the cascade
LAYOUTS = [(7, 5, 1), (3, 33, 1), (2, 511, 1), (2, 4133, 1), (1, 70_001, 1), (1, 1, 1),
           (3, 6, 5), (2, 67, 19), (1, 300, 1100), (4, 1000, 3)]


@pytest.mark.parametrize("dtype", ("float32", "float64", "int8", "uint8", "int32", "int64"))
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda s: "x".join(map(str, s)))
def test_reduction_kernels_agree_across_levels(dtype, layout):
    outer, n, inner = layout
    x = _special(dtype, outer * n * inner, 6)
    if dtype.startswith("float"):
        x = np.where(np.isinf(x), 1.0, x).astype(dtype)     # keep some sums finite
    for op, op_id in rk.OP_IDS.items():
        acc = rk.acc_dtype(op, np.dtype(dtype))
        if acc is None:
            continue
        for final in ((0, 1, 2) if acc.kind == "f" else (0, 1)):
            def run():
                out = np.empty(outer * inner, acc)
                with np.errstate(all="ignore"):
                    rk.reduce(op_id, x, out, outer, n, inner, final, n)
                return _bits(out)
            _same(_at_every_level(rk, run), f"{op} {dtype} final={final}")
    for which in (0, 1):
        def run():
            out = np.empty(outer * inner, np.int64)
            rk.argreduce(which, x, out, outer, n, inner)
            return out.tobytes()
        _same(_at_every_level(rk, run), f"arg{which} {dtype}")


def test_float_sum_order_is_the_documented_one():
    """The pairwise order (32 accumulators over leaves of 512, leaves halved at multiples of
    32, chunks of 2**15 combined pairwise) reproduced in NumPy float32, at every level."""
    def leaf(v):
        if v.size < 32:
            r = np.float32(0)
            for e in v:
                r = np.float32(r + e)
            return r
        nb = v.size - v.size % 32
        acc = v[:32].copy()
        for i in range(32, nb, 32):
            acc = (acc + v[i:i + 32]).astype(np.float32)
        for m in (16, 8, 4):
            acc = (acc[:m] + acc[m:2 * m]).astype(np.float32)
        r = np.float32(np.float32(acc[0] + acc[2]) + np.float32(acc[1] + acc[3]))
        for e in v[nb:]:
            r = np.float32(r + e)
        return r

    def pairwise(v):
        if v.size <= 512:
            return leaf(v)
        n2 = v.size // 2
        n2 -= n2 % 32
        return np.float32(pairwise(v[:n2]) + pairwise(v[n2:]))

    x = np.random.default_rng(7).standard_normal(2 ** 15 * 2 + 1234).astype(np.float32)
    chunks = [pairwise(x[c:c + 2 ** 15]) for c in range(0, x.size, 2 ** 15)]
    want = pairwise(np.array(chunks, np.float32)).tobytes()
    out = np.empty(1, np.float32)

    def run():
        rk.reduce(rk.OP_IDS["sum"], x, out, 1, x.size, 1)
        return out.tobytes()
    for got in _at_every_level(rk, run):
        assert got == want


def test_mxlite_simd_environment_variable_lowers_the_level():
    script = ("from mxlite._core import elemwise, reduce\n"
              "print(elemwise.simd_level(), reduce.simd_level())\n")
    env = dict(os.environ, MXLITE_SIMD="baseline", PYTHONPATH=ROOT)
    got = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert got == ["baseline", "baseline"]
    assert ek.simd_level() == ek.available_simd()[-1]      # this process: the best level
    assert rk.use_simd("avx512") in rk.available_simd()     # never above what the CPU has
    rk.use_simd(None)
