"""The ``Custom`` operator: one registry record that dispatches to the operator properties
registered with ``mx.operator.register`` (``mxlite/operator.py`` holds the public classes).

``Custom(*inputs, op_type=name, **kwargs)`` looks ``name`` up in ``PROPS`` (a table filled
only by ``register`` in this process: a symbol JSON naming an ``op_type`` that nobody
registered is an MXNetError, never an import or an evaluation), builds the property with
the other keywords as strings (MXNet's rule), and takes its inputs, outputs, shapes and
dtypes from it:

- inputs: ``prop.list_arguments() + prop.list_auxiliary_states()``; outputs:
  ``prop.list_outputs()``; the auxiliary states are inputs the forward pass may update;
- shapes and dtypes: ``prop.infer_shape`` / ``prop.infer_type`` on the arguments';
- compute: ``prop.create_operator(ctx, shapes, dtypes)`` once per call (imperatively) or
  per bound symbol node and signature, then ``forward(is_train, req, in_data, out_data,
  aux)`` on NDArrays that wrap the call's buffers, with recording paused;
- gradient: the same operator's ``backward(req, out_grad, in_data, out_data, in_grad,
  aux)``, given the node's recorded inputs and outputs and fresh zero ``in_grad`` arrays.

How a custom backward stays differentiable: the FGradient runs ``backward`` with ``F`` =
``mx.nd`` on the *recorded* arrays. Under ``grad(..., create_graph=True)`` the engine
records while it runs FGradients, so every ``mx.nd`` call of the user's backward, and the
final ``in_grad[i][:] = value`` (an in-place write into a zero array, recorded as
``_setitem``), lands on the tape as a graph of registered ops: the gradient of the custom
gradient is that graph's gradient, to any order. A backward that leaves ``mx.nd`` (NumPy
arithmetic, ``asnumpy``) gives a first-order gradient only; its second order is zero.
The tape keeps the inputs and outputs of every Custom node (MXNet's
``declare_backward_dependency`` could drop some; mxlite does not, so a backward may read
any of them).
"""
import numbers

import numpy as np

from .._core.dispatch import wrap
from ..base import MXNetError, op_error
from .registry import Attrs, OpDef, Param, register

__all__ = ["PROPS", "STATE", "custom_state"]

PROPS = {}            # op_type -> CustomOpProp subclass (filled by mx.operator.register)
STATE = "_custom_state"  # the Attrs key of a call's _CustomState (not a parameter)
_REQ = "write"


class _CustomState:
    """One Custom node's property and operator instance. The instance is made on first use
    and again when the device, shapes or dtypes change (MXNet makes one per bound node), so
    a forward and its backward share it (an operator may keep state on ``self``)."""

    __slots__ = ("op_type", "prop", "operator", "key")

    def __init__(self, op_type, prop):
        self.op_type, self.prop, self.operator, self.key = op_type, prop, None, None

    def operator_for(self, ctx, shapes, dtypes):
        key = (ctx, tuple(map(tuple, shapes)), tuple(dtypes))
        if self.operator is None or key != self.key:
            self.operator = _call(self, "create_operator", ctx, [list(s) for s in shapes],
                                  [np.dtype(d).type for d in dtypes])
            self.key = key
        return self.operator


def _error(op_type, what, exc):
    return op_error("Custom", f"op_type {op_type!r}: {what} raised "
                    f"{type(exc).__name__}: {exc}")


def _call(state, method, *args):
    """``state.prop.<method>(*args)``; an exception in user code becomes an MXNetError
    naming the op_type and the method (MXNet's rule for errors in custom code)."""
    try:
        return getattr(state.prop, method)(*args)
    except MXNetError as e:
        raise _error(state.op_type, method, e) from e
    except Exception as e:      # noqa: BLE001 - any user error is reported as MXNet does
        raise _error(state.op_type, method, e) from e


def custom_state(attrs):
    """The ``_CustomState`` of a Custom call's parsed attrs."""
    return attrs[STATE]


def _names(state, method):
    names = _call(state, method)
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise op_error("Custom", f"op_type {state.op_type!r}: {method}() must return a list "
                       f"of strings, got {names!r}")
    return tuple(names)


def _param_text(value):
    """MXNet hands a custom property every keyword as a string."""
    return value if isinstance(value, str) else str(value)


class CustomOpDef(OpDef):
    """The ``Custom`` record: open keyword parameters (handed to the property) besides
    ``op_type``; inputs, outputs and auxiliary states from the property."""

    __slots__ = ()

    def parse_attrs(self, kwargs):
        op_type = kwargs.get("op_type")
        if op_type is None:
            given = sorted(str(k) for k in kwargs if k != STATE)
            raise op_error(self.name, "missing required parameter 'op_type' (the name given "
                           f"to mx.operator.register); given {given}")
        op_type = _param_text(op_type)
        if op_type not in PROPS:
            raise op_error(self.name, f"parameter 'op_type': {op_type!r} is not registered "
                           f"in this process (registered: {sorted(PROPS)}); register its "
                           "CustomOpProp with mx.operator.register before using or loading it")
        attrs = Attrs(op_type=op_type)
        for key, value in kwargs.items():
            if key in ("op_type", STATE):
                continue
            if not isinstance(key, str) or not key.isidentifier():
                raise op_error(self.name, f"parameter name {key!r} is not an identifier")
            attrs[key] = _param_text(value)
        state = kwargs.get(STATE)
        if not (isinstance(state, _CustomState) and state.op_type == op_type):
            params = {k: v for k, v in attrs.items() if k != "op_type"}
            try:
                prop = PROPS[op_type](**params)
            except Exception as e:  # noqa: BLE001 - the property's constructor is user code
                raise _error(op_type, "the property's constructor", e) from e
            state = _CustomState(op_type, prop)
        attrs[STATE] = state
        return attrs

    def format_attrs(self, attrs):
        return {k: _param_text(v) for k, v in attrs.items() if k != STATE}

    def bind_call(self, args, kwargs):
        """``(inputs, attrs)`` of ``Custom(*args, **kwargs)``: keywords whose values are not
        parameter values (NDArrays, Symbols) are inputs by name, after the positional ones,
        in ``list_arguments() + list_auxiliary_states()`` order (None where left out).
        Parsed fresh for every call: each call gets its own operator instance."""
        params = {k: v for k, v in kwargs.items() if _is_param_value(v)}
        named = {k: v for k, v in kwargs.items() if k not in params}
        attrs = self.parse_attrs(params)
        names = self.list_inputs(attrs)
        if len(args) > len(names):
            raise op_error("Custom", f"op_type {attrs.op_type!r} takes {len(names)} input(s) "
                           f"{list(names)}, got {len(args)} positional")
        inputs = list(args) + [None] * (len(names) - len(args))
        for key, value in named.items():
            if key not in names:
                raise op_error("Custom", f"op_type {attrs.op_type!r} has no input {key!r} "
                               f"(inputs: {list(names)})")
            i = names.index(key)
            if inputs[i] is not None:
                raise op_error("Custom", f"input {key!r} given twice")
            inputs[i] = value
        return inputs, attrs

    def list_inputs(self, attrs):
        return self.list_arguments(attrs) + self.list_auxiliary_states(attrs)

    def list_arguments(self, attrs):
        return _names(custom_state(attrs), "list_arguments")

    def list_auxiliary_states(self, attrs):
        return _names(custom_state(attrs), "list_auxiliary_states")

    def mutated_indices(self, attrs):
        n = len(self.list_arguments(attrs))
        return tuple(range(n, n + len(self.list_auxiliary_states(attrs))))

    def output_count(self, attrs):
        return len(self.list_outputs(attrs))

    def list_outputs(self, attrs):
        return list(_names(custom_state(attrs), "list_outputs"))

    def num_visible_outputs(self, attrs):
        return self.output_count(attrs)


def _is_param_value(v):
    return v is None or isinstance(v, (str, bytes, numbers.Number, tuple, list, type,
                                       np.dtype))


def _split(attrs, items):
    """(arguments, auxiliary states) of a list in ``list_inputs`` order."""
    n = len(CUSTOM.list_arguments(attrs))
    return list(items[:n]), list(items[n:])


def _checked(state, method, result, counts, what):
    """The lists a property's infer_shape/infer_type returned, checked against the counts
    of arguments, outputs and auxiliary states."""
    if not isinstance(result, (list, tuple)) or len(result) not in (2, 3):
        raise op_error("Custom", f"op_type {state.op_type!r}: {method} must return 2 or 3 "
                       f"lists ({what} of arguments, outputs[, auxiliary states]), got "
                       f"{result!r}")
    lists = [list(r) for r in result] + ([] if len(result) == 3 else [[]])
    for got, n, part in zip(lists, counts, ("arguments", "outputs", "auxiliary states")):
        if len(got) != n:
            raise op_error("Custom", f"op_type {state.op_type!r}: {method} returned "
                           f"{len(got)} {what} for {n} {part}")
    return lists


def _shape(state, s):
    try:
        shape = tuple(int(d) for d in s)
    except (TypeError, ValueError):
        shape = None
    if shape is None or any(d < 0 for d in shape):
        raise op_error("Custom", f"op_type {state.op_type!r}: infer_shape gave {s!r}, not a "
                       "shape")
    return shape


def _infer_shape(shapes, attrs):
    state = custom_state(attrs)
    args, aux = _split(attrs, shapes)
    counts = (len(args), len(state.prop.list_outputs()), len(aux))
    got = _checked(state, "infer_shape", _call(state, "infer_shape", [list(s) for s in args]),
                   counts, "shapes")
    given = args + aux
    inferred = [_shape(state, s) for s in got[0] + got[2]]
    for name, g, want in zip(CUSTOM.list_inputs(attrs), given, inferred):
        if tuple(g) != want:
            raise op_error("Custom", f"op_type {state.op_type!r}: input {name!r} has shape "
                           f"{tuple(g)}, but infer_shape says {want}")
    return [_shape(state, s) for s in got[1]]


def _infer_inputs_shape(in_shapes, out_shapes, attrs):
    """Symbolic inference: once every argument's shape is known, the property's
    infer_shape gives the auxiliary states' (and may refine the arguments')."""
    state = custom_state(attrs)
    args, aux = _split(attrs, in_shapes)
    if any(s is None for s in args):
        return list(in_shapes)
    counts = (len(args), len(state.prop.list_outputs()), len(aux))
    got = _checked(state, "infer_shape", _call(state, "infer_shape", [list(s) for s in args]),
                   counts, "shapes")
    return [_shape(state, s) for s in got[0] + got[2]]


def _dtype(state, t):
    try:
        return np.dtype(t)
    except TypeError:
        raise op_error("Custom", f"op_type {state.op_type!r}: infer_type gave {t!r}, not a "
                       "dtype") from None


def _infer_type(dtypes, attrs):
    state = custom_state(attrs)
    args, aux = _split(attrs, dtypes)
    counts = (len(args), len(state.prop.list_outputs()), len(aux))
    got = _checked(state, "infer_type", _call(state, "infer_type",
                                              [np.dtype(d).type for d in args]),
                   counts, "types")
    return [_dtype(state, t) for t in got[1]]


def _run(state, method, *args):
    """Run the operator's ``forward``/``backward`` as a kernel, with recording paused (the
    node running it is what the tape records); user errors become MXNetErrors."""
    from ..ndarray.ndarray import tape_state     # ops/ is below ndarray/: read it at run time
    prev = tape_state.recording
    tape_state.recording = False
    try:
        getattr(state.operator, method)(*args)
    except MXNetError as e:
        raise _error(state.op_type, method, e) from e
    except Exception as e:      # noqa: BLE001 - errors in user code, reported as MXNet does
        raise _error(state.op_type, method, e) from e
    finally:
        tape_state.recording = prev


def _custom_compute(rctx, ins, outs, attrs):
    state = custom_state(attrs)
    state.operator_for(rctx.ctx, [x.shape for x in ins], [x.dtype for x in ins])
    arrays = [wrap(x, rctx.ctx) for x in ins]
    in_data, aux = _split(attrs, arrays)
    out_data = [wrap(y, rctx.ctx) for y in outs]
    _run(state, "forward", bool(rctx.is_train), [_REQ] * len(out_data), in_data, out_data, aux)


def _imperative(F):
    """True when ``F`` is ``mx.nd`` (the tape's engine): the node holds recorded NDArrays
    the user's backward can run on. Any other ``F`` builds a graph (``mx.sym.grad``, an
    executor's backward), where the backward becomes a ``_backward_Custom`` node."""
    from .. import ndarray      # ops/ is below ndarray/: looked up at run time
    return F is ndarray


def _custom_gradient(F, node, ograds):
    """The operator's ``backward``. Imperatively it runs now on the node's recorded arrays,
    into zero ``in_grad`` arrays (req 'null' for the inputs no gradient is asked of); see the
    module docstring for why the result differentiates again. In a graph it is a
    ``_backward_Custom`` node (of the head gradients, inputs and outputs) that runs it."""
    attrs = node.attrs
    n_args = len(CUSTOM.list_arguments(attrs))
    n_aux = len(node.input_shapes) - n_args
    if not _imperative(F):
        grads = F._internal._backward_Custom(*ograds, *node.inputs, *node.outputs,
                                             **{STATE: custom_state(attrs)},
                                             **CUSTOM.format_attrs(attrs))
        grads = list(grads) if n_args > 1 else [grads]
        return grads + [None] * n_aux
    state = custom_state(attrs)
    state.operator_for(node.context, node.input_shapes, node.input_dtypes)
    in_data, aux = _split(attrs, node.inputs)
    wants = node.wants if node.wants is not None else [True] * len(node.inputs)
    in_grad = [F.zeros(s, dtype=d, ctx=node.context)
               for s, d in zip(node.input_shapes[:n_args], node.input_dtypes[:n_args])]
    req = [_REQ if w else "null" for w in wants[:n_args]]
    _run_backward(state, req, list(ograds), in_data, list(node.outputs), in_grad, aux)
    return in_grad + [None] * n_aux


def _run_backward(state, req, out_grad, in_data, out_data, in_grad, aux):
    """``backward`` keeps the engine's recording state: under ``create_graph`` its
    ``mx.nd`` calls and the writes into ``in_grad`` are recorded."""
    try:
        state.operator.backward(req, out_grad, in_data, out_data, in_grad, aux)
    except MXNetError as e:
        raise _error(state.op_type, "backward", e) from e
    except Exception as e:      # noqa: BLE001
        raise _error(state.op_type, "backward", e) from e


class BackwardCustomOpDef(CustomOpDef):
    """``_backward_Custom``: a Custom node's backward in a graph. Inputs: the head
    gradients, the forward's arguments, auxiliary states and outputs; outputs: the
    arguments' gradients. It shares the forward node's operator instance."""

    __slots__ = ()

    def bind_call(self, args, kwargs):
        return list(args), self.parse_attrs(kwargs)

    def _counts(self, attrs):
        return (len(CUSTOM.list_outputs(attrs)), len(CUSTOM.list_arguments(attrs)),
                len(CUSTOM.list_auxiliary_states(attrs)))

    def list_inputs(self, attrs):
        outs = CUSTOM.list_outputs(attrs)
        return (tuple(f"{n}_grad" for n in outs) + CUSTOM.list_inputs(attrs) + tuple(outs))

    def list_arguments(self, attrs):
        return self.list_inputs(attrs)

    def list_auxiliary_states(self, attrs):
        return ()

    def mutated_indices(self, attrs):
        return ()

    def list_outputs(self, attrs):
        return [f"{n}_grad" for n in CUSTOM.list_arguments(attrs)]


def _backward_parts(attrs, items):
    """(head gradients, arguments, auxiliary states, outputs) of _backward_Custom's inputs."""
    n_out, n_args, n_aux = BACKWARD._counts(attrs)
    items = list(items)
    return (items[:n_out], items[n_out:n_out + n_args],
            items[n_out + n_args:n_out + n_args + n_aux], items[n_out + n_args + n_aux:])


def _backward_shape(shapes, attrs):
    _, args, _, _ = _backward_parts(attrs, shapes)
    return [tuple(s) for s in args]


def _backward_type(dtypes, attrs):
    _, args, _, _ = _backward_parts(attrs, dtypes)
    return list(args)


def _backward_compute(rctx, ins, outs, attrs):
    state = custom_state(attrs)
    ograds, args, aux, outputs = _backward_parts(attrs, [wrap(x, rctx.ctx) for x in ins])
    state.operator_for(rctx.ctx, [x.shape for x in args + aux], [x.dtype for x in args + aux])
    in_grad = [wrap(g, rctx.ctx) for g in outs]
    for g in outs:
        rctx.xp.fill_zero(g)
    _run(state, "backward", [_REQ] * len(in_grad), ograds, args, outputs, in_grad, aux)


CUSTOM = register(CustomOpDef(
    "Custom", inputs=(), variadic=True,
    params=(Param("op_type", "str", doc="the name the CustomOpProp was registered under"),),
    infer_shape=_infer_shape, infer_type=_infer_type, compute={"cpu": _custom_compute},
    backward_shape=_infer_inputs_shape,
    gradient=_custom_gradient, grad_needs=("inputs", "outputs"),
    num_outputs=lambda attrs: CUSTOM.output_count(attrs),
    output_names=lambda attrs: CUSTOM.list_outputs(attrs),
    doc="""An operator written in Python: ``Custom(*inputs, op_type=name, **kwargs)`` runs
the ``CustomOp`` that the ``CustomOpProp`` registered as ``name`` (``mx.operator.register``)
creates; the other keywords go to the property's constructor as strings. Inputs may also
be given by the names of ``list_arguments()`` / ``list_auxiliary_states()``. See
``mxlite.operator``."""))
CUSTOM.mutate_inputs = ("auxiliary states",)   # which ones: mutated_indices(attrs)


# In a graph, the gradient of a custom backward is not known (it is Python code run as a
# kernel): like MXNet's, _backward_Custom declares none, so a second order through a symbolic
# graph is an MXNetError; mx.autograd gives every order (see the module docstring).
BACKWARD = register(BackwardCustomOpDef(
    "_backward_Custom", inputs=(), variadic=True,
    params=(Param("op_type", "str", doc="the op_type of the forward Custom node"),),
    infer_shape=_backward_shape, infer_type=_backward_type,
    compute={"cpu": _backward_compute}, gradient=None, grad_needs=(),
    num_outputs=lambda attrs: BACKWARD.output_count(attrs),
    output_names=lambda attrs: BACKWARD.list_outputs(attrs),
    doc="The backward of a ``Custom`` node in a graph (made by its gradient; not called "
        "directly): the head gradients, the forward's inputs and outputs in, the "
        "arguments' gradients out."))
