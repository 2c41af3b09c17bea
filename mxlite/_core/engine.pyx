# cython: language_level=3, auto_pickle=False
"""The backward engine: gradients of recorded heads, walked in creation order.

``run_backward`` collects the nodes reachable from the heads, orders them by ``Node.seq``
(creation order, so no topological sort), keeps the ones on a path to a target, and calls
each FGradient (built from registered ops through ``F``). With ``create_graph`` the
gradient ops are recorded themselves, so gradients of any order follow. Semantics:
``mxlite/autograd.py``.
"""
import numpy as np

from ..base import MXNetError
from ..device import namespace_for as _namespace_for
from .dispatch cimport NDArrayBase, Node
from .dispatch import CONSTANT

cdef object _CONSTANT = CONSTANT
cdef object _NON_DIFFERENTIABLE = None
cdef object _tape_state = None


def configure(non_differentiable, tape_state):
    """Wire the engine to the registry's marker and the per-thread tape switches."""
    global _NON_DIFFERENTIABLE, _tape_state
    _NON_DIFFERENTIABLE, _tape_state = non_differentiable, tape_state


cpdef list creation_order(heads):
    """The nodes reachable from the head entries, in creation order (inputs first)."""
    cdef list order = [], stack = [e[0] for e in heads]
    cdef set seen = set()
    cdef Node node
    while stack:
        node = <Node>stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for p in node.parents:
            if p is not None and p[0] not in seen:
                stack.append(p[0])
    order.sort(key=_seq_key)
    return order


def _seq_key(Node n):
    return n.seq


cpdef list run_backward(F, list heads, list head_grads, list targets, bint retain_graph,
                        bint create_graph, list order=None):
    """Gradients of ``heads`` at each entry in ``targets`` (None where none flows).
    ``order`` is the heads' creation order when the caller already has it. Gradients are
    keyed by entry: the (node, output index) pair that made an array."""
    cdef NDArrayBase h
    cdef Node node
    cdef Py_ssize_t i, k, n_out
    cdef list kept = []
    cdef bint any_recorded = False
    for obj, hg in zip(heads, head_grads):
        h = <NDArrayBase?>obj
        if h._node is not None:
            any_recorded = True
            if h._node is not _CONSTANT:        # constants add nothing
                kept.append((h, hg))
    if not any_recorded:
        raise MXNetError("autograd: no head was computed under autograd.record(); call "
                         "attach_grad() on the inputs and compute the heads inside "
                         "`with autograd.record():`")
    if order is None:
        order = creation_order([(<NDArrayBase>obj)._node for obj, _ in kept])
    # nodes on a path to a target: only those need gradients
    cdef set relevant = {t[0] for t in targets}
    for node in order:
        if node.released:
            raise MXNetError("autograd: the graph was already freed by an earlier backward; "
                             "pass retain_graph=True to the first backward/grad call")
        if node not in relevant:
            for p in node.parents:
                if p is not None and p[0] in relevant:
                    relevant.add(node)
                    break
    cdef dict grads = {}
    for obj, hg in kept:
        h = <NDArrayBase>obj
        if hg is None:      # a constant: nothing to record (dense ones for a sparse head too)
            hg = F.NDArray._wrap(_namespace_for(h._ctx).ones(_shape_of(h), h.dtype), h._ctx)
        elif tuple(hg.shape) != _shape_of(h):
            raise MXNetError(f"autograd: head_grads shape {hg.shape} differs from head shape "
                             f"{_shape_of(h)}")
        entry = h._node
        grads[entry] = hg if entry not in grads else grads[entry] + hg
    cdef dict results = {}
    cdef set wanted = {tuple(t) for t in targets}
    previous = _tape_state.recording
    _tape_state.recording = create_graph
    try:
        for i in range(len(order) - 1, -1, -1):
            node = <Node>order[i]
            if node not in relevant:
                continue
            n_out = len(node.output_shapes)
            ograds = ([grads.pop((node, 0), None)] if n_out == 1
                      else [grads.pop((node, k), None) for k in range(n_out)])
            for k in range(n_out):
                if (node, k) in wanted:
                    results[(node, k)] = ograds[k]
            if node.op is not None:
                for g in ograds:
                    if g is not None:
                        _backprop_node(F, node, ograds, grads, relevant)
                        break
    finally:
        _tape_state.recording = previous
    if not retain_graph:
        for node in order:
            if node.op is not None:
                node.released = True
                # attrs too: a hybridized block's node keeps its forward's values there
                node.inputs = node.outputs = node.attrs = None
    return [results.get(tuple(t)) for t in targets]


cdef _backprop_node(F, Node node, list ograds, dict grads, set relevant):
    op = node.op
    gradient = op.gradient
    if gradient == _NON_DIFFERENTIABLE:
        return
    wants = [p is not None and p[0] in relevant for p in node.parents]
    if gradient is None:
        raise MXNetError(f"autograd: operator {op.name!r} declares no gradient yet")
    for g in () if op.none_ograds else ograds:
        if g is None:
            ograds = [g if g is not None else F.zeros(s, dtype=d, ctx=node.context)
                      for g, s, d in zip(ograds, node.output_shapes, node.output_dtypes)]
            break
    if node.versions is not None:
        _check_saved(node)
    node.wants = wants
    in_grads = gradient(F, node, ograds)
    if len(in_grads) != len(node.parents):
        raise MXNetError(f"autograd: the gradient of {op.name!r} returned {len(in_grads)} "
                         f"gradients for {len(node.parents)} inputs")
    for parent, want, g, shape in zip(node.parents, wants, in_grads, node.input_shapes):
        if not want or g is None:
            continue
        if _shape_of(g) != shape:
            raise MXNetError(f"autograd: the gradient of {op.name!r} has shape {g.shape}, its "
                             f"input has shape {shape}")
        grads[parent] = g if parent not in grads else _sum(F, grads[parent], g)


cdef object _shape_of(g):
    d = (<NDArrayBase?>g)._data
    return d.shape if d is not None else tuple(g.shape)


cdef object _sum(F, a, b):
    """a + b of two gradients of one input (sparse ones by the storage rules: row_sparse
    plus row_sparse stays row_sparse, with a dense one it is dense)."""
    if (<NDArrayBase>a)._data is None or (<NDArrayBase>b)._data is None:
        return F.elemwise_add(a, b)
    return a + b


cdef bint _takes_gradient(object var):
    cdef NDArrayBase v = <NDArrayBase>var
    return v._grad is not None and v._grad_req != "null"


cdef _check_saved(Node node):
    """torch's rule: a value the gradient saved must not have been written since."""
    saved = (node.inputs or []) + (node.outputs or [])
    for i, (x, version) in enumerate(zip(saved, node.versions)):
        if (<NDArrayBase>x)._version[0] != version:
            op, n_in = node.op, len(node.inputs or [])
            names = op.inputs if not op.variadic else ()
            what = (f"input {names[i] if i < len(names) else f'data{i}'!r}" if i < n_in
                    else f"output {i - n_in}")
            raise MXNetError(
                f"autograd: the gradient of {op.name!r} needs its {what} (shape {x.shape}, "
                f"{np.dtype(x.dtype).name}) as it was when {op.name!r} ran, but that array "
                f"was modified in place afterwards (version {version} -> {x._version[0]}). "
                "Write into a copy, or before the array is used.")


cpdef backward_to_variables(F, list heads, list head_grads, bint retain_graph, bint train_mode):
    """``autograd.backward``: gradients of ``heads`` written into each variable's ``.grad``
    (overwritten for grad_req 'write', accumulated for 'add'; in place, so ``.grad`` stays
    the same array, its version bumped)."""
    cdef Node n
    cdef NDArrayBase var, buf
    order = creation_order([(<NDArrayBase?>h)._node for h in heads
                            if (<NDArrayBase>h)._node is not None])
    leaves = [n for n in order if n.op is None and n.variable is not None]
    for n in leaves:
        if _takes_gradient(n.variable):
            break
    else:
        # MXNet's rule too: every variable behind the heads has grad_req 'null' now (it was
        # marked again after the heads were recorded), so nothing would receive a gradient.
        raise MXNetError("autograd.backward: no array in the heads' computational graph "
                         "requires a gradient: the variables they depend on all have "
                         "grad_req='null' or no gradient buffer")
    previous = _tape_state.training
    _tape_state.training = train_mode
    try:
        values = run_backward(F, heads, head_grads, [(n, 0) for n in leaves], retain_graph,
                              False, order)
    finally:
        _tape_state.training = previous
    for leaf, g in zip(leaves, values):
        var = <NDArrayBase>(<Node>leaf).variable
        if var._grad is None or var._grad_req == "null":
            continue
        buf = <NDArrayBase>var._grad
        buffer = buf._data
        if buffer is None or (g is not None and (<NDArrayBase>g)._data is None):
            _store_sparse(F, var, buf, g)     # a sparse gradient, or a sparse buffer
            continue
        buf._version[0] += 1
        if g is None:
            if var._grad_req == "write":
                buffer[...] = 0
        elif var._grad_req == "add":
            buffer += (<NDArrayBase>g)._data
        else:
            _namespace_for(buf._ctx).cast_into(buffer, (<NDArrayBase>g)._data)


cdef _store_sparse(F, NDArrayBase var, NDArrayBase buf, g):
    """Write gradient ``g`` into ``var``'s gradient buffer ``buf`` where either is sparse:
    converted to the buffer's storage type ('add': summed first)."""
    want = buf.stype
    if g is None:
        if var._grad_req == "write":
            F.zeros_like(buf).copyto(buf)
        return
    if var._grad_req == "add":
        g = _sum(F, buf, g)
    if g.stype != want:
        g = g.tostype("default") if g.stype != "default" else g
        if want != "default":
            g = g.tostype(want)
    if want == "default":
        _namespace_for(buf._ctx).cast_into(buf._data, (<NDArrayBase>g)._data)
        buf._version[0] += 1
    else:
        g.copyto(buf)
