"""Random samplers: uniform and normal draws are ONNX's RandomUniform/RandomNormal (and
their ``Like`` forms), the exponential is the inverse transform ``-log(1 - U) / lam``,
the per-element samplers (``_sample_*``) scale and shift draws of the full output shape
by their broadcast parameters, the multinomial is ONNX's Multinomial on the log
probabilities.

The values come from the runtime's random stream, not mxlite's (Philox): an exported model
draws from the same distributions, not the same numbers.
"""
import math

import numpy as np

from ..table import translates
from .image import RANDOM
from .mathops import _gamma_parts

_DRAW_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _draw_dtype(dtype):
    """The dtype to draw in for output ``dtype`` (float16 draws in float32, then casts)."""
    return np.dtype(dtype) if np.dtype(dtype) in _DRAW_DTYPES else np.dtype(np.float32)


def _tensor_type(ctx, dtype):
    return ctx.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _draw(ctx, kind, shape, dtype, like=None, **attrs):
    """Draws of ONNX's Random{kind} of ``shape`` (or ``like``'s shape) in ``dtype``."""
    if like is not None:
        return ctx.node(f"Random{kind}Like", [like], dtype=_tensor_type(ctx, dtype), **attrs)
    return ctx.node(f"Random{kind}", [], shape=list(shape), dtype=_tensor_type(ctx, dtype),
                    **attrs)


def _finish(ctx, value, draw_dtype, dtype, outs):
    """``value`` (in ``draw_dtype``) written as ``dtype``."""
    if np.dtype(dtype) == draw_dtype:
        return ctx.node("Identity", [value], outs)
    return ctx.node("Cast", [value], outs, to=_tensor_type(ctx, dtype))


def _exponential(ctx, uniform, rate, dtype):
    """``-log(1 - U) / rate`` for U uniform on [0, 1) (1 - U is in (0, 1]: finite)."""
    one = ctx.const(np.asarray(1, dtype))
    return ctx.node("Div", [ctx.node("Neg", [ctx.node("Log", [ctx.node("Sub", [one, uniform])])]),
                            rate])


def _scalar_sampler(like):
    """The translation of ``_random_{dist}`` (``like``: ``_random_{dist}_like``)."""
    def translate(ctx, node, ins, outs):
        a, dtype = node.attrs, ctx.dtype((node, 0))
        draw = _draw_dtype(dtype)
        shape = ctx.shape((node, 0))
        source = ins[0] if like else None
        if source is not None and ctx.dtype(node.inputs[0]) != draw:
            source = ctx.cast(source, draw)        # the Like ops take their input's dtype
        kind = node.op.name.split("_")[2]
        # standard draws scaled by constants of the draw dtype: ONNX's low/high/mean/scale
        # attributes are float32, which would round a float64 sampler's parameters
        if kind == "uniform":
            lo = np.asarray(a.low, dtype).astype(draw)     # mxlite rounds the bounds to dtype
            span = np.asarray(a.high, dtype).astype(draw) - lo
            value = ctx.node("Add", [ctx.const(lo), ctx.node("Mul", [
                _draw(ctx, "Uniform", shape, draw, source), ctx.const(span)])])
            if span > 0:         # below high also after rounding (mxlite's guarantee)
                top = np.nextafter(np.asarray(a.high, dtype), np.asarray(-np.inf, dtype))
                value = ctx.node("Min", [value, ctx.const(top.astype(draw))])
        elif kind == "normal":
            value = ctx.node("Add", [ctx.const(np.asarray(a.loc, draw)), ctx.node("Mul", [
                _draw(ctx, "Normal", shape, draw, source), ctx.const(np.asarray(a.scale, draw))])])
        else:
            value = _exponential(ctx, _draw(ctx, "Uniform", shape, draw, source),
                                 ctx.const(np.asarray(a.lam, draw)), draw)
        _finish(ctx, value, draw, dtype, outs)
    return translate


for _dist, _ops in (("uniform", ["RandomUniform", "Mul", "Add", "Min"]),
                    ("normal", ["RandomNormal", "Mul", "Add"]),
                    ("exponential", ["RandomUniform", "Sub", "Log", "Neg", "Div"])):
    _notes = RANDOM + ("; normal draws are not bounded (mxlite's stay within 6.765 "
                       "(float64: 8.653) standard deviations)" if _dist == "normal" else "")
    translates(f"_random_{_dist}", onnx_ops=_ops + ["Cast"], notes=_notes)(
        _scalar_sampler(False))
    translates(f"_random_{_dist}_like", onnx_ops=[o + "Like" if o.startswith("Random") else o
                                                  for o in _ops] + ["Cast"],
               notes=_notes)(_scalar_sampler(True))


def _per_element(ctx, node, ins, dtype):
    """The parameters cast to ``dtype`` with ``len(shape)`` trailing axes of 1, to broadcast
    over the samples of each distribution."""
    pshape = ctx.shape(node.inputs[0])
    target = list(pshape) + [1] * len(node.attrs.shape)
    out = []
    for x, entry in zip(ins, node.inputs):
        if ctx.dtype(entry) != dtype:
            x = ctx.cast(x, dtype)
        out.append(ctx.node("Reshape", [x, ctx.int64s(target)]) if node.attrs.shape else x)
    return out


@translates("_sample_uniform", onnx_ops=["RandomUniform", "Reshape", "Sub", "Mul", "Add",
                                         "Cast"], notes=RANDOM)
def _sample_uniform(ctx, node, ins, outs):
    dtype = ctx.dtype((node, 0))
    draw = _draw_dtype(dtype)
    low, high = _per_element(ctx, node, ins, draw)
    u = _draw(ctx, "Uniform", ctx.shape((node, 0)), draw)
    value = ctx.node("Add", [low, ctx.node("Mul", [u, ctx.node("Sub", [high, low])])])
    _finish(ctx, value, draw, dtype, outs)


@translates("_sample_normal", onnx_ops=["RandomNormal", "Reshape", "Mul", "Add", "Cast"],
            notes=RANDOM)
def _sample_normal(ctx, node, ins, outs):
    dtype = ctx.dtype((node, 0))
    draw = _draw_dtype(dtype)
    mu, sigma = _per_element(ctx, node, ins, draw)
    z = _draw(ctx, "Normal", ctx.shape((node, 0)), draw)
    _finish(ctx, ctx.node("Add", [mu, ctx.node("Mul", [z, sigma])]), draw, dtype, outs)


@translates("_sample_exponential", onnx_ops=["RandomUniform", "Reshape", "Sub", "Log", "Neg",
                                             "Div", "Cast"], notes=RANDOM)
def _sample_exponential(ctx, node, ins, outs):
    dtype = ctx.dtype((node, 0))
    draw = _draw_dtype(dtype)
    (lam,) = _per_element(ctx, node, ins, draw)
    u = _draw(ctx, "Uniform", ctx.shape((node, 0)), draw)
    _finish(ctx, _exponential(ctx, u, lam, draw), draw, dtype, outs)


@translates("_sample_multinomial", onnx_ops=["Reshape", "Log", "Multinomial", "Cast",
                                             "ReduceSum", "Div", "GatherElements"],
            opset=18, notes="ONNX's Multinomial on the log probabilities (in float32); " + RANDOM)
def _sample_multinomial(ctx, node, ins, outs):
    a = node.attrs
    data = ctx.shape(node.inputs[0])
    k = data[-1]
    samples = math.prod(a.shape) if a.shape else 1
    dtype = ctx.dtype(node.inputs[0])
    rows = ctx.node("Reshape", [ins[0], ctx.int64s([-1, k])])
    if dtype not in _DRAW_DTYPES:
        rows = ctx.cast(rows, np.float32)
    # onnxruntime's Multinomial takes float32 only
    single = rows if dtype == np.float32 else ctx.cast(rows, np.float32)
    drawn = ctx.node("Multinomial", [ctx.node("Log", [single])], sample_size=samples,
                     dtype=ctx.onnx.TensorProto.INT64)
    final = list(data[:-1]) + list(a.shape)
    shaped = ctx.node("Reshape", [drawn, ctx.int64s(final or [])])
    _finish(ctx, shaped, np.dtype(np.int64), ctx.dtype((node, 0)), outs[:1])
    if a.get_prob and len(outs) > 1:
        # log(p / sum p) of each drawn category, in the data's dtype
        norm = ctx.node("Div", [rows, ctx.node("ReduceSum", [rows, ctx.int64s([1])],
                                               keepdims=1)])
        picked = ctx.node("GatherElements", [ctx.node("Log", [norm]), drawn], axis=1)
        value = ctx.node("Reshape", [picked, ctx.int64s(final or [])])
        _finish(ctx, value, ctx.dtype(node.inputs[0]) if dtype in _DRAW_DTYPES
                else np.dtype(np.float32), ctx.dtype((node, 1)), outs[1:2])


@translates("_random_randint", onnx_ops=["RandomUniform", "Mul", "Floor", "Min", "Cast",
                                         "Add"],
            notes="floor(U * (high - low)) + low with a float64 U: each value's probability "
                  "is within a relative 2^-20 of uniform for ranges up to 2^32 (mxlite's "
                  "draws are exactly uniform); not ranges beyond 2^32; " + RANDOM)
def _random_randint(ctx, node, ins, outs):
    a = node.attrs
    span = a.high - a.low
    if span > 1 << 32:
        raise ctx.unsupported(node, f"a range of {span} values (above 2**32, where a float64 "
                                    "draw is visibly not uniform)")
    f64 = np.dtype(np.float64)
    u = _draw(ctx, "Uniform", ctx.shape((node, 0)), f64)
    # U * span can round up to span itself: the Min keeps the last value in range
    steps = ctx.node("Min", [ctx.node("Floor", [ctx.node("Mul", [u, ctx.const(
        np.asarray(span, f64))])]), ctx.const(np.asarray(span - 1, f64))])
    # low + steps is an integer of the range in float64 (exact below 2**53): cast last
    value = ctx.node("Add", [steps, ctx.const(np.asarray(a.low, f64))])
    ctx.node("Cast", [value], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
        ctx.dtype((node, 0))))


@translates("_shuffle", onnx_ops=["RandomUniform", "TopK", "Gather"],
            notes="the rows in the order of independent uniform draws (TopK of them): every "
                  "permutation equally likely; " + RANDOM)
def _shuffle(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    if len(shape) == 0 or shape[0] <= 1:
        ctx.node("Identity", ins[:1], outs)
        return
    n = shape[0]
    keys = _draw(ctx, "Uniform", (n,), np.dtype(np.float64))
    _, order = ctx.node("TopK", [keys, ctx.int64s([n])], [ctx.fresh("keys"),
                                                          ctx.fresh("order")])
    ctx.node("Gather", [ins[0], order], outs, axis=0)


# ---- densities: log-densities in float64 (mxlite's), exponentiated unless is_log ---------------
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _density(fn):
    """The translation of a ``_random_pdf_*`` op whose float64 log-density ``fn(ctx, c, x,
    *params)`` (``c(v)`` a float64 constant) is written over the sample and its broadcast
    parameters."""
    def translate(ctx, node, ins, outs):
        f64 = np.dtype(np.float64)
        sample_shape, param_shape = ctx.shape(node.inputs[0]), ctx.shape(node.inputs[1])
        tail = [1] * (len(sample_shape) - len(param_shape))
        x = ctx.cast(ins[0], f64)
        params = [ctx.cast(p, f64) for p in ins[1:]]
        if tail:
            # 0 copies a parameter axis: a symbolic batch axis stays symbolic
            shape = ctx.int64s([0] * len(param_shape) + tail)
            params = [ctx.node("Reshape", [p, shape]) for p in params]
        lp = fn(ctx, lambda v: ctx.const(np.asarray(v, f64)), x, *params)
        value = lp if node.attrs.is_log else ctx.node("Exp", [lp])
        ctx.node("Cast", [value], outs, to=_tensor_type(ctx, ctx.dtype((node, 0))))
    return translate


def _outside(ctx, c, mask, lp):
    """``lp`` with -inf where ``mask``."""
    return ctx.node("Where", [mask, c(-np.inf), lp])


def _lp_uniform(ctx, c, x, low, high):
    # x * 0: a NaN sample stays NaN
    lp = ctx.node("Sub", [ctx.node("Mul", [x, c(0.0)]),
                          ctx.node("Log", [ctx.node("Sub", [high, low])])])
    off = ctx.node("Or", [ctx.node("Less", [x, low]), ctx.node("Greater", [x, high])])
    return _outside(ctx, c, off, lp)


def _lp_normal(ctx, c, x, mu, sigma):
    z = ctx.node("Div", [ctx.node("Sub", [x, mu]), sigma])
    quad = ctx.node("Mul", [ctx.node("Mul", [z, z]), c(-0.5)])
    return ctx.node("Sub", [ctx.node("Sub", [quad, ctx.node("Log", [sigma])]), c(_HALF_LOG_2PI)])


def _lp_exponential(ctx, c, x, lam):
    lp = ctx.node("Sub", [ctx.node("Log", [lam]), ctx.node("Mul", [lam, x])])
    return _outside(ctx, c, ctx.node("Less", [x, c(0.0)]), lp)


for _dist, _fn, _ops in (("uniform", _lp_uniform, ["Less", "Greater", "Or", "Where"]),
                         ("normal", _lp_normal, []),
                         ("exponential", _lp_exponential, ["Less", "Where"])):
    translates(f"_random_pdf_{_dist}", onnx_ops=["Cast", "Reshape", "Sub", "Mul", "Div", "Log",
                                                  "Exp"] + _ops,
               notes="in float64, as mxlite")(_density(_fn))


# ---- densities with log-gamma terms (the Lanczos series of ``gammaln``) -------------------------
def _lgamma(ctx, x):
    """log |Gamma(x)| in float64 (any x; the densities call it at positive arguments)."""
    return _gamma_parts(ctx, x)[0]


def _log1p(ctx, c, x):
    """log(1 + x) without the rounding of 1 + x for small x (ONNX has no Log1p):
    log(u) x / (u - 1) with u = 1 + x, x itself where u rounds to 1."""
    u = ctx.node("Add", [c(1.0), x])
    at_one = ctx.node("Equal", [u, c(1.0)])
    denom = ctx.node("Where", [at_one, c(1.0), ctx.node("Sub", [u, c(1.0)])])
    ratio = ctx.node("Div", [ctx.node("Mul", [ctx.node("Log", [u]), x]), denom])
    return ctx.node("Where", [at_one, x, ratio])


def _times_log(ctx, c, a, log_y):
    """a * log_y, 0 where a == 0 and log_y == -inf (the limit 0 log 0 at the support's edge)."""
    edge = ctx.node("And", [ctx.node("Equal", [a, c(0.0)]),
                            ctx.node("Equal", [log_y, c(-np.inf)])])
    return ctx.node("Mul", [a, ctx.node("Where", [edge, c(0.0), log_y])])


def _off_half_line(ctx, c, x, anchor):
    """(mask of samples outside [0, inf), the sample with them replaced by ``anchor``):
    the logs and log-gammas stay finite there; NaN samples stay NaN."""
    off = ctx.node("Or", [ctx.node("Less", [x, c(0.0)]), ctx.node("Equal", [x, c(np.inf)])])
    return off, ctx.node("Where", [off, c(anchor), x])


def _lp_gamma(ctx, c, x, alpha, beta):
    off, x = _off_half_line(ctx, c, x, 1.0)
    lp = ctx.node("Sub", [_times_log(ctx, c, ctx.node("Sub", [alpha, c(1.0)]),
                                     ctx.node("Log", [x])), ctx.node("Mul", [beta, x])])
    norm = ctx.node("Sub", [ctx.node("Mul", [alpha, ctx.node("Log", [beta])]),
                            _lgamma(ctx, alpha)])
    return _outside(ctx, c, off, ctx.node("Add", [lp, norm]))


def _lp_poisson_at(ctx, c, x, lam):
    """The Poisson log-probability of a sample ``x`` already inside [0, inf)."""
    lp = ctx.node("Sub", [_times_log(ctx, c, x, ctx.node("Log", [lam])), lam])
    return ctx.node("Sub", [lp, _lgamma(ctx, ctx.node("Add", [x, c(1.0)]))])


def _lp_poisson(ctx, c, x, lam):
    off, x = _off_half_line(ctx, c, x, 0.0)
    return _outside(ctx, c, off, _lp_poisson_at(ctx, c, x, lam))


def _nb(ctx, c, x, k, log_p, log_q):
    """lgamma(x + k) - lgamma(x + 1) - lgamma(k) + k log p + x log q (x log q: 0 at x = 0)."""
    lg = ctx.node("Sub", [_lgamma(ctx, ctx.node("Add", [x, k])),
                          _lgamma(ctx, ctx.node("Add", [x, c(1.0)]))])
    lg = ctx.node("Sub", [lg, _lgamma(ctx, k)])
    lg = ctx.node("Add", [lg, ctx.node("Mul", [k, log_p])])
    return ctx.node("Add", [lg, _times_log(ctx, c, x, log_q)])


def _lp_negative_binomial(ctx, c, x, k, p):
    off, x = _off_half_line(ctx, c, x, 0.0)
    lp = _nb(ctx, c, x, k, ctx.node("Log", [p]), _log1p(ctx, c, ctx.node("Neg", [p])))
    return _outside(ctx, c, off, lp)


def _lp_generalized_negative_binomial(ctx, c, x, mu, alpha):
    """Negative binomial with k = 1 / alpha, p = 1 / (1 + mu alpha); Poisson(mu) where
    alpha = 0 (the limit)."""
    off, x = _off_half_line(ctx, c, x, 0.0)
    poisson = ctx.node("Equal", [alpha, c(0.0)])
    a = ctx.node("Where", [poisson, c(1.0), alpha])      # any positive value there
    ma = ctx.node("Mul", [mu, a])
    log1p_ma = _log1p(ctx, c, ma)
    lp = _nb(ctx, c, x, ctx.node("Reciprocal", [a]), ctx.node("Neg", [log1p_ma]),
             ctx.node("Sub", [ctx.node("Log", [ma]), log1p_ma]))
    lp = ctx.node("Where", [poisson, _lp_poisson_at(ctx, c, x, mu), lp])
    return _outside(ctx, c, off, lp)


_LGAMMA_OPS = ["Less", "Where", "Floor", "Sin", "Mod", "Equal", "Not", "Abs", "Sign", "Or",
               "And"]
for _dist, _fn, _ops in (("gamma", _lp_gamma, []),
                         ("poisson", _lp_poisson, []),
                         ("negative_binomial", _lp_negative_binomial, ["Neg"]),
                         ("generalized_negative_binomial", _lp_generalized_negative_binomial,
                          ["Neg", "Reciprocal"])):
    translates(f"_random_pdf_{_dist}", onnx_ops=["Cast", "Reshape", "Add", "Sub", "Mul", "Div",
                                                  "Log", "Exp"] + _LGAMMA_OPS + _ops,
               notes="in float64, as mxlite; log-gamma by the Lanczos series")(_density(_fn))


@translates("_random_pdf_dirichlet", onnx_ops=["Cast", "Reshape", "Add", "Sub", "Mul", "Div",
                                                "Log", "Exp", "ReduceSum", "Greater"]
            + _LGAMMA_OPS,
            notes="in float64, as mxlite; log-gamma by the Lanczos series")
def _pdf_dirichlet(ctx, node, ins, outs):
    f64 = np.dtype(np.float64)

    def c(v):
        return ctx.const(np.asarray(v, f64))
    sample_shape, alpha_shape = ctx.shape(node.inputs[0]), ctx.shape(node.inputs[1])
    x, alpha = ctx.cast(ins[0], f64), ctx.cast(ins[1], f64)
    # alpha (P, K) against the sample (P, S, K): one axis of 1 per sample axis
    tail = len(sample_shape) - len(alpha_shape)
    if tail:
        alpha = ctx.node("Reshape", [alpha, ctx.int64s(
            [0] * (len(alpha_shape) - 1) + [1] * tail + [-1])])
    last = ctx.int64s([-1])
    off, x = _off_half_line(ctx, c, x, 1.0)
    off = ctx.node("Greater", [ctx.node("ReduceSum", [ctx.cast(off, f64), last], keepdims=0),
                               c(0.0)])           # a component outside: the vector is
    terms = _times_log(ctx, c, ctx.node("Sub", [alpha, c(1.0)]), ctx.node("Log", [x]))
    lp = ctx.node("ReduceSum", [terms, last], keepdims=0)
    norm = ctx.node("Sub", [
        _lgamma(ctx, ctx.node("ReduceSum", [alpha, last], keepdims=0)),
        ctx.node("ReduceSum", [_lgamma(ctx, alpha), last], keepdims=0)])
    lp = _outside(ctx, c, off, ctx.node("Add", [lp, norm]))
    value = lp if node.attrs.is_log else ctx.node("Exp", [lp])
    if len(sample_shape) == 1:          # one vector gives shape (1,), as mxlite
        value = ctx.node("Reshape", [value, ctx.int64s([1])])
    ctx.node("Cast", [value], outs, to=_tensor_type(ctx, ctx.dtype((node, 0))))
