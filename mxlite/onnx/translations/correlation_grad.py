"""Correlation's derivatives, one displacement at a time as Correlation's own translation:
the tangent (a compared term replaced by the direction times the term's slope, channel sum,
K x K window sum at stride1, scaled) and the adjoint (the scaled head
gradient spread over each window by products with the per-axis window matrices, times the
slope, added at data1's window or data2's displaced one and cropped to the data)."""
import numpy as np

from ..table import translates
from ...ops import correlation as _corr


def _work(dtype):
    """float16 is computed in float32, as the op."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


class _Padded:
    """The op's inputs zero-padded (in the work dtype) and their window regions."""

    def __init__(self, ctx, node, values, first):
        self.ctx = ctx
        self.geo = _corr._corr_geometry(node.op.name, ctx.shape(node.inputs[first]), node.attrs)
        self.dtype = ctx.dtype(node.inputs[first])
        self.work = _work(self.dtype)
        p = self.geo.pad
        pads = ctx.int64s([0, 0, p, p, 0, 0, p, p], base="pads")
        self.values = []
        for v in values:
            v = v if self.work == self.dtype else ctx.cast(v, self.work)
            self.values.append(ctx.node("Pad", [v, pads]) if p else v)

    def window(self, i, dy=0, dx=0):
        """The window region of padded input ``i`` moved by (dy, dx)."""
        g = self.geo
        y0, x0 = g.md + dy, g.md + dx
        return self.ctx.node("Slice", [self.values[i], self.ctx.int64s([y0, x0]),
                                       self.ctx.int64s([y0 + g.hr, x0 + g.wr]),
                                       self.ctx.int64s([2, 3])])

    def const(self, value):
        return self.ctx.const(np.asarray(value, self.work))

    def store(self, value, outs):
        """``value`` (work dtype) written as the op's dtype."""
        if self.work == self.dtype:
            return self.ctx.node("Identity", [value], outs)
        return self.ctx.node("Cast", [value], outs,
                             to=self.ctx.onnx.helper.np_dtype_to_tensor_dtype(self.dtype))


def _slope(ctx, padded, attrs, side, a, b):
    """df/da (side 1) or df/db (side 2) of the compared term at pixels ``a``, ``b``: for the
    product the other pixel; for the absolute difference the sign of a - b, a tie counting
    as a > b (the op's rule)."""
    if attrs.is_multiply:
        return b if side == 1 else a
    above = ctx.cast(ctx.node("GreaterOrEqual", [a, b]), padded.work)
    sign = ctx.node("Sub", [ctx.node("Mul", [above, padded.const(2)]), padded.const(1)])
    return sign if side == 1 else ctx.node("Neg", [sign])


_NOTES = "one displacement at a time; float16 through float32"


def _window_matrix(n_out, stride, k, n_region):
    """(n_out, n_region): row o marks the K positions o * stride .. o * stride + K - 1."""
    m = np.zeros((n_out, n_region))
    for o in range(n_out):
        m[o, o * stride:o * stride + k] = 1.0
    return m


def _box(ctx, padded, value):
    """The K x K window sums at every stride1-th position of ``value`` (N, Q, hr, wr): a
    product with the 0/1 window matrix of each axis (MatMul has float64; AveragePool has
    not in onnxruntime)."""
    g = padded.geo
    rows = _window_matrix(g.th, g.s1, g.k, g.hr).astype(padded.work)
    cols = _window_matrix(g.tw, g.s1, g.k, g.wr).T.astype(padded.work)
    return ctx.node("MatMul", [ctx.node("MatMul", [ctx.const(rows, base="rows"), value]),
                               ctx.const(np.ascontiguousarray(cols), base="cols")])


@translates("_correlation_tangent", onnx_ops=["Cast", "Pad", "Slice", "GreaterOrEqual", "Mul",
                                              "Sub", "Neg", "ReduceSum", "Concat", "MatMul"],
            notes="the direction times the compared term's slope, summed over the channels, "
                  "the K x K window sums as products with 0/1 window matrices, scaled; "
                  + _NOTES)
def _correlation_tangent(ctx, node, ins, outs):
    a = node.attrs
    padded = _Padded(ctx, node, ins[:3], 1)             # tangent, data1, data2
    g = padded.geo
    planes = []
    for _, dy, dx in _corr._shifts(g):
        second = padded.window(2, dy, dx)
        slope = _slope(ctx, padded, a, a.side, padded.window(1), second)
        direction = padded.window(0) if a.side == 1 else padded.window(0, dy, dx)
        planes.append(ctx.node("ReduceSum", [ctx.node("Mul", [direction, slope]),
                                             ctx.int64s([1])], keepdims=1))
    sums = ctx.node("Concat", planes, axis=1) if len(planes) > 1 else planes[0]
    volume = ctx.node("Mul", [_box(ctx, padded, sums),
                              padded.const(1.0 / (g.k * g.k * g.c))])
    padded.store(volume, outs[:1])


@translates("_correlation_adjoint", onnx_ops=["Cast", "Pad", "Slice", "GreaterOrEqual", "Mul",
                                              "Sub", "Neg", "MatMul", "Sum"],
            notes="the head gradient spread over the windows (MatMuls with 0/1 window "
                  "matrices) times the slope, padded into place per displacement and "
                  "summed; " + _NOTES)
def _correlation_adjoint(ctx, node, ins, outs):
    a = node.attrs
    padded = _Padded(ctx, node, ins[1:3], 1)            # data1, data2
    g = padded.geo
    head = ins[0] if padded.work == padded.dtype else ctx.cast(ins[0], padded.work)
    head = ctx.node("Mul", [head, padded.const(1.0 / (g.k * g.k * g.c))])
    rows = _window_matrix(g.th, g.s1, g.k, g.hr).T.astype(padded.work)
    cols = _window_matrix(g.tw, g.s1, g.k, g.wr).astype(padded.work)
    spread = ctx.node("MatMul", [ctx.node("MatMul", [ctx.const(rows, base="rows"), head]),
                                 ctx.const(cols, base="cols")])        # (N, Q, hr, wr)
    hp, wp = g.h + 2 * g.pad, g.w + 2 * g.pad

    def placed(value, dy, dx):
        y0, x0 = g.md + dy, g.md + dx
        return ctx.node("Pad", [value, ctx.int64s([0, 0, y0, x0, 0, 0, hp - y0 - g.hr,
                                                   wp - x0 - g.wr], base="pads")])
    terms = []
    for q, dy, dx in _corr._shifts(g):
        share = ctx.node("Slice", [spread, ctx.int64s([q]), ctx.int64s([q + 1]),
                                   ctx.int64s([1])])
        slope = _slope(ctx, padded, a, a.side, padded.window(0), padded.window(1, dy, dx))
        term = ctx.node("Mul", [share, slope])
        terms.append(term if a.side == 1 else placed(term, dy, dx))
    total = ctx.node("Sum", terms) if len(terms) > 1 else terms[0]
    if a.side == 1:
        total = placed(total, 0, 0)
    p = g.pad
    cropped = ctx.node("Slice", [total, ctx.int64s([p, p]), ctx.int64s([p + g.h, p + g.w]),
                                 ctx.int64s([2, 3])])
    padded.store(cropped, outs[:1])
