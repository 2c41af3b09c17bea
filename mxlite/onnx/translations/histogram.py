"""``_histogram``: equal bins by the op's float64 arithmetic and a ScatterElements add of
the in-range values' ones; explicit edges by counting the values at or above each edge
(one comparison of every value with every edge) and differencing."""
import numpy as np

from ..table import translates
from ...ops import array_ops as _array_ops

_F64, _I64 = np.dtype(np.float64), np.dtype(np.int64)


def _uniform_edges(lo, hi, n, dtype):
    """The n + 1 edges of n equal bins of [lo, hi] in ``dtype``: ``lo + i * step`` in
    float64, the last exactly hi (linspace's rule), cast as mxlite casts (truncating)."""
    values = np.arange(n + 1, dtype=_F64) * ((hi - lo) / n if n else 0.0) + lo
    if n:
        values[-1] = hi
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(dtype)


def _uniform(ctx, node, x, outs):
    a = node.attrs
    lo, hi = _array_ops._hist_range(a)
    n = a.bin_cnt
    ctx.node("Identity", [ctx.const(_uniform_edges(lo, hi, n, ctx.dtype((node, 1))),
                                    base="edges")], outs[1:2])
    if n == 0:
        ctx.node("Identity", [ctx.const(np.zeros(0, _I64), base="counts")], outs[:1])
        return
    lo_c, hi_c = ctx.const(np.asarray(lo, _F64)), ctx.const(np.asarray(hi, _F64))
    inside = ctx.node("And", [ctx.node("GreaterOrEqual", [x, lo_c]),
                              ctx.node("LessOrEqual", [x, hi_c])])
    # out-of-range values (NaN, inf) are moved to lo first: their casts are never taken
    safe = ctx.node("Where", [inside, x, lo_c])
    scaled = ctx.node("Mul", [ctx.node("Sub", [safe, lo_c]),
                              ctx.const(np.asarray(n / (hi - lo), _F64))])
    index = ctx.node("Min", [ctx.cast(scaled, _I64), ctx.const(np.asarray(n - 1, _I64))])
    zeros = ctx.const(np.zeros(n, _I64), base="counts")
    ctx.node("ScatterElements", [zeros, index, ctx.cast(inside, _I64)], outs[:1], axis=0,
             reduction="add")


def _explicit(ctx, node, x, bins, outs):
    k = ctx.shape(node.inputs[1])[0]
    ctx.node("Identity", [bins], outs[1:2])
    edges = ctx.node("Unsqueeze", [ctx.cast(bins, _F64), ctx.int64s([0])])      # (1, k)
    column = ctx.node("Unsqueeze", [x, ctx.int64s([1])])                       # (M, 1)
    inner = ctx.node("Slice", [edges, ctx.int64s([0]), ctx.int64s([k - 1]), ctx.int64s([1])])
    last = ctx.node("Slice", [edges, ctx.int64s([k - 1]), ctx.int64s([k]), ctx.int64s([1])])
    hits = ctx.node("Concat", [ctx.node("GreaterOrEqual", [column, inner]),
                               ctx.node("Greater", [column, last])], axis=1)
    above = ctx.node("ReduceSum", [ctx.cast(hits, _I64), ctx.int64s([0])], keepdims=0)
    lower = ctx.node("Slice", [above, ctx.int64s([0]), ctx.int64s([k - 1])])
    upper = ctx.node("Slice", [above, ctx.int64s([1]), ctx.int64s([k])])
    ctx.node("Sub", [lower, upper], outs[:1])


@translates("_histogram", onnx_ops=["Reshape", "Cast", "GreaterOrEqual", "LessOrEqual",
                                    "Greater", "And", "Where", "Sub", "Mul", "Min",
                                    "ScatterElements", "Unsqueeze", "Slice", "Concat",
                                    "ReduceSum"],
            notes="equal bins: the op's float64 bin arithmetic and a ScatterElements add; "
                  "explicit edges: every value compared with every edge (memory values x "
                  "edges); edges that do not increase (an error in mxlite) are not checked")
def _histogram(ctx, node, ins, outs):
    x = ctx.cast(ctx.node("Reshape", [ins[0], ctx.int64s([-1])]), _F64)
    if node.attrs.bin_cnt is not None:
        _uniform(ctx, node, x, outs)
    else:
        _explicit(ctx, node, x, ins[1], outs)
