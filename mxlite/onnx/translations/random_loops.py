"""Random samplers that need rejection or counting: gamma (Marsaglia and Tsang), Poisson
(multiplication of uniforms below a rate of 10, Hormann's PTRS above), the negative
binomials (Poisson with a gamma rate) and the distinct log-uniform classes of
``_sample_unique_zipfian``.

Each is an ONNX Loop that draws for every element still pending and runs until every element
has accepted a value: no cap on the number of trials, so the exported samplers draw from the
same distributions as mxlite's (whose kernels run the same methods). The values come from the
runtime's random stream, not mxlite's Philox stream. Everything is drawn and computed in
float64, as mxlite's kernels, and cast to the output dtype last.
"""
import math

import numpy as np

from ..table import translates
from .image import RANDOM
from .loop import loop
from .mathops import _lgamma_right

_F64 = np.dtype(np.float64)


def _c(ctx, value):
    return ctx.const(np.asarray(value, _F64))


def _double(ctx):
    return ctx.onnx.TensorProto.DOUBLE


def _zeros(ctx, shape_value):
    """float64 zeros of the 1-D int64 shape ``shape_value`` (the template the loops draw
    like)."""
    value = ctx.helper.make_tensor("value", _double(ctx), [1], [0.0])
    return ctx.node("ConstantOfShape", [shape_value], value=value)


def _uniform(ctx, like):
    """Uniform draws on [0, 1) in float64, of ``like``'s shape."""
    return ctx.node("RandomUniformLike", [like], dtype=_double(ctx))


def _open_uniform(ctx, like):
    """Uniform draws on (0, 1] (1 - U): their logs and powers are finite."""
    return ctx.node("Sub", [_c(ctx, 1.0), _uniform(ctx, like)])


def _pending(ctx, done):
    """A bool scalar: whether some element of ``done`` is still False."""
    left = ctx.node("ReduceSum", [ctx.cast(ctx.node("Not", [done]), _F64)], keepdims=0)
    return ctx.node("Greater", [left, _c(ctx, 0.0)])


# ---- gamma: Marsaglia and Tsang -----------------------------------------------------------------
def gamma_draws(ctx, zeros, alpha):
    """Gamma(alpha, 1) draws (float64) of ``zeros``' shape, ``alpha`` (float64, > 0)
    broadcasting against it. For alpha >= 1: d = alpha - 1/3, c = 1 / sqrt(9 d); draw
    z ~ N(0, 1) and U until v = (1 + c z)^3 > 0 and log U < z^2 / 2 + d - d v + d log v,
    then d v. For alpha < 1 the draw of alpha + 1 times U^(1 / alpha)."""
    boost = ctx.node("Less", [alpha, _c(ctx, 1.0)])
    a = ctx.node("Add", [alpha, ctx.cast(boost, _F64)])
    d = ctx.node("Sub", [a, _c(ctx, 1.0 / 3.0)])
    c = ctx.node("Div", [_c(ctx, 1.0 / 3.0), ctx.node("Sqrt", [d])])
    double, bool_t = _double(ctx), ctx.onnx.TensorProto.BOOL

    def body(_, values):
        x, done = values
        z = ctx.node("RandomNormalLike", [x], dtype=double)
        u = _open_uniform(ctx, x)
        t = ctx.node("Add", [_c(ctx, 1.0), ctx.node("Mul", [c, z])])
        positive = ctx.node("Greater", [t, _c(ctx, 0.0)])
        v = ctx.node("Where", [positive, ctx.node("Mul", [ctx.node("Mul", [t, t]), t]),
                               _c(ctx, 1.0)])
        bound = ctx.node("Add", [ctx.node("Mul", [ctx.node("Mul", [z, z]), _c(ctx, 0.5)]),
                                 ctx.node("Mul", [d, ctx.node("Add", [
                                     ctx.node("Sub", [_c(ctx, 1.0), v]),
                                     ctx.node("Log", [v])])])])
        accept = ctx.node("And", [positive, ctx.node("Less", [ctx.node("Log", [u]), bound])])
        take = ctx.node("And", [accept, ctx.node("Not", [done])])
        x = ctx.node("Where", [take, ctx.node("Mul", [d, v]), x])
        done = ctx.node("Or", [done, accept])
        return _pending(ctx, done), [x, done], []
    x, _ = loop(ctx, [(zeros, double), (ctx.cast(zeros, np.bool_), bool_t)], body)
    power = ctx.node("Pow", [_open_uniform(ctx, zeros), ctx.node("Reciprocal", [alpha])])
    return ctx.node("Mul", [x, ctx.node("Where", [boost, power, _c(ctx, 1.0)])])


# ---- Poisson: multiplied uniforms below rate 10, PTRS above ------------------------------------
_SMALL = 10.0


def poisson_draws(ctx, zeros, lam):
    """Poisson(lam) counts (float64) of ``zeros``' shape, ``lam`` (float64, >= 0)
    broadcasting against it. Below rate 10 (Knuth): the count of uniforms whose running
    product stays above exp(-lam), one uniform an iteration. From rate 10 Hormann's
    transformed rejection with squeeze (PTRS), one trial an iteration."""
    double, bool_t = _double(ctx), ctx.onnx.TensorProto.BOOL
    lam = ctx.node("Add", [lam, zeros])                 # full shape: the loop's draws
    small = ctx.node("Less", [lam, _c(ctx, _SMALL)])
    floor = ctx.node("Exp", [ctx.node("Neg", [lam])])
    # PTRS's constants (at rate 10 or more: finite for the small-rate elements too)
    big = ctx.node("Max", [lam, _c(ctx, _SMALL)])
    log_lam = ctx.node("Log", [big])
    b = ctx.node("Add", [_c(ctx, 0.931), ctx.node("Mul", [_c(ctx, 2.53),
                                                          ctx.node("Sqrt", [big])])])
    a = ctx.node("Add", [_c(ctx, -0.059), ctx.node("Mul", [_c(ctx, 0.02483), b])])
    log_inv_alpha = ctx.node("Log", [ctx.node("Add", [_c(ctx, 1.1239), ctx.node("Div", [
        _c(ctx, 1.1328), ctx.node("Sub", [b, _c(ctx, 3.4)])])])])
    v_r = ctx.node("Sub", [_c(ctx, 0.9277), ctx.node("Div", [
        _c(ctx, 3.6224), ctx.node("Sub", [b, _c(ctx, 2.0)])])])

    def body(_, values):
        x, done, product, count = values
        u1, v = _uniform(ctx, x), _uniform(ctx, x)
        # Knuth: the count so far once the product falls to exp(-lam)
        product = ctx.node("Mul", [product, ctx.node("Sub", [_c(ctx, 1.0), u1])])
        small_done = ctx.node("LessOrEqual", [product, floor])
        # PTRS: one trial k from u = U - 1/2, v = V
        u = ctx.node("Sub", [u1, _c(ctx, 0.5)])
        us = ctx.node("Sub", [_c(ctx, 0.5), ctx.node("Abs", [u])])
        k = ctx.node("Floor", [ctx.node("Add", [ctx.node("Mul", [ctx.node("Add", [
            ctx.node("Div", [ctx.node("Mul", [_c(ctx, 2.0), a]), us]), b]), u]),
            ctx.node("Add", [big, _c(ctx, 0.43)])])])
        squeeze = ctx.node("And", [ctx.node("GreaterOrEqual", [us, _c(ctx, 0.07)]),
                                   ctx.node("LessOrEqual", [v, v_r])])
        reject = ctx.node("Or", [ctx.node("Less", [k, _c(ctx, 0.0)]), ctx.node("And", [
            ctx.node("Less", [us, _c(ctx, 0.013)]), ctx.node("Greater", [v, us])])])
        k0 = ctx.node("Max", [k, _c(ctx, 0.0)])
        lhs = ctx.node("Sub", [ctx.node("Add", [ctx.node("Log", [v]), log_inv_alpha]),
                               ctx.node("Log", [ctx.node("Add", [ctx.node("Div", [
                                   a, ctx.node("Mul", [us, us])]), b])])])
        rhs = ctx.node("Sub", [ctx.node("Sub", [ctx.node("Mul", [k0, log_lam]), big]),
                               _lgamma_right(ctx, ctx.node("Add", [k0, _c(ctx, 1.0)]))])
        big_done = ctx.node("Or", [squeeze, ctx.node("And", [
            ctx.node("Not", [reject]), ctx.node("LessOrEqual", [lhs, rhs])])])
        # (onnxruntime has no Where for bool values)
        finished = ctx.node("Or", [ctx.node("And", [small, small_done]), ctx.node("And", [
            ctx.node("Not", [small]), big_done])])
        value = ctx.node("Where", [small, count, k])
        take = ctx.node("And", [finished, ctx.node("Not", [done])])
        x = ctx.node("Where", [take, value, x])
        done = ctx.node("Or", [done, finished])
        count = ctx.node("Add", [count, _c(ctx, 1.0)])
        return _pending(ctx, done), [x, done, product, count], []
    ones = ctx.node("Add", [zeros, _c(ctx, 1.0)])
    x, _, _, _ = loop(ctx, [(zeros, double), (ctx.cast(zeros, np.bool_), bool_t),
                            (ones, double), (zeros, double)], body)
    return x


# ---- the distributions --------------------------------------------------------------------------
def _gamma(ctx, zeros, alpha, beta):
    return ctx.node("Mul", [gamma_draws(ctx, zeros, alpha), beta])


def _poisson(ctx, zeros, lam):
    return poisson_draws(ctx, zeros, lam)


def _negative_binomial(ctx, zeros, k, p):
    """Poisson(Gamma(k, (1 - p) / p)): failures before the k-th success."""
    scale = ctx.node("Div", [ctx.node("Sub", [_c(ctx, 1.0), p]), p])
    return poisson_draws(ctx, zeros, ctx.node("Mul", [gamma_draws(ctx, zeros, k), scale]))


def _generalized_negative_binomial(ctx, zeros, mu, alpha):
    """Poisson(Gamma(1 / alpha, alpha mu)); Poisson(mu) where alpha = 0."""
    plain = ctx.node("Equal", [alpha, _c(ctx, 0.0)])
    shape = ctx.node("Reciprocal", [ctx.node("Where", [plain, _c(ctx, 1.0), alpha])])
    rate = ctx.node("Mul", [gamma_draws(ctx, zeros, shape), ctx.node("Mul", [alpha, mu])])
    return poisson_draws(ctx, zeros, ctx.node("Where", [plain, mu, rate]))


_DISTS = {
    "gamma": (_gamma, ("alpha", "beta")),
    "poisson": (_poisson, ("lam",)),
    "negative_binomial": (_negative_binomial, ("k", "p")),
    "generalized_negative_binomial": (_generalized_negative_binomial, ("mu", "alpha")),
}


def _write(ctx, node, value, outs):
    ctx.node("Cast", [value], outs, to=ctx.helper.np_dtype_to_tensor_dtype(ctx.dtype((node, 0))))


def _scalar_sampler(dist, like):
    """``_random_{dist}`` (attributes for the parameters, ``shape``), or its ``_like``
    form (the shape of ``data``)."""
    fn, params = _DISTS[dist]

    def translate(ctx, node, ins, outs):
        if like:
            shape = ctx.node("Shape", [ins[0]])
        else:
            shape = ctx.int64s(ctx.shape((node, 0)))
        values = [_c(ctx, float(node.attrs[p])) for p in params]
        _write(ctx, node, fn(ctx, _zeros(ctx, shape), *values), outs)
    return translate


def _sample_sampler(dist):
    """``_sample_{dist}``: the parameter arrays (shape P), ``shape`` samples of each
    (output P + shape)."""
    fn, _ = _DISTS[dist]

    def translate(ctx, node, ins, outs):
        extra = tuple(node.attrs.shape)
        pshape = ctx.shape(node.inputs[0])
        values = [ctx.cast(x, _F64) for x in ins]
        if extra:
            # 0 copies a parameter axis (a symbolic batch axis stays symbolic)
            view = ctx.int64s([0] * len(pshape) + [1] * len(extra))
            values = [ctx.node("Reshape", [x, view]) for x in values]
        shape = ctx.node("Concat", [ctx.node("Shape", [ins[0]]), ctx.int64s(extra)], axis=0)
        _write(ctx, node, fn(ctx, _zeros(ctx, shape), *values), outs)
    return translate


_OPS = {
    "gamma": ["RandomNormalLike", "RandomUniformLike", "Loop", "Pow", "Where"],
    "poisson": ["RandomUniformLike", "Loop", "Floor", "Abs", "Where"],
}
_OPS["negative_binomial"] = _OPS["gamma"] + _OPS["poisson"]
_OPS["generalized_negative_binomial"] = _OPS["negative_binomial"]
_HOW = {
    "gamma": "Marsaglia and Tsang's rejection",
    "poisson": "multiplied uniforms below rate 10, PTRS rejection above",
    "negative_binomial": "Poisson(Gamma(k, (1 - p) / p))",
    "generalized_negative_binomial": "Poisson(Gamma(1 / alpha, alpha mu)), Poisson(mu) at "
                                     "alpha = 0",
}
for _dist in _DISTS:
    _notes = (f"{_HOW[_dist]}, in an ONNX Loop until every element accepted (the exact "
              "distribution; the count of iterations is random); counts beyond the exact "
              "integers of the dtype are rounded, not an error; " + RANDOM)
    _ops = ["ConstantOfShape", "Shape", "Cast", "Add", "Sub", "Mul", "Div", "Log", "Exp",
            "Sqrt", "Less", "Greater", "And", "Or", "Not", "ReduceSum"] + _OPS[_dist]
    translates(f"_random_{_dist}", onnx_ops=_ops, notes=_notes)(_scalar_sampler(_dist, False))
    translates(f"_random_{_dist}_like", onnx_ops=_ops, notes=_notes)(
        _scalar_sampler(_dist, True))
    translates(f"_sample_{_dist}", onnx_ops=_ops + ["Reshape", "Concat"], notes=_notes)(
        _sample_sampler(_dist))


# ---- _sample_unique_zipfian ---------------------------------------------------------------------
@translates("_sample_unique_zipfian", onnx_ops=["ConstantOfShape", "RandomUniformLike", "Loop",
                                                "Mul", "Exp", "Floor", "Sub", "Clip", "Cast",
                                                "Equal", "Less", "And", "Or", "Not",
                                                "ReduceMax", "ReduceSum", "Where", "Unsqueeze",
                                                "Add", "Greater"],
            opset=18,
            notes="one log-uniform draw per row and iteration, kept when new, in an ONNX Loop "
                  "until every row holds num_sampled classes (the distribution of mxlite's "
                  "rounds of draws, num_tries included); " + RANDOM)
def _unique_zipfian(ctx, node, ins, outs):
    batch, need = ctx.shape((node, 0))
    int_t = ctx.onnx.TensorProto.INT64
    log_range = math.log(node.attrs.range_max + 1.0)
    rows = _zeros(ctx, ctx.int64s([batch]))
    column = ctx.const(np.arange(need, dtype=np.int64).reshape(1, need), base="column")
    axis1 = ctx.int64s([1])

    def body(_, values):
        samples, held, tries = values
        u = _uniform(ctx, rows)
        drawn = ctx.node("Sub", [ctx.node("Floor", [ctx.node("Exp", [
            ctx.node("Mul", [u, _c(ctx, log_range)])])]), _c(ctx, 1.0)])
        # exp rounding up as u -> 1 stays in range (mxlite clips too)
        drawn = ctx.cast(ctx.node("Clip", [drawn, _c(ctx, 0.0),
                                           _c(ctx, node.attrs.range_max - 1.0)]), np.int64)
        col = ctx.node("Unsqueeze", [drawn, axis1])
        kept = ctx.node("Less", [column, ctx.node("Unsqueeze", [held, axis1])])
        seen = ctx.node("ReduceMax", [ctx.cast(ctx.node("And", [
            kept, ctx.node("Equal", [samples, col])]), np.int64), axis1], keepdims=0)
        short = ctx.node("Less", [held, ctx.const(np.asarray(need, np.int64))])
        new = ctx.node("And", [short, ctx.node("Not", [ctx.cast(seen, np.bool_)])])
        slot = ctx.node("And", [ctx.node("Equal", [column, ctx.node("Unsqueeze", [
            held, axis1])]), ctx.node("Unsqueeze", [new, axis1])])
        samples = ctx.node("Where", [slot, col, samples])
        held = ctx.node("Add", [held, ctx.cast(new, np.int64)])
        tries = ctx.node("Add", [tries, ctx.cast(short, np.int64)])
        left = ctx.node("Less", [held, ctx.const(np.asarray(need, np.int64))])
        more = ctx.node("Greater", [ctx.node("ReduceSum", [ctx.cast(left, np.int64)],
                                             keepdims=0), ctx.const(np.asarray(0, np.int64))])
        return more, [samples, held, tries], []
    zero_rows = ctx.cast(rows, np.int64)
    start = ctx.cast(_zeros(ctx, ctx.int64s([batch, need])), np.int64)
    samples, _, tries = loop(ctx, [(start, int_t), (zero_rows, int_t),
                                   (zero_rows, int_t)], body)
    ctx.node("Identity", [samples], outs[:1])
    ctx.node("Identity", [tries], outs[1:2])
