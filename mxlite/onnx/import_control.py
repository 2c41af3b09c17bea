"""ONNX importers of the operators with graph attributes (registered in
``import_table.IMPORTS``): Scan as ``_foreach``, Loop as ``_while_loop``, If as ``_cond``,
built by mxlite's own ``mx.sym.contrib.foreach`` / ``while_loop`` / ``cond``, each body or
branch imported as a graph of registered operators (nested ones the same way).

A body reads values of the enclosing graphs by name (ONNX's outer scope): while a body is
imported, ``ic.values`` is a chain of its own values over the enclosing ones, and what it
reads from outside becomes an input of the mxlite node (the front ends cut it there).

What is taken: Scan along axis 0 (either direction); Loop, its iteration number and
condition carried as loop variables, its scanned outputs given with mxlite's padding
(``max`` trip-count rows, zeros after the last step: so only under a constant trip count);
If. The rest is an MXNetError naming the node.
"""
from collections import ChainMap
from contextlib import contextmanager

import numpy as np

from ..ops.while_loop import UNBOUNDED
from .import_ops import _S
from .import_table import imports


def _subgraph_shapes(ic):
    """Add the shapes ONNX's inference gives the values inside subgraphs to ``ic.shapes``
    (once per import)."""
    if getattr(ic, "_subgraph_shapes", False):
        return
    ic._subgraph_shapes = True
    model = type(ic.model)()
    model.CopyFrom(ic.model)
    _share_initializers(model.graph, {})
    try:
        model = ic.onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:                           # noqa: BLE001 - best effort, as the top level
        return
    from .importer import _dims, _np_dtype

    def walk(graph):
        for vi in list(graph.value_info) + list(graph.input) + list(graph.output):
            if vi.type.HasField("tensor_type") and vi.name not in ic.shapes:
                dims = _dims(vi)
                ic.shapes[vi.name] = (None if dims is None or None in dims else dims,
                                      _np_dtype(ic.onnx, vi.type.tensor_type.elem_type))
        for node in graph.node:
            for a in node.attribute:
                for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    walk(g)
    walk(model.graph)


def _share_initializers(graph, outer):
    """Copy into every subgraph the enclosing initializers it may read (ONNX's inference
    of a subgraph does not see them: a Reshape there to an outer shape would stay
    unknown)."""
    visible = dict(outer)
    visible.update({i.name: i for i in graph.initializer})
    for node in graph.node:
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                own = {i.name for i in g.initializer}
                for name, init in visible.items():
                    if name not in own:
                        g.initializer.append(init)
                _share_initializers(g, visible)


def _declared(ic, value_info):
    """(shape, dtype) a graph input declares (shape None where unknown)."""
    from .importer import _dims, _np_dtype
    dims = _dims(value_info)
    return (None if dims is None or None in dims else dims,
            _np_dtype(ic.onnx, value_info.type.tensor_type.elem_type))


def _import_graph(ic, graph, bound, node, as_syms=False, shapes=None):
    """The output Values of the ONNX ``graph`` (``as_syms``: as Symbols, made while the
    graph's scope holds; their static shapes, None where unknown, appended to the list
    ``shapes`` when given), its inputs bound to the Values ``bound`` (in order), every other
    name it reads looked up in the enclosing graphs."""
    from .import_table import IMPORTS
    outer, outer_sym = ic.values, ic.__dict__.get("sym")
    local = {}
    ic.values = ChainMap(local, outer)
    ic.sym = _body_sym(ic)
    try:
        for init in graph.initializer:
            from .importer import Value
            local[init.name] = Value(const=ic.onnx.numpy_helper.to_array(init))
        for vi, value in zip(graph.input, bound):
            local[vi.name] = value
        for inner in graph.node:
            importer = IMPORTS.get(inner.op_type)
            if importer is None or inner.domain not in ("", "ai.onnx"):
                raise ic.error(node, f"its subgraph holds operator {inner.op_type} (node "
                                     f"{inner.name!r}), which has no mxlite import")
            ins = [ic.values.get(n) if n else None for n in inner.input]
            for n, v in zip(inner.input, ins):
                if n and v is None:
                    raise ic.error(inner, f"reads {n!r}, which no node or initializer gives")
            for name, v in zip(inner.output, importer.fn(ic, inner, ins)):
                if name:
                    local[name] = _with_shape(ic, v)
        missing = [o.name for o in graph.output if o.name not in ic.values]
        if missing:
            raise ic.error(node, f"its subgraph's outputs {missing} are computed nowhere")
        outs = [ic.values[o.name] for o in graph.output]
        if shapes is not None:
            shapes.extend(v.shape for v in outs)
        return _syms(ic, outs) if as_syms else outs
    finally:
        ic.values = outer
        if outer_sym is None:               # back at the top level
            del ic.sym
        else:
            ic.sym = outer_sym


def _reads(graph):
    """The names ``graph``'s nodes (and the graphs nested in them) read from enclosing
    graphs."""
    defined = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    read = set()
    for node in graph.node:
        read.update(n for n in node.input if n)
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                read |= _reads(g)
        defined.update(node.output)
    return read - defined


@contextmanager
def _scalars_lifted(ic, graphs):
    """While a loop or branch node is built from ``graphs``: each scalar they read from the
    enclosing graphs that is computed at run time is read as shape (1,), reshaped outside
    the node (mxlite's inference inside the node reads () as unknown)."""
    from .importer import Value
    S = _S()
    overlay = {}
    for name in set().union(*(_reads(g) for g in graphs)):
        v = ic.values.get(name)
        if v is not None and not v.is_const and v.sym is not None and v.shape == ():
            overlay[name] = Value(sym=S.reshape(v.sym, shape=(1,)), shape=(), dtype=v.dtype)
    saved = ic.values
    ic.values = ChainMap(overlay, saved)
    try:
        yield
    finally:
        ic.values = saved


def _body_sym(ic):
    """``ic.sym`` inside a body: a 0-d constant becomes a parameter of shape (1,) (an
    input of the loop or branch node, where mxlite reads the shape () as unknown; it
    broadcasts as the scalar does), also where the enclosing graph made it a parameter of
    shape () already."""
    method = type(ic).sym.__get__(ic)
    ones = ic.__dict__.setdefault("_scalar_params", {})     # id(value) -> (value, Symbol)

    def sym(value, name=None, aux=False):
        if value.const is None or np.ndim(value.const) != 0:
            return method(value, name, aux)
        if id(value) not in ones:
            from .importer import Value
            ones[id(value)] = (value, method(Value(const=np.reshape(value.const, (1,))),
                                             name, aux))
            if value.sym is None:
                value.sym = ones[id(value)][1]
        return ones[id(value)][1]
    return sym


def _with_shape(ic, value):
    """``value`` with its shape from mxlite's inference where ONNX's left it unknown (inside
    a body, ONNX cannot see the outer constants a Reshape reads, nor the states' shapes)."""
    if value is None or value.shape is not None or value.sym is None:
        return value
    from .importer import Value
    shape, _ = ic.infer(value.sym)
    return value if shape is None else Value(sym=value.sym, shape=shape, dtype=value.dtype)


def _placeholders(ic, inputs, syms, like):
    """Values for the body inputs ``syms`` (the front end's placeholder Symbols) of the
    graph inputs ``inputs``: shape and dtype as declared, else as ``like`` (shape, dtype)."""
    from .importer import Value
    out = []
    for vi, sym, (shape, dtype) in zip(inputs, syms, like):
        declared, ddtype = _declared(ic, vi)
        out.append(Value(sym=sym, shape=declared if declared is not None else shape,
                         dtype=ddtype if ddtype is not None else dtype))
        ic.placeholders[sym.name] = out[-1]         # for ic.infer of the body's values
    return out


def _kept(out, start):
    """A loop's final state ``out`` (a Value), its shape where ONNX's inference left it
    unknown that of its starting value ``start`` (mxlite's loops keep their states'
    shapes)."""
    if out.shape is None and start.shape is not None:
        from .importer import Value
        return Value(sym=out.sym, shape=start.shape, dtype=out.dtype or start.dtype)
    return out


def _stacked(out, steps, step_shape):
    """A loop's stacked output ``out`` (a Value), its shape where unknown ``(steps,) +
    step_shape`` (the shape of the body's value, where known)."""
    if out.shape is None and steps is not None and step_shape is not None:
        from .importer import Value
        return Value(sym=out.sym, shape=(steps,) + tuple(step_shape), dtype=out.dtype)
    return out


def _syms(ic, values):
    return [ic.sym(v) for v in values]


def _states(ic, values):
    """``values`` as the Symbols a loop starts from: a scalar as shape (1,) (mxlite's
    inference inside the loop reads () as unknown; the body's values keep their ONNX
    shapes, so their importers read it as the scalar)."""
    S = _S()
    return [S.reshape(ic.sym(v), shape=(1,)) if v.shape == () else ic.sym(v) for v in values]


def _using(S, outs, inputs):
    """``outs`` (Symbols) with every placeholder of ``inputs`` read (the front ends want
    each sequence, state and loop variable used): an unread one is added to the first output
    as a sum of its zeros (which reads no values)."""
    from ..symbol.graph import topo_order
    read = {n.name for o in outs for n in topo_order(o._outputs) if n.op is None}
    first = outs[0]
    for x in inputs:
        if x.name not in read:
            first = S.broadcast_add(first, S.sum(S.zeros_like(x), keepdims=True))
    return [first] + list(outs[1:])


# ---- Scan ---------------------------------------------------------------------------------
@imports("Scan", into=["_foreach", "flip", "broadcast_add", "sum", "zeros_like", "reshape"])
def _scan(ic, node, ins):
    """Scan's states and scan inputs as foreach's states and sequences; a scan input or
    output in the reverse direction is reversed before or after."""
    _subgraph_shapes(ic)
    S = _S()
    body = ic.attr(node, "body")
    n_scan = ic.attr(node, "num_scan_inputs")
    n_states = len(ins) - n_scan
    n_outs = len(body.output) - n_states
    for key, count in (("scan_input_axes", n_scan), ("scan_output_axes", n_outs)):
        axes = ic.attr(node, key)
        if axes and any(a != 0 for a in axes):
            raise ic.error(node, f"{key}={list(axes)} (only axis 0 is taken)")
    in_dirs = list(ic.attr(node, "scan_input_directions") or [0] * n_scan)
    out_dirs = list(ic.attr(node, "scan_output_directions") or [0] * n_outs)
    states = _states(ic, ins[:n_states])
    seqs = [S.reverse(x, axis=0) if d else x for x, d in zip(_syms(ic, ins[n_states:]),
                                                               in_dirs)]
    # a vector's scalar slices as (1,) ones (mxlite's inference reads () as unknown)
    seqs = [S.reshape(x, shape=(-1, 1)) if v.shape is not None and len(v.shape) == 1 else x
            for x, v in zip(seqs, ins[n_states:])]
    like = ([(v.shape, v.dtype) for v in ins[:n_states]]
            + [(None if v.shape is None else v.shape[1:], v.dtype) for v in ins[n_states:]])

    def step(data, carried):
        placeholders = list(carried) + list(data)
        values = _placeholders(ic, body.input, placeholders, like)
        results = _import_graph(ic, body, values, node, True, step_shapes)
        results = _using(S, results[n_states:] + results[:n_states], placeholders)
        return results[:n_outs], results[n_outs:]
    step_shapes = []
    with _scalars_lifted(ic, [body]):
        outs, final = S.contrib.foreach(step, seqs, states)
    outs = [S.reshape(o, shape=(-1,)) if step_shapes[n_states + k] == () else o
            for k, o in enumerate(outs)]                # scalar steps: a vector
    outs = [S.reverse(o, axis=0) if d else o for o, d in zip(outs, out_dirs)]
    steps = next((v.shape[0] for v in ins[n_states:] if v.shape), None)
    return ([_kept(ic.out(s, node, k), ins[k]) for k, s in enumerate(final)]
            + [_stacked(ic.out(s, node, n_states + k), steps, step_shapes[n_states + k])
               for k, s in enumerate(outs)])


# ---- Loop ---------------------------------------------------------------------------------
@imports("Loop", into=["_while_loop", "cast", "reshape", "broadcast_add", "broadcast_mul",
                       "broadcast_lesser", "_plus_scalar", "zeros_like", "sum"])
def _loop(ic, node, ins):
    """Loop(M, cond, v...) as while_loop over (c, i, v...): c the condition (the body's
    condition output becomes the next c), i the iteration number (int64, held as (1,)); a
    constant M is max_iterations, M known only at run time (or none) adds i < M to the
    condition under max_iterations ``UNBOUNDED`` (refused with per-iteration outputs: mxlite
    gives max_iterations rows of them; such a loop runs forward only). The body's incoming
    condition is true (it runs only while the condition holds)."""
    _subgraph_shapes(ic)
    S = _S()
    from .importer import Value
    body = ic.attr(node, "body")
    n_vars = len(ins) - 2
    n_scan = len(body.output) - 1 - n_vars
    trips = ins[0] if node.input[0] else None
    if trips is not None and trips.is_const:
        m, limit = int(np.asarray(trips.const).reshape(-1)[0]), None
    else:
        m = UNBOUNDED
        limit = None if trips is None else S.reshape(ic.sym(trips), shape=(1,))
    if m > UNBOUNDED or (m == UNBOUNDED and n_scan):
        if n_scan:
            raise ic.error(node, "a trip count known only at run time (or none, or over "
                                 f"{UNBOUNDED}) with per-iteration outputs: mxlite gives "
                                 "max_iterations rows of them")
        m = UNBOUNDED
    if not node.input[1]:
        ins = [ins[0], Value(const=np.ones((1,), np.float32))] + list(ins[2:])
    flag = ins[1]
    if flag.is_const:
        c0 = ic.sym(type(flag)(const=np.asarray(flag.const, np.float32).reshape(1)))
    else:
        c0 = S.reshape(S.Cast(ic.sym(flag), dtype="float32"), shape=(1,))
    i0 = ic.sym(Value(const=np.zeros((1,), np.int64)))
    init = [c0, i0] + _states(ic, ins[2:])
    like = [(v.shape, v.dtype) for v in ins[2:]]

    def cond(c, i, *vs):
        if limit is None:
            return c
        return S.broadcast_mul(c, S.Cast(S.broadcast_lesser(i, limit), dtype="float32"))

    def func(c, i, *vs):
        values = _placeholders(ic, body.input[2:], list(vs), like)
        ic.placeholders[i.name] = Value(sym=i, shape=(1,), dtype=np.int64)
        iteration = Value(sym=i, shape=(), dtype=np.int64)      # a scalar held as (1,)
        condition = Value(const=np.ones((), bool))
        results = _import_graph(ic, body, [iteration, condition] + values, node, True,
                                step_shapes)
        again = S.broadcast_add(S.reshape(S.Cast(results[0], dtype="float32"), shape=(1,)),
                                S.zeros_like(c))      # reads c: every loop variable is read
        new = _using(S, results[1:1 + n_vars], list(vs)) if n_vars else []
        return results[1 + n_vars:], [again, S._internal._plus_scalar(i, scalar=1)] + new
    step_shapes = []
    with _scalars_lifted(ic, [body]):
        outs, final = S.contrib.while_loop(cond, func, init, max_iterations=m)
    final = final if isinstance(final, list) else [final]
    outs = outs if isinstance(outs, list) else [outs]
    rows = []
    for j, o in enumerate(outs[:n_scan]):   # mxlite's rows: m, whatever the steps that ran
        step_shape, dtype = _declared(ic, body.output[1 + n_vars + j])
        rows.append(_stacked(Value(sym=o, dtype=dtype), m,
                             step_shape or step_shapes[1 + n_vars + j]))
    return [_kept(ic.out(v, node, k), x) for k, (v, x) in
            enumerate(zip(final[2:], ins[2:]))] + rows


# ---- If -----------------------------------------------------------------------------------
@imports("If", into=["_cond"])
def _if(ic, node, ins):
    """If's branches as cond's: graphs without inputs that read the enclosing values."""
    _subgraph_shapes(ic)
    S = _S()
    branches = [ic.attr(node, "then_branch"), ic.attr(node, "else_branch")]
    if ins[0].is_const:         # known at import time: the branch itself
        taken = branches[0] if np.asarray(ins[0].const).reshape(-1)[0] else branches[1]
        return _import_graph(ic, taken, [], node)

    def branch(graph):
        return lambda: _import_graph(ic, graph, [], node, True)
    with _scalars_lifted(ic, branches):
        outs = S.contrib.cond(ic.sym(ins[0]), branch(branches[0]), branch(branches[1]))
    outs = outs if isinstance(outs, list) else [outs]
    return [ic.out(o, node, k) for k, o in enumerate(outs)]
