"""The ONNX Loop builder the iterative translations share: the loop body is written with the
same ``ctx.node`` calls as any translation (into a graph of its own), and may read every
value of the enclosing graph."""
import numpy as np

__all__ = ["loop"]


def loop(ctx, carried, body, trips=None, scanned=()):
    """An ONNX Loop. ``carried``: the (initial value, ONNX element type) of each
    loop-carried value; ``body(iteration, values) -> (keep_going, new values, per-iteration
    values)`` writes one iteration (``iteration`` the int64 scalar count from 0;
    ``keep_going`` a bool scalar or None to run all ``trips``). ``trips``: an int64 scalar
    value bounding the iterations, or None (until ``keep_going`` is False; the first
    iteration always runs). ``scanned``: the ONNX element types of the per-iteration values,
    stacked along a new first axis. Returns the final carried values, then the stacked
    ones."""
    helper = ctx.helper
    saved, ctx.nodes = ctx.nodes, []
    iteration, condition = ctx.fresh("iteration"), ctx.fresh("condition")
    names = [ctx.fresh("carried") for _ in carried]
    keep_going, new, per_step = body(iteration, names)
    if keep_going is None:
        keep_going = condition
    # the body's outputs are values of its own (an input passed through is not one)
    outputs = [ctx.node("Identity", [v]) for v in [keep_going] + list(new) + list(per_step)]
    body_nodes, ctx.nodes = ctx.nodes, saved
    bool_t, int_t = ctx.onnx.TensorProto.BOOL, ctx.onnx.TensorProto.INT64
    types = [t for _, t in carried] + list(scanned)
    graph = helper.make_graph(
        body_nodes, ctx.fresh("loop_body"),
        [helper.make_tensor_value_info(iteration, int_t, []),
         helper.make_tensor_value_info(condition, bool_t, [])]
        + [helper.make_tensor_value_info(n, t, None) for n, (_, t) in zip(names, carried)],
        [helper.make_tensor_value_info(outputs[0], bool_t, [])]
        + [helper.make_tensor_value_info(o, t, None) for o, t in zip(outputs[1:], types)])
    start = ctx.const(np.asarray(True))
    results = ctx.node("Loop", ["" if trips is None else trips, start]
                       + [v for v, _ in carried],
                       [ctx.fresh("loop_out") for _ in types], body=graph)
    return results if isinstance(results, list) else [results]
