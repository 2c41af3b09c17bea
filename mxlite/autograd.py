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

from ._core import dispatch as _dispatch
from ._core import engine as _engine
from ._core.dispatch import CONSTANT, Node, attach, parents
from .base import MXNetError
from . import ndarray as F     # the namespace FGradients build gradients with
from .ndarray import ndarray as _nd_impl
from .ops.registry import NON_DIFFERENTIABLE, REGISTRY, Attrs, OpDef
from .ndarray import NDArray
from .symbol import Symbol

# MXNet's autograd module has no __all__: ``from mxnet.autograd import *`` also gives the
# NDArray and Symbol classes it imports (MXNet's own tests rely on it), so they are listed
__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad", "Node",
           "get_symbol", "Function", "NDArray", "Symbol"]

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
_engine.configure(NON_DIFFERENTIABLE, _state)


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
        if g is not None and g.context != var.context:
            raise MXNetError(f"mark_variables: the gradient buffer is on {g.context} but the "
                             f"variable is on {var.context}")
        var._grad, var._grad_req = g, req
        leaf = Node(None, None, [], [], [var])
        leaf.variable = var
        # a leaf saves no values: its versions slot holds the gradient buffer's version
        # when the gradient was last seen (``_fresh_grad``)
        leaf.versions = None if g is None else [g._version[0]]
        var._node = None if req == "null" else (leaf, 0)
        var._node_version = var._version[0]


def _leaf(x):
    e = x._node
    return e[0] if e is not None and e is not CONSTANT and e[0].op is None else None


def fresh_grad(x):
    """``x._fresh_grad``: True when ``x.grad`` was written (by ``backward``, or any in-place
    write) since ``x`` was marked as a variable or its flag was set to False."""
    leaf = _leaf(x)
    if leaf is None or x._grad is None or leaf.versions is None:
        return False
    return x._grad._version[0] != leaf.versions[0]


def set_fresh_grad(x, value):
    """Set ``x._fresh_grad`` (MXNet's gradient state flag)."""
    leaf = _leaf(x)
    if leaf is None or x._grad is None:
        raise MXNetError(f"_fresh_grad: the array (shape {x.shape}) is not a variable with a "
                         "gradient buffer; call attach_grad() first")
    seen = x._grad._version[0]
    leaf.versions = [seen if not value else seen - 1]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _check_head_grads(fn, heads, head_grads):
    """Each head gradient has its head's shape and device (a head gradient on another
    device would send the whole backward pass there)."""
    if len(head_grads) != len(heads):
        raise MXNetError(f"autograd.{fn}: {len(heads)} heads but {len(head_grads)} head_grads")
    for i, (h, g) in enumerate(zip(heads, head_grads)):
        if g is not None and getattr(g, "context", h.context) != h.context:
            raise MXNetError(f"autograd.{fn}: head_grads[{i}] is on {g.context} but its head "
                             f"is on {h.context}; copy it with as_in_context first")


def _differentiable(x):
    """True for an NDArray that ``backward``/``grad`` accept as a head: computed under
    ``record()`` with a path to a variable marked by ``attach_grad``."""
    return x._node is not None and x._node is not CONSTANT


def _check_heads(fn, heads):
    """Every head must be on the tape with a path to a variable: the gradient of any other
    head is zero everywhere, almost always because of a mistake, so MXNet refuses it (each
    head separately: a list with one such head is refused too)."""
    for i, h in enumerate(heads):
        if not isinstance(h, _nd_impl.NDArray):
            raise MXNetError(f"autograd.{fn}: heads[{i}] is a {type(h).__name__}, not an "
                             "NDArray")
        if h._node is None:
            raise MXNetError(
                f"autograd.{fn}: cannot differentiate heads[{i}] (shape {h.shape}): it was "
                "computed outside autograd.record(), so it is not in a computational graph. "
                "Compute it inside `with autograd.record():`.")
        if h._node is CONSTANT:
            raise MXNetError(
                f"autograd.{fn}: cannot differentiate heads[{i}] (shape {h.shape}): it was "
                "computed under autograd.record() but depends on no array that requires a "
                "gradient, so its gradient would be zero everywhere. Its inputs were computed "
                "outside record(), or detach()ed, or never marked with attach_grad() (or "
                "marked with grad_req='null').")


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute gradients of ``heads`` and store them in each variable's ``.grad``
    (overwritten for grad_req 'write', accumulated for 'add').

    Raises MXNetError where a head is not differentiable (computed outside ``record()``,
    or from no array marked by ``attach_grad``) or where no variable it depends on takes
    a gradient (all have grad_req 'null'): a silent zero gradient would hide the mistake."""
    heads = _as_list(heads)
    head_grads = _as_list(head_grads) if head_grads is not None else [None] * len(heads)
    _check_heads("backward", heads)
    _check_head_grads("backward", heads, head_grads)
    _engine.backward_to_variables(F, heads, head_grads, retain_graph, train_mode)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of ``heads`` with respect to ``variables``, returned (not stored) as a
    list, one per variable, even for a single variable (MXNet's rule).

    With ``create_graph=True`` the gradient computation is recorded, so the results can be
    differentiated again. ``retain_graph`` defaults to ``create_graph``. Variables may be
    marked arrays or any array computed under ``record()``; a variable the heads do not
    depend on gets zeros, but every head must be differentiable (see ``backward``).
    """
    heads = _as_list(heads)
    variables = _as_list(variables)
    head_grads = _as_list(head_grads) if head_grads is not None else [None] * len(heads)
    _check_heads("grad", heads)
    _check_head_grads("grad", heads, head_grads)
    for i, v in enumerate(variables):
        if v._node is None or v._node is CONSTANT:
            raise MXNetError(f"autograd.grad: variables[{i}] (shape {v.shape}) does not "
                             "require gradient (no attach_grad(), or grad_req='null'); call "
                             "attach_grad() on it before recording")
    if retain_graph is None:
        retain_graph = create_graph
    with _scope(None, train_mode):
        values = _engine.run_backward(F, heads, head_grads, [v._node for v in variables],
                                      retain_graph, create_graph)
    if not create_graph:
        # a variable the heads do not depend on gets zeros
        return [g if g is not None else F.zeros_like(v.detach())
                for g, v in zip(values, variables)]
    with _scope(True, None):
        return [_as_function_of(g, v) for g, v in zip(values, variables)]


def _as_function_of(g, v):
    """The gradient ``g`` with respect to ``v`` (None: zero), on the tape as a function of
    ``v``. A gradient that does not depend on the variables (zero, or the derivative of a
    linear function) is a constant function of them, not a mistake: tied to ``v`` on the
    tape (through ``zeros_like(v)``, whose gradient is zero), it can be differentiated
    again, to zero, where ``backward``/``grad`` would refuse it as a head."""
    if g is None:
        return F.zeros_like(v)
    return g if _differentiable(g) else g + F.zeros_like(v)


# ---- recorded history as a Symbol --------------------------------------------------------
def get_symbol(x):
    """The recorded history of ``x`` (computed under ``record()``) as a Symbol: one node per
    recorded operator, with its parameters. Each variable marked by ``attach_grad`` (or
    ``mark_variables``) becomes a Variable ``var0``, ``var1``, ... in the order first met,
    and each input that is not on the tape (a constant, whose value the tape does not keep)
    a Variable ``const0``, ``const1``, ...; an ``autograd.Function`` has no symbol form."""
    from .symbol import naming
    from .symbol.graph import SymNode
    if not isinstance(x, NDArray):
        raise MXNetError(f"autograd.get_symbol: x must be an NDArray, got {type(x).__name__}")
    if not _differentiable(x):
        raise MXNetError(f"autograd.get_symbol: x (shape {x.shape}) has no recorded history: "
                         "compute it under autograd.record() from an array marked with "
                         "attach_grad()")
    made, counts = {}, {"var": 0, "const": 0}

    def variable(kind):
        name = f"{kind}{counts[kind]}"
        counts[kind] += 1
        return (SymNode(None, name), 0)

    def entry(e):
        if e is None:
            return variable("const")
        node, index = e
        if node not in made:
            made[node] = _sym_node(node, entry, variable, naming, SymNode)
        return (made[node], index)

    return Symbol([entry(x._node)])


def _sym_node(node, entry, variable, naming, SymNode):
    """The SymNode of one tape node (iteratively deep graphs would need a stack; a tape's
    depth is the program's)."""
    if node.op is None:
        return variable("var")[0]
    if node.op.name not in REGISTRY or REGISTRY[node.op.name] is not node.op:
        raise MXNetError(f"autograd.get_symbol: the history contains {node.op.name!r}, which "
                         "has no symbol form (an autograd.Function's forward is Python code)")
    if node.attrs is None:
        raise MXNetError("autograd.get_symbol: the history was freed by a backward without "
                         "retain_graph=True")
    inputs = [entry(p) for p in node.parents]
    name = naming.current().get(None, node.op.name.lower())
    return SymNode(node.op, name, node.attrs, inputs, None, tuple(node.attrs))


# ---- Python functions with their own gradient --------------------------------------------
class Function:
    """A differentiable function written in Python (MXNet's ``autograd.Function``):
    subclass it with ``forward(self, *inputs)`` and ``backward(self, *output_grads)``, which
    returns one gradient per input; ``save_for_backward(*arrays)`` keeps what backward needs
    as ``self.saved_tensors``. Each instance is called once::

        class Sigmoid(mx.autograd.Function):
            def forward(self, x):
                y = 1 / (1 + mx.nd.exp(-x))
                self.save_for_backward(y)
                return y

            def backward(self, dy):
                y, = self.saved_tensors
                return dy * y * (1 - y)

    ``forward`` runs with recording paused; under ``record()`` its outputs get one tape
    node (``_CustomFunction``) whose gradient calls ``backward``. Under
    ``grad(..., create_graph=True)`` the engine records what ``backward`` computes, so a
    backward made of ``mx.nd`` calls on recorded arrays (the inputs, or outputs saved with
    ``save_for_backward``) differentiates again, to any order (MXNet stopped at the first).
    """

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        """Keep ``args`` for ``backward`` (as ``self.saved_tensors``)."""
        self.saved_tensors = args

    def forward(self, *inputs):
        """The outputs (an NDArray or a tuple of them) of ``inputs``."""
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, *output_grads):
        """One gradient per input, from one head gradient per output."""
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def __call__(self, *inputs):
        name = type(self).__name__
        if getattr(self, "_used", False):
            raise MXNetError(f"autograd.Function {name}: an instance can be called once "
                             "(its backward belongs to that call); create another instance")
        self._used = True
        for i, x in enumerate(inputs):
            if not isinstance(x, NDArray):
                raise MXNetError(f"autograd.Function {name}: input {i} is a "
                                 f"{type(x).__name__}, not an NDArray")
        with _scope(False, None):
            outputs = self.forward(*inputs)
        if not _state.recording:
            return outputs
        outs = [outputs] if isinstance(outputs, NDArray) else list(outputs)
        for i, y in enumerate(outs):
            if not isinstance(y, NDArray):
                raise MXNetError(f"autograd.Function {name}: forward output {i} is a "
                                 f"{type(y).__name__}, not an NDArray")
        # an output that is an input (or aliases one) gets a copy: its entry would replace
        # the input's on the tape
        with _scope(False, None):
            fresh = [y.copy() if any(y is x or y._version is x._version for x in inputs)
                     else y for y in outs]
        attach(_FUNCTION, Attrs(function=self), parents(list(inputs)), list(inputs), fresh)
        if isinstance(outputs, NDArray):
            return fresh[0]
        return type(outputs)(fresh) if isinstance(outputs, tuple) else fresh


def _function_gradient(F, node, ograds):
    """``backward(*ograds)`` of the node's Function, checked: one NDArray per input, of the
    input's shape."""
    fn = node.attrs["function"]
    name = type(fn).__name__
    grads = fn.backward(*ograds)
    grads = [grads] if isinstance(grads, NDArray) else list(grads)
    if len(grads) != len(node.parents):
        raise MXNetError(f"autograd.Function {name}: backward returned {len(grads)} "
                         f"gradient(s) for {len(node.parents)} input(s)")
    for i, (g, shape) in enumerate(zip(grads, node.input_shapes)):
        if not isinstance(g, NDArray):
            raise MXNetError(f"autograd.Function {name}: backward's gradient {i} is a "
                             f"{type(g).__name__}, not an NDArray")
        if g.shape != tuple(shape):
            raise MXNetError(f"autograd.Function {name}: backward's gradient {i} has shape "
                             f"{g.shape}, its input {tuple(shape)}")
    return grads


def _no_compute(rctx, ins, outs, attrs):
    raise MXNetError("_CustomFunction is recorded by autograd.Function, not called")


# The tape node of an autograd.Function call: not a registered operator (it exists only on
# the tape; it has no kernel, symbol or JSON form).
_FUNCTION = OpDef("_CustomFunction", inputs=(), variadic=True, infer_shape=None,
                  infer_type=None, compute={"cpu": _no_compute}, gradient=_function_gradient,
                  grad_needs=(), doc="An autograd.Function call on the tape.")
