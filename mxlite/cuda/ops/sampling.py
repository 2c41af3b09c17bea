"""GPU compute of the per-element samplers of ``mxlite/ops/sampling.py`` (``_sample_uniform``,
``_sample_normal``, ``_sample_exponential``, ``_sample_gamma``, ``_sample_poisson``,
``_sample_negative_binomial``, ``_sample_generalized_negative_binomial``).

The CPU's scheme on the GPU's own stream ``(seed, offset)``: flat output element ``i`` is a
function of ``(seed, offset, i)`` and the parameters of distribution ``i / S`` (``S``
samples each). uniform, normal and exponential compute the standard samples of the
``_random_*`` kernels (one Philox block per thread) and ``min(a + b z, top)`` in double with
the per-distribution coefficients the CPU uses (``coefficients``); gamma and the count
samplers run ``mx_stream_sample`` on each element with its distribution's parameters.
Parameters are checked on the host (one copy of the parameter arrays, as small as the
number of distributions), and the count samplers read back one flag (a synchronisation).

Same seed, same calls: the CPU's samples for float32 and float64 (up to the libm
differences ``mxlite.cuda.ops.random`` describes); float16 samples are rounded through
float (double -> float -> half), the CPU's directly from double, which can differ by one
float16 ulp in rare ties.
"""
import numpy as np

from ...ops import random as _cpu_random
from ...ops import sampling as _cpu
from ..kernels import kernel
from . import attach
from .random import _EACH, _FLOAT_C, _SAMPLE32, _SAMPLE64, _dist_code, _store

_FAMILY = "sampling"
_STANDARD = {"uniform": "0.0, 1.0, 1.0, 1.0f", "normal": "0.0, 1.0", "exponential": "1.0"}


def _standard_code(dist, per):
    """The kernel body computing z[0 .. per) with standard parameters (a = 0, b = 1, c = 1,
    top = 1, 24 bits), as the CPU's draw of the standard samples."""
    table = _SAMPLE64 if per == 2 else _SAMPLE32
    return table[dist].replace("bits, a, b, c, top32", "24, 0.0, 1.0, 1.0, 1.0f") \
        .replace("bits, a, b, c, top", "24, 0.0, 1.0, 1.0, 1.0") \
        .replace("a, b, &z", "0.0, 1.0, &z").replace("(w.v[j], b)", "(w.v[j], 1.0)") \
        .replace("(x[j], b)", "(x[j], 1.0)").replace("(x[j], a, b, c, top)",
                                                     "(x[j], 0.0, 1.0, 1.0, 1.0)")


def _continuous_kernel(dist, dt):
    name = f"mxlite_sample_{dist}_{dt}"
    if dt == "float64":
        per, words = 2, """uint64_t x[2] = {(uint64_t)w.v[0] | ((uint64_t)w.v[1] << 32),
                         (uint64_t)w.v[2] | ((uint64_t)w.v[3] << 32)};
        double z[2];"""
    else:
        per, words = 4, "float z[4];"
    return kernel(_FAMILY, name, f"""
extern "C" __global__ void {name}({_FLOAT_C[dt]}* out, const double* A, const double* B,
        const double* T, const mx_idx n, const mx_idx per, const uint64_t key,
        const uint64_t offset) {{
    const mx_idx blocks = (n + {per - 1}) / {per};
    MX_GRID_LOOP(q, blocks) {{
        mx_philox4x32 w = mx_philox_block(key, offset, (uint64_t)q);
        {words}
        {_standard_code(dist, per)}
        {_EACH.format(per=per)} {{
            const mx_idx e = {per} * q + j, p = e / per;
            double v = A[p] + B[p] * (double)z[j];
            if (v > T[p]) v = T[p];
            out[e] = {_store(dt, "v")};
        }}
    }}
}}
""")


def _stream_kernel(dist, dt):
    name = f"mxlite_sample_{dist}_{dt}"
    return kernel(_FAMILY, name, f"""
extern "C" __global__ void {name}({_FLOAT_C[dt]}* out, long long* worst, const double* P0,
        const double* P1, const mx_idx n, const mx_idx per, const uint64_t key,
        const uint64_t offset, const double top) {{
    MX_GRID_LOOP(i, n) {{
        const mx_idx p = i / per;
        double v = mx_stream_sample(MX_DIST_{_dist_code(dist, dt)}, key, offset, (uint64_t)i,
                                    P0[p], P1[p]);
        if (!(v <= top)) atomicMax(worst, (long long)mx::bits_of(v));
        out[i] = {_store(dt, "v")};
    }}
}}
""")


_KERNELS = {}
for _s in _cpu.SAMPLERS:
    for _dt in _FLOAT_C:
        make = _continuous_kernel if _s.stream is None else _stream_kernel
        _KERNELS[(_s.dist, _dt)] = make(_s.dist, _dt)


def _compute(sampler):
    def compute(rctx, ins, outs, attrs):
        xp, out = rctx.xp, outs[0]
        params = _cpu.checked_params(sampler, xp, ins, out.dtype)
        key, offset = rctx.rng.next()
        if out.size == 0 or params[0].size == 0:
            return
        per = out.size // params[0].size
        k = _KERNELS[(sampler.dist, out.dtype.name)]
        if sampler.stream is None:
            coef = [xp.from_host(np.ascontiguousarray(c, np.float64))
                    for c in _cpu.coefficients(sampler.dist, params, out.dtype)]
            blocks = (out.size + (1 if out.dtype == np.float64 else 3)) \
                // (2 if out.dtype == np.float64 else 4)
            xp.launch(k, blocks, out, *coef, np.int64(out.size), np.int64(per),
                      np.uint64(key), np.uint64(offset))
            return
        p0, p1 = (np.array(v, np.float64) for v in zip(*(sampler.stream(*map(float, row))
                                                          for row in zip(*params))))
        top = float(_cpu_random._EXACT_INT[out.dtype]) if sampler.counts else np.inf
        worst = xp.zeros((1,), np.int64)
        xp.launch(k, out.size, out, worst, xp.from_host(p0), xp.from_host(p1),
                  np.int64(out.size), np.int64(per), np.uint64(key), np.uint64(offset),
                  np.float64(top))
        if sampler.counts:
            bits = xp.to_host(worst)[0]          # a host decision: synchronises
            if bits:
                raise _cpu_random.count_error(sampler.dist,
                                              float(np.int64(bits).view(np.float64)), out.dtype)
    return compute


for _s in _cpu.SAMPLERS:
    attach(f"_sample_{_s.dist}", _compute(_s))


# ---- _sample_unique_zipfian: the GPU draws the uniforms, the host keeps the distinct ones --
def _gpu_uniform(rctx, buf):
    from .random import fill_continuous
    key, offset = rctx.rng.next()
    fill_continuous(rctx.xp, "uniform", buf, key, offset, 0.0, 1.0, 1.0, 1.0, 24)


# the rows' distinct classes are kept in draw order on the host (a sequential set per row,
# in NumPy: no CPU kernel on the GPU path); the draws are the CPU's (bit-identical uniform),
# so the samples and tries are too
attach("_sample_unique_zipfian", _cpu.zipf_compute(_gpu_uniform, _cpu.distinct_rows_host))
