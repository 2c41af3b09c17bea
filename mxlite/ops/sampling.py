"""Per-element samplers: ``_sample_uniform``, ``_sample_normal``, ``_sample_gamma``,
``_sample_exponential``, ``_sample_poisson``, ``_sample_negative_binomial`` and
``_sample_generalized_negative_binomial`` (public ``sample_*``; ``mx.nd.random.uniform`` and
the others dispatch to them when a distribution parameter is an array).

The distribution parameters are arrays of one shape ``P`` and one float dtype; the output has
shape ``P + shape`` (``shape`` samples of each distribution, row-major: the samples of
parameter ``j`` are the flat elements ``[j * S, (j + 1) * S)``, ``S = prod(shape)``) and the
float dtype ``dtype`` (float32 by default, whatever the parameters' dtype, as MXNet).

The generator is the one of ``mxlite/ops/random.py``: one stream ``(seed, offset)`` per call,
flat output element ``i`` a pure function of ``(seed, offset, i)`` and its parameter. uniform,
normal and exponential transform (in double) the standard samples the ``_random_*`` kernels
draw; gamma and the count samplers run the same per-element rejection samplers with each
element's parameters (one kernel call per distribution and block). The output is written
in blocks of ``BLOCK`` elements, so no temporary grows with it. Nothing here is
differentiable (MXNet's gradients of these ops are zero).

``_sample_unique_zipfian`` draws distinct log-uniform classes per row (sampled softmax);
MXNet's Python ``contrib.rand_zipfian`` is in ``mxlite/_random_dispatch.py``.
"""
import math
from types import SimpleNamespace

import numpy as np

from .._core import random as _k
from ..base import FLOAT_DTYPES, is_bfloat16, op_error
from . import random as _random
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, register
from .shape_utils import check_alloc

__all__ = ["SAMPLERS", "BLOCK", "sample_into", "checked_params", "coefficients"]

BLOCK = 1 << 22          # output elements drawn at once (a multiple of the kernels' chunk)
_F32, _F64 = np.dtype("float32"), np.dtype("float64")


def _bad(op, name, values, ok, want):
    """MXNetError naming the first element of parameter ``name`` where ``ok`` is False."""
    where = np.flatnonzero(~ok)
    if where.size:
        j = int(where[0])
        raise op_error(op, f"{name} must be {want}; element {j} of {name} is "
                       f"{float(values.flat[j])!r} ({where.size} bad element(s) of "
                       f"{values.size})")


def _finite(v):
    return np.isfinite(v)


def _check_uniform(op, low, high):
    _bad(op, "low", low, _finite(low), "finite")
    _bad(op, "high", high, _finite(high), "finite")
    _bad(op, "low", low, low <= high, "<= high")


def _check_normal(op, mu, sigma):
    _bad(op, "mu", mu, _finite(mu), "finite")
    _bad(op, "sigma", sigma, _finite(sigma) & (sigma >= 0), "non-negative and finite")


def _positive(name):
    return lambda op, v: _bad(op, name, v, _finite(v) & (v > 0), "positive and finite")


def _check_gamma(op, alpha, beta):
    _positive("alpha")(op, alpha)
    _positive("beta")(op, beta)


def _check_poisson(op, lam):
    _bad(op, "lam", lam, _finite(lam) & (lam >= 0), "non-negative and finite")


def _check_nb(op, k, p):
    _bad(op, "k", k, _finite(k) & (k > 0), "positive and finite")
    _bad(op, "p", p, (p > 0) & (p <= 1), "in (0, 1]")


def _check_gnb(op, mu, alpha):
    _bad(op, "mu", mu, _finite(mu) & (mu >= 0), "non-negative and finite")
    _bad(op, "alpha", alpha, _finite(alpha) & (alpha >= 0), "non-negative and finite")


# ---- representable samples: the bounds of mxlite/ops/random.py, per element ------------------
def _limit_uniform(op, dt, low, high):
    for name, v in (("low", low), ("high", high)):
        with np.errstate(over="ignore"):
            stored = v.astype(dt)
        _bad(op, name, v, np.isfinite(stored), f"finite in {dt} (the samples must be "
             "representable; use a wider dtype)")


def _limit_bound(largest):
    """A check that the largest sample ``largest(dt, *params)`` is finite in the output
    dtype."""
    def limit(op, dt, *params):
        bound = largest(dt, *params)
        if bound.size:
            j = int(np.argmax(bound))
            what = ", ".join(f"{float(p[j])!r}" for p in params)
            _random._check_range(op, dt, f"samples of the parameters ({what}) of element {j}",
                                 float(bound[j]))
    return limit


def _gamma_max(alpha):
    a = np.where(alpha < 1.0, alpha + 1.0, alpha)
    d = a - 1.0 / 3.0
    return d * (1.0 + _random._Z_STREAM / np.sqrt(9.0 * d)) ** 3


_LIMITS = {
    "uniform": _limit_uniform,
    "normal": _limit_bound(lambda dt, mu, sigma: np.abs(mu) + _random._Z_MAX[_random._path(dt)]
                           * sigma),
    "exponential": _limit_bound(lambda dt, lam: _random._E_MAX[_random._path(dt)] / lam),
    "gamma": _limit_bound(lambda dt, alpha, beta: _gamma_max(alpha) * beta),
}


# ---- drawing ---------------------------------------------------------------------------------
def _standard(dist, buf, key, offset, start):
    """The standard samples (uniform [0, 1), N(0, 1), Exp(1)) of stream elements
    ``start, ...`` into float32/float64 ``buf``: those ``_random_<dist>`` transforms."""
    if dist == "uniform":
        _k.fill_continuous("uniform", buf, key, offset, 0.0, 1.0, 1.0, 1.0, 24, start)
    else:
        _k.fill_continuous(dist, buf, key, offset, 0.0, 1.0, start=start)


def coefficients(dist, params, dt):
    """``(a, b, top)`` per distribution (float64 arrays): a sample is
    ``min(a + b * z, top)`` in double, rounded to ``dt``, for the standard sample ``z``.

    uniform: a = low, b = high - low, top = the largest ``dt`` value below high (clamping in
    double then rounding equals rounding then clamping, since top is a ``dt`` value); when
    low and high round to one ``dt`` value, every sample is that value. normal: mu, sigma.
    exponential: 0, 1 / lam."""
    inf = np.full(params[0].shape, np.inf)
    if dist == "uniform":
        low, high = params
        lo, hi = low.astype(dt).astype(np.float64), high.astype(dt)
        top = np.nextafter(hi, dt.type(-np.inf)).astype(np.float64)
        same = lo >= hi.astype(np.float64)
        return (np.where(same, lo, low), np.where(same, 0.0, high - low),
                np.where(same, inf, top))
    if dist == "normal":
        return params[0], params[1], inf
    return np.zeros_like(params[0]), 1.0 / params[0], inf          # exponential


def _runs(lo, hi, per):
    """``(j, a, b)``: the flat output range [a, b) within [lo, hi) of parameter ``j``."""
    a = lo
    while a < hi:
        j = a // per
        b = min(hi, (j + 1) * per)
        yield j, a, b
        a = b


def _draw_block(sampler, host, params, lo, hi, per, key, offset, dt):
    """Fill ``host`` (the flat output elements [lo, hi), dtype ``dt``); returns the worst
    count above the exact-integer limit (or None)."""
    work = _F64 if dt == _F64 else _F32
    if sampler.stream is None:
        z = np.empty(hi - lo, work)
        _standard(sampler.dist, z, key, offset, lo)
        coef = coefficients(sampler.dist, params, dt)
        if per >= 1024:         # long runs of one distribution: one compiled pass a run
            for j, a0, b0 in _runs(lo, hi, per):
                _k.affine_into(z[a0 - lo:b0 - lo], host[a0 - lo:b0 - lo], coef[0][j],
                               coef[1][j], coef[2][j])
        else:
            which = np.arange(lo, hi, dtype=np.int64) // per
            host[...] = np.minimum(coef[0][which] + coef[1][which] * z.astype(np.float64),
                                   coef[2][which])
        return None
    buf = host if host.dtype == work else np.empty(hi - lo, work)
    top = float(_random._EXACT_INT[dt]) if sampler.counts else math.inf
    worst = []
    for j, a, b in _runs(lo, hi, per):
        p0, p1 = sampler.stream(*(float(p[j]) for p in params))
        worst.append(_k.fill_stream(sampler.dist, buf[a - lo:b - lo], key, offset, p0, p1,
                                    top, a))
    if buf is not host:                     # float16: a count past its range raises below
        _k.to_half(buf, host)
    return _random.worst_of(worst)


def sample_into(sampler, xp, params, out, key, offset):
    """Draw ``sampler``'s samples of the (host, float64, flat) ``params`` into device array
    ``out`` from the stream ``(key, offset)``, in blocks of ``BLOCK`` elements."""
    total = out.size
    if total == 0:
        return
    per = total // params[0].size
    flat = out.reshape(-1)
    # a CPU output is a host array: the blocks are drawn into it, not copied there
    direct = isinstance(out, np.ndarray) and out.flags.c_contiguous
    worst = []
    for lo in range(0, total, BLOCK):
        hi = min(total, lo + BLOCK)
        host = flat[lo:hi] if direct else np.empty(hi - lo, out.dtype)
        worst.append(_draw_block(sampler, host, params, lo, hi, per, key, offset, out.dtype))
        if not direct:
            xp.copyto(flat[lo:hi], xp.from_host(host))
    bad = _random.worst_of(worst)
    if bad is not None:
        raise _random.count_error(sampler.dist, bad, out.dtype)


# ---- the records -----------------------------------------------------------------------------
class Sampler(SimpleNamespace):
    """One per-element sampler: ``dist``, its ``inputs`` (MXNet's names), the element check,
    ``stream`` (the (p0, p1) of philox.h's element-stream sampler, or None for a transform of
    standard samples), whether samples are ``counts``, and its doc."""


SAMPLERS = [
    Sampler(dist="uniform", inputs=("low", "high"), check=_check_uniform, stream=None,
            counts=False, doc="uniform on [low, high) (every sample below high after rounding "
            "to dtype; low == high gives low)"),
    Sampler(dist="normal", inputs=("mu", "sigma"), check=_check_normal, stream=None,
            counts=False, doc="normal with mean mu and standard deviation sigma"),
    Sampler(dist="gamma", inputs=("alpha", "beta"), check=_check_gamma,
            stream=lambda a, b: (a, b), counts=False,
            doc="gamma with shape alpha and scale beta (mean alpha * beta)"),
    Sampler(dist="exponential", inputs=("lam",), check=_positive("lam"), stream=None,
            counts=False, doc="exponential with rate lam (mean 1 / lam)"),
    Sampler(dist="poisson", inputs=("lam",), check=_check_poisson,
            stream=lambda lam: (lam, 0.0), counts=True, doc="Poisson with mean lam"),
    Sampler(dist="negative_binomial", inputs=("k", "p"), check=_check_nb,
            stream=lambda k, p: (k, p), counts=True,
            doc="negative binomial: failures before the k-th success, success probability p "
            "(MXNet's documentation called p the failure probability; its sampler, as this "
            "one, used it as the success probability)"),
    Sampler(dist="generalized_negative_binomial", inputs=("mu", "alpha"), check=_check_gnb,
            stream=lambda mu, alpha: (mu, alpha), counts=True,
            doc="negative binomial with mean mu and dispersion alpha (variance mu + alpha "
            "mu^2; alpha = 0 is Poisson(mu))"),
]


def checked_params(sampler, xp, ins, dt):
    """The parameter arrays ``ins`` as flat float64 host arrays, checked (values in range,
    samples representable in ``dt``): MXNetError naming the first bad element."""
    op = f"_sample_{sampler.dist}"
    params = [np.asarray(xp.to_host(x), np.float64).reshape(-1) for x in ins]
    sampler.check(op, *params)
    if sampler.dist in _LIMITS:
        _LIMITS[sampler.dist](op, dt, *params)
    return params


def _example_args(sampler):
    """Parameter arrays of the docstring example (in range for every distribution)."""
    args = ["mx.nd.array([1.0, 2.0])"] * len(sampler.inputs)
    if sampler.dist == "negative_binomial":
        args[1] = "mx.nd.array([0.5, 0.5])"
    return ", ".join(args)


def _out_dtype(op, attrs):
    dt = _F32 if attrs.dtype is None else np.dtype(attrs.dtype)
    if dt not in FLOAT_DTYPES or is_bfloat16(dt):        # (the samplers write no bfloat16)
        raise op_error(op, f"dtype must be float16, float32 or float64, got {dt}")
    return dt


def _register(s):
    op = f"_sample_{s.dist}"

    def infer_shape(shapes, attrs):
        if len(shapes) != len(s.inputs):
            raise op_error(op, f"expected {len(s.inputs)} inputs {s.inputs}, got {len(shapes)}")
        if any(sh != shapes[0] for sh in shapes):
            raise op_error(op, "the parameters must have one shape, got " + ", ".join(
                f"{n} {sh}" for n, sh in zip(s.inputs, shapes)))
        return [check_alloc(op, tuple(shapes[0]) + tuple(attrs.shape), _out_dtype(op, attrs),
                            "shape")]

    def infer_type(dtypes, attrs):
        if any(dt not in FLOAT_DTYPES for dt in dtypes) or len(set(dtypes)) > 1:
            raise op_error(op, "the parameters must share one float dtype, got " + ", ".join(
                f"{n} {dt}" for n, dt in zip(s.inputs, dtypes)))
        return [_out_dtype(op, attrs)]

    def compute(rctx, ins, outs, attrs):
        xp, out = rctx.xp, outs[0]
        params = checked_params(s, xp, ins, out.dtype)
        key, offset = rctx.rng.next()
        if params[0].size:
            sample_into(s, xp, params, out, key, offset)

    register(OpDef(
        op, inputs=s.inputs, aliases=(f"sample_{s.dist}",),
        params=(Param("shape", "shape", (), "samples drawn from each distribution"),
                Param("dtype", "dtype", None, "output dtype: float16, float32 or float64 "
                      "(default float32, whatever the parameters' dtype)")),
        infer_shape=infer_shape, infer_type=infer_type, compute={"cpu": compute},
        gradient=NON_DIFFERENTIABLE, grad_needs=(),
        doc=f"""Samples of the {s.doc} distributions whose parameters are the elements of
{', '.join(f'``{n}``' for n in s.inputs)} (arrays of one shape and float dtype).

The output has shape ``{s.inputs[0]}.shape + shape``: ``shape`` samples per distribution.
A parameter out of range is an MXNetError naming its first bad element (MXNet did not check);
so are parameters whose samples the output dtype could not represent.

>>> x = mx.nd.sample_{s.dist}({_example_args(s)}, shape=(3,))
>>> x.shape
(2, 3)"""))


for _s in SAMPLERS:
    _register(_s)


# ---- _sample_unique_zipfian ------------------------------------------------------------------
_ZIPF = "_sample_unique_zipfian"


def _zipf_shape(shapes, attrs):
    if shapes:
        raise op_error(_ZIPF, f"takes no inputs, got {len(shapes)}")
    shape = tuple(attrs.shape) if attrs.shape is not None else ()
    if len(shape) != 2:
        raise op_error(_ZIPF, f"shape must be 2-D (batch, num_sampled), got {attrs.shape}")
    if attrs.range_max <= 0:
        raise op_error(_ZIPF, f"range_max must be positive, got {attrs.range_max}")
    if shape[1] > attrs.range_max:
        # MXNet looped forever: there are not that many distinct classes
        raise op_error(_ZIPF, f"cannot draw {shape[1]} distinct classes (shape {shape}) from "
                       f"range_max={attrs.range_max} classes")
    return [check_alloc(_ZIPF, shape, np.int64, "shape"), (shape[0],)]


def zipf_classes(u, range_max, out):
    """Classes of uniform [0, 1) draws ``u`` into the int64 ``out``: P(c) = log((c + 2) / (c
    + 1)) / log(range_max + 1), c in [0, range_max) (``floor(exp(u log(range_max + 1))) -
    1``). ``u`` (float64) is the scratch, overwritten: the passes run in place, since fresh
    memory (page faults) cost more than the arithmetic."""
    np.multiply(u, math.log(range_max + 1.0), out=u)
    np.exp(u, out=u)
    np.floor(u, out=u)
    np.copyto(out, u, casting="unsafe")           # truncation, as astype
    out -= 1
    np.clip(out, 0, range_max - 1, out=out)       # exp rounding up at u -> 1


_ZIPF_GROUP = 1 << 22       # draws per round (32 MiB of float64), whatever the output size


def distinct_rows_host(tables, order, held, tries, rows, draws):
    """``mxlite._core.random.distinct_rows`` in NumPy (``tables`` unused), for devices whose
    tests refuse the CPU kernels: each row's first distinct draws by a sort of the round's
    draws and a lookup of the classes it holds (O(n log n) a round, where the kernel's hash
    sets take one pass)."""
    need = order.shape[1]
    for k, r in enumerate(rows.tolist()):
        short = need - int(held[r])
        if short <= 0:
            continue
        d = draws[k]
        first = np.sort(np.unique(d, return_index=True)[1])        # first occurrences
        first = first[~np.isin(d[first], order[r, :held[r]])][:short]
        order[r, held[r]:held[r] + first.size] = d[first]
        held[r] += first.size
        tries[r] += int(first[-1]) + 1 if first.size == short else d.size


def _zipf_group(rctx, fill_uniform, distinct_rows, rows, need, range_max):
    """``rows`` rows of ``need`` distinct classes each, in draw order, and the draws each
    took (host int64 arrays). Each round every row still short draws ``need + 16`` classes
    and takes them in order (``distinct_rows``; None: the CPU kernel
    ``mxlite._core.random.distinct_rows``, a hash set per row, one pass over the draws,
    where sorting them cost O(n log n) a round: the large-tensor row of 2**29 samples took
    156 s sorting, 41 s hashing, on two shared cores)."""
    xp, width = rctx.xp, need + 16
    # the kernel's hash sets: the least power of two above 1.5 need slots a row, -1 free
    # (``distinct_table_bits``); the NumPy variant keeps none
    size = 1 << max(1, (need + need // 2).bit_length())
    tables = np.full((rows, size), -1, np.int64) if distinct_rows is None else None
    distinct_rows = distinct_rows or _k.distinct_rows
    order = np.empty((rows, need), np.int64)
    held, tries = np.zeros(rows, np.int64), np.zeros(rows, np.int64)
    pending = np.arange(rows, dtype=np.int64)
    # one uniform and one class buffer for every round (a round uses their first rows)
    uniforms, classes = xp.empty((rows, width), np.float64), np.empty((rows, width), np.int64)
    while pending.size:
        buf = uniforms[:pending.size]
        fill_uniform(rctx, buf)
        draws = classes[:pending.size]
        zipf_classes(np.asarray(xp.to_host(buf)), range_max, draws)
        distinct_rows(tables, order, held, tries, pending, draws)
        pending = pending[held[pending] < need]
    return order, tries


def zipf_compute(fill_uniform, distinct_rows=None):
    """The compute function on a device whose ``fill_uniform(rctx, buf)`` fills the float64
    device array ``buf`` with uniform [0, 1) draws from the device's next stream, and
    ``distinct_rows`` (default: the CPU kernel) keeps each row's distinct classes on the
    host. Rows go in groups of about ``_ZIPF_GROUP`` draws; each round draws ``num_sampled +
    16`` per row of the group and a row still short of ``num_sampled`` distinct classes draws
    again in the next round; ``num_tries`` counts the draws a row consumed."""
    def compute(rctx, ins, outs, attrs):
        xp = rctx.xp
        batch, need = outs[0].shape
        group = max(1, _ZIPF_GROUP // (need + 16))
        for g0 in range(0, batch, group):
            n = min(batch, g0 + group) - g0
            samples, tries = _zipf_group(rctx, fill_uniform, distinct_rows, n, need,
                                         attrs.range_max)
            xp.copyto(outs[0][g0:g0 + n], xp.from_host(samples))
            xp.copyto(outs[1][g0:g0 + n], xp.from_host(tries))
    return compute


def _cpu_uniform(rctx, buf):
    key, offset = rctx.rng.next()
    _k.fill_continuous("uniform", buf, key, offset, 0.0, 1.0, 1.0, 1.0, 24)


register(OpDef(
    _ZIPF, inputs=(),
    params=(Param("range_max", "int", REQUIRED, "the number of classes"),
            Param("shape", "shape", None, "(batch, num_sampled)")),
    num_outputs=2,
    infer_shape=_zipf_shape, infer_type=lambda dtypes, attrs: [np.dtype(np.int64)] * 2,
    compute={"cpu": zipf_compute(_cpu_uniform)}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
    doc="""Distinct classes from the approximately log-uniform (Zipfian) distribution
P(c) = log((c + 2) / (c + 1)) / log(range_max + 1) on [0, range_max), ``shape[1]`` per row
of ``shape[0]`` rows, in draw order (int64), and the number of draws each row took
(``num_tries``, int64): the sampler of sampled softmax. ``num_sampled > range_max`` is an
MXNetError (MXNet looped forever).

>>> s, tries = mx.nd._internal._sample_unique_zipfian(range_max=20, shape=(2, 5))
>>> s.shape, tries.shape, s.dtype.__name__
((2, 5), (2,), 'int64')"""))

# The samplers' CPU compute and its parameter checks run NumPy on host arrays (the CPU's own
# arrays, or host copies of the parameters); the GPU has its own kernels in
# cuda/ops/sampling.py, which share only these checks (tests/test_device.py reads this).
HOST_CODE = {
    "<module>": "a constant of the gamma bound, computed once on the host",
    "_bad": "positions of bad parameter elements in a host copy, for the error message",
    "_finite": "finiteness check of a host copy of the parameters",
    "_limit_uniform": "range check of a host copy of uniform's parameters",
    "_limit_bound": "the first parameter element whose samples pass the dtype's range",
    "_gamma_max": "a bound on gamma samples from host copies of alpha and beta",
    "coefficients": "per-element distribution coefficients from host copies of the parameters",
    "_draw_block": "the CPU sampler's block of draws (CPU arrays are host arrays)",
    "sample_into": "the CPU sampler's scratch for one block (CPU arrays are host arrays)",
    "checked_params": "host copies of the distribution parameters, checked before drawing",
    "zipf_classes": "log-uniform classes from host uniforms (both devices draw on the host)",
    "_zipf_group": "a group of rows' hash sets and distinct classes, built on the host",
    "distinct_rows_host": "the rows' distinct classes by sorts on the host (other devices)",
}
