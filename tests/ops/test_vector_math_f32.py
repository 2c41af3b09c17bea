"""float32 exp, expm1, log, log2, log10, log1p, sigmoid and erf (mx_math.h ``*_v``): computed
in double by branch-free code that vectorizes and rounded once, so each result is the
float32 rounding of the float64 reference (SciPy/NumPy) over a sweep of every float32 bit
pattern at a stride, at every SIMD level, and at the special values C99 fixes."""
import numpy as np
import pytest
import scipy.special as sp

import mxlite as mx
from mxlite._core import elemwise

REFERENCE = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log2": np.log2,
             "log10": np.log10, "log1p": np.log1p, "sigmoid": sp.expit, "erf": sp.erf}


def _sweep():
    """Every 331st float32 bit pattern (about 13M points: both signs, subnormals, inf, NaN)."""
    return np.arange(0, 2 ** 32, 331, dtype=np.uint64).astype(np.uint32).view(np.float32)


def _rounded_reference(name, x):
    with np.errstate(all="ignore"):
        return REFERENCE[name](x.astype(np.float64)).astype(np.float32)


def _same_bits_or_both_nan(got, want):
    return (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))


@pytest.mark.cpu_only
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_float32_result_is_the_rounded_float64_value(name):
    x = _sweep()
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype="float32")).asnumpy()
    want = _rounded_reference(name, x)
    bad = np.flatnonzero(~_same_bits_or_both_nan(got, want))
    assert bad.size == 0, (name, bad.size, x[bad[:5]], got[bad[:5]], want[bad[:5]])


@pytest.mark.cpu_only
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_every_simd_level_gives_the_same_bits(name):
    x = _sweep()[::7]
    results = []
    try:
        for level in elemwise.available_simd():
            assert elemwise.use_simd(level) == level
            results.append(getattr(mx.nd, name)(mx.nd.array(x, dtype="float32")).asnumpy())
    finally:
        elemwise.use_simd(None)
    assert len(results) >= 1
    for other in results[1:]:
        assert np.array_equal(results[0].view(np.uint32), other.view(np.uint32))


@pytest.mark.parametrize("name,x,want", [
    ("exp", [-np.inf, -104.0, 0.0, 88.8, np.inf], [0.0, 0.0, 1.0, np.inf, np.inf]),
    ("expm1", [-np.inf, -0.0, 0.0, 1e-30, 89.0], [-1.0, -0.0, 0.0, 1e-30, np.inf]),
    ("log", [-1.0, -0.0, 0.0, 1.0, np.inf, 1e-45], [np.nan, -np.inf, -np.inf, 0.0, np.inf,
                                                    -103.27893]),
    ("log2", [8.0, 0.5, 2.0 ** -149, 0.0], [3.0, -1.0, -149.0, -np.inf]),
    ("log10", [1000.0, 1e-3, -2.0], [3.0, -3.0, np.nan]),
    ("log1p", [-1.0, -2.0, -0.0, 1e-30, np.inf], [-np.inf, np.nan, -0.0, 1e-30, np.inf]),
    ("sigmoid", [-np.inf, -103.0, 0.0, 20.0, np.inf], [0.0, 1.4e-45, 0.5, 1.0, 1.0]),
    ("erf", [-np.inf, -0.0, 2.0 ** -140, 4.5, np.inf],
     [-1.0, -0.0, 2.0 / np.sqrt(np.pi) * 2.0 ** -140, 1.0, 1.0]),        # erf x ~ 2x / sqrt pi
])
def test_special_values(name, x, want, device):
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype="float32", ctx=device)).asnumpy()
    want = np.array(want, np.float32)
    assert _same_bits_or_both_nan(got, want).all(), (got, want)
    assert np.isnan(getattr(mx.nd, name)(mx.nd.array([np.nan], ctx=device)).asnumpy()).all()
