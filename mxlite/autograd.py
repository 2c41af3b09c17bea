"""Tape-based automatic differentiation with gradients of any order (MXNet 1.x API).

While recording, every executed operator with a differentiable input is appended to the
graph as a ``Node``; so is every indexing and every in-place write (``y[0] = v``,
``y += 1``, ``out=``), which gives the written array (and the arrays it is a view of) a new
entry. Each array carries a version counter, shared by the arrays that alias its buffer,
which every in-place write bumps: ``backward`` refuses to use a saved value that changed
after it was saved (torch's rule), and an array whose recorded history no longer describes
its value cannot be used under ``record()``.

``backward``/``grad`` walk the graph in reverse topological order and call each operator's
FGradient, which builds the input gradients *from registered ops*. With
``create_graph=True`` those ops are recorded too, so the result can be differentiated
again, to any order.
"""
import sys

import numpy as np

from ._core import dispatch as _dispatch
from ._core.dispatch import CONSTANT, Node, attach, parents
from .base import MXNetError
from . import ndarray as F     # the namespace FGradients build gradients with
from .ndarray import ndarray as _nd_impl
from .ops.registry import NON_DIFFERENTIABLE, REGISTRY

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad", "Node"]

_state = _nd_impl.tape_state        # per thread, as in MXNet


# ---- recording state ---------------------------------------------------------------------
def set_recording(is_recording):
    """Turn recording on or off for this thread; returns the previous state."""
    prev = _state.recording
    _state.recording = bool(is_recording)
    return prev


def set_training(train_mode):
    """Set train (True) or predict (False) mode for this thread; returns the previous state."""
    prev = _state.training
    _state.training = bool(train_mode)
    return prev


def is_recording():
    """True inside ``record()`` (and not inside ``pause()``) on this thread."""
    return _state.recording


def is_training():
    """True in train mode on this thread (``record()`` enters it by default)."""
    return _state.training


class _scope:
    """Set recording and/or training for a ``with`` block (None leaves one as it is)."""

    __slots__ = ("recording", "training", "prev")

    def __init__(self, recording, training):
        self.recording, self.training = recording, training

    def __enter__(self):
        self.prev = (_state.recording, _state.training)
        if self.recording is not None:
            _state.recording = bool(self.recording)
        if self.training is not None:
            _state.training = bool(self.training)
        return self

    def __exit__(self, *exc):
        _state.recording, _state.training = self.prev


def record(train_mode=True):
    """Record operators for differentiation: ``with autograd.record(): y = f(x)``."""
    return _scope(True, train_mode)


def pause(train_mode=False):
    """Stop recording inside a ``record()`` block."""
    return _scope(False, train_mode)


def train_mode():
    """Train mode without changing recording (Dropout, BatchNorm behave as in training)."""
    return _scope(None, True)


def predict_mode():
    """Predict mode without changing recording."""
    return _scope(None, False)


# ---- the tape ------------------------------------------------------------------------------
def _is_variable(x):
    e = x._node
    return e is not None and e is not CONSTANT and e[0].op is None


def begin_write(targets, inputs):
    """Before an in-place write into ``targets`` under record(): refuse what cannot be
    recorded and read every entry the write's nodes need, as it is before the write.

    Returns ``(entries of inputs, [(target, its bases, their entries)])``: the bases are
    the arrays a target is a view of (``x[1:3]``, ``x.reshape``), whose values change too."""
    entries = parents(inputs)
    chains = []
    for t in targets:
        bases, a = [], t
        while True:
            if _is_variable(a):
                raise MXNetError(
                    f"autograd: in-place write into a variable (shape {a.shape}, marked by "
                    "attach_grad) under record(); its gradient would have no meaning. Write "
                    "outside record() or inside autograd.pause().")
            link = a._view
            if link is None:
                break
            if link[1] is None:     # a detach()ed alias: the write cannot reach its source
                if any(e is not None for e in entries):
                    raise MXNetError(
                        f"autograd: writing a recorded value into a detach()ed alias (shape "
                        f"{a.shape}) under record() cannot be recorded for the array it "
                        "shares memory with; write into that array instead.")
                break
            a = link[0]
            bases.append(a)
        chains.append((t, bases, parents(bases)))
    return entries, chains


def end_write(plan, op, attrs, inputs, targets):
    """After the write: the targets get ``op``'s new entries, and each base of a view target
    becomes "the base with the view's region replaced" (``_setitem``, or a reshape back)."""
    entries, chains = plan
    attach(op, attrs, entries, inputs, targets)
    for child, bases, base_entries in chains:
        for base, base_entry in zip(bases, base_entries):
            _, view_op, view_attrs = child._view
            child_entry = None if child._node is CONSTANT else child._node
            if view_op is _GETITEM:
                attach(_SETITEM, view_attrs, [base_entry, child_entry], [base, child], base)
            else:
                attach(_RESHAPE, _RESHAPE.parse_attrs({"shape": base.shape}), [child_entry],
                       [child], base)
            child = base


_GETITEM, _SETITEM, _RESHAPE = (REGISTRY[n] for n in ("_getitem", "_setitem", "reshape"))

_nd_impl._tape = sys.modules[__name__]
_dispatch.set_tape(_nd_impl._tape)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark NDArrays as variables whose gradients go into ``gradients`` (MXNet API)."""
    from .ndarray import NDArray
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not (len(variables) == len(gradients) == len(grad_reqs)):
        raise MXNetError("mark_variables: variables, gradients and grad_reqs differ in length")
    for var, g, req in zip(variables, gradients, grad_reqs):
        if req not in ("write", "add", "null"):
            raise MXNetError(f"mark_variables: grad_req must be 'write', 'add' or 'null', got {req!r}")
        if g is not None and g.shape != var.shape:
            raise MXNetError(f"mark_variables: gradient shape {g.shape} differs from variable "
                             f"shape {var.shape}")
        var._grad, var._grad_req = g, req
        leaf = Node(None, None, [], [], [var])
        leaf.variable = var
        var._node = None if req == "null" else (leaf, 0)
        var._node_version = var._version[0]


def _topological(heads):
    """Nodes reachable from the head entries, inputs before the nodes that use them."""
    order, seen = [], set()
    stack = [(node, False) for node, _ in heads]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for p in node.parents:
            if p is not None and p[0] not in seen:
                stack.append((p[0], False))
    return order


def _run_backward(heads, head_grads, targets, retain_graph, create_graph, order=None):
    """Gradients of ``heads`` at each entry in ``targets`` (None where none flows).
    ``order`` is the heads' topological order when the caller already has it.
    Gradients are keyed by entry: the (node, output index) pair that made an array."""
    if all(h._node is None for h in heads):
        raise MXNetError("autograd: no head was computed under autograd.record(); call "
                         "attach_grad() on the inputs and compute the heads inside "
                         "`with autograd.record():`")
    kept = [(h, hg) for h, hg in zip(heads, head_grads)
            if h._node is not None and h._node is not CONSTANT]
    heads, head_grads = [h for h, _ in kept], [hg for _, hg in kept]   # constants add nothing
    if order is None:
        order = _topological([h._node for h in heads])
    # nodes on a path to a target: only those need gradients
    relevant = {t[0] for t in targets}
    for node in order:
        if node.released:
            raise MXNetError("autograd: the graph was already freed by an earlier backward; "
                             "pass retain_graph=True to the first backward/grad call")
        if node not in relevant:
            for p in node.parents:
                if p is not None and p[0] in relevant:
                    relevant.add(node)
                    break
    grads = {}
    for h, hg in zip(heads, head_grads):
        if hg is None:      # a constant: nothing to record
            hg = F.NDArray._wrap(np.ones(h.shape, h._data.dtype), h._ctx)
        elif hg.shape != h.shape:
            raise MXNetError(f"autograd: head_grads shape {hg.shape} differs from head shape "
                             f"{h.shape}")
        entry = h._node
        grads[entry] = hg if entry not in grads else grads[entry] + hg
    results = {}
    wanted = {tuple(t) for t in targets}
    with _scope(create_graph, None):
        for node in reversed(order):
            if node not in relevant:
                continue
            n_out = len(node.output_shapes)
            ograds = ([grads.pop((node, 0), None)] if n_out == 1
                      else [grads.pop((node, i), None) for i in range(n_out)])
            for i, g in enumerate(ograds):
                if (node, i) in wanted:
                    results[(node, i)] = g
            if node.op is not None and any(g is not None for g in ograds):
                _backprop_node(F, node, ograds, grads, relevant)
    if not retain_graph:
        for node in order:
            if node.op is not None:
                node.released = True
                node.inputs = node.outputs = None
    return [results.get(tuple(t)) for t in targets]


def _backprop_node(F, node, ograds, grads, relevant):
    op = node.op
    if op.gradient == NON_DIFFERENTIABLE:
        return
    wants = [p is not None and p[0] in relevant for p in node.parents]
    if op.gradient is None:
        raise MXNetError(f"autograd: operator {op.name!r} declares no gradient yet")
    if any(g is None for g in ograds):      # (not ``None in``: NDArray == is an operator)
        ograds = [g if g is not None else F.zeros(s, dtype=d, ctx=node.context)
                  for g, s, d in zip(ograds, node.output_shapes, node.output_dtypes)]
    if node.versions is not None:
        _check_saved(node)
    node.wants = wants
    in_grads = op.gradient(F, node, ograds)
    if len(in_grads) != len(node.parents):
        raise MXNetError(f"autograd: the gradient of {op.name!r} returned {len(in_grads)} "
                         f"gradients for {len(node.parents)} inputs")
    for parent, want, g, shape in zip(node.parents, wants, in_grads, node.input_shapes):
        if not want or g is None:
            continue
        if g.shape != shape:
            raise MXNetError(f"autograd: the gradient of {op.name!r} has shape {g.shape}, its "
                             f"input has shape {shape}")
        grads[parent] = g if parent not in grads else grads[parent] + g


def _check_saved(node):
    """torch's rule: a value the gradient saved must not have been written since."""
    saved = (node.inputs or []) + (node.outputs or [])
    for i, (x, version) in enumerate(zip(saved, node.versions)):
        if x._version[0] != version:
            op, n_in = node.op, len(node.inputs or [])
            names = op.inputs if not op.variadic else ()
            what = (f"input {names[i] if i < len(names) else f'data{i}'!r}" if i < n_in
                    else f"output {i - n_in}")
            raise MXNetError(
                f"autograd: the gradient of {op.name!r} needs its {what} (shape {x.shape}, "
                f"{np.dtype(x.dtype).name}) as it was when {op.name!r} ran, but that array "
                f"was modified in place afterwards (version {version} -> {x._version[0]}). "
                "Write into a copy, or before the array is used.")


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute gradients of ``heads`` and store them in each variable's ``.grad``
    (overwritten for grad_req 'write', accumulated for 'add')."""
    heads = _as_list(heads)
    head_grads = _as_list(head_grads) if head_grads is not None else [None] * len(heads)
    order = _topological([h._node for h in heads if h._node is not None])
    leaves = [n for n in order if n.op is None and n.variable is not None]
    with _scope(None, train_mode):
        values = _run_backward(heads, head_grads, [(n, 0) for n in leaves], retain_graph, False,
                               order)
    for leaf, g in zip(leaves, values):
        var = leaf.variable
        if var._grad is None or var._grad_req == "null":
            continue
        buffer = var._grad._data      # written in place: .grad stays the same array
        var._grad._version[0] += 1
        if g is None:
            if var._grad_req == "write":
                buffer[...] = 0
        elif var._grad_req == "add":
            buffer += g._data
        else:
            np.copyto(buffer, g._data, casting="unsafe")


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of ``heads`` with respect to ``variables``, returned (not stored) as a
    list, one per variable, even for a single variable (MXNet's rule).

    With ``create_graph=True`` the gradient computation is recorded, so the results can be
    differentiated again. ``retain_graph`` defaults to ``create_graph``. Variables may be
    marked arrays or any array computed under ``record()``.
    """
    heads = _as_list(heads)
    variables = _as_list(variables)
    head_grads = _as_list(head_grads) if head_grads is not None else [None] * len(heads)
    if len(head_grads) != len(heads):
        raise MXNetError(f"autograd.grad: {len(heads)} heads but {len(head_grads)} head_grads")
    for v in variables:
        if v._node is None or v._node is CONSTANT:
            raise MXNetError("autograd.grad: a variable does not require gradient; call "
                             "attach_grad() on it before recording")
    if retain_graph is None:
        retain_graph = create_graph
    with _scope(None, train_mode):
        values = _run_backward(heads, head_grads, [v._node for v in variables], retain_graph,
                               create_graph)
    # A variable the heads do not depend on gets zeros; with create_graph they stay on the
    # tape (as zeros_like(v)), so they can be differentiated again, to zero.
    with _scope(create_graph, None):
        out = [g if g is not None else F.zeros_like(v if create_graph else v.detach())
               for g, v in zip(values, variables)]
    return out
