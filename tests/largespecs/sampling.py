"""Large-tensor rows of the per-element samplers (``_sample_*``, mxlite/ops/sampling.py).

Two distributions (parameter arrays of shape (2,)), ``shape=(n // 2,)`` samples each: the
samples of parameter 1 start at n // 2, so a check past 2**31 or 2**32 reads the second
distribution, and a wrapped index would read the other one's parameters or another element's
Philox words. The oracles are those of random_optim.py (philox.h written again in Python):
element i is the standard sample of stream element i, transformed with its distribution's
parameters in double and rounded to the output dtype (uniform kept below high).

uniform, normal and exponential write float16 past 2**32 (8 GiB; drawn in blocks, so no
float32 temporary of the output's size). gamma draws float32 past 2**31 for real (its
per-element rejection sampler costs ~70 s there); the count samplers run with parameters
whose samples are all 0 (rate 0, p = 1), written over markers, as the _random_ rows.
"""
import numpy as np

import mxlite as mx

from . import Row
from .random_optim import (F32_REASON, GPU_ULPS, _checked, _close, _exponential, _gamma,
                           _normal, _stream_of_next_call, _word)

GAMMA_REASON = ("time and memory: gamma's per-element rejection sampler costs ~70 s per 2**31 "
                "float32 samples on two cores, and 2**32 float32 samples are 16 GiB")


def _two(t, n, dtype, name, params, element, ulps=0):
    """``_sample_<name>`` of the two distributions ``params`` ({input: (v0, v1)}), n // 2
    samples each; ``element(j, key, offset, i)`` is the oracle of flat element i."""
    per = n // 2
    key, offset = _stream_of_next_call(t)
    arrays = {k: mx.nd.array(v, dtype="float32") for k, v in params.items()}
    y = getattr(mx.nd, f"sample_{name}")(*arrays.values(), shape=(per,), dtype=dtype)
    t.shape(y, (2, per), name)
    t.seen(y)
    pos = _checked(t, 2 * per)
    _close(t, t.values(y, pos), [element(i // per, key, offset, i) for i in pos],
           f"sample_{name} at the far end", ulps)


def _uniform16(low, high):
    def element(j, key, offset, i):
        u = (_word(key, offset, i) >> 8) * (1.0 / (1 << 24))
        top = np.nextafter(np.float16(high[j]), np.float16(-np.inf))
        return min(np.float16(low[j] + (high[j] - low[j]) * u), top)
    return element


def _scaled16(standard, a, b):
    """float16(a[j] + b[j] * z) of the float32 standard sample z of element i."""
    return lambda j, key, offset, i: np.float16(a[j] + b[j] * float(standard(key, offset, i)))


def _row(name, params, element, dtype="float16", size="2**32", reason=None, ulps=0):
    def run(t):
        _two(t, t.N if size == "2**32" else t.N31, dtype, name, params, element, ulps)
    return Row(run, dtype, size, reason)


def _zero(name, params):
    """Every sample 0, written over ``t.big``'s markers through ``out=``."""
    def run(t):
        per = t.N31 // 2
        y = t.big("float32", 2 * per, values=(3, 5, 7, 9)).reshape((2, per))
        arrays = [mx.nd.array(v, dtype="float32") for v in params.values()]
        getattr(mx.nd, f"sample_{name}")(*arrays, shape=(per,), out=y)
        pos = _checked(t, 2 * per)
        t.equal(t.values(y, pos), np.zeros(len(pos), np.float32), f"sample_{name} at the far end")
    return Row(run, "float32", "2**31", F32_REASON)


_LOW, _HIGH = (-2.0, 0.5), (2.0, 0.75)
_MU, _SIGMA = (0.0, 3.0), (1.0, 0.5)
_LAM = (1.0, 4.0)
ROWS = {
    "_sample_uniform": _row("uniform", dict(low=_LOW, high=_HIGH), _uniform16(_LOW, _HIGH)),
    "_sample_normal": _row("normal", dict(mu=_MU, sigma=_SIGMA),
                           _scaled16(_normal(0.0, 1.0), _MU, _SIGMA), ulps=GPU_ULPS),
    "_sample_exponential": _row(
        "exponential", dict(lam=_LAM),
        lambda j, key, offset, i: np.float16(float(_exponential(1.0)(key, offset, i)) / _LAM[j]),
        ulps=GPU_ULPS),
    "_sample_gamma": _row(
        "gamma", dict(alpha=(2.5, 0.5), beta=(0.5, 2.0)),
        lambda j, key, offset, i: (_gamma(2.5, 0.5), _gamma(0.5, 2.0))[j](key, offset, i),
        dtype="float32", size="2**31", reason=GAMMA_REASON, ulps=GPU_ULPS),
    "_sample_poisson": _zero("poisson", dict(lam=(0.0, 0.0))),
    "_sample_negative_binomial": _zero("negative_binomial", dict(k=(1.0, 3.0), p=(1.0, 1.0))),
    "_sample_generalized_negative_binomial": _zero("generalized_negative_binomial",
                                                   dict(mu=(0.0, 0.0), alpha=(0.0, 2.0))),
}


ZIPF_REASON = ("int64 output (8 bytes a sample) kept as distinct classes per row (a hash set "
               "each): 2**31 samples are 16 GiB, and 2**29 samples take ~40 s on two shared "
               "cores (4.3 GiB peak)")


def _zipf_row(t):
    """Rows of 2**20 distinct classes (t.P31 >> 11 at small scale) out of range_max = 2**40,
    past 2**29 samples in all: every checked sample is a class in range, the rows read at the
    far end hold distinct classes, and every row took at least as many draws as samples."""
    need = max(4, t.power("2**29") >> 9)
    batch = t.power("2**29") // need + 1
    s, tries = mx.nd._internal._sample_unique_zipfian(range_max=2 ** 40, shape=(batch, need))
    t.shape(s, (batch, need), "samples")
    t.seen(s)
    pos = t.positions(batch * need)
    got = t.values(s, pos)
    t.check(bool(((got >= 0) & (got < 2 ** 40)).all()), "zipfian samples out of range")
    for row in sorted({0, batch // 2, batch - 1}):
        r = s[row].asnumpy()
        t.check(np.unique(r).size == need, f"row {row}: repeated classes")
    t.check(bool((tries.asnumpy() >= need).all()), "a row took fewer draws than samples")


ROWS["_sample_unique_zipfian"] = Row(_zipf_row, "int64", "2**29", ZIPF_REASON)
