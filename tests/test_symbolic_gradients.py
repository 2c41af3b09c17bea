"""Every FGradient builds a symbolic backward graph: registry-wide, to order 3.

An FGradient is ``fn(F, node, ograds)`` written with registered ops called through ``F``
(``mx.nd`` today, ``mx.sym`` later). It must take shapes, dtypes and the device from
``node`` and never read a handle's attributes or data. Here ``F`` is ``T``, a shape-only
tracing namespace laid out like ``mx.nd`` (generated from the registry by the same
``populate``, dunders and ``nd.add``-style functions routed by the same tables): each call
returns a ``Handle`` computed with ``parse_attrs``, ``infer_shape`` and ``infer_type`` only.
A handle has no shape, dtype or context and no value, so an FGradient that reads one, tests
one in an ``if``, or hands one to NumPy fails here. Arrays an FGradient creates (``zeros``)
must be on ``node.context``.

The first-order node of each op comes from a real ``mx.nd`` run of its ``tests/gradspecs``
row; the ops of the traced gradient graph are then traced in turn, from inferred shapes
alone, to order 3 (each must be registered and differentiable or explicitly
non-differentiable).
"""
import numbers
import types
import zlib

import numpy as np
import pytest

import mxlite as mx
from mxlite.ops.frontend import populate
from mxlite.ops.registry import NON_DIFFERENTIABLE, REGISTRY, Attrs
from mxlite.ops.routing import ARITHMETIC, BINARY_FUNCTIONS, COMPARISONS, binary_function
from gradspecs import all_specs

SPECS = all_specs()
DEVICE = mx.cpu(1)        # the traced nodes' device: not the default, so a missing ctx shows
ORDER = 3
# ops traced to a lower order, and why
ORDER_LIMIT = {
    "Custom": (1, "its graph gradient is a _backward_Custom node (the Python backward run as "
                  "a kernel), which has no gradient, as in MXNet"),
}


class TracingError(Exception):
    """An FGradient did something a symbolic front end cannot do. Not an AttributeError,
    so ``getattr(handle, 'context', None)`` fails too."""


class Handle:
    """A traced array: only the tracer knows its shape and dtype."""

    __slots__ = ("_traced",)
    __array_ufunc__ = None      # NumPy ufuncs refuse handles; numpy scalars defer to us
    __hash__ = object.__hash__  # (== is an operator)

    def __init__(self, shape, dtype):
        self._traced = (tuple(shape), np.dtype(dtype))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise TracingError(f"an FGradient read {name!r} of a handle; take shapes, dtypes and "
                           "the device from node, and call ops through F")

    def _refuse(self, *args, what="its value"):
        raise TracingError(f"an FGradient used {what} of a handle (bool/float/len/iter/NumPy/"
                           "indexing): a symbolic handle has no value")

    __bool__ = __float__ = __int__ = __index__ = __len__ = __iter__ = __array__ = _refuse
    __getitem__ = __setitem__ = __contains__ = _refuse

    def __repr__(self):
        return f"<Handle {self._traced[0]} {self._traced[1]}>"

    # arithmetic, routed as NDArray routes it (scalars: numbers and NumPy scalars only)
    def _binary(self, other, array_op, scalar_op):
        if isinstance(other, Handle):
            return _trace(REGISTRY[array_op], [self, other], {})
        if isinstance(other, (numbers.Number, np.generic)):
            return _trace(REGISTRY[scalar_op], [self], {"scalar": other})
        return NotImplemented

    def _rbinary(self, other, array_op, rscalar_op):
        if isinstance(other, (numbers.Number, np.generic)):
            return _trace(REGISTRY[rscalar_op], [self], {"scalar": other})
        return NotImplemented

    def __neg__(self):
        return _trace(REGISTRY["negative"], [self], {})

    def __pos__(self):
        return self

    def __abs__(self):
        return _trace(REGISTRY["abs"], [self], {})


def _install_dunders():
    for stem, a, s, r in ARITHMETIC:
        setattr(Handle, f"__{stem}__", lambda self, o, a=a, s=s: self._binary(o, a, s))
        setattr(Handle, f"__r{stem}__", lambda self, o, a=a, r=r: self._rbinary(o, a, r))
    for stem, a, s in COMPARISONS:
        setattr(Handle, f"__{stem}__", lambda self, o, a=a, s=s: self._binary(o, a, s))


_install_dunders()


class _Trace:
    """The ops one FGradient call recorded, and the device its node ran on."""

    def __init__(self, context):
        self.context, self.calls = context, []


_current = [None]


def _trace(op, inputs, kwargs, out=None):
    """The invoke strategy of ``T``: infer the outputs, record the call, return handles."""
    trace = _current[0]
    if out is not None:
        raise TracingError(f"{op.name}: an FGradient wrote into out=")
    for x in inputs:
        if not isinstance(x, Handle):
            raise TracingError(f"{op.name}: input {x!r} is not a handle (an array or a "
                               "number where the graph needs a node)")
    attrs = kwargs if type(kwargs) is Attrs else op.parse_attrs(kwargs or {})
    if not inputs and "ctx" in op._param_map and attrs.ctx != trace.context:
        raise TracingError(f"{op.name} created an array on {attrs.ctx!r}, not on the node's "
                           f"device {trace.context!r} (pass ctx=node.context)")
    shapes = op.infer_shape([x._traced[0] for x in inputs], attrs)
    dtypes = op.infer_type([x._traced[1] for x in inputs], attrs)
    assert len(shapes) == len(dtypes), op.name
    outputs = [Handle(s, d) for s, d in zip(shapes, dtypes)]
    trace.calls.append((op, attrs, list(inputs), outputs))
    return outputs[0] if len(outputs) == 1 else outputs


T = types.ModuleType("trace", "A shape-only tracing namespace laid out like mx.nd.")
populate(T, _trace, "trace")
T.random.multinomial = T._internal._sample_multinomial     # as mxlite/_random_dispatch.py
for _name in BINARY_FUNCTIONS:
    setattr(T, _name, binary_function(_name, Handle, TracingError))


def test_trace_namespace_mirrors_nd():
    """Every op function of mx.nd (and of its namespaces) is in T for the same op."""
    for ns in ("", "_internal", "random", "contrib", "linalg"):
        if ns and not hasattr(mx.nd, ns):
            continue            # (no linalg op yet)
        nd, tr = (getattr(m, ns) if ns else m for m in (mx.nd, T))
        ops = {k: f.op for k, f in vars(nd).items() if hasattr(f, "op")}
        assert ops and ops == {k: vars(tr)[k].op for k in ops if k in vars(tr)}, ns
    assert set(BINARY_FUNCTIONS) <= set(vars(T))


class TraceNode:
    """What an FGradient may read of its node, and nothing else (no parents, no arrays:
    ``inputs``/``outputs`` are handles, present only where ``grad_needs`` asks)."""

    __slots__ = ("op", "attrs", "input_shapes", "input_dtypes", "output_shapes",
                 "output_dtypes", "context", "wants", "inputs", "outputs")

    def __init__(self, op, attrs, in_meta, out_meta, wants):
        self.op, self.attrs, self.context, self.wants = op, attrs, DEVICE, list(wants)
        self.input_shapes = [s for s, _ in in_meta]
        self.input_dtypes = [d for _, d in in_meta]
        self.output_shapes = [s for s, _ in out_meta]
        self.output_dtypes = [d for _, d in out_meta]
        self.inputs = [Handle(*m) for m in in_meta] if "inputs" in op.grad_needs else None
        self.outputs = [Handle(*m) for m in out_meta] if "outputs" in op.grad_needs else None


def trace_gradient(op, attrs, in_meta, out_meta, wants):
    """Trace ``op``'s FGradient on handles; check one gradient per input, each of its
    input's shape and dtype. Returns the calls the gradient graph is made of."""
    node = TraceNode(op, attrs, in_meta, out_meta, wants)
    ograds = [Handle(*m) for m in out_meta]
    _current[0] = trace = _Trace(DEVICE)
    try:
        grads = op.gradient(T, node, ograds)
    finally:
        _current[0] = None
    where = f"{op.name} (inputs {in_meta}, attrs {dict(attrs)}, wants {wants})"
    assert isinstance(grads, (list, tuple)) and len(grads) == len(in_meta), \
        f"{where}: returned {grads!r}, not one gradient per input"
    for i, (g, want, meta) in enumerate(zip(grads, wants, in_meta)):
        if not want or g is None:
            continue
        assert isinstance(g, Handle), f"{where}: gradient {i} is {g!r}, not a graph node"
        assert g._traced == (tuple(meta[0]), np.dtype(meta[1])), \
            f"{where}: gradient {i} is {g!r}, its input is {meta}"
    return trace.calls


def _want_patterns(wanted):
    """All wanted inputs at once, then each alone (gradients branch on node.wants)."""
    idx = [i for i, w in enumerate(wanted) if w]
    pats = [tuple(wanted)]
    if len(idx) > 1:
        pats += [tuple(i == j for i in range(len(wanted))) for j in idx]
    return pats


def _recorded_nodes(name, call=None, shapes=None):
    """The nodes of op ``name`` recorded by a real mx.nd run of its gradient spec row (or
    of ``call`` on inputs of ``shapes``)."""
    spec = SPECS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if call is not None:
        xs = [mx.nd.array(rng.uniform(size=s), dtype="float64") for s in shapes]
    elif spec.sample is not None:
        xs = [mx.nd.array(a, dtype="float64") for a in spec.sample(rng)]
    else:
        xs = [mx.nd.array(rng.uniform(*spec.domain(i), size=s), dtype="float64")
              for i, s in enumerate(spec.shapes)]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = (call or spec.call)(mx.nd, *xs)
    heads = out if isinstance(out, (list, tuple)) else [out]
    found, seen, stack = [], set(), [h._node[0] for h in heads if h._node is not None]
    while stack:
        node = stack.pop()
        if node in seen or node.op is None:
            continue
        seen.add(node)
        if node.op is REGISTRY[name]:
            found.append(node)
        stack += [p[0] for p in node.parents if p is not None]
    return found


def _meta(shapes, dtypes):
    return [(tuple(s), np.dtype(d)) for s, d in zip(shapes, dtypes)]


def _key(op, attrs, in_meta):
    return (op.name, repr(sorted(attrs.items())), repr(in_meta))


def _trace_to_order(name, call=None, shapes=None):
    """Trace op ``name``'s gradient, then the gradients of its gradient graph's ops, to
    ORDER. Returns the number of distinct op applications traced."""
    nodes = _recorded_nodes(name, call, shapes)
    assert nodes, f"the gradient spec of {name!r} records no {name!r} node"
    level, done = [], set()
    for node in nodes:
        wanted = [p is not None for p in node.parents]
        level.append((node.op, node.attrs, _meta(node.input_shapes, node.input_dtypes),
                      _meta(node.output_shapes, node.output_dtypes), _want_patterns(wanted)))
    for order in range(1, ORDER_LIMIT.get(name, (ORDER,))[0] + 1):
        following = []
        for op, attrs, in_meta, out_meta, patterns in level:
            key = _key(op, attrs, in_meta)
            if key in done:
                continue
            done.add(key)
            if op.gradient == NON_DIFFERENTIABLE:
                continue
            assert callable(op.gradient), \
                f"order {order}: {op.name!r} (in a gradient graph) declares no FGradient"
            for wants in patterns:
                for gop, gattrs, ins, outs in trace_gradient(op, attrs, in_meta, out_meta,
                                                             wants):
                    assert REGISTRY.get(gop.name) is gop, f"{gop.name!r} is not registered"
                    following.append((gop, gattrs, [x._traced for x in ins],
                                      [y._traced for y in outs],
                                      _want_patterns([True] * len(ins))))
        level = following
    return len(done)


def _differentiable_ops():
    return sorted({op.name for op in REGISTRY.values() if op.differentiable})


@pytest.mark.parametrize("name", _differentiable_ops())
def test_gradient_traces_symbolically_to_order_3(name):
    assert name in SPECS, f"{name!r} has no row in tests/gradspecs"
    assert _trace_to_order(name) >= 1


# Gradient branches the spec rows do not reach: zero-size inputs (their gradients are
# created zeros, on the node's device).
EMPTY = [
    ("sum", [(0, 3)], lambda nd, x: nd.sum(x, axis=1)),
    ("mean", [(2, 0)], lambda nd, x: nd.mean(x, axis=0)),
    ("nansum", [(0, 3)], lambda nd, x: nd.nansum(x)),
    ("sum_to", [(0, 3)], lambda nd, x: nd.sum_to(x, shape=(1, 3))),
    ("reshape", [(0, 3)], lambda nd, x: nd.reshape(x, shape=(0, 1, 3))),
    ("flatten", [(2, 0, 3)], lambda nd, x: nd.flatten(x)),
    ("expand_dims", [(0,)], lambda nd, x: nd.expand_dims(x, axis=0)),
    ("squeeze", [(1, 0)], lambda nd, x: nd.squeeze(x)),
    ("tile", [(0, 2)], lambda nd, x: nd.tile(x, reps=(2, 3))),
    ("tile", [(2, 3)], lambda nd, x: nd.tile(x, reps=(0, 1))),
    ("repeat", [(2, 0)], lambda nd, x: nd.repeat(x, repeats=2, axis=0)),
    ("repeat", [(2, 3)], lambda nd, x: nd.repeat(x, repeats=0, axis=1)),
    ("stack", [(0, 2), (0, 2)], lambda nd, a, b: nd.stack(a, b, axis=1)),
    ("dot", [(2, 0), (0, 3)], lambda nd, a, b: nd.dot(a, b)),
]


@pytest.mark.parametrize("name, shapes, call", EMPTY,
                         ids=[f"{n}-{s}" for n, s, _ in EMPTY])
def test_zero_size_gradient_traces_symbolically(name, shapes, call):
    assert _trace_to_order(name, call, shapes) >= 1


# ---- the tracer itself refuses what a symbolic front end cannot do ---------------------------
def _tracing(fn, *metas, grad_needs=("inputs",)):
    op = types.SimpleNamespace(name="probe", gradient=fn, grad_needs=frozenset(grad_needs))
    return trace_gradient(op, Attrs(), list(metas), [((2, 3), np.dtype("float32"))], [True])


F32_23 = ((2, 3), np.dtype("float32"))


@pytest.mark.parametrize("body", [
    lambda F, node, g: [F.zeros(node.inputs[0].shape)],
    lambda F, node, g: [F.zeros_like(g[0]) if node.inputs[0].dtype else None],
    lambda F, node, g: [F.zeros((2, 3), ctx=getattr(node.inputs[0], "context", None))],
    lambda F, node, g: [F.zeros((2, 3))],                      # not on node.context
    lambda F, node, g: [g[0] if g[0] > 0 else -g[0]],          # Python if on a value
    lambda F, node, g: [g[0] * float(node.inputs[0])],
    lambda F, node, g: [F.exp(np.asarray(node.inputs[0]))],
    lambda F, node, g: [g[0] * np.sign(node.inputs[0])],
    lambda F, node, g: [node.inputs[0].asnumpy()],
    lambda F, node, g: [node.inputs[0][0]],
], ids=["shape", "dtype", "getattr-context", "default-ctx", "if", "float", "asarray",
        "ufunc", "asnumpy", "getitem"])
def test_tracer_refuses_reading_a_handle(body):
    with pytest.raises((TracingError, TypeError)):
        _tracing(body, F32_23)


def test_tracer_checks_gradient_shape_dtype_and_count():
    with pytest.raises(AssertionError, match="its input"):
        _tracing(lambda F, node, g: [F.sum(g[0], axis=0)], F32_23)
    with pytest.raises(AssertionError, match="its input"):
        _tracing(lambda F, node, g: [F.cast(g[0], dtype="float64")], F32_23)
    with pytest.raises(AssertionError, match="one gradient per input"):
        _tracing(lambda F, node, g: [g[0], g[0]], F32_23)


def test_tracer_builds_graphs_from_metadata():
    def fine(F, node, g):
        z = F.zeros(node.input_shapes[0], dtype=node.input_dtypes[0], ctx=node.context)
        x = node.inputs[0]
        return [F.where(x > 0, g[0] * 2 + 1 - x, z) / F.maximum(x, 1)]
    ops = [op.name for op, *_ in _tracing(fine, F32_23)]
    assert ops == ["zeros", "_greater_scalar", "_mul_scalar", "_plus_scalar",
                   "broadcast_sub", "where", "_maximum_scalar", "broadcast_div"]


# ---- gradients are created on the node's device ------------------------------------------
def test_missing_head_gradient_and_empty_gradients_on_the_node_device():
    x = mx.nd.ones((4, 2), ctx=DEVICE, dtype="float64")
    e = mx.nd.ones((0, 3), ctx=DEVICE, dtype="float64")
    x.attach_grad()
    e.attach_grad()
    with mx.autograd.record():
        a, _ = mx.nd.split(x, num_outputs=2, axis=0)      # the second output gets no gradient
        y = (a * a).sum() + mx.nd.sum(e) + mx.nd.sum_to(e, shape=(1, 3)).sum()
    gx, ge = mx.autograd.grad(y, [x, e], create_graph=True)
    assert gx.context == DEVICE and ge.context == DEVICE
    assert gx.asnumpy().tolist() == [[2, 2], [2, 2], [0, 0], [0, 0]]
    assert ge.shape == (0, 3)
