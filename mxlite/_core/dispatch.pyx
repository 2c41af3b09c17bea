# cython: language_level=3, auto_pickle=False
"""The compiled dispatch path: the array handle's fields, ``invoke`` and the tape's hot half.

``NDArrayBase`` holds an NDArray's fields as C slots (``mxlite.ndarray.NDArray`` subclasses it
with the Python methods); ``invoke`` executes a registered operator; ``Node``, ``parents`` and
``attach`` put its application on the autograd tape. The slow, rare paths (``out=`` checks,
in-place writes under ``record()``, errors) stay in Python and are handed in by
``configure``; the semantics are those documented in ``mxlite/ndarray/ndarray.py`` and
``mxlite/autograd.py``.
"""
import numbers

import numpy as np

from libc.math cimport copysign
cimport numpy as cnp

from ..base import MXNetError, op_error

cnp.import_array()

cdef object _Number = (numbers.Number, np.generic)

# Set by configure(): the NDArray class, the per-thread tape switches, the Attrs class, and
# the Python helpers of the rare paths.
cdef object _NDArray = None
cdef object _tape_state = None
cdef object _Attrs = None
cdef object _current_context = None
cdef object _Context = None
cdef object _slow = None        # module with out_arrays, saved_inputs, allocate, bad_input
cdef object _tape = None        # mxlite.autograd (begin_write / end_write)
cdef object _CPU = None


def configure(ndarray_cls, tape_state, attrs_cls, current_context, context_cls, slow):
    """Wire the compiled path to the Python layer (called once by mxlite.ndarray)."""
    global _NDArray, _tape_state, _Attrs, _current_context, _Context, _slow, _CPU
    _NDArray, _tape_state, _Attrs = ndarray_cls, tape_state, attrs_cls
    _current_context, _Context, _slow = current_context, context_cls, slow
    _CPU = context_cls("cpu", 0)


cdef object _transfer_op = None      # mxlite.ops.transfer's _copyto (set_transfer_op)


def set_transfer_op(op):
    """Name the one operator whose input may be on another device than its output: it runs
    on the device of its ``ctx`` parameter (``_copyto``, mxlite/ops/transfer.py)."""
    global _transfer_op
    _transfer_op = op


def set_tape(tape):
    """Hand in mxlite.autograd (its begin_write/end_write), once it is imported."""
    global _tape
    _tape = tape


# ---- the run context (mxlite/device) -----------------------------------------------------------
cdef object _run_context = None     # mxlite.device.run_context: Context -> RunContext


def set_run_context(factory):
    """Hand in mxlite.device.run_context (it makes a device's RunContext and caches it on the
    Context as ``ctx._run``)."""
    global _run_context
    _run_context = factory


cdef class RunContext:
    """What a compute function ``compute(rctx, ins, outs, attrs)`` knows of the call it runs:
    ``ctx`` (the device Context), ``xp`` (its array namespace), ``stream`` (None on CPU),
    ``rng`` (its random stream) and ``is_train`` (this thread's train mode, read when asked).
    ``kernels`` keys ``op.compute``; ``cpu`` allows invoke's compiled CPU fast paths. One per
    device (``mxlite.device.run_context``)."""

    cdef readonly object ctx, xp, kernels, stream, rng
    cdef readonly bint cpu

    def __init__(self, ctx, xp, kernels, stream, rng, bint cpu):
        self.ctx, self.xp, self.kernels, self.stream, self.rng = ctx, xp, kernels, stream, rng
        self.cpu = cpu

    @property
    def is_train(self):
        return _tape_state.training

    def __repr__(self):
        return f"<RunContext {self.ctx} kernels={self.kernels!r} stream={self.stream!r}>"


cdef class NDArrayBase:
    """The fields of an NDArray (see ``mxlite.ndarray.NDArray``; declared in dispatch.pxd)."""


cpdef NDArrayBase wrap(object data, object ctx=None):
    """A new NDArray owning ``data`` (a C-contiguous buffer) on ``ctx`` (default cpu(0));
    no autograd state."""
    cdef NDArrayBase a = NDArrayBase.__new__(_NDArray)
    a._data = data
    a._ctx = _CPU if ctx is None else ctx
    a._grad_req = "null"
    a._version = [0]
    return a


# ---- the tape ----------------------------------------------------------------------------------
cdef long long _created = 0     # nodes made so far: a node's ``seq`` is its creation rank


cdef class Node:
    """One recorded operator application (see ``mxlite.autograd``; declared in dispatch.pxd).

    ``seq`` numbers nodes in creation order, so every node comes after the nodes that made
    its inputs: the backward engine walks them by ``seq``, with no topological sort."""

    def __init__(self, op, attrs, list parents, inputs, outputs):
        global _created
        cdef NDArrayBase x
        _created += 1
        self.seq = _created
        self.op, self.attrs, self.parents = op, attrs, parents
        needs = op.grad_needs if op is not None else ()
        by_attrs = getattr(op, "grad_needs_by_attrs", None)     # duck-typed ops lack it
        if by_attrs is not None:
            needs = by_attrs(attrs)
        self.inputs = list(inputs) if "inputs" in needs else None
        self.outputs = list(outputs) if "outputs" in needs else None
        if self.inputs is not None or self.outputs is not None:
            self.versions = [(<NDArrayBase>x)._version[0]
                             for x in (self.inputs or []) + (self.outputs or [])]
        # An input with a parent entry has its parent's output metadata (an array's shape and
        # dtype never change): only untaped inputs are read now, the rest on first use.
        cdef list untaped = []
        for x, e in zip(inputs, parents):
            untaped.append(_meta(x) if e is None else None)
        self._untaped = untaped
        shapes, dtypes = [], []
        for x in outputs:
            meta = _meta(x)
            shapes.append(meta[0])
            dtypes.append(meta[1])
        self.output_shapes, self.output_dtypes = shapes, dtypes
        self.context = (<NDArrayBase>outputs[0])._ctx if outputs else None

    @property
    def input_shapes(self):
        """Shape of each input (built on first use, from the parents' output metadata)."""
        return [_input_meta(self, i)[0] for i in range(len(self._untaped))]

    @property
    def input_dtypes(self):
        """Dtype of each input (built on first use, like ``input_shapes``)."""
        return [_input_meta(self, i)[1] for i in range(len(self._untaped))]

    def __repr__(self):
        return f"<Node {self.op.name if self.op else 'variable'}>"


cdef tuple _meta(NDArrayBase x):
    """(shape, dtype) of an array: of its buffer, or of a sparse array's dense form."""
    a = x._data
    if a is None:
        return tuple(x.shape), np.dtype(x.dtype)
    return a.shape, a.dtype


cdef tuple _input_meta(Node node, Py_ssize_t i):
    meta = node._untaped[i]
    if meta is not None:
        return meta
    parent, index = node.parents[i]
    return (<Node>parent).output_shapes[index], (<Node>parent).output_dtypes[index]


# The entry of arrays computed under record() from no variable: gradients through them are 0.
CONSTANT = (Node(None, None, [], [], []), 0)
cdef object _CONSTANT = CONSTANT


cpdef list parents(inputs):
    """The entry of each input (None where no gradient flows), read before the op runs.

    An input whose buffer was written since its entry was made gets a fresh entry when it
    is a view (re-derived from its base); otherwise its recorded history no longer describes
    its value, which is an error (never a silently wrong gradient)."""
    cdef list entries = []
    cdef NDArrayBase x
    for obj in inputs:
        x = <NDArrayBase>obj
        e = x._node
        if x._node_version != x._version[0]:
            e = _refresh(x)
        entries.append(None if e is _CONSTANT else e)
    return entries


cdef object _refresh(NDArrayBase x):
    link = x._view
    if link is not None and link[1] is not None:      # a view: its value is its base's
        base, op, attrs = link
        attach(op, attrs, parents([base]), [base], x)
        return x._node
    e = x._node
    if e is not None and e is not _CONSTANT and (<Node>e[0]).op is not None:
        raise MXNetError(
            f"autograd: an array of shape {x._data.shape} computed by {e[0].op.name!r} under "
            "record() was then written in place without being recorded (outside record(), "
            "or through a detach()ed alias); its recorded history no longer describes its "
            "value. Recompute it, or make the write under record().")
    x._node_version = x._version[0]     # a variable, a constant or an untracked array
    return e


cpdef attach(op, attrs, list entries, inputs, result):
    """Give the output(s) ``result`` of ``op`` their entry on the tape."""
    cdef NDArrayBase y
    cdef Py_ssize_t i
    outputs = result if type(result) is list else [result]
    node = None
    for e in entries:
        if e is not None:       # else: computed under record() but from no variable
            node = Node(op, attrs, entries, inputs, outputs)
            break
    for i, obj in enumerate(outputs):
        y = <NDArrayBase>obj
        y._node = _CONSTANT if node is None else (node, i)
        y._node_version = y._version[0]


# ---- invoke ---------------------------------------------------------------------------------
cpdef object invoke(object op, list inputs, object kwargs, object out=None):
    """Execute ``op`` now: parse params, infer output shapes/dtypes, allocate, run the kernel.

    ``out`` (an NDArray, or a list for multi-output ops) receives the result in place (an
    in-place write: its version is bumped, and under ``record()`` it is recorded).
    Multi-output ops (``num_outputs != 1``) return a list.
    """
    cdef NDArrayBase x
    cdef list arrays = [], in_shapes = [], in_dtypes = []
    cdef object ctx = None, attrs, a
    cdef bint defaults = False
    cdef object key = None              # the call's keywords, hashable; None: not memoised
    if type(kwargs) is _Attrs:          # parsed already (indexing)
        attrs = kwargs
    elif kwargs:
        key = _keywords_key(kwargs)
        attrs = _parse_keyed(op, kwargs, key)
    else:                               # every parameter at its default (shared, read-only)
        attrs = op.default_attrs
        defaults = True
        key = ()
        if attrs is None:
            attrs = op.parse_attrs(kwargs)      # raises: a required parameter is missing
    for obj in inputs:
        if not isinstance(obj, _NDArray):
            _slow.bad_input(op, inputs, obj)
        x = <NDArrayBase>obj
        if ctx is None:
            ctx = x._ctx
        elif x._ctx is not ctx and x._ctx != ctx:
            raise op_error(op.name, f"inputs are on different devices ({ctx} and {x._ctx})")
        a = x._data
        if a is None:                   # sparse storage: its own path (MXNet's FComputeEx)
            return _slow.sparse_invoke(op, inputs, attrs, out)
        arrays.append(a)
        in_shapes.append(a.shape)
        in_dtypes.append(a.dtype)
    if op is _transfer_op:             # _copyto: runs on the device it copies to
        ctx = attrs["ctx"]              # (None: the current context, below)
    if ctx is None:
        if op.variadic and op.inputs:
            raise op_error(op.name, "needs at least one input")
        ctx = attrs.get("ctx") or _current_context()
        if not isinstance(ctx, _Context):
            ctx = _Context(ctx)
    fast = None
    cdef int rule = op.rule_id
    shape = _rule_shape(rule, in_shapes, in_dtypes, attrs, defaults) if rule else None
    if shape is not None:               # a declared rule: no Python inference
        shapes, dtypes = [shape], in_dtypes[:1]
        fast = op.cpu_kernel            # and, on CPU, maybe no Python compute function
    elif key is not None:
        ikey = (key, tuple(in_shapes), tuple(in_dtypes))
        known = op.infer_cache.get(ikey)
        if known is None:
            known = (tuple(op.infer_shape(in_shapes, attrs)),
                     tuple(op.infer_type(in_dtypes, attrs)))
            _remember(op.infer_cache, ikey, known)
        shapes, dtypes = known
    else:
        shapes = op.infer_shape(in_shapes, attrs)
        dtypes = op.infer_type(in_dtypes, attrs)
    cdef RunContext rctx = ctx._run
    if rctx is None:
        rctx = _run_context(ctx)
    if fast is not None and rctx.cpu and (<CpuKernel>fast).applies(attrs, defaults):
        kernel = fast
    else:
        kernel = op.compute.get(rctx.kernels)
        if kernel is None:
            raise op_error(op.name, f"has no kernel for {ctx.device_type}")
    cdef bint recording = _tape_state.recording
    if out is not None:
        if _any_sparse(out):            # into sparse storage: converted on the way
            return _slow.sparse_invoke(op, inputs, attrs, out)
        return _invoke_out(op, inputs, attrs, out, shapes, dtypes, arrays, kernel, recording,
                           rctx)
    entries = parents(inputs) if recording else None
    if len(shapes) == 1 and rctx.cpu and op.cpu_result is not None:
        try:                            # the op makes its result itself (OpDef.cpu_result)
            outputs = [op.cpu_result(rctx.xp, shapes[0], dtypes[0])]
        except MemoryError:
            outputs = [_slow.allocate(op.name, shapes[0], dtypes[0], rctx.xp)]
            kernel(rctx, arrays, outputs, attrs)
        result = wrap(outputs[0], ctx)
    elif len(shapes) == 1:
        try:
            outputs = [_empty(shapes[0], dtypes[0]) if rctx.cpu
                       else _slow.allocate(op.name, shapes[0], dtypes[0], rctx.xp)]
        except MemoryError:
            outputs = [_slow.allocate(op.name, shapes[0], dtypes[0], rctx.xp)]
        kernel(rctx, arrays, outputs, attrs)
        result = wrap(outputs[0], ctx)
    else:
        # off the tape nothing reads a hidden output: those the op may skip are not made
        skip = op.optional_outputs_of(attrs) if not recording else ()
        outputs = [None if i in skip else _slow.allocate(op.name, s, d, rctx.xp)
                   for i, (s, d) in enumerate(zip(shapes, dtypes))]
        kernel(rctx, arrays, outputs, attrs)
        result = [None if o is None else wrap(o, ctx) for o in outputs]
    if kernel is not fast and op.mutate_inputs:
        _bump_mutated(op, attrs, inputs)
    if recording:
        attach(op, attrs, entries, inputs, result)
    if op._num_visible is not None and type(result) is list:
        return _visible(op, result, attrs)
    return result


cdef bint _any_sparse(out):
    if isinstance(out, NDArrayBase):
        return (<NDArrayBase>out)._data is None
    if isinstance(out, (list, tuple)):
        for o in out:
            if isinstance(o, NDArrayBase) and (<NDArrayBase>o)._data is None:
                return True
    return False


cdef object _visible(op, list result, attrs):
    """The outputs a call returns (``op.num_visible_outputs``: BatchNorm's ``output`` unless
    ``output_mean_var``, Dropout's without its mask); the tape keeps them all."""
    cdef Py_ssize_t n = op.num_visible_outputs(attrs)
    return result[0] if n == 1 else result[:n]


cdef void _bump_mutated(op, attrs, list inputs) except *:
    """Inputs the kernel updated in place (``op.mutate_inputs``: optimizer states, BatchNorm's
    moving statistics) were written like an ``out=``: their versions move, so a value saved
    before the update makes backward raise instead of reading the new contents."""
    for i in op.mutated_indices(attrs):
        (<NDArrayBase>inputs[i])._version[0] += 1


cdef Py_ssize_t _CACHE_LIMIT = 512     # entries per op and cache; then it starts again


cpdef object parse_cached(op, kwargs):
    """``op.parse_attrs(kwargs)``, memoised as ``invoke`` does (a shared, read-only Attrs)."""
    if not kwargs and op.default_attrs is not None:
        return op.default_attrs
    return _parse_keyed(op, kwargs, _keywords_key(kwargs))


cdef object _parse_keyed(op, kwargs, key):
    attrs = op.attrs_cache.get(key) if key is not None else None
    if attrs is None:
        attrs = op.parse_attrs(kwargs)
        if key is not None:
            _remember(op.attrs_cache, key, attrs)
    return attrs


cdef inline void _remember(dict cache, key, value):
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value


cdef object _keywords_key(kwargs):
    """A hashable key for keyword parameters that tells apart every value ``parse`` could
    read differently (``1``, ``1.0`` and ``True`` hash alike, so types are part of it), or
    None when a value is not of a plain type, and the call is parsed every time. A float
    zero carries its sign in the key (``-0.0 == 0.0``: losing the sign would be a wrong
    result)."""
    cdef list key = []
    for name, value in kwargs.items():
        t = type(value)
        if t is tuple:
            for v in <tuple>value:
                if type(v) is not int:
                    return None
        elif t is float:
            if value == 0.0:        # the sign of zero is part of the key
                key.append((name, t, value, copysign(1.0, value)))
                continue
        elif t is not int and t is not str and t is not bool and value is not None:
            return None
        key.append((name, t, value))
    return tuple(key)


cdef object _empty(object shape, object dtype):
    """``np.empty(shape, dtype)`` (C order) without the Python call."""
    cdef cnp.npy_intp dims[32]
    cdef Py_ssize_t i, nd
    if type(shape) is not tuple or not isinstance(dtype, cnp.dtype) or len(shape) > 32:
        return np.empty(shape, dtype)
    nd = len(shape)
    for i in range(nd):
        dims[i] = shape[i]
    return cnp.PyArray_EMPTY(nd, dims, (<cnp.dtype>dtype).type_num, 0)



cdef enum:    # CpuKernel kinds
    KERNEL_UNARY = 1
    KERNEL_BINARY = 2
    KERNEL_REDUCE_ALL = 3
    KERNEL_SCALAR = 4
    KERNEL_RSCALAR = 5

cdef double _F32_MAX = float(np.finfo(np.float32).max)


cdef class CpuKernel:
    """A CPU kernel the compiled invoke calls without the op's Python compute function, where
    the op's ``float_rule`` holds (float32/float64 inputs of one dtype, so no cast):
    ``CpuKernel('unary', fn, op_id)`` runs ``fn(op_id, x, out)``, ``'binary'`` runs
    ``fn(op_id, a, b, out)``, ``'scalar'``/``'rscalar'`` run ``fn(op_id, x, s, out)``/
    ``fn(op_id, s, x, out)`` with ``s`` the ``scalar`` parameter as a 0-d array of x's
    dtype (an int or float scalar; float32 overflow gives infinity, as a cast), and
    ``'reduce_all'`` runs ``fn(op_id, x, out, 1, n, 1, final, n)`` for a reduction over
    every axis of a non-empty array (default axis, no keepdims, no exclude). It has the
    compute-function signature; tests/test_registry.py checks it against the op's compute
    function, bit for bit."""

    def __init__(self, str kind, fn, int op_id, int final=0):
        self.kind = {"unary": KERNEL_UNARY, "binary": KERNEL_BINARY,
                     "reduce_all": KERNEL_REDUCE_ALL, "scalar": KERNEL_SCALAR,
                     "rscalar": KERNEL_RSCALAR}[kind]
        self.fn, self.op_id, self.final = fn, op_id, final

    cdef bint applies(self, attrs, bint defaults):
        # (the float rule held: float inputs of one dtype; a reduced extent is never 0)
        if self.kind == KERNEL_REDUCE_ALL:
            return defaults or (attrs["axis"] is None and not attrs["exclude"]
                                and not attrs["keepdims"])
        if self.kind >= KERNEL_SCALAR:
            t = type(attrs["scalar"])
            return t is float or (t is int and -2**62 < attrs["scalar"] < 2**62)
        return True

    def __call__(self, rctx, arrays, outputs, attrs):
        if self.kind == KERNEL_UNARY:
            self.fn(self.op_id, arrays[0], outputs[0])
        elif self.kind == KERNEL_BINARY:
            self.fn(self.op_id, arrays[0], arrays[1], outputs[0])
        elif self.kind >= KERNEL_SCALAR:
            s = _scalar_array(attrs["scalar"], arrays[0])
            if self.kind == KERNEL_SCALAR:
                self.fn(self.op_id, arrays[0], s, outputs[0])
            else:
                self.fn(self.op_id, s, arrays[0], outputs[0])
        else:
            n = cnp.PyArray_SIZE(<cnp.ndarray>arrays[0])
            self.fn(self.op_id, arrays[0], outputs[0], 1, n, 1, self.final, n)


cdef cnp.ndarray _scalar_array(value, cnp.ndarray like):
    """``value`` (a float, or an int below 2**62) as a 0-d array of ``like``'s float dtype."""
    cdef double f = <double>value if type(value) is float else <double>(<long long>value)
    cdef int typenum = cnp.PyArray_TYPE(like)
    cdef cnp.ndarray s = cnp.PyArray_EMPTY(0, NULL, typenum, 0)
    if typenum == cnp.NPY_FLOAT64:
        (<double*>cnp.PyArray_DATA(s))[0] = f
    else:
        if f > _F32_MAX or f < -_F32_MAX:       # (a C cast out of range is undefined)
            f = f * 1e300 * 1e300               # infinity of its sign
        (<float*>cnp.PyArray_DATA(s))[0] = <float>f
    return s


cdef enum:    # OpDef.rule_id (mxlite/ops/registry.py _RULE_IDS)
    RULE_SAME = 1
    RULE_BROADCAST = 2
    RULE_REDUCE = 3


cdef object _rule_shape(int rule, list shapes, list dtypes, attrs, bint defaults):
    """The output shape by the op's declared ``float_rule``, or None where the rule does not
    cover these inputs (then the Python functions decide, and raise on bad input)."""
    cdef Py_ssize_t i, n = len(dtypes)
    if n == 0:
        return None
    d = dtypes[0]
    if d is not _F32 and d is not _F64:
        return None
    for i in range(1, n):
        if dtypes[i] is not d:
            return None
    s = shapes[0]
    if rule == RULE_SAME:
        for i in range(1, n):
            if shapes[i] != s:
                return None
        return s
    if rule == RULE_BROADCAST:
        return _broadcast(s, shapes[1]) if n == 2 else None
    if rule == RULE_REDUCE:
        if n != 1:
            return None
        if defaults:    # axis=None, exclude/keepdims False (OpDef checks these defaults)
            return _reduced(s, None, False, False)
        return _reduced(s, attrs["axis"], attrs["exclude"], attrs["keepdims"])
    return None


cdef object _broadcast(tuple a, tuple b):
    """NumPy broadcasting of two shapes; None when they do not broadcast."""
    if a == b:
        return a
    cdef Py_ssize_t na = len(a), nb = len(b), n = max(na, nb), i
    cdef list out = [0] * n
    for i in range(n):
        da = a[na - n + i] if i >= n - na else 1
        db = b[nb - n + i] if i >= n - nb else 1
        if da == db or db == 1:
            out[i] = da
        elif da == 1:
            out[i] = db
        else:
            return None
    return tuple(out)


cdef object _reduced(tuple shape, axis, bint exclude, bint keepdims):
    """MXNet's reduction shape (None or () reduces every axis; an empty result is (1,));
    None for an axis out of range, a repeated axis, or a reduced extent of 0 (the Python
    function decides those, and names the error)."""
    cdef Py_ssize_t nd = len(shape), i, a
    cdef list reduce
    if axis is None or len(axis) == 0:      # every axis (the common call): no lists
        for i in range(nd):
            if shape[i] == 0:
                return None
        return (1,) * nd if keepdims else (1,)
    else:
        reduce = [False] * nd
        for a in axis:
            if a < 0:
                a += nd
            if a < 0 or a >= nd or reduce[a]:
                return None
            reduce[a] = True
        if exclude:
            reduce = [not r for r in reduce]
    out = []
    for i in range(nd):
        if reduce[i]:
            if shape[i] == 0:
                return None
            if keepdims:
                out.append(1)
        else:
            out.append(shape[i])
    return tuple(out) if out or keepdims else (1,)


cdef object _F32 = np.dtype(np.float32), _F64 = np.dtype(np.float64)


cdef object _invoke_out(op, list inputs, attrs, out, shapes, dtypes, list arrays, kernel,
                        bint recording, RunContext rctx):
    targets = out if isinstance(out, (list, tuple)) else [out]
    outputs = _slow.out_arrays(op, shapes, dtypes, targets, arrays, rctx)
    cdef list given = inputs
    if recording:
        plan = _tape.begin_write(targets, inputs)
        inputs = _slow.saved_inputs(op, inputs, outputs, plan[0], rctx.xp)
    kernel(rctx, arrays, outputs, attrs)
    for t in targets:
        (<NDArrayBase>t)._version[0] += 1
    if op.mutate_inputs:
        _bump_mutated(op, attrs, given)
    if recording:
        _tape.end_write(plan, op, attrs, inputs, list(targets))
    return out


# ---- operators on arrays (``a + b``, ``a += 2``, ``2 - a``) ----------------------------------
cdef int FORWARD = 0, REFLECTED = 1, INPLACE = 2


cpdef object route(NDArrayBase self, other, array_op, scalar_op, int kind):
    """``self <op> other`` through registered ops: ``array_op`` for an array operand (a
    NumPy one is converted, keeping its dtype), ``scalar_op`` for a number (``kind`` says
    forward, reflected, or in place into ``self``); NotImplemented for anything else."""
    t = type(other)
    out = self if kind == INPLACE else None
    if t is _NDArray or isinstance(other, NDArrayBase):
        if kind == REFLECTED:
            return NotImplemented   # (Python tries other.__op__ first)
        result = invoke(array_op, [self, other], None, out)
    elif t is float or t is int or isinstance(other, _Number):
        result = invoke(scalar_op, [self], {"scalar": other}, out)
    elif isinstance(other, np.ndarray):
        arr = _slow.array(other, self._ctx, other.dtype)
        result = invoke(array_op, [arr, self] if kind == REFLECTED else [self, arr], None, out)
    else:
        return NotImplemented
    return self if kind == INPLACE else result


def binary_method(array_op, scalar_op, int kind):
    """The dunder method routing through ``route`` (``NDArray.__add__`` and friends)."""
    def method(self, other):
        return route(self, other, array_op, scalar_op, kind)
    return method


# ---- the generated front-end callable (``mx.nd.sin``, ``x.sum``) ---------------------------
cdef class OpFunction:
    """``mx.nd.X`` for one operator: the common call (every input positional, parameters by
    keyword) goes straight to the invoke strategy; every other form goes through ``bind``,
    the Python binding of ``mxlite.ops.frontend`` (one implementation of the rules). Its
    ``__signature__``, ``__doc__``, ``__name__`` and ``op`` are those of ``bind``."""

    def __init__(self, op, invoke, bind, bint direct):
        self.op, self.invoke, self.bind = op, invoke, bind
        self.n_inputs = len(op.inputs)
        self.direct = direct            # no variadic inputs, none that depend on attrs
        for name, value in bind.__dict__.items():       # __signature__, op
            setattr(self, name, value)
        for name in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(self, name, getattr(bind, name))

    def __call__(self, *args, **kwargs):
        if self.direct and len(args) == self.n_inputs and self.invoke is _invoke_nd:
            out = kwargs.pop("out", None) if kwargs else None
            if kwargs and "name" in kwargs:
                del kwargs["name"]
            return invoke(self.op, list(args), kwargs, out)
        return self.bind(*args, **kwargs)     # other strategies: ``name``/``attr`` reach them

    def __get__(self, instance, owner):
        """As a method (``x.sum(axis=1)``): the array is the first input."""
        return self if instance is None else _MethodType(self, instance)

    def __repr__(self):
        return f"<mxlite operator function {getattr(self, '__qualname__')}>"


from types import MethodType as _MethodType
_invoke_nd = invoke
