"""Greedy scans as ONNX Loops, and the helpers of the NMS family (nms.py, matching.py,
proposal.py): sorting with TopK (ties keep the lower position first, as mxlite's stable
sorts), moving flagged rows to the front, reading columns, float parameters as mxlite
holds them, and float16 arithmetic rounded as mxlite's."""
import numpy as np

LOOP_OPS = ["Loop", "Gather", "Unsqueeze", "Greater", "And", "Not", "Identity", "Add",
            "Less", "Cast", "ReduceSum", "ReduceMax"]


def loop(ctx, trips, state, dtypes, body, more=None):
    """The values ``state`` (ONNX names of NumPy ``dtypes``) after an ONNX Loop of ``trips``
    (a static count) steps: ``body(i, values)`` writes one step with ``ctx.node`` (``i`` the
    int64 scalar step, ``values`` the state's names inside the body) and returns the new
    names; ``more(i, new)``, when given, writes the bool scalar that lets the loop go on.
    The body may read any value of the enclosing graph."""
    helper = ctx.helper
    outer, ctx.nodes = ctx.nodes, []
    try:
        step, cond = ctx.fresh("step"), ctx.fresh("cond")
        values = [ctx.fresh("state") for _ in state]
        new = [ctx.node("Identity", [v]) for v in body(step, values)]
        cond_out = ctx.node("Identity", [cond]) if more is None else more(step, new)
        nodes = ctx.nodes
    finally:
        ctx.nodes = outer
    types = [helper.np_dtype_to_tensor_dtype(np.dtype(d)) for d in dtypes]
    bool_, int64 = ctx.onnx.TensorProto.BOOL, ctx.onnx.TensorProto.INT64
    graph = helper.make_graph(
        nodes, ctx.fresh("loop_body"),
        [helper.make_tensor_value_info(step, int64, []),
         helper.make_tensor_value_info(cond, bool_, [])]
        + [helper.make_tensor_value_info(v, t, None) for v, t in zip(values, types)],
        [helper.make_tensor_value_info(cond_out, bool_, [])]
        + [helper.make_tensor_value_info(v, t, None) for v, t in zip(new, types)])
    outs = [ctx.fresh("loop_out") for _ in state]
    go = None if more is None else ctx.const(np.bool_(True))
    ctx.node("Loop", [ctx.const(np.asarray(trips, np.int64)), go or "", *state], outs,
             body=graph)
    return outs


def filled(ctx, like, k, value, dtype):
    """A (B, k) tensor of ``value`` (``dtype``), B the first axis of ``like``."""
    size = ctx.node("Concat", [ctx.node("Slice", [ctx.node("Shape", [like]), ctx.int64s([0]),
                                                  ctx.int64s([1])]), ctx.int64s([k])], axis=0)
    fill = ctx.onnx.numpy_helper.from_array(np.asarray([value], dtype), "fill")
    return ctx.node("ConstantOfShape", [size], value=fill)


def greedy_suppress(ctx, alive, k, suppresses, limit=None):
    """Greedy suppression over ``k`` boxes sorted best first: ``alive`` (B, k) bool marks
    the candidates, which come first in each item; step ``i`` (in order) takes box ``i``,
    and where it is alive, the later boxes in ``suppresses(at)`` (``at`` the int64 index
    [i]; a (B, k) bool) die. Returns the alive flags after the last step: the steps stop
    past the last candidate of every item, and with ``limit`` once every item has kept that
    many boxes (the flags past the last step taken are then not final)."""
    later = ctx.const(np.arange(k, dtype=np.int64)[None, :], base="position")
    most = ctx.node("ReduceMax", [ctx.node("ReduceSum", [ctx.cast(alive, np.int64)],
                                           keepdims=0)], keepdims=0)     # candidates, at most

    def body(step, values):
        at = ctx.node("Unsqueeze", [step, ctx.int64s([0])])
        me = ctx.node("Gather", [values[0], at], axis=1)                   # (B, 1)
        hit = ctx.node("And", [suppresses(at), ctx.node("Greater", [later, at])])
        hit = ctx.node("And", [hit, me])
        new = [ctx.node("And", [values[0], ctx.node("Not", [hit])])]
        if limit is not None:
            new.append(ctx.node("Add", [values[1], ctx.cast(me, np.int64)]))
        return new

    def more(step, new):
        go = ctx.node("Less", [ctx.node("Add", [step, ctx.const(np.int64(1))]), most])
        if limit is not None:
            fewest = ctx.node("ReduceMin", [new[1]], keepdims=0)
            go = ctx.node("And", [go, ctx.node("Less", [fewest, ctx.const(np.int64(limit))])])
        return go
    if limit is None:
        return loop(ctx, k, [alive], [np.bool_], body, more)[0]
    return loop(ctx, k, [alive, filled(ctx, alive, 1, 0, np.int64)], [np.bool_, np.int64],
                body, more)[0]


def head(ctx, x, k, start=0):
    """``x`` (B, n, ...) cut to positions ``start`` to ``k`` of axis 1."""
    return ctx.node("Slice", [x, ctx.int64s([start]), ctx.int64s([k]), ctx.int64s([1])])


def suppress_first(ctx, alive, n, m, rows, suppresses_of, limit=None):
    """greedy_suppress of the first ``m`` of ``n`` sorted boxes (the others are no
    candidates): ``suppresses_of(rows)`` builds ``suppresses`` from ``rows`` (B, n, W) cut
    to the first ``m``. Returns the (B, n) alive flags."""
    if m == n:
        return greedy_suppress(ctx, alive, n, suppresses_of(rows), limit)
    kept = greedy_suppress(ctx, head(ctx, alive, m), m, suppresses_of(head(ctx, rows, m)),
                           limit)
    return ctx.node("Concat", [kept, head(ctx, alive, n, m)], axis=1)


def front_first(ctx, flags, k):
    """(B, k) int64 positions that move the True entries of ``flags`` (B, k) to the front,
    each group in its order (TopK over position, k more where False)."""
    position = ctx.const(np.arange(k, dtype=np.int64)[None, :], base="position")
    key = ctx.node("Where", [flags, position,
                             ctx.node("Add", [position, ctx.const(np.int64(k))])])
    return ctx.node("TopK", [key, ctx.int64s([k])], [ctx.fresh("v"), ctx.fresh("order")],
                    axis=1, largest=0, sorted=1)[1]


def sort_desc(ctx, key, k):
    """(B, k) int64 order of ``key`` (B, k), descending, ties by position."""
    return ctx.node("TopK", [key, ctx.int64s([k])], [ctx.fresh("v"), ctx.fresh("order")],
                    axis=1, largest=1, sorted=1)[1]


def take_rows(ctx, x, order):
    """``x`` (B, k, ...) with its axis 1 reordered by ``order`` (B, m) int64."""
    return ctx.node("GatherND", [x, ctx.node("Unsqueeze", [order, ctx.int64s([-1])])],
                    batch_dims=1)


def columns(ctx, x, start, count):
    """``count`` (B, k) columns ``start``.. of ``x`` (B, k, W)."""
    return [ctx.node("Squeeze", [ctx.node("Slice", [x, ctx.int64s([j]), ctx.int64s([j + 1]),
                                                    ctx.int64s([2])]), ctx.int64s([2])])
            for j in range(start, start + count)]


def compare_dtype(dtype):
    """The dtype mxlite compares a ``dtype`` value with a float32 parameter in."""
    return np.result_type(dtype, np.float32)


def param(ctx, value, dtype, work=None):
    """A float parameter as mxlite holds it (float32), rounded to ``dtype``, as a constant of
    ``work`` (default ``dtype``)."""
    return ctx.const(np.asarray(np.asarray(np.float32(value), dtype), work or dtype))


class HalfRounding:
    """``ctx`` for float16 arithmetic carried in float32: every Add, Sub, Mul, Div and Exp
    result is rounded to float16 (a Cast there and back, to nearest even), which is what
    mxlite's float16 arithmetic gives (onnxruntime's own float16 kernels may round a tie
    the other way). Use it for float values only."""
    ROUNDED = ("Add", "Sub", "Mul", "Div", "Exp")

    def __init__(self, ctx):
        self._ctx = ctx

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def node(self, op_type, inputs, outputs=None, **attrs):
        ctx = self._ctx
        if op_type not in self.ROUNDED:
            return ctx.node(op_type, inputs, outputs, **attrs)
        half = ctx.cast(ctx.node(op_type, inputs, **attrs), np.float16)
        return ctx.node("Cast", [half], outputs, to=ctx.onnx.TensorProto.FLOAT)


def arithmetic(ctx, dtype):
    """(the dtype float values are carried in, the context to compute them with): float16
    goes through float32, rounded as float16 after each operation."""
    if dtype == np.float16:
        return np.dtype(np.float32), HalfRounding(ctx)
    return dtype, ctx


def unary(ctx, op_type, x, work):
    """``op_type`` (Exp, Log) of ``x`` (``work`` values): float32 through float64, rounded
    once, which matches mxlite's float32 kernels far more often than onnxruntime's float32
    ones (a few in 10**4 values differ, not one in 10 or 20)."""
    if work != np.float32:
        return ctx.node(op_type, [x])
    return ctx.cast(ctx.node(op_type, [ctx.cast(x, np.float64)]), np.float32)


def batch_offsets(ctx, x, k):
    """(B, 1) int64 ``b * k`` of each item ``b`` of ``x`` (B, ...)."""
    count = ctx.node("Gather", [ctx.node("Shape", [x]), ctx.const(np.int64(0))], axis=0)
    items = ctx.node("Range", [ctx.const(np.int64(0)), count, ctx.const(np.int64(1))])
    return ctx.node("Unsqueeze", [ctx.node("Mul", [items, ctx.const(np.int64(k))]),
                                  ctx.int64s([1])])
