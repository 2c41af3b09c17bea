"""Gluon blocks: ``Block`` (imperative), ``HybridBlock`` (imperative or traced and cached)
and ``SymbolBlock`` (a block over a Symbol), as MXNet 1.x ``mx.gluon.block``.

Names follow MXNet: a block made outside any ``name_scope`` gets a prefix from the global
``NameManager`` (``dense0_``), a child made inside its parent's ``name_scope`` the parent's
prefix plus a per-scope counter (``hybridsequential0_dense0_``); parameters are named
``prefix + name`` (``dense0_weight``) and the traced graph's nodes ``prefix + 'fwd'``.

``hybridize()`` makes the next call trace ``hybrid_forward`` with ``F = mx.sym`` and run
the Symbol through ``mxlite.gluon.cached_op.CachedOp`` (the symbol executor); without it
``hybrid_forward`` runs with ``F = mx.nd``. Both give the same values and gradients.
"""
import copy
import re
import threading
import warnings
from collections import OrderedDict

from .. import initializer
from .. import ndarray as nd
from .. import symbol as sym_mod
from ..base import MXNetError
from ..ndarray import NDArray
from ..numpy import ndarray as _np_ndarray
from ..numpy._front import ValuesNeeded, as_np as _as_np, tracing as _tracing
from ..symbol import Symbol
from ..symbol import naming
from .cached_op import CachedOp
from .parameter import DeferredInitializationError, Parameter, ParameterDict
from ..util import is_np_array


def _signature(flat, shapes=False):
    """The ranks (the shapes, for a trace that used them) and dtypes of a call's inputs:
    what an np trace depends on."""
    return tuple((tuple(a.shape) if shapes else a.ndim, str(a.dtype))
                 if isinstance(a, NDArray) else None for a in flat)


def _np_view(x):
    """``x`` as an ``mx.np.ndarray`` (itself, or a recorded identity view of a legacy
    array, so gradients still reach it)."""
    return x if isinstance(x, _np_ndarray) or not isinstance(x, NDArray) else x.as_np_ndarray()

__all__ = ["Block", "HybridBlock", "SymbolBlock"]


class _BlockScope:
    """The scope of ``with block.name_scope():``: children made inside get the block's
    prefix, and symbols traced inside get it too (``mx.name.Prefix``)."""

    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """The prefix and ParameterDict of a new block."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = naming.current().get(None, hint) + "_"
            params = ParameterDict(prefix) if params is None else \
                ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = naming.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(*exc)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


# ---- nested inputs and outputs --------------------------------------------------------------
def _flatten(args, what):
    """``args`` (an NDArray, a Symbol, None, or nested lists of them) as a flat list and a
    format to rebuild it (MXNet's encoding: 0 one array, -1 None, n a group of n symbol
    outputs, a list for a list)."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, Symbol):
        n = len(args.list_outputs())
        return [args], n if n > 1 else 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise MXNetError(f"HybridBlock: the {what} must be NDArrays, Symbols or (nested) lists "
                         f"of them, got {type(args).__name__}")
    flat, fmts = [], []
    for a in args:
        f, fmt = _flatten(a, what)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _leaves(args):
    """The non-list values of nested lists and tuples ``args``, in order."""
    out = []
    for a in args:
        out.extend(_leaves(a) if isinstance(a, (list, tuple)) else [a])
    return out


def _without_trailing_none(fmt):
    """A call's top-level format without its trailing None arguments: leaving an argument
    at its default None and passing None are the same call (as MXNet)."""
    fmt = list(fmt)
    while fmt and fmt[-1] == -1:
        fmt.pop()
    return fmt


def _regroup(args, fmt):
    """The inverse of ``_flatten``."""
    def merge(args, fmt):
        if isinstance(fmt, int):
            if fmt == 0:
                return args[0], args[1:]
            if fmt == -1:
                return None, args[1:]
            return args[:fmt], args[fmt:]
        out = []
        for f in fmt:
            res, args = merge(args, f)
            out.append(res)
        return out, args
    return merge(args, fmt)[0]


def _indent(text, spaces):
    lines = text.split("\n")
    return "\n".join([lines[0]] + [" " * spaces + line for line in lines[1:]])


def _holds_block(items):
    """Whether ``items`` (nested lists, tuples, dict values) hold a Block."""
    for item in items:
        if isinstance(item, Block):
            return True
        inner = item.values() if isinstance(item, dict) else item \
            if isinstance(item, (list, tuple)) else ()
        if _holds_block(inner):
            return True
    return False


class Block:
    """The base class of models and layers: override ``forward``; assign child blocks and
    Parameters as attributes to register them.

    >>> class Net(mx.gluon.Block):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.dense = mx.gluon.nn.Dense(3, in_units=2)
    ...     def forward(self, x):
    ...         return self.dense(x) * 2
    >>> net = Net(prefix='net_')
    >>> net.initialize()
    >>> net(mx.nd.ones((1, 2))).shape
    (1, 3)
    >>> list(net.collect_params().keys())
    ['net_dense0_weight', 'net_dense0_bias']
    """

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        mods = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                         for key, block in self._children.items())
        return f"{type(self).__name__}(\n{mods}\n)"

    def __setattr__(self, name, value):
        """Registers Blocks as children and Parameters as this block's parameters."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                                f"{type(value)} is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params and self._reg_params[name] is not value:
                raise MXNetError(f"Overriding Parameter attribute {name} is not allowed. If "
                                 "you want to share parameters between blocks, please set "
                                 "'params' at Block construction instead.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _alias(self):
        return type(self).__name__.lower()

    @property
    def prefix(self):
        """The prefix of this block's names (``dense0_``)."""
        return self._prefix

    @property
    def name(self):
        """The prefix without its trailing underscore."""
        return self._name

    def name_scope(self):
        """``with block.name_scope():`` children made inside are named under this block."""
        return self._scope

    @property
    def params(self):
        """This block's own ParameterDict (children's parameters not included)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict of this block's and every descendant's parameters; ``select`` (a
        regular expression, ``'.*weight|.*bias'``) keeps the names it matches."""
        self._warn_unregistered_blocks()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update(OrderedDict((k, v) for k, v in self.params.items() if pattern.match(k)))
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _warn_unregistered_blocks(self):
        """Warn (as MXNet) of attributes that are lists, tuples or dicts holding Blocks: those
        Blocks are not children, so their parameters are not collected, initialized, saved
        or trained."""
        for name, value in vars(self).items():
            items = value.values() if isinstance(value, dict) else value \
                if isinstance(value, (list, tuple)) else ()
            if name.startswith("_") or not _holds_block(items):
                continue
            warnings.warn(f'"{name}" is an unregistered container with Blocks: Blocks inside '
                          "a list, tuple or dict are not registered as children, so their "
                          "parameters are not collected. Register them with register_child() "
                          "or use nn.Sequential/nn.HybridSequential.", stacklevel=3)

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Save the parameters to ``filename`` (``mx.nd.save`` format) keyed by their
        attribute paths (``0.weight``, ``dense.bias``), which ``load_parameters`` reads
        whatever the block's prefix. ``deduplicate`` saves a shared parameter once."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            seen = {}
            for key, p in params.items():
                seen.setdefault(id(p), key)
            params = {k: p for k, p in params.items() if seen[id(p)] == k}
        nd.save(filename, {key: val._reduce() for key, val in params.items()})

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load parameters saved by ``save_parameters`` (or, for files whose keys are full
        names, by ``collect_params().save``) onto ``ctx``."""
        loaded = nd.load(filename)
        if not isinstance(loaded, dict):
            raise MXNetError(f"load_parameters: {filename!r} holds a list of arrays, not named "
                             "parameters")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            # full names (ParameterDict.save, export's 'arg:'/'aux:' keys)
            self.collect_params().load_dict(loaded, ctx, allow_missing, ignore_extra,
                                            self.prefix, filename, cast_dtype, dtype_source)
            return
        if not allow_missing:
            shared = {}
            for key, p in params.items():
                shared.setdefault(id(p), []).append(key)
            for key, p in params.items():
                if not any(k in loaded for k in shared[id(p)]):
                    raise MXNetError(f"load_parameters: Parameter {key!r} is missing in file "
                                     f"{filename!r}, which contains parameters: "
                                     f"{sorted(loaded)[:10]}. Set allow_missing=True to ignore "
                                     "missing parameters.")
        for key, value in loaded.items():
            if key not in params:
                if not ignore_extra:
                    raise MXNetError(f"load_parameters: Parameter {key!r} loaded from file "
                                     f"{filename!r} is not present in the block's parameters "
                                     f"{sorted(params)[:10]}. Set ignore_extra=True to ignore.")
                continue
            params[key]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def save_params(self, filename):
        """[Deprecated] ``collect_params().save(filename, strip_prefix=self.prefix)``."""
        warnings.warn("save_params is deprecated. Please use save_parameters.", stacklevel=2)
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """[Deprecated] ``load_parameters``."""
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def register_child(self, block, name=None):
        """Register ``block`` as a child (named ``name``, or its position)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before each ``forward``; returns a handle whose
        ``detach()`` removes it."""
        return _HookHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after each ``forward``."""
        return _HookHandle(self._forward_hooks, hook)

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(node_name, op_name, array)`` with every operator output (and,
        with ``monitor_all``, first every input) each time a hybridized block among this
        block's descendants runs its cached graph, as MXNet's op hook; names are the graph's
        (``<node>_output``, ``<node>_<input>``)."""
        if not callable(callback):
            raise MXNetError(f"{self.name}: register_op_hook needs a callable, got "
                             f"{callback!r}")
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def apply(self, fn):
        """Call ``fn(block)`` on every descendant and on this block; returns this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize every parameter (``collect_params().initialize``); ``init`` defaults
        to ``mx.init.Uniform()``. Parameters with unknown shapes wait for the first
        forward."""
        self.collect_params().initialize(init if init is not None else initializer.Uniform(),
                                         ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock children (a plain Block itself runs imperatively)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Cast every parameter (and the children's) to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for p in self._reg_params.values():
            p.cast(dtype)

    def zero_grad(self):
        """Set every parameter's gradient to 0."""
        self.collect_params().zero_grad()

    def __call__(self, *args):
        """Run ``forward`` (with the registered hooks). Under NumPy array semantics
        (``npx.set_np()``) the outputs are ``mx.np.ndarray`` objects (``mx.sym.np``
        symbols when traced)."""
        if not self._forward_pre_hooks and not self._forward_hooks:
            out = self.forward(*args)
            return _as_np(out) if is_np_array() else out
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args)
        if is_np_array():
            out = _as_np(out)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        return out

    def forward(self, *args):
        """The computation; override it."""
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for a forward on
        ``inputs``, then the totals; a hybridized block is summarised too (its forward
        runs imperatively for it)."""
        rows, hooks = [], []

        def shapes(x):
            if isinstance(x, NDArray):
                return str(x.shape)
            if isinstance(x, (list, tuple)):
                return ", ".join(shapes(i) for i in x)
            return str(x)

        def hook(block, _, out):
            if any(isinstance(o, Symbol) for o in _leaves([out])):
                return      # a shape-inference trace (deferred initialization), not a layer
            count = sum(int(_prod(p.shape)) for p in block._reg_params.values()
                        if p.shape is not None)
            rows.append((f"{type(block).__name__}-{len(rows) + 1}", shapes(out), count))

        self.apply(lambda b: hooks.append(b.register_forward_hook(hook)))
        # a hybridized block runs its cached graph, which calls no child: the forward runs
        # imperatively (the cached graphs are kept), where MXNet refused hybridized blocks
        hybridized = []
        self.apply(lambda b: hybridized.append(b) if getattr(b, "_active", False) else None)
        for b in hybridized:
            b._active = False
        try:
            self(*inputs)
        finally:
            for h in hooks:
                h.detach()
            for b in hybridized:
                b._active = True
        line = "-" * 80
        print(line)
        print(f"{'Layer (type)':>25}{'Output Shape':>42}{'Param #':>15}")
        print("=" * 80)
        print(f"{'Input':>25}{shapes(list(inputs)):>42}{0:>15}")
        for name, shape, count in rows:
            print(f"{name:>25}{shape:>42}{count:>15}")
        params = self.collect_params()
        total = sum(int(_prod(p.shape)) for p in params.values())
        trainable = sum(int(_prod(p.shape)) for p in params.values() if p.grad_req != "null")
        print("=" * 80)
        print(f"Parameters in forward computation graph, duplicate included\n"
              f"   Total params: {sum(r[2] for r in rows)}")
        print(f"Shared params in forward computation graph: "
              f"{sum(r[2] for r in rows) - total}")
        print(f"Unique parameters in model: {total}")
        print(f"   Trainable params: {trainable}")
        print(f"   Non-trainable params: {total - trainable}")
        print(line)


def _prod(shape):
    n = 1
    for d in shape or ():
        n *= d
    return n


class _HookHandle:
    """Removes a registered hook with ``detach()`` (or as a context manager)."""

    _next = 0

    def __init__(self, hooks, hook):
        _HookHandle._next += 1
        self._key = _HookHandle._next
        self._hooks = hooks
        hooks[self._key] = hook

    def detach(self):
        """Remove the hook."""
        self._hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


class HybridBlock(Block):
    """A block whose ``hybrid_forward(F, x, *args, **params)`` runs with ``F = mx.nd``, or,
    after ``hybridize()``, is traced once with ``F = mx.sym`` and run as a cached graph
    through the symbol executor. Parameters arrive as keyword arguments named as the
    attributes that hold them.

    >>> class Scale(mx.gluon.HybridBlock):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         self.s = self.params.get('s', shape=(1,), init=mx.init.Constant(3.0))
    ...     def hybrid_forward(self, F, x, s):
    ...         return F.broadcast_mul(x, s)
    >>> blk = Scale()
    >>> blk.initialize()
    >>> blk.hybridize()
    >>> blk(mx.nd.array([1.0, 2.0])).asnumpy().tolist()
    [3.0, 6.0]
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._op_hook = None
        self._in_format = None
        self._out_format = None
        self._active = False
        self._flags = {}
        self._needs_values = None     # the error of a trace that needed input values

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def register_child(self, block, name=None):
        """Register a child; it must be a HybridBlock."""
        if not isinstance(block, HybridBlock):
            raise MXNetError(f"Children of HybridBlock must also be HybridBlock, but {block} "
                             f"has type {type(block)}. If you are using Sequential, please try "
                             "HybridSequential instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def _clear_cached_op(self):
        self._cached_graph = ()
        self._cached_op = None
        self._needs_values = None

    def register_op_hook(self, callback, monitor_all=False):
        super().register_op_hook(callback, monitor_all)
        self._op_hook = (callback, bool(monitor_all))
        if self._cached_op is not None:
            self._cached_op.op_hook = self._op_hook

    def hybridize(self, active=True, static_alloc=False, static_shape=False, **kwargs):
        """Turn the cached graph on (or off, ``active=False``) for this block and its
        children. The cached graph keeps the plans of the ``cached_op.MAX_PLANS`` input
        signatures used last (``static_shape=True``: of one input shape, one plan per set of
        wanted gradients; a new shape replaces them).
        ``static_alloc=True`` runs each signature over buffers planned and allocated once
        (MXNet's static memory; see ``memory_stats``): intermediate arrays share buffers
        within a call and across calls, while the outputs and gradients a call hands out
        are always new arrays. Without it each call allocates its own arrays."""
        self._active = active
        self._flags = dict(static_alloc=static_alloc, static_shape=static_shape, **kwargs)
        self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self}" is being hybridized while still having forward '
                          'hook/pre-hook. If it is a child of a HybridBlock, the hooks will '
                          'not take effect.', stacklevel=2)
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          **kwargs)

    def memory_stats(self):
        """Bytes of one call of the cached graph at the input shapes used last (an mxlite
        addition): {'forward_peak', 'step_peak' (forward and backward), 'planned_bytes'
        (what ``static_alloc`` holds)}, parameters and inputs not counted; None before a
        hybridized call (``mxlite.gluon.cached_op.CachedOp.memory_stats``)."""
        return self._cached_op.memory_stats() if self._cached_op is not None else None

    def cast(self, dtype):
        """Cast the parameters to ``dtype`` (the cached graph is rebuilt)."""
        self._clear_cached_op()
        super().cast(dtype)

    # ---- the traced graph ------------------------------------------------------------------
    def _get_graph(self, *args):
        """(input variables, output Symbol) of ``hybrid_forward`` traced with F = mx.sym."""
        if not self._cached_graph:
            flat, self._in_format = _flatten(args, "input")
            real = sum(a is not None for a in flat)
            if real == 0:
                raise MXNetError(f"{self.name}: every input is None")
            inputs, sym_inputs, k = [], [], 0
            for a in flat:
                if a is None:
                    inputs.append(None)
                    continue
                v = sym_mod.var(f"data{k}" if real > 1 else "data")
                if is_np_array():
                    v = v.as_np_ndarray()
                k += 1
                inputs.append(v)
                sym_inputs.append(v)
            grouped = _regroup(inputs, self._in_format)
            params = self._param_vars()
            known = {v.name: (tuple(a.shape), a.dtype) for v, a in
                     zip(sym_inputs, [a for a in flat if a is not None])
                     if isinstance(a, NDArray)}
            with self.name_scope(), _tracing(known) as trace:
                out = self.hybrid_forward(sym_mod, *grouped, **params)
            self._trace_shapes = trace.shapes_used
            self._trace_signature = _signature(flat, trace.shapes_used)
            out, self._out_format = _flatten(out, "output")
            self._cached_graph = sym_inputs, sym_mod.Group(out)
        return self._cached_graph

    def _build_cache(self, *args):
        data, out = self._get_graph(*args)
        params = {p.name: p for p in self.collect_params().values()}
        used = set(out.list_inputs())
        for name in params:
            if name not in used:
                warnings.warn(f"Parameter {name} is not used by any computation. Is this "
                              "intended?", stacklevel=4)
        self._cached_op = CachedOp(out, [d.name for d in data], params, self.name,
                                   **self._flags)
        self._cached_op.op_hook = self._op_hook

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except MXNetError as e:
            raise MXNetError(f"{self.name}: deferred initialization failed because shape "
                             f"cannot be inferred: {e}") from None

    def _call_cached_op(self, *args):
        flat, fmt = _flatten(args, "input")
        traced = getattr(self, "_trace_signature", None)
        if self._cached_op is not None and traced is not None and is_np_array() and \
                _signature(flat, self._trace_shapes) != traced:
            # NumPy semantics follow the inputs' ranks and dtypes (their shapes, where the
            # trace built tables from them): trace again for new ones
            self._clear_cached_op()
        if self._cached_op is None:
            self._build_cache(*args)
        if _without_trailing_none(fmt) != _without_trailing_none(self._in_format):
            raise MXNetError(f"{self.name}: the argument structure of HybridBlock does not "
                             f"match the cached version. Stored format = {self._in_format}, "
                             f"input format = {fmt}")
        return self._run_cached([a for a in flat if a is not None], args)

    def _run_cached(self, data, args):
        """The cached graph on the arrays ``data``; parameters still waiting for their
        shapes get them from ``args`` (the call's inputs) first."""
        try:
            out = self._cached_op(data)
        except DeferredInitializationError:
            self._deferred_infer_shape(*args)
            for p in self.collect_params().values():
                p._finish_deferred_init()
            out = self._cached_op(data)
        return _regroup(out, self._out_format)

    def _infer_attrs(self, infer_fn, attr, *args):
        inputs, out = self._get_graph(*args)
        flat = [a for a in _flatten(args, "input")[0] if a is not None]
        given = {i.name: getattr(j, attr) for i, j in zip(inputs, flat)}
        arg_attrs, _, aux_attrs = getattr(out, infer_fn)(**given)
        if arg_attrs is None:
            partial = getattr(out, infer_fn + "_partial")(**given)
            unknown = [n for n, s in zip(out.list_arguments() + out.list_auxiliary_states(),
                                         partial[0] + partial[2])
                       if not s or 0 in s or -1 in s]      # (unknown: legacy 0, NumPy -1)
            raise MXNetError(f"{infer_fn} of {self.name}: the inputs {given} do not "
                             f"determine {unknown}")
        sdict = dict(zip(out.list_arguments(), arg_attrs))
        sdict.update(zip(out.list_auxiliary_states(), aux_attrs))
        for p in self.collect_params().values():
            if p.name in sdict:
                setattr(p, attr, sdict[p.name])

    def infer_shape(self, *args):
        """Set the parameters' unknown shapes from the inputs ``args`` (by tracing)."""
        self._infer_attrs("infer_shape", "shape", *args)

    def infer_type(self, *args):
        """Set the parameters' dtypes from the inputs ``args`` (by tracing)."""
        self._infer_attrs("infer_type", "dtype", *args)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` (the traced graph; its input is ``data``, or
        ``data0``, ``data1``, ... for several) and ``path-%04d.params`` (``arg:<name>`` /
        ``aux:<name>`` keys), which ``SymbolBlock.imports``, ``mx.model.load_checkpoint``
        and MXNet 1.x load. Needs one forward after ``hybridize()``. Returns the two file
        names (MXNet 1.x returned None)."""
        if self._needs_values is not None:
            raise MXNetError(f"export: {self.name} has no graph: {self._needs_values}")
        if not self._cached_graph:
            raise MXNetError("export: please first call block.hybridize() and then run "
                             "forward with this block at least once before calling export.")
        sym = self._cached_graph[1]
        sym_file = f"{path}-symbol.json"
        sym.save(sym_file, remove_amp_cast=remove_amp_cast)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for name, param in self.collect_params().items():
            if name in arg_names:
                arg_dict[f"arg:{name}"] = param._reduce()
            elif name in aux_names:
                arg_dict[f"aux:{name}"] = param._reduce()
            else:
                warnings.warn(f'Parameter "{name}" is not found in the graph.', stacklevel=2)
        params_file = "%s-%04d.params" % (path, epoch)
        nd.save(params_file, arg_dict)
        return sym_file, params_file

    def forward(self, x, *args):
        """``hybrid_forward`` with ``F = mx.nd`` (or the cached graph after
        ``hybridize()``) for NDArrays, with ``F = mx.sym`` for Symbols. The inputs may be
        nested lists and None; without ``hybridize()`` other values (numbers) pass through
        as for a Block. At least one NDArray or Symbol is needed, and never both."""
        flat = _leaves([x, *args])
        arrays = [a for a in flat if isinstance(a, NDArray)]
        symbolic = any(isinstance(a, Symbol) for a in flat)
        if arrays and symbolic:
            raise MXNetError(f"{self.name}: the inputs mix NDArrays and Symbols; give one kind")
        if not arrays and not symbolic:
            raise MXNetError(f"{self.name}: the input must hold an NDArray or a Symbol, got "
                             f"{[type(a).__name__ for a in flat]}")
        if symbolic:
            params = self._param_vars()
            with self.name_scope():
                return self.hybrid_forward(sym_mod, x, *args, **params)
        if self._active and self._needs_values is None:
            contexts = {a.context for a in arrays}
            if len(contexts) > 1:
                raise MXNetError(f"{self.name}: a hybridized block's inputs must share one "
                                 f"context, got {sorted(map(str, contexts))}")
            try:
                return self._call_cached_op(x, *args)
            except ValuesNeeded as e:
                # a function whose result's shape depends on the data (np.unique, ...):
                # no graph can hold it, so the block runs imperatively from now on
                self._needs_values = e
                warnings.warn(f"{self.name}: {e}; this hybridized block runs imperatively",
                              stacklevel=3)
        ctx = arrays[0].context
        try:
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        except DeferredInitializationError:
            self._deferred_infer_shape(x, *args)
            for v in self._params.values():
                v._finish_deferred_init()
            for v in self._reg_params.values():
                v._finish_deferred_init()
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        if is_np_array():
            params = {k: _np_view(v) for k, v in params.items()}
        return self.hybrid_forward(nd, x, *args, **params)

    def _param_vars(self):
        """The parameters' symbol variables (``mx.sym.np`` symbols under NumPy array
        semantics)."""
        params = {i: j.var() for i, j in self._reg_params.items()}
        if is_np_array():
            params = {k: v.as_np_ndarray() for k, v in params.items()}
        return params

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The computation, with ``F`` the ``mx.nd`` or ``mx.sym`` namespace; override it."""
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward")


def _common_prefix(names):
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


class SymbolBlock(HybridBlock):
    """A block over a Symbol: ``outputs`` computed from the variables ``inputs``; every
    other variable is a parameter (auxiliary states with grad_req 'null'). It always runs
    as a cached graph.

    >>> data = mx.sym.var('data')
    >>> net = mx.gluon.SymbolBlock(mx.sym.FullyConnected(data, num_hidden=2, name='fc'), data)
    >>> net.initialize()
    >>> net(mx.nd.ones((3, 4))).shape
    (3, 2)
    """

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from ``export``'s files (or MXNet 1.x's): the graph in
        ``symbol_file``, inputs named ``input_names`` (a name or a list), parameters loaded
        from ``param_file`` (their saved dtypes kept) onto ``ctx``."""
        sym = sym_mod.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        inputs = [sym_mod.var(n) for n in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source="saved")
        return ret

    def __repr__(self):
        return f"SymbolBlock(\n  outputs={self._cached_graph[1].list_outputs()}\n)"

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        out = sym_mod.Group(out)
        input_names = set()
        for s in syms:
            if not isinstance(s, Symbol) or len(s.list_outputs()) != 1 or \
                    s._outputs[0][0].op is not None:
                raise MXNetError(f"SymbolBlock: input {s} is not a variable (mx.sym.var)")
            input_names.add(s.name)
        unknown = input_names - set(out.list_inputs())
        if unknown:
            warnings.warn(f"SymbolBlock: inputs {sorted(unknown)} are not used by the graph",
                          stacklevel=2)
        for name in out.list_arguments():
            if name not in input_names:
                self.params.get(name, allow_deferred_init=True)
        for name in out.list_auxiliary_states():
            if name not in input_names:
                self.params.get(name, grad_req="null", allow_deferred_init=True)
        self._cached_graph = syms, out
        n = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[n:]: val for key, val in self._params.items()}

    def forward(self, x, *args):
        """Run the graph (cached) on NDArrays; compose it with Symbols."""
        if isinstance(x, NDArray):
            return self._call_cached_op(x, *args)
        flat, fmt = _flatten([x] + list(args), "input")
        if fmt != self._in_format and [fmt[0]] + fmt[1:] != self._in_format:
            if len(flat) != len(self._cached_graph[0]):
                raise MXNetError(f"SymbolBlock: {len(flat)} inputs given, the graph has "
                                 f"{len(self._cached_graph[0])}")
        ret = copy.copy(self._cached_graph[1])
        ret = ret(**{k.name: v for k, v in zip(self._cached_graph[0], flat)})
        return _regroup(list(ret), self._out_format)

    def _call_cached_op(self, *args):
        if self._cached_op is None:
            self._build_cache()
        flat = [a for a in _flatten(args, "input")[0] if a is not None]
        if len(flat) != len(self._cached_graph[0]):
            raise MXNetError(f"SymbolBlock: {len(flat)} inputs given, the graph has "
                             f"{len(self._cached_graph[0])} "
                             f"({[s.name for s in self._cached_graph[0]]})")
        return self._run_cached(flat, flat)

    def _build_cache(self, *args):
        data, out = self._cached_graph
        self._cached_op = CachedOp(out, [d.name for d in data],
                                   {p.name: p for p in self.collect_params().values()},
                                   "SymbolBlock", **self._flags)

    def _get_graph(self, *args):
        return self._cached_graph

    def _clear_cached_op(self):
        self._cached_op = None

    def cast(self, dtype):
        """Cast the parameters to ``dtype``."""
        self._clear_cached_op()
        for p in self.collect_params().values():
            p.cast(dtype)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Not used: a SymbolBlock runs its Symbol."""
        raise NotImplementedError
