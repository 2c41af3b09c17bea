"""Random sampling operators: ``mx.nd.random.uniform``, ``normal``, ``randint``, ``gamma``,
``exponential``, ``poisson``, ``negative_binomial``, ``generalized_negative_binomial``,
``multinomial``, ``shuffle`` and the ``*_like`` variants.

One generator: Philox4x32-10 (``mxlite/_core/philox.h``), counter-based. Each device has a
state ``(seed, offset)`` (``mxlite/device/rng.py``); every random operator call takes the
stream ``(seed, offset)`` of the device it runs on (``rctx.rng.next()``) and advances the
offset by one, so consecutive calls differ and a seed replays them all. Inside a call,
element ``i`` is a pure function of ``(seed, offset, i)``: the kernels split the work among
any number of threads and give the same numbers (see philox.h for the word layout).

Parameters are checked before anything is drawn, with errors naming the operator and the
argument. Nothing here is differentiable (each op is declared ``NON_DIFFERENTIABLE``).
"""
import math

import numpy as np

from .._core import random as _k
from ..base import DTYPES, FLOAT_DTYPES, MXNetError, is_bfloat16, op_error
from ..context import Context
from ..device import rng as _rng
from ..device.rng import DEFAULT_SEED, get_state, next_stream
from .common import F16, F32
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, register
from .shape_utils import check_alloc, check_shape, size_of

__all__ = ["seed", "next_stream", "get_state", "DEFAULT_SEED"]

# ---- seeding (the generator state lives in mxlite/device/rng.py) -------------------------------
_SEED_MOD = 1 << 64


def _as_seed(seed_state):
    if isinstance(seed_state, (bool, np.bool_)) or not isinstance(seed_state, (int, np.integer)):
        raise MXNetError(f"random.seed: seed_state must be an integer, got {seed_state!r}")
    seed_state = int(seed_state)
    if not -(1 << 63) <= seed_state < (1 << 64):
        raise MXNetError(f"random.seed: seed_state {seed_state} does not fit in 64 bits")
    return seed_state % _SEED_MOD


def seed(seed_state, ctx="all"):
    """Seed the generator of ``ctx`` (a Context), or of every device with ``ctx='all'``.

    The offset restarts at 0, so the same seed replays the same sequence of calls. With the
    same seed, the CPU and a GPU produce the same numbers for the same sequence of calls:
    bit-identical for uniform, randint, shuffle, multinomial's indices and Dropout; within
    a few ulp where the GPU's math library differs from the host's (normal, exponential;
    the rejection samplers gamma/poisson/negative_binomial may rarely differ in an element
    whose accept test an ulp flips). See ``mxlite.cuda.ops.random``.
    """
    s = _as_seed(seed_state)
    if isinstance(ctx, str) and ctx == "all":
        _rng.seed_all(s)
        return
    if not isinstance(ctx, Context):
        raise MXNetError(f"random.seed: ctx must be 'all' or a Context, got {ctx!r}")
    _rng.seed_device(_rng.device_key(ctx), s)


# ---- shared parameter checks -----------------------------------------------------------------
_CONTINUOUS_DTYPES = ("float16", "float32", "float64")
# the dtypes the samplers write (bfloat16 is not one: sample float32 and cast)
_CONTINUOUS = frozenset(np.dtype(d) for d in _CONTINUOUS_DTYPES)
_SHAPE = Param("shape", "shape", (1,), "output shape (MXNet's nd.random functions give (1,) "
               "when it is not given)")
_DTYPE = Param("dtype", "dtype", None, "output dtype: float16, float32 or float64 "
               "(default float32)")
_CTX = Param("ctx", "ctx", None, "device context (default: current context)")


def _finite(op, name, value):
    if not math.isfinite(value):
        raise op_error(op, f"{name} must be finite, got {value}")


def _positive(op, name, value):
    if not (value > 0 and math.isfinite(value)):
        raise op_error(op, f"{name} must be positive and finite, got {value}")


def _non_negative(op, name, value):
    if not (value >= 0 and math.isfinite(value)):
        raise op_error(op, f"{name} must be non-negative and finite, got {value}")


def _float_dtype(op, dtype):
    dt = np.dtype("float32") if dtype is None else np.dtype(dtype)
    if dt not in _CONTINUOUS:
        raise op_error(op, f"dtype must be one of {_CONTINUOUS_DTYPES}, got {dt}")
    return dt


def _like_dtype(op, dtypes):
    if len(dtypes) != 1:
        raise op_error(op, f"expected 1 input, got {len(dtypes)}")
    if dtypes[0] not in _CONTINUOUS:
        raise op_error(op, f"data must have a float dtype ({', '.join(_CONTINUOUS_DTYPES)}) "
                       f"to receive samples, got {dtypes[0]}")
    return [dtypes[0]]


# float16 outputs are drawn in float32 blocks of this many elements (16 MiB; a multiple of the
# kernels' chunk, so a block's samples are those of the whole draw): a float16 output past
# 2**32 elements needs no 16 GiB float32 temporary.
F16_BLOCK = 1 << 22


def _into(xp, out, fill):
    """Run ``fill(target, start)`` (write the stream's elements ``start, start + 1, ...`` into
    ``target``) over ``out``: directly, or in float32 blocks of at most ``F16_BLOCK`` elements
    when ``out`` is float16 (the samples are the float32 draw of the whole, rounded: by the
    compiled ``to_half``, 5x NumPy's cast, for a contiguous output). CPU only (``fill`` runs
    the CPU kernels)."""
    if out.dtype != F16:
        fill(out, 0)
        return
    flat = out.reshape(-1) if out.flags.c_contiguous else None
    if flat is None:
        tmp = xp.empty(out.shape, F32)
        fill(tmp, 0)
        xp.cast_into(out, tmp)
        return
    tmp = xp.empty(min(F16_BLOCK, out.size), F32)
    for lo in range(0, out.size, F16_BLOCK):
        n = min(F16_BLOCK, out.size - lo)
        fill(tmp[:n], lo)
        _k.to_half(tmp[:n], flat[lo:lo + n])


# ---- the distributions -----------------------------------------------------------------------
class _Dist:
    """One scalar-parameter distribution: its parameters, their check, the check that its
    samples are representable in the output dtype, and its kernel."""

    def __init__(self, name, params, check, limit, fill, doc, example):
        self.name, self.params, self.check, self.limit, self.fill = name, params, check, limit, fill
        self.doc, self.example = doc, example


# ---- samples must be representable in the output dtype ---------------------------------------
# Every kernel's samples are bounded, and the bounds are known exactly from the generator:
# float16 and float32 outputs draw through the float32 kernels, float64 through the float64
# ones. The uniform words are open intervals (w + 0.5) / 2^32 >= 2^-33 and
# ((x >> 11) + 0.5) / 2^53 >= 2^-54, so
#  * Box-Muller gives |z| <= sqrt(-2 ln 2^-33) = 6.764 (float32 path), sqrt(-2 ln 2^-54) = 8.652
#    (float64 path, and the normals inside the gamma sampler);
#  * the exponential gives -ln u <= 33 ln 2 = 22.87 (float32 path), 54 ln 2 = 37.43 (float64).
# The bounds below are rounded up.
_Z_MAX = {32: 6.765, 64: 8.653}
_E_MAX = {32: 22.88, 64: 37.44}
_Z_STREAM = 8.653
# Integer-valued samples (Poisson family) must be exact: the largest integer up to which
# every integer is representable.
_EXACT_INT = {np.dtype("float16"): 2 ** 11, np.dtype("float32"): 2 ** 24,
              np.dtype("float64"): 2 ** 53}
# The Poisson-family check accepts a rate when P(sample > limit) <= 2^-64 (Chernoff bound);
# a draw past the limit anyway is caught after sampling.
_LOG_TAIL = -64 * math.log(2)


def _path(dt):
    return 64 if dt == np.float64 else 32


def _too_wide(op, dt, what, bound):
    raise op_error(op, f"{what} can reach {bound:.6g}, beyond the largest finite {dt} value "
                   f"{float(np.finfo(dt).max):.6g}; the samples cannot be represented in {dt} "
                   "(use a wider dtype)")


def _check_range(op, dt, what, bound):
    if not bound <= float(np.finfo(dt).max):        # NaN or inf bounds fail too
        _too_wide(op, dt, what, bound)


def _gamma_max(alpha):
    """The largest Gamma(alpha, 1) sample the Marsaglia-Tsang kernel can return: d (1 + c z)^3
    with z <= _Z_STREAM, times a boost U^(1/alpha) < 1 when alpha < 1."""
    a = alpha + 1.0 if alpha < 1.0 else alpha
    d = a - 1.0 / 3.0
    return d * (1.0 + _Z_STREAM / math.sqrt(9.0 * d)) ** 3


def _limit_uniform(op, a, dt):
    for name in ("low", "high"):
        v = a[name]
        with np.errstate(over="ignore"):
            stored = dt.type(v)
        if not math.isfinite(stored):
            raise op_error(op, f"{name}={v} is beyond the largest finite {dt} value "
                           f"{float(np.finfo(dt).max):.6g}; the samples cannot be represented "
                           f"in {dt} (use a wider dtype)")


def _limit_normal(op, a, dt):
    _check_range(op, dt, f"normal samples with loc={a.loc}, scale={a.scale}",
                 abs(a.loc) + _Z_MAX[_path(dt)] * a.scale)


def _limit_exponential(op, a, dt):
    _check_range(op, dt, f"exponential samples with lam={a.lam}", _E_MAX[_path(dt)] / a.lam)


def _limit_gamma(op, a, dt):
    _check_range(op, dt, f"gamma samples with alpha={a.alpha}, beta={a.beta}",
                 _gamma_max(a.alpha) * a.beta)


def _poisson_rate_ok(rate, limit):
    """True when P(Poisson(rate) > limit) <= 2^-64, by the Chernoff bound
    P(K >= m) <= exp(-(m ln(m / rate) - m + rate)) for m = limit + 1 > rate."""
    if rate == 0:
        return True
    m = limit + 1.0
    if not rate < m:
        return False
    return -(m * math.log(m / rate) - m + rate) <= _LOG_TAIL


def _limit_counts(rate_of, what_of):
    def limit(op, a, dt):
        rate, top = rate_of(a), _EXACT_INT[dt]
        if not _poisson_rate_ok(rate, top):
            raise op_error(op, f"{what_of(a)} can exceed {top}, the largest integer up to which "
                           f"{dt} holds every integer exactly; the samples cannot be "
                           f"represented in {dt} (use a wider dtype)")
    return limit


def _nb_rate(a):
    return 0.0 if a.p == 1.0 else _gamma_max(float(a.k)) * ((1.0 - a.p) / a.p)


def _gnb_rate(a):
    return a.mu if a.alpha == 0.0 else _gamma_max(1.0 / a.alpha) * (a.alpha * a.mu)


def uniform_top_bits(dtype, low, high):
    """``(top, bits)`` of uniform samples on [low, high) stored in ``dtype``: the largest
    value a sample may take (the largest ``dtype`` value below high, so that no sample
    reaches high after rounding) and the random bits per sample (24 for float16 and float32;
    float64 samples always take 53). The CPU and GPU kernels take both. float16 samples are
    float32 samples rounded to nearest: an 11-bit grid would make a sample on [0, 1) exactly
    0 with probability 1/2048 (a 0/0 in an optimizer), 24 bits make it 2**-24."""
    store = np.dtype(dtype).type
    lo, hi = store(low), store(high)
    top = float(np.nextafter(hi, store(-np.inf)) if lo < hi else lo)
    return top, 24


def _fill_uniform(rctx, out, attrs):
    low, high = attrs.low, attrs.high
    key, offset = rctx.rng.next()
    top, bits = uniform_top_bits(out.dtype, low, high)
    _into(rctx.xp, out, lambda target, start: _k.fill_continuous(
        "uniform", target, key, offset, low, high - low, high, top, bits, start))


def _fill_simple(dist, a_of, b_of):
    def fill_out(rctx, out, attrs):
        key, offset = rctx.rng.next()
        _into(rctx.xp, out, lambda target, start: _k.fill_continuous(
            dist, target, key, offset, a_of(attrs), b_of(attrs), start=start))
    return fill_out


def count_error(dist, value, dtype):
    """The MXNetError of a count sample ``value`` too large to be exact in ``dtype``."""
    return op_error(f"_random_{dist}", f"drew {value:.17g}, above {_EXACT_INT[dtype]}, the "
                    f"largest integer up to which {dtype} holds every integer exactly (use a "
                    "wider dtype)")


def _fill_stream(dist, p0_of, p1_of, integer=False):
    """Samples drawn in double; the kernel checks integer-valued ones against the largest
    integer the output dtype holds exactly before rounding them, and the call raises when one
    is beyond it (the parameter check makes that improbable, below 2^-64 per sample, but
    never silent; the output is written before the call raises, as on the GPU)."""
    def fill_out(rctx, out, attrs):
        key, offset = rctx.rng.next()
        top = float(_EXACT_INT[out.dtype]) if integer else math.inf
        worst = []
        _into(rctx.xp, out, lambda target, start: worst.append(_k.fill_stream(
            dist, target, key, offset, p0_of(attrs), p1_of(attrs), top, start)))
        bad = worst_of(worst)
        if integer and bad is not None:
            raise count_error(dist, bad, out.dtype)
    return fill_out


def worst_of(values):
    """The worst of ``fill_stream``'s results over blocks: None when every block was in
    range, else a NaN if any, else the largest sample above the limit."""
    over = [v for v in values if v is not None]
    if not over:
        return None
    nan = [v for v in over if v != v]
    return nan[0] if nan else max(over)


def _check_uniform(op, a):
    _finite(op, "low", a.low)
    _finite(op, "high", a.high)
    if a.low > a.high:
        raise op_error(op, f"low must be <= high, got low={a.low}, high={a.high}")


def _check_normal(op, a):
    _finite(op, "loc", a.loc)
    _non_negative(op, "scale", a.scale)


def _check_gamma(op, a):
    _positive(op, "alpha", a.alpha)
    _positive(op, "beta", a.beta)


def _check_negative_binomial(op, a):
    if a.k <= 0:
        raise op_error(op, f"k must be a positive integer, got {a.k}")
    if not 0 < a.p <= 1:
        raise op_error(op, f"p must be in (0, 1], got {a.p}")


def _check_generalized(op, a):
    _non_negative(op, "mu", a.mu)
    _non_negative(op, "alpha", a.alpha)


DISTRIBUTIONS = [
    _Dist("uniform",
          (Param("low", "float", 0.0, "lower bound (included)"),
           Param("high", "float", 1.0, "upper bound (excluded)")),
          _check_uniform, _limit_uniform, _fill_uniform,
          "Samples uniform on the half-open interval [low, high).\n\nEvery value is below "
          "``high`` even after rounding to the output dtype (MXNet could return ``high``). "
          "float32 samples carry 24 random bits, float64 53; float16 samples are float32 samples "
          "rounded to nearest (and kept below high). low and high are "
          "rounded to the dtype first (when they round to the same value, every sample is "
          "that value); a bound that overflows the dtype (``high=1e5`` for float16) is an "
          "MXNetError, since the samples could not be represented (MXNet clamped them to the "
          "largest finite value).",
          ">>> x = mx.nd.random.uniform(-1, 1, shape=(2, 3))\n>>> x.shape, x.dtype.__name__\n"
          "((2, 3), 'float32')\n>>> bool((x.asnumpy() >= -1).all() and (x.asnumpy() < 1).all())\n"
          "True"),
    _Dist("normal",
          (Param("loc", "float", 0.0, "mean"),
           Param("scale", "float", 1.0, "standard deviation (>= 0)")),
          _check_normal, _limit_normal,
          _fill_simple("normal", lambda a: a.loc, lambda a: a.scale),
          "Samples from the normal distribution N(loc, ``scale**2``) (Box-Muller on the "
          "counter-based stream).\n\nThe generator's samples are bounded: "
          "``|x - loc| <= 6.765 * scale`` for float16 and float32 (drawn in float32), "
          "``8.653 * scale`` for float64. Parameters for which that range leaves the dtype's "
          "finite values (``|loc| + 6.765 * scale > 65504`` for float16) are an MXNetError: no "
          "sample is ever silently infinite (MXNet could store infinity).",
          ">>> mx.nd.random.normal(0, 1, shape=(4,), dtype='float64').dtype.__name__\n"
          "'float64'"),
    _Dist("exponential",
          (Param("lam", "float", 1.0, "rate lambda (> 0); the mean is 1 / lam"),),
          lambda op, a: _positive(op, "lam", a.lam), _limit_exponential,
          _fill_simple("exponential", lambda a: 0.0, lambda a: 1.0 / a.lam),
          "Samples from the exponential distribution with rate ``lam`` (density "
          "lam * exp(-lam * x), x >= 0).\n\nThe operator takes the rate, as MXNet's "
          "``_random_exponential`` did; MXNet's Python wrapper took ``scale = 1 / lam``. "
          "The generator's samples are at most 22.88 / lam for float16 and float32, "
          "37.44 / lam for float64; a rate for which that exceeds the dtype's largest finite "
          "value is an MXNetError.",
          ">>> bool((mx.nd.random.exponential(2.0, shape=(100,)) >= 0).asnumpy().all())\n"
          "True"),
    _Dist("gamma",
          (Param("alpha", "float", 1.0, "shape (> 0)"),
           Param("beta", "float", 1.0, "scale (> 0)")),
          _check_gamma, _limit_gamma,
          _fill_stream("gamma", lambda a: a.alpha, lambda a: a.beta),
          "Samples from the gamma distribution with shape ``alpha`` and scale ``beta`` "
          "(mean alpha * beta), by Marsaglia and Tsang's method.\n\nThe generator's "
          "samples are bounded (by beta d (1 + 8.653 / sqrt(9 d))^3, d = max(alpha, alpha + 1 "
          "when alpha < 1) - 1/3); parameters for which that bound exceeds the dtype's "
          "largest finite value are an MXNetError.",
          ">>> mx.nd.random.gamma(2.0, 0.5, shape=(2, 2)).shape\n(2, 2)"),
    _Dist("poisson",
          (Param("lam", "float", 1.0, "rate lambda (>= 0), the mean"),),
          lambda op, a: _non_negative(op, "lam", a.lam),
          _limit_counts(lambda a: a.lam, lambda a: f"Poisson samples with lam={a.lam}"),
          _fill_stream("poisson", lambda a: a.lam, lambda a: 0.0, integer=True),
          "Samples from the Poisson distribution with mean ``lam``, returned as floats "
          "(inversion below lam = 10, Hormann's PTRS above).\n\n" + "{COUNTS}",
          ">>> x = mx.nd.random.poisson(4.0, shape=(1000,)).asnumpy()\n"
          ">>> bool((x == np.floor(x)).all() and (x >= 0).all())\nTrue"),
    _Dist("negative_binomial",
          (Param("k", "int", 1, "number of successes to wait for (> 0)"),
           Param("p", "float", 1.0, "success probability of each trial, in (0, 1]")),
          _check_negative_binomial,
          _limit_counts(_nb_rate, lambda a: f"negative binomial samples with k={a.k}, "
                        f"p={a.p}"),
          _fill_stream("negative_binomial", lambda a: float(a.k), lambda a: a.p, integer=True),
          "Samples the number of failures before the ``k``-th success in trials that "
          "succeed with probability ``p`` (mean k (1 - p) / p; scipy.stats.nbinom(k, p)), "
          "as floats. Drawn as Poisson(Gamma(k, (1 - p) / p)).\n\nMXNet's documentation "
          "called ``p`` the failure probability, but its sampler (and this one) use it as "
          "the success probability.\n\n" + "{COUNTS}",
          ">>> mx.nd.random.negative_binomial(3, 0.5, shape=(2,)).shape\n(2,)"),
    _Dist("generalized_negative_binomial",
          (Param("mu", "float", 1.0, "mean (>= 0)"),
           Param("alpha", "float", 1.0, "dispersion (>= 0); the variance is mu + alpha mu^2")),
          _check_generalized,
          _limit_counts(_gnb_rate, lambda a: f"generalized negative binomial samples with "
                        f"mu={a.mu}, alpha={a.alpha}"),
          _fill_stream("generalized_negative_binomial", lambda a: a.mu, lambda a: a.alpha,
                       integer=True),
          "Samples from the negative binomial distribution with mean ``mu`` and dispersion "
          "``alpha`` = 1 / k (k generalised to real numbers), as floats: "
          "Poisson(Gamma(1 / alpha, alpha * mu)); alpha = 0 gives Poisson(mu).\n\n"
          + "{COUNTS}",
          ">>> mx.nd.random.generalized_negative_binomial(2.0, 0.3, shape=(3,)).shape\n(3,)"),
]

_COUNTS_DOC = (
    "The samples are counts and must be exact in the output dtype: at most 2048 for "
    "float16, ``2**24`` for float32, ``2**53`` for float64 (the largest integers up to which "
    "the dtype holds every integer). Parameters whose samples exceed that limit with "
    "probability above ``2**-64`` (a Chernoff bound on the largest Poisson rate the generator "
    "can use) are an MXNetError, and so is a call that draws such a sample anyway; nothing is "
    "silently rounded.")
for _d in DISTRIBUTIONS:
    _d.doc = _d.doc.replace("{COUNTS}", _COUNTS_DOC)

# MXNet's deprecated top-level aliases.
_ALIASES = {"uniform": ("uniform", "random_uniform"), "normal": ("normal", "random_normal")}


def _register_distribution(d):
    op_name = f"_random_{d.name}"
    like_name = f"_random_{d.name}_like"

    def infer_shape(shapes, attrs):
        if shapes:
            raise op_error(op_name, f"takes no inputs, got {len(shapes)}")
        d.check(op_name, attrs)
        return [check_alloc(op_name, attrs.shape, _float_dtype(op_name, attrs.dtype), "shape")]

    def infer_type(dtypes, attrs):
        dt = _float_dtype(op_name, attrs.dtype)
        d.limit(op_name, attrs, dt)
        return [dt]

    def like_type(dtypes, attrs):
        dt = _like_dtype(like_name, dtypes)[0]
        d.limit(like_name, attrs, dt)
        return [dt]

    def compute(rctx, ins, outs, attrs):
        d.fill(rctx, outs[0], attrs)

    register(OpDef(
        op_name, inputs=(), params=d.params + (_SHAPE, _DTYPE, _CTX),
        infer_shape=infer_shape, infer_type=infer_type, compute={"cpu": compute},
        gradient=NON_DIFFERENTIABLE, grad_needs=(),
        aliases=_ALIASES.get(d.name, (f"random_{d.name}",)),
        doc=d.doc + "\n\n" + d.example))

    def like_shape(shapes, attrs):
        if len(shapes) != 1:
            raise op_error(like_name, f"expected 1 input, got {len(shapes)}")
        d.check(like_name, attrs)
        return [shapes[0]]

    register(OpDef(
        like_name, inputs=("data",), params=d.params,
        infer_shape=like_shape, backward_shape="same", infer_type=like_type,
        compute={"cpu": compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
        doc=d.doc.split("\n\n")[0].rstrip(".") + ", with the shape and (float) dtype of "
            "``data``; data's values are not read."))


for _d in DISTRIBUTIONS:
    _register_distribution(_d)


# ---- randint ---------------------------------------------------------------------------------
_INT_LIMITS = {np.dtype("int32"): (-(1 << 31), 1 << 31), np.dtype("int64"): (-(1 << 63), 1 << 63)}


def _randint_dtype(dtype):
    dt = np.dtype("int32") if dtype is None else np.dtype(dtype)
    if dt not in _INT_LIMITS:
        raise op_error("_random_randint", f"dtype must be 'int32' or 'int64', got {dt}")
    return dt


def _randint_shape(shapes, attrs):
    op = "_random_randint"
    if shapes:
        raise op_error(op, f"takes no inputs, got {len(shapes)}")
    low, high, dt = attrs.low, attrs.high, _randint_dtype(attrs.dtype)
    if low >= high:
        raise op_error(op, f"low must be < high, got low={low}, high={high}")
    lo, hi = _INT_LIMITS[dt]
    if low < lo or high > hi:
        raise op_error(op, f"[low, high) = [{low}, {high}) does not fit {dt}: it must lie in "
                       f"[{lo}, {hi}]")
    return [check_shape(op, attrs.shape)]


def _randint_compute(rctx, ins, outs, attrs):
    key, offset = rctx.rng.next()
    _k.randint(outs[0], key, offset, attrs.low, attrs.high)


register(OpDef(
    "_random_randint", inputs=(), aliases=("random_randint",),
    params=(Param("low", "int", REQUIRED, "lower bound (included)"),
            Param("high", "int", REQUIRED, "upper bound (excluded)"),
            _SHAPE,
            Param("dtype", "dtype", None, "output dtype: 'int32' (default) or 'int64'"),
            _CTX),
    infer_shape=_randint_shape, infer_type=lambda dtypes, attrs: [_randint_dtype(attrs.dtype)],
    compute={"cpu": _randint_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
    doc="""Integers uniform on [low, high), without bias, over any range the dtype holds.

Lemire's multiply-shift with rejection on 32-bit draws (ranges up to 2^32) or 64-bit draws;
never through a float, so every value of the range is equally likely (the full int64 range
[-2^63, 2^63) included). MXNet crashed on an empty range, returned garbage for a range the
dtype cannot hold and was biased (``rand() % range``); here low >= high or a range outside
the dtype is an MXNetError.

>>> x = mx.nd.random.randint(-3, 3, shape=(1000,))
>>> x.dtype.__name__, int(x.min().asscalar()) >= -3, int(x.max().asscalar()) < 3
('int32', True, True)"""))


# ---- multinomial -----------------------------------------------------------------------------
_MULTINOMIAL = "_sample_multinomial"


def _multinomial_dtype(attrs):
    try:
        dt = np.dtype(attrs.dtype)
    except TypeError:
        dt = None
    # (bfloat16 holds every integer only up to 256: category indices would round)
    if dt not in DTYPES.values() or dt == np.bool_ or is_bfloat16(dt):
        raise op_error(_MULTINOMIAL, f"dtype must be a numeric dtype other than bfloat16, "
                       f"got {attrs.dtype!r}")
    return dt


def _multinomial_shape(shapes, attrs):
    op = _MULTINOMIAL
    if len(shapes) != 1:
        raise op_error(op, f"expected 1 input, got {len(shapes)}")
    data = shapes[0]
    if len(data) == 0:
        raise op_error(op, "data must have at least 1 dimension (the categories), got a 0-d "
                       "array")
    k = data[-1]
    sample = check_shape(op, attrs.shape)
    out = check_shape(op, data[:-1] + sample)
    if k == 0 and size_of(out) > 0:
        raise op_error(op, f"data of shape {data} has no categories (last axis of size 0)")
    dt = _multinomial_dtype(attrs)
    top = {"int8": 127, "uint8": 255, "float16": 2048}.get(dt.name)
    if top is not None and k - 1 > top:
        raise op_error(op, f"dtype {dt} cannot hold the category indices 0..{k - 1} of data "
                       f"of shape {data}")
    return [out, out] if attrs.get_prob else [out]


def _multinomial_type(dtypes, attrs):
    if len(dtypes) != 1:
        raise op_error(_MULTINOMIAL, f"expected 1 input, got {len(dtypes)}")
    if dtypes[0] not in FLOAT_DTYPES:
        raise op_error(_MULTINOMIAL, f"data must hold float probabilities, got {dtypes[0]}")
    dt = _multinomial_dtype(attrs)
    return [dt, dtypes[0]] if attrs.get_prob else [dt]


def _unravel(flat, shape):
    """The index tuple of flat position ``flat`` in C order."""
    where = []
    for d in reversed(shape):
        flat, i = divmod(flat, d)
        where.append(i)
    return tuple(reversed(where))


def multinomial_row_error(row, shape):
    """The MXNetError of an invalid probability row (flat index ``row``) of data ``shape``."""
    return op_error(_MULTINOMIAL, f"row {_unravel(row, shape[:-1])} of data (shape {shape}) "
                    "must hold non-negative finite probabilities with a positive sum")


_MULTINOMIAL_PIECE = 1 << 22     # samples drawn at once: 64 MiB of int64/float64 scratch


def _multinomial_compute(rctx, ins, outs, attrs):
    data, xp = ins[0], rctx.xp
    key, offset = rctx.rng.next()
    k = data.shape[-1]
    rows, total = size_of(data.shape[:-1]), outs[0].size
    if rows == 0 or total == 0:
        return
    probs = xp.ascontiguousarray(data, np.float64).reshape(rows, k)
    cum = xp.empty(probs.shape, np.float64)
    bad = _k.multinomial_cumsum(probs, cum)
    if bad >= 0:
        raise multinomial_row_error(bad, data.shape)
    outs = outs if attrs.get_prob else outs[:1]
    # the samples are drawn in pieces (a sample's value does not depend on the piece), so the
    # int64 indices and float64 log-probabilities take a piece, not 16 bytes per sample
    flat = [o.reshape(-1) if o.flags.c_contiguous else None for o in outs]
    piece = total if any(f is None for f in flat) else min(total, _MULTINOMIAL_PIECE)
    index = xp.empty(piece, np.int64)
    logp = xp.empty(piece, np.float64) if attrs.get_prob else None
    for lo in range(0, total, piece):
        n = min(piece, total - lo)
        _k.multinomial_draw(probs, cum, index[:n], None if logp is None else logp[:n], key,
                            offset, lo, total // rows)
        for out, f, got in zip(outs, flat, (index, logp)):
            if piece == total:
                xp.cast_into(out, got.reshape(out.shape))
            else:
                xp.cast_into(f[lo:lo + n], got[:n])


register(OpDef(
    _MULTINOMIAL, aliases=("sample_multinomial",), inputs=("data",),
    params=(Param("shape", "shape", (), "samples per distribution (() draws one)"),
            Param("get_prob", "bool", False, "also return the log-probability of each sample"),
            Param("dtype", "dtype", "int32", "dtype of the sampled indices")),
    num_outputs=lambda attrs: 2 if attrs.get("get_prob") else 1,
    infer_shape=_multinomial_shape, infer_type=_multinomial_type,
    compute={"cpu": _multinomial_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
    doc="""Sample category indices from the distributions in the last axis of ``data``.

``data`` of shape ``(..., k)`` holds k probabilities per row; the output has shape
``data.shape[:-1] + shape``. Rows need not be normalised (each is divided by its sum); a
negative, NaN or infinite entry, or a zero row, is an MXNetError (MXNet did not check).
With ``get_prob=True`` a second output holds log(p / row sum) of each drawn index (MXNet's
log(p) for normalised rows), in data's dtype. Categories with probability 0 are never drawn.

>>> probs = mx.nd.array([[0, 0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1, 0]])
>>> mx.nd.random.multinomial(probs, shape=3).shape
(2, 3)"""))


# ---- shuffle ---------------------------------------------------------------------------------
def shuffle_compute(permute):
    """The compute function of ``_shuffle`` on a device whose ``permute(xp, data, out, key,
    offset)`` writes the rows of C-contiguous ``data`` (2 or more) to ``out`` in the order of
    a random permutation drawn from the stream ``(key, offset)``."""
    def compute(rctx, ins, outs, attrs):
        data, out, xp = ins[0], outs[0], rctx.xp
        key, offset = rctx.rng.next()
        if data.ndim == 0 or data.shape[0] <= 1:
            xp.copyto(out, data)
            return
        permute(xp, xp.ascontiguousarray(data), out, key, offset)
    return compute


def _permute_rows(xp, data, out, key, offset):
    perm = xp.empty(data.shape[0], np.int64)
    _k.permutation(perm, key, offset)
    _k.take_rows(data, out, perm)


def _shuffle_shape(shapes, attrs):
    if len(shapes) != 1:
        raise op_error("_shuffle", f"expected 1 input, got {len(shapes)}")
    return [shapes[0]]


register(OpDef(
    "_shuffle", inputs=("data",), aliases=("shuffle", "_random_shuffle"),
    infer_shape=_shuffle_shape, infer_type=lambda dtypes, attrs: [dtypes[0]],
    compute={"cpu": shuffle_compute(_permute_rows)}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
    doc="""A copy of ``data`` with its first axis randomly permuted (rows move as wholes).

Every permutation is equally likely (Fisher-Yates with unbiased bounded draws). A 0-d array
or a first axis of size 0 or 1 is returned as a copy.

>>> x = mx.nd.random.shuffle(mx.nd.arange(10))
>>> sorted(x.asnumpy().tolist()) == list(range(10))
True"""))
