"""Backward shape inference through the ops whose bodies are graphs (``_foreach``,
``_while_loop``, ``_cond``): an input of the node whose shape is unknown (typically a
deferred-init Gluon weight that only the body reads) gets the shape the body's own ops give
it, as MXNet's control-flow shape functions did. Without it a hybridized block with a loop
or a branch could not finish its parameters' deferred initialization."""

__all__ = ["graph_input_shapes", "fill_from_graphs"]


def graph_input_shapes(graph, known):
    """``{input name: shape}`` for every input of ``graph`` whose shape its partial
    inference determines completely from ``known`` (``{input name: shape}``)."""
    args, _, aux = graph.infer_shape_partial(**known)
    found = zip(graph.list_arguments() + graph.list_auxiliary_states(), args + aux)
    # () and a 0 dimension are what the partial inference leaves unknown (MXNet's legacy)
    return {name: tuple(s) for name, s in found if s and 0 not in s}


def fill_from_graphs(in_shapes, graphs):
    """The node's input shapes (None: unknown) with the unknown ones filled from
    ``graphs``: ``(graph, locs)`` pairs, input j of the graph being the node's input
    ``locs[j]``. What no graph determines stays None."""
    shapes = list(in_shapes)
    for graph, locs in graphs:
        names = graph.list_inputs()
        known = {n: tuple(in_shapes[i]) for n, i in zip(names, locs)
                 if in_shapes[i] is not None}
        found = graph_input_shapes(graph, known)
        for name, i in zip(names, locs):
            if shapes[i] is None and name in found:
                shapes[i] = found[name]
    return shapes
