"""GPU compute functions of the random operators (``mxlite/ops/random.py``: the
``_random_*`` samplers and their ``_like`` forms, ``_random_randint``,
``_sample_multinomial``, ``_shuffle``), of ``Dropout`` (its mask) and of ``_rrelu_slope``.

The CPU's generator and counter scheme: each call takes the stream ``(seed, offset)`` of its
device (``rctx.rng.next()``; a GPU has its own stream, seeded by ``mx.random.seed``), and
element ``i`` is a pure function of ``(seed, offset, i)`` computed by the very functions of
``philox.h`` the CPU kernels call (``mx_uniform32``, ``mx_normal32_pair``,
``mx_stream_sample``, ``mx_bounded64``, ...). A thread of the fixed-cost samplers handles
one Philox block (4 words: 4 float32/float16 elements, or 2 float64/int64 ones), so the
results do not depend on the launch configuration.

Same seed, same sequence of calls: what the GPU gives next to the CPU.

* Bit-identical: ``uniform`` (every float dtype), ``randint`` (int32, int64, any range),
  the Dropout mask and output, ``multinomial``'s indices, ``shuffle`` and
  ``_rrelu_slope``: integer arithmetic and exactly rounded IEEE operations only (no fused
  multiply-add: kernels compile with ``--fmad=false``, the CPU with ``-ffp-contract=off``).
* Within a few ulp: ``normal`` (``logf``/``sqrtf``/``cosf``/``sinf`` for float16/float32,
  ``log``/``cos``/``sin`` for float64), ``exponential`` (``log``) and ``multinomial``'s
  log-probabilities (``log``): CUDA's math library and the host's libm may differ in the
  last place (CUDA documents up to 1 ulp for ``log``/``logf``, 2 for ``sinf``/``cosf``;
  float16 results almost always round to the same value).
* Same distribution, usually the same values: ``gamma``, ``poisson``, ``negative_binomial``
  and ``generalized_negative_binomial`` run the same rejection samplers in double on the
  same per-element streams; a sample equals the CPU's (counts exactly, gamma to a few ulp)
  unless a libm difference of an ulp flips one of its accept/reject tests, which is
  possible but rare.

Under the host emulator of the tests every sampler is bit-identical (it runs the kernels
with the host's libm).

Device-specific costs: ``shuffle``'s Fisher-Yates swaps depend on each other and run on one
GPU thread (its draws and the row gather are parallel), as ``multinomial``'s running sums
run one row per thread, in the CPU's order (so the sums, and the draws, match the CPU's).
The count samplers and ``multinomial`` read back one flag per call (a synchronisation):
whether a sample or a probability row is out of range decides whether the call raises.
"""
import numpy as np

from ...ops import norm as _norm
from ...ops import random as _cpu
from ...ops.shape_utils import size_of
from ..kernels import kernel
from ..layout import element_strides, layout
from . import attach

__all__ = ["fill_continuous", "fill_uniform"]

_FAMILY = "random"
_FLOAT_C = {"float16": "uint16_t", "float32": "float", "float64": "double"}
_INT_C = {"int32": "int32_t", "int64": "int64_t"}
_TWO32, _TWO64 = 1 << 32, 1 << 64


def _store(dt, value):
    """C expression storing ``value`` (a float, or a double on the float64 path) as ``dt``."""
    if dt == "float16":
        return f"mx_float_to_half((float)({value}))"
    return f"({_FLOAT_C[dt]})({value})"


# The samples j of the Philox block q of a thread that exist (an element index below n). The
# trip count is a constant so that the loop unrolls and the block's words stay in registers
# (a loop bounded by n would index them at run time, through local memory).
_EACH = "#pragma unroll\n        for (int j = 0; j < {per}; ++j) if ({per} * q + j < n)"


# ---- uniform, normal, exponential: one Philox block per thread -------------------------------
# z[j] = sample j of block w; float16/float32 blocks hold 4 samples (one word each), float64
# blocks 2 (one 64-bit draw each). Normal samples are Box-Muller pairs (2p, 2p + 1).
_SAMPLE32 = {
    "uniform": "for (int j = 0; j < 4; ++j) z[j] = mx_uniform32(w.v[j], bits, a, b, c, top32);",
    "normal": "mx_normal32_pair(w.v[0], w.v[1], a, b, &z[0], &z[1]);\n"
              "        mx_normal32_pair(w.v[2], w.v[3], a, b, &z[2], &z[3]);",
    "exponential": "for (int j = 0; j < 4; ++j) z[j] = mx_exponential32(w.v[j], b);",
}
_SAMPLE64 = {
    "uniform": "for (int j = 0; j < 2; ++j) z[j] = mx_uniform64(x[j], a, b, c, top);",
    "normal": "mx_normal64_pair(x[0], x[1], a, b, &z[0], &z[1]);",
    "exponential": "for (int j = 0; j < 2; ++j) z[j] = mx_exponential64(x[j], b);",
}


def _continuous_kernel(dist, dt):
    name = f"mxlite_random_{dist}_{dt}"
    if dt == "float64":
        per, body = 2, f"""uint64_t x[2] = {{(uint64_t)w.v[0] | ((uint64_t)w.v[1] << 32),
                         (uint64_t)w.v[2] | ((uint64_t)w.v[3] << 32)}};
        double z[2];
        {_SAMPLE64[dist]}"""
    else:
        per, body = 4, f"""float z[4];
        {_SAMPLE32[dist]}"""
    return kernel(_FAMILY, name, f"""
extern "C" __global__ void {name}({_FLOAT_C[dt]}* out, const mx_idx n, const uint64_t key,
        const uint64_t offset, const double a, const double b, const double c,
        const double top, const int bits) {{
    const float top32 = (float)top;
    const mx_idx blocks = (n + {per - 1}) / {per};
    MX_GRID_LOOP(q, blocks) {{
        mx_philox4x32 w = mx_philox_block(key, offset, (uint64_t)q);
        {body}
        {_EACH.format(per=per)}
            out[{per} * q + j] = {_store(dt, "z[j]")};
    }}
}}
""")


_CONTINUOUS = {(dist, dt): _continuous_kernel(dist, dt)
               for dist in _SAMPLE32 for dt in _FLOAT_C}


def fill_continuous(xp, dist, out, key, offset, a, b, c=0.0, top=0.0, bits=24):
    """The GPU counterpart of ``mxlite._core.random.fill_continuous``: fill the float16,
    float32 or float64 array ``out`` with ``dist`` samples ('uniform': low a, width b, high
    c, at most ``top``, ``bits`` random bits below float64; 'normal': mean a, standard
    deviation b; 'exponential': scale b) from the stream ``(key, offset)``, equal to the
    CPU's samples (float16: the CPU's float32 samples rounded)."""
    n, per = out.size, 2 if out.dtype == np.float64 else 4     # samples per Philox block
    xp.launch(_CONTINUOUS[(dist, out.dtype.name)], (n + per - 1) // per, out, np.int64(n),
              np.uint64(key), np.uint64(offset), np.float64(a), np.float64(b), np.float64(c),
              np.float64(top), np.int32(bits))


def fill_uniform(rctx, out, low, high, top=None):
    """Fill ``out`` with samples uniform on [low, high], at most ``top`` (default ``high``),
    from the next stream of ``rctx``'s device: RReLU's random slopes, as the CPU draws them."""
    key, offset = rctx.rng.next()
    fill_continuous(rctx.xp, "uniform", out, key, offset, low, high - low, high,
                    high if top is None else top)


def _continuous_compute(dist, args):
    def compute(rctx, ins, outs, attrs):
        key, offset = rctx.rng.next()
        fill_continuous(rctx.xp, dist, outs[0], key, offset, *args(outs[0].dtype, attrs))
    return compute


def _uniform_args(dtype, attrs):
    top, bits = _cpu.uniform_top_bits(dtype, attrs.low, attrs.high)
    return attrs.low, attrs.high - attrs.low, attrs.high, top, bits


_CONTINUOUS_ARGS = {
    "uniform": _uniform_args,
    "normal": lambda dtype, attrs: (attrs.loc, attrs.scale),
    "exponential": lambda dtype, attrs: (0.0, 1.0 / attrs.lam),
}


# ---- gamma, Poisson, negative binomials: one element stream per thread -----------------------
def _dist_code(dist, dt):
    """philox.h's MX_DIST_* name of ``dist`` into ``dt``: gamma into float16/float32 is drawn
    in float (GAMMA_F32), as the CPU's fill_stream draws it into its float32 buffer."""
    return "GAMMA_F32" if dist == "gamma" and dt != "float64" else dist.upper()


def _stream_kernel(dist, dt):
    name = f"mxlite_random_{dist}_{dt}"
    return kernel(_FAMILY, name, f"""
extern "C" __global__ void {name}({_FLOAT_C[dt]}* out, long long* worst, const mx_idx n,
        const uint64_t key, const uint64_t offset, const double p0, const double p1,
        const double top) {{
    MX_GRID_LOOP(i, n) {{
        double v = mx_stream_sample(MX_DIST_{_dist_code(dist, dt)}, key, offset, (uint64_t)i, p0,
                                    p1);
        // samples are >= 0, so the largest one has the largest bits (NaN's are larger still)
        if (!(v <= top)) atomicMax(worst, (long long)mx::bits_of(v));
        out[i] = {_store(dt, "v")};
    }}
}}
""")


# distribution -> ((p0, p1) of the attributes, integer-valued?)
_STREAM_DISTS = {
    "gamma": (lambda a: (a.alpha, a.beta), False),
    "poisson": (lambda a: (a.lam, 0.0), True),
    "negative_binomial": (lambda a: (float(a.k), a.p), True),
    "generalized_negative_binomial": (lambda a: (a.mu, a.alpha), True),
}
_STREAM = {(dist, dt): _stream_kernel(dist, dt) for dist in _STREAM_DISTS for dt in _FLOAT_C}


def _stream_compute(dist):
    params, counts = _STREAM_DISTS[dist]

    def compute(rctx, ins, outs, attrs):
        out, xp = outs[0], rctx.xp
        key, offset = rctx.rng.next()
        top = float(_cpu._EXACT_INT[out.dtype]) if counts else np.inf
        worst = xp.zeros((1,), np.int64)
        xp.launch(_STREAM[(dist, out.dtype.name)], out.size, out, worst, np.int64(out.size),
                  np.uint64(key), np.uint64(offset),
                  *(np.float64(p) for p in params(attrs)), np.float64(top))
        if counts:
            # a host decision (synchronizes): a count the dtype cannot hold exactly raises
            bits = xp.to_host(worst)[0]
            if bits:
                raise _cpu.count_error(dist, float(np.int64(bits).view(np.float64)), out.dtype)
    return compute


# ---- randint: Lemire's multiply-shift, first draw direct, rejections on the element stream ---
def _randint32_kernel(dt):
    name = f"mxlite_randint32_{dt}"
    store = "(int32_t)(uint32_t)" if dt == "int32" else "(int64_t)"
    return kernel(_FAMILY, name, f"""
extern "C" __global__ void {name}({_INT_C[dt]}* out, const mx_idx n, const uint64_t key,
        const uint64_t offset, const uint32_t range, const uint64_t low) {{
    // range 0 stands for 2^32: every word is a value
    const uint32_t threshold = range ? mx_lemire_threshold32(range) : 0u;
    const mx_idx blocks = (n + 3) / 4;
    MX_GRID_LOOP(q, blocks) {{
        mx_philox4x32 w = mx_philox_block(key, offset, (uint64_t)q);
        {_EACH.format(per=4)} {{
            uint32_t r = w.v[j];
            if (range && !mx_lemire32(w.v[j], range, threshold, &r))
                r = mx_bounded32_retry(key, offset, (uint64_t)(4 * q + j), range, threshold);
            out[4 * q + j] = {store}(low + r);
        }}
    }}
}}
""")


_RANDINT32 = {dt: _randint32_kernel(dt) for dt in _INT_C}
_RANDINT64 = kernel(_FAMILY, "mxlite_randint64_int64", """
extern "C" __global__ void mxlite_randint64_int64(int64_t* out, const mx_idx n,
        const uint64_t key, const uint64_t offset, const uint64_t range, const uint64_t low) {
    // range 0 stands for 2^64: every draw is a value
    const uint64_t threshold = range ? mx_lemire_threshold64(range) : 0u;
    const mx_idx blocks = (n + 1) / 2;
    MX_GRID_LOOP(q, blocks) {
        mx_philox4x32 w = mx_philox_block(key, offset, (uint64_t)q);
        uint64_t x[2] = {(uint64_t)w.v[0] | ((uint64_t)w.v[1] << 32),
                         (uint64_t)w.v[2] | ((uint64_t)w.v[3] << 32)};
        #pragma unroll
        for (int j = 0; j < 2; ++j) if (2 * q + j < n) {
            uint64_t r = x[j];
            if (range && !mx_lemire64(x[j], range, threshold, &r))
                r = mx_bounded64_retry(key, offset, (uint64_t)(2 * q + j), range, threshold);
            out[2 * q + j] = (int64_t)(low + r);
        }
    }
}
""")


def _randint_compute(rctx, ins, outs, attrs):
    out, xp = outs[0], rctx.xp
    key, offset = rctx.rng.next()
    n, span = out.size, attrs.high - attrs.low     # the shape check made 1 <= span <= 2^width
    low = np.uint64(attrs.low % _TWO64)
    if span > _TWO32:                              # 64-bit draws (int64 only)
        xp.launch(_RANDINT64, (n + 1) // 2, out, np.int64(n), np.uint64(key),
                  np.uint64(offset), np.uint64(span % _TWO64), low)
    else:
        xp.launch(_RANDINT32[out.dtype.name], (n + 3) // 4, out, np.int64(n), np.uint64(key),
                  np.uint64(offset), np.uint32(span % _TWO32), low)


# ---- multinomial -----------------------------------------------------------------------------
_CUMSUM = kernel(_FAMILY, "mxlite_multinomial_cumsum", """
extern "C" __global__ void mxlite_multinomial_cumsum(const double* p, double* cum,
        long long* bad, const mx_idx rows, const mx_idx k) {
    // one row per thread, summed in order (the CPU's sums); bad = rows - the first bad row
    MX_GRID_LOOP(r, rows)
        if (mx_multinomial_cumsum(p + r * k, cum + r * k, k)) atomicMax(bad, (long long)(rows - r));
}
""")
_DRAW = kernel(_FAMILY, "mxlite_multinomial_draw", """
extern "C" __global__ void mxlite_multinomial_draw(const double* p, const double* cum,
        int64_t* index, double* logp, const mx_idx total, const mx_idx per_row,
        const mx_idx k, const uint64_t key, const uint64_t offset) {
    MX_GRID_LOOP(s, total) {
        mx_idx r = s / per_row;
        index[s] = mx_multinomial_draw(p + r * k, cum + r * k, k,
                                       mx_draw64(key, offset, (uint64_t)s), &logp[s]);
    }
}
""")


def _multinomial_compute(rctx, ins, outs, attrs):
    data, xp = ins[0], rctx.xp
    key, offset = rctx.rng.next()
    k, rows, total = data.shape[-1], size_of(data.shape[:-1]), outs[0].size
    index = xp.empty(total, np.int64)
    logp = xp.empty(total, np.float64)
    if rows and total:
        probs = xp.ascontiguousarray(data, np.float64)
        cum = xp.empty(probs.shape, np.float64)
        bad = xp.zeros((1,), np.int64)
        xp.launch(_CUMSUM, rows, probs, cum, bad, np.int64(rows), np.int64(k))
        # a host decision (synchronizes): an invalid row raises before anything is drawn
        first_bad = int(xp.to_host(bad)[0])
        if first_bad:
            raise _cpu.multinomial_row_error(rows - first_bad, data.shape)
        xp.launch(_DRAW, total, probs, cum, index, logp, np.int64(total),
                  np.int64(total // rows), np.int64(k), np.uint64(key), np.uint64(offset))
    xp.cast_into(outs[0], index.reshape(outs[0].shape))
    if attrs.get_prob:
        xp.cast_into(outs[1], logp.reshape(outs[1].shape))


# ---- shuffle ---------------------------------------------------------------------------------
_SHUFFLE_DRAWS = kernel(_FAMILY, "mxlite_shuffle_draws", """
extern "C" __global__ void mxlite_shuffle_draws(int64_t* d, const mx_idx n, const uint64_t key,
                                                const uint64_t offset) {
    MX_GRID_LOOP(j, n) d[j] = (int64_t)mx_bounded64(key, offset, (uint64_t)j, (uint64_t)(n - j));
}
""")
_SHUFFLE_SWAPS = kernel(_FAMILY, "mxlite_shuffle_swaps", """
extern "C" __global__ void mxlite_shuffle_swaps(int64_t* perm, const int64_t* d, const mx_idx n) {
    MX_GRID_LOOP(i, 1) mx_fisher_yates(perm, d, n);   // each swap depends on the previous ones
}
""")
_TAKE_ROWS = {size: kernel(_FAMILY, f"mxlite_take_rows_{size}", f"""
extern "C" __global__ void mxlite_take_rows_{size}(const uint{8 * size}_t* src,
        uint{8 * size}_t* dst, const int64_t* perm, const mx_idx total, const mx_idx row) {{
    MX_GRID_LOOP(e, total) {{
        mx_idx i = e / row;
        dst[e] = src[(mx_idx)perm[i] * row + (e - i * row)];
    }}
}}
""") for size in (1, 2, 4, 8)}


def _permute_rows(xp, data, out, key, offset):
    n, total = data.shape[0], out.size
    draws, perm = xp.empty(n, np.int64), xp.empty(n, np.int64)
    xp.launch(_SHUFFLE_DRAWS, n, draws, np.int64(n), np.uint64(key), np.uint64(offset))
    xp.launch(_SHUFFLE_SWAPS, 1, perm, draws, np.int64(n))
    xp.launch(_TAKE_ROWS[out.dtype.itemsize], total, data, out, perm, np.int64(total),
              np.int64(total // n))


# ---- Dropout ---------------------------------------------------------------------------------
# keep element j of block w with probability 1 - p: the CPU's float32 uniform in [0, 1) >= p,
# giving s, the kept value 1 / (1 - p) rounded once to the dtype (float16: its bits)
def _keep(ct):
    return f"(mx_uniform32(w.v[j], 24, 0.0, 1.0, 1.0, top) >= p ? s : ({ct})0)"


def _dropout_c(dt):
    """``(ct, s, product)``: the C storage type of ``dt``, the expression of the kept value
    (from the double ``scale``) and a function giving the C product of two stored values.
    float16 multiplies in float32 (the product of two float16 is exact there) and rounds
    once, as the CPU kernel."""
    ct = _FLOAT_C[dt]
    if dt == "float16":
        return ct, "mx_double_to_half(scale)", \
            lambda a, b: f"mx_float_to_half(mx_half_to_float({a}) * mx_half_to_float({b}))"
    return ct, f"({ct})scale", lambda a, b: f"{a} * {b}"


def _dropout_kernels(dt):
    ct, kept, product = _dropout_c(dt)
    params = "const uint64_t key, const uint64_t offset, const float p, const double scale, " \
             "const float top"
    fused = kernel(_FAMILY, f"mxlite_dropout_{dt}", f"""
extern "C" __global__ void mxlite_dropout_{dt}(const {ct}* x, {ct}* y, {ct}* mask,
        const mx_idx n, {params}) {{
    const mx_idx blocks = (n + 3) / 4;
    const {ct} s = {kept};
    MX_GRID_LOOP(q, blocks) {{
        mx_philox4x32 w = mx_philox_block(key, offset, (uint64_t)q);
        {_EACH.format(per=4)} {{
            {ct} m = {_keep(ct)};
            mask[4 * q + j] = m;
            y[4 * q + j] = {product("x[4 * q + j]", "m")};
        }}
    }}
}}
""")
    shared = kernel(_FAMILY, f"mxlite_dropout_mask_{dt}", f"""
extern "C" __global__ void mxlite_dropout_mask_{dt}({ct}* mask, const mx_idx n, {params}) {{
    const mx_idx blocks = (n + 3) / 4;
    const {ct} s = {kept};
    MX_GRID_LOOP(q, blocks) {{
        mx_philox4x32 w = mx_philox_block(key, offset, (uint64_t)q);
        {_EACH.format(per=4)} mask[4 * q + j] = {_keep(ct)};
    }}
}}
""")
    apply = kernel(_FAMILY, f"mxlite_dropout_apply_{dt}", f"""
extern "C" __global__ void mxlite_dropout_apply_{dt}(const {ct}* x, const {ct}* small,
        {ct}* y, {ct}* mask, const mx_layout l, const mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        {ct} m = small[mx_offset(l, 0, i)];
        mask[i] = m;
        y[i] = {product("x[i]", "m")};
    }}
}}
""")
    return fused, shared, apply


_DROPOUT = {dt: _dropout_kernels(dt) for dt in _FLOAT_C}


def _dropout_compute(rctx, ins, outs, attrs):
    x, (y, mask), xp = ins[0], outs, rctx.xp
    _norm._dropout_check(attrs)
    if not (attrs.mode == "always" or rctx.is_train) or attrs.p == 0.0 or x.size == 0:
        mask.fill(1)
        xp.copyto(y, x)
        return
    axes = _norm.normalize_axes("Dropout", attrs.axes, x.ndim, "axes") if attrs.axes else ()
    fused, shared, apply = _DROPOUT[x.dtype.name]
    key, offset = rctx.rng.next()
    draw = (np.uint64(key), np.uint64(offset), np.float32(attrs.p),
            np.float64(1.0 / (1.0 - attrs.p)), np.float32(_norm._ONE_BELOW_1))
    n = x.size
    if not axes:
        xp.launch(fused, (n + 3) // 4, x, y, mask, np.int64(n), *draw)
        return
    small = xp.empty(_norm._kept(x.shape, axes), x.dtype)
    xp.launch(shared, (small.size + 3) // 4, small, np.int64(small.size), *draw)
    lay = layout(x.shape, element_strides(xp.broadcast_to(small, x.shape)))
    xp.launch(apply, n, x, small, y, mask, lay, np.int64(n))


# ---- _rrelu_slope ----------------------------------------------------------------------------
def _rrelu_slope_kernel(dt):
    name = f"mxlite_rrelu_slope_{dt}"
    if dt == "float16":      # float16 computes in float32, as on the CPU
        load, store = "mx_half_to_float", "mx_float_to_half"
        work = "float"
    else:
        load = store = ""
        work = _FLOAT_C[dt]
    return kernel("rrelu_slope", name, f"""
extern "C" __global__ void {name}(const {_FLOAT_C[dt]}* x, const {_FLOAT_C[dt]}* y,
                                  {_FLOAT_C[dt]}* out, const mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        {work} xi = {load}(x[i]), yi = {load}(y[i]);
        out[i] = {store}(xi < 0 ? yi / xi : ({work})1);
    }}
}}
""")


_RRELU_SLOPE = {dt: _rrelu_slope_kernel(dt) for dt in _FLOAT_C}


def _rrelu_slope_compute(rctx, ins, outs, attrs):
    (x, y), out = ins, outs[0]
    rctx.xp.launch(_RRELU_SLOPE[out.dtype.name], out.size, x, y, out, np.int64(out.size))


# ---- attach ----------------------------------------------------------------------------------
for _dist, _args in _CONTINUOUS_ARGS.items():
    attach(f"_random_{_dist}", _continuous_compute(_dist, _args))
    attach(f"_random_{_dist}_like", _continuous_compute(_dist, _args))
for _dist in _STREAM_DISTS:
    attach(f"_random_{_dist}", _stream_compute(_dist))
    attach(f"_random_{_dist}_like", _stream_compute(_dist))
attach("_random_randint", _randint_compute)
attach("_sample_multinomial", _multinomial_compute)
attach("_shuffle", _cpu.shuffle_compute(_permute_rows))
attach("Dropout", _dropout_compute)
attach("_rrelu_slope", _rrelu_slope_compute)
