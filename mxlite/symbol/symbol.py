"""``Symbol``: a graph of registered operators, MXNet 1.x's ``mx.sym`` API.

``mx.sym.<op>`` functions come from the registry through the same generator as ``mx.nd``
(``mxlite.ops.frontend.populate``) with the symbolic invoke strategy ``invoke``, which builds
a ``SymNode`` instead of running a kernel. An input left out becomes a variable named
``<node>_<input>`` (``fc1_weight``, ``bn1_moving_mean``), and a node without ``name=`` is
named by the current ``NameManager`` (``fullyconnected0``), exactly as MXNet.
"""
import numbers
import os
import threading

import numpy as np

from ..base import TYPE_FLAGS, MXNetError, NotImplementedForSymbol, op_error
from ..ops.registry import REGISTRY
from ..ops.routing import ARITHMETIC, COMPARISONS
from . import infer as _infer
from . import json_format as _json
from . import naming
from .graph import SymNode, aux_variables, topo_order

__all__ = ["Symbol", "Variable", "var", "Group", "invoke", "load", "load_json"]

# MXNet's type flags (``__dtype__`` attributes hold these numbers)
DTYPE_FLAGS = TYPE_FLAGS
FLAG_DTYPES = {str(v): k for k, v in DTYPE_FLAGS.items()}

# attribute keys MXNet also lists without their underscores (``__lr_mult__`` -> ``lr_mult``)
_HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
                "profiler_scope")

# the initial values MXNet's BatchNorm gives its moving statistics (FSetInputVarAttrOnCompose)
def _entry(x, op, iname):
    if not isinstance(x, Symbol):
        raise op_error(op.name, f"input {iname!r} must be a Symbol, got {type(x).__name__}")
    if len(x._outputs) != 1:
        raise op_error(op.name, f"input {iname!r} is a group of {len(x._outputs)} outputs "
                       f"({x.list_outputs()}); pick one with sym[i]")
    return x._outputs[0]


def invoke(op, inputs, kwargs, out, name=None, attr=None, hint=None):
    """The symbolic invoke strategy: a new node applying ``op`` to ``inputs`` (Symbols, or
    None for an input to create as a variable ``<name>_<input>``); returns the Symbol of its
    visible outputs. ``name`` defaults to ``<hint><n>`` from the current NameManager."""
    if out is not None:
        raise op_error(op.name, "out= is not supported for symbols")
    kwargs = dict(kwargs or {})
    attrs = op.parse_attrs(kwargs)
    names = op.list_inputs(attrs)
    if len(inputs) != len(names):
        raise op_error(op.name, f"expected {len(names)} input(s) {list(names)}, got "
                       f"{len(inputs)}")
    name = naming.current().get(name, hint or op.name.lower())
    if attr is not None and not isinstance(attr, dict):
        raise op_error(op.name, f"attr must be a dict of strings, got {attr!r}")
    user_attrs = _hidden_keys(naming.current_attrs(attr))
    entries = []
    # the parameters given (a keyword an op without parameters ignores is not one)
    passed = tuple(k for k in kwargs if k in attrs)
    given = op.format_attrs({k: attrs[k] for k in passed}) if None in inputs else None
    for iname, x in zip(names, inputs):
        if x is None:
            # MXNet gives a created variable its op's parameters and attributes (so
            # attr={'__lr_mult__': ...} on a layer reaches its weight and bias)
            user = dict(given, **user_attrs)
            if iname in op.var_init:
                user["__init__"] = op.var_init[iname]
            entries.append((SymNode(None, f"{name}_{iname}", user_attrs=user), 0))
        else:
            entries.append(_entry(x, op, iname))
            source = entries[-1][0]
            if iname in op.var_init and source.op is None and "__init__" not in source.user_attrs:
                # as MXNet's compose: a variable given without an initializer gets the op's
                source.user_attrs["__init__"] = op.var_init[iname]
    node = SymNode(op, name, attrs, entries, user_attrs, passed)
    return Symbol([(node, i) for i in range(node.num_visible_outputs())])


invoke.named = True


def _attribute_keywords(op, kwargs, attr):
    """Move the attribute keywords of a symbolic call from ``kwargs`` into ``attr`` (returned;
    ``attr=`` wins over a keyword of the same name), MXNet's rule: ``lr_mult=``,
    ``ctx_group=``, ... (the hidden keys) and ``__name__=`` keywords are attributes of the
    node. A keyword that only ends with a hidden key (``weight_lr_mult=``) is refused, as
    in MXNet: set it on the variable."""
    moved = {}
    for key in list(kwargs):
        if key in _HIDDEN_KEYS or (len(key) > 4 and key.startswith("__") and key.endswith("__")):
            moved[key] = kwargs.pop(key)
            continue
        hidden = next((h for h in _HIDDEN_KEYS if key.endswith("_" + h)), None)
        if hidden is not None and all(p.name != key for p in op.params):
            raise op_error(op.name, f"{key}={kwargs[key]!r}: setting a variable's {hidden} "
                           f"through the operator is not supported; use w = Variable(..., "
                           f"{hidden}=...) and pass {key[:-len(hidden) - 1]}=w")
    if not moved:
        return attr
    return dict(moved, **attr) if isinstance(attr, dict) else (moved if attr is None else attr)


invoke.attribute_keywords = _attribute_keywords     # the front end calls it before binding


def _hidden_keys(attrs):
    """MXNet stores ``ctx_group``, ``lr_mult``, ... as ``__ctx_group__``, ... (and lists
    both forms)."""
    return {f"__{k}__" if k in _HIDDEN_KEYS else k: str(v) for k, v in attrs.items()}


def _node_attrs(node):
    """A node's attributes as MXNet lists them: its parameters as given (strings) and its
    user attributes."""
    out = {}
    if node.op is not None:
        given = node.attrs if node.given is None else \
            {k: node.attrs[k] for k in node.given if k in node.attrs}
        out.update(node.op.format_attrs(given))
    out.update(node.user_attrs)
    for key in _HIDDEN_KEYS:
        if f"__{key}__" in node.user_attrs:
            out[key] = node.user_attrs[f"__{key}__"]
    return out


class Symbol:
    """A symbolic graph with one or more outputs (MXNet's ``mx.sym.Symbol``).

    Built with ``mx.sym.var`` and ``mx.sym.<op>``, combined with Python operators
    (``a + b`` is ``elemwise_add``, ``a * 2`` is ``_mul_scalar``), grouped with
    ``mx.sym.Group``; outputs are picked with ``sym[i]`` or ``sym['fc1_output']``.
    """

    __slots__ = ("_outputs", "__weakref__")
    __array_priority__ = 1000.0         # ``numpy_scalar + sym`` defers to Symbol

    def __init__(self, outputs):
        self._outputs = list(outputs)

    # ---- identity ------------------------------------------------------------------------
    @property
    def name(self):
        """The node's name when every output is one node's (``BatchNorm(...,
        output_mean_var=True)`` is ``bn``); None for a group of several nodes."""
        node = self._one_node()
        return None if node is None else node.name

    def __repr__(self):
        if self._one_node() is not None:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(n.name for n, _ in self._outputs)}]>"

    __hash__ = object.__hash__

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def __getitem__(self, index):
        """Output ``index`` (an int) or the output named ``index`` (``'fc1_output'``)."""
        if isinstance(index, str):
            names = self.list_outputs()
            hits = [i for i, n in enumerate(names) if n == index]
            if len(hits) != 1:
                raise MXNetError(f"Symbol: {'no' if not hits else 'more than one'} output "
                                 f"named {index!r} in {names}")
            index = hits[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"Symbol indices must be int or str, not {type(index).__name__}")
        n = len(self._outputs)
        if not -n <= index < n:
            raise IndexError(f"Symbol: output {index} out of range for {n} output(s)")
        return Symbol([self._outputs[index]])

    def _nodes(self):
        return topo_order(self._outputs)

    def _one_node(self):
        """The node every output comes from, or None for a group of several nodes. A node's
        several outputs are one symbol, not a group (MXNet: the name, attributes and
        children of BatchNorm's three outputs are BatchNorm's)."""
        node = self._outputs[0][0] if self._outputs else None
        return node if all(n is node for n, _ in self._outputs) else None

    # ---- listing ---------------------------------------------------------------------------
    def list_outputs(self):
        """Output names: ``<node>_<output>`` (``fc1_output``), a variable's own name."""
        # a node's output names are listed once: listing them per output made a group of a
        # split's n outputs cost n * n
        op_names = {}
        out = []
        for node, i in self._outputs:
            if node.op is None:
                out.append(node.name)
                continue
            names = op_names.get(id(node))
            if names is None:
                names = op_names[id(node)] = node.op.list_outputs(node.attrs)
            out.append(f"{node.name}_{names[i]}")
        return out

    def list_inputs(self):
        """Every variable (arguments and auxiliary states), in graph order."""
        return [n.name for n in self._nodes() if n.op is None]

    def list_arguments(self):
        """The variables that are not auxiliary states, in graph order (MXNet's order)."""
        nodes = self._nodes()
        aux = aux_variables(nodes)
        return [n.name for n in nodes if n.op is None and id(n) not in aux]

    def list_auxiliary_states(self):
        """The variables consumed as auxiliary states (``bn1_moving_mean``), in graph order."""
        nodes = self._nodes()
        aux = aux_variables(nodes)
        return [n.name for n in nodes if n.op is None and id(n) in aux]

    def get_inputs(self):
        """A group of the variables (arguments and auxiliary states), in ``list_inputs``
        order."""
        return Symbol([(n, 0) for n in self._nodes() if n.op is None])

    def get_internals(self):
        """A group of every node's visible outputs (variables included), in graph order."""
        return Symbol([(n, i) for n in self._nodes() for i in range(n.num_visible_outputs())])

    def _gen_atomic_symbol(self):
        """This symbol's one operator alone: the same op and parameters, each input a fresh
        variable named after the op's input (``data``, ``weight``, ...), ready to compose
        with ``atomic(data=..., weight=...)``. (MXNet's atomic symbol had no inputs at all;
        mxlite's graph has no input-less operator nodes, so the inputs are free variables.)"""
        node = self._one_node()
        if node is None or node.op is None:
            raise MXNetError("_gen_atomic_symbol: needs a symbol of one operator node, got "
                             f"{self!r}")
        names = node.op.list_inputs(node.attrs)
        inputs = [(SymNode(None, n), 0) for n in names]
        atom = SymNode(node.op, node.name, node.attrs, inputs, node.user_attrs, node.given)
        return Symbol([(atom, i) for i in range(atom.num_visible_outputs())])

    def get_children(self):
        """A group of the inputs of this symbol's output nodes, each node's inputs once (a
        node with several outputs is not listed per output); None when there are none."""
        entries, seen = [], set()
        for node, _ in self._outputs:
            if id(node) not in seen:
                seen.add(id(node))
                entries += node.inputs
        return Symbol(entries) if entries else None

    # ---- attributes ------------------------------------------------------------------------
    def _single(self, what):
        node = self._one_node()
        if node is None:
            raise MXNetError(f"Symbol.{what}: needs the outputs of one node, this group has "
                             f"{len(self._outputs)} outputs of the nodes "
                             f"{list(dict.fromkeys(n.name for n, _ in self._outputs))}")
        return node

    def attr(self, key):
        """The attribute ``key`` of this symbol's node as a string (a user attribute or a
        parameter given to its op), or None."""
        return _node_attrs(self._single("attr")).get(key)

    def list_attr(self, recursive=False):
        """This node's attributes (``recursive=True``: every node's, keyed ``name$key``)."""
        if recursive:
            return {f"{n.name}${k}": v for n in self._nodes()
                    for k, v in _node_attrs(n).items()}
        return _node_attrs(self._single("list_attr"))

    def attr_dict(self):
        """``{node name: {key: value}}`` for every node with attributes."""
        out = {}
        for n in self._nodes():
            a = _node_attrs(n)
            if a:
                out[n.name] = a
        return out

    def _set_attr(self, **kwargs):
        """Set string attributes on this symbol's node."""
        node = self._single("_set_attr")
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError(f"Symbol._set_attr: {k!r} must be a string, got {v!r}")
            node.user_attrs[k] = v

    # ---- composition and copies ------------------------------------------------------------
    def _copy_graph(self, replace=None):
        """A copy of the graph; ``replace`` maps variable names to entries put in their place."""
        replace = replace or {}
        made, swapped = {}, {}
        for n in self._nodes():
            if n.op is None and n.name in replace:
                swapped[id(n)] = replace[n.name]
                continue
            c = SymNode(n.op, n.name, n.attrs, (), n.user_attrs, n.given)
            c.inputs = [swapped[id(ch)] if id(ch) in swapped else (made[id(ch)], i)
                        for ch, i in n.inputs]
            made[id(n)] = c
        return Symbol([swapped[id(n)] if id(n) in swapped else (made[id(n)], i)
                       for n, i in self._outputs])

    def __copy__(self):
        return self._copy_graph()

    def __deepcopy__(self, memo):
        return self._copy_graph()

    def copy(self):
        """A deep copy of the graph."""
        return self._copy_graph()

    def __call__(self, *args, **kwargs):
        """A copy of the graph with arguments replaced by Symbols: positional ones in
        ``list_arguments`` order, keyword ones by name (MXNet's compose)."""
        name = kwargs.pop("name", None)
        arguments = self.list_arguments()
        replace = {}
        if len(args) > len(arguments):
            raise MXNetError(f"Symbol compose: {len(args)} positional inputs for "
                             f"{len(arguments)} arguments {arguments}")
        for argname, s in list(zip(arguments, args)) + list(kwargs.items()):
            if argname not in self.list_inputs():
                raise MXNetError(f"Symbol compose: no argument named {argname!r} in "
                                 f"{self.list_inputs()}")
            if not isinstance(s, Symbol) or len(s._outputs) != 1:
                raise MXNetError(f"Symbol compose: {argname!r} must be a single-output Symbol")
            replace[argname] = s._outputs[0]
        out = self._copy_graph(replace)
        if name is not None and len(out._outputs) == 1 and out._outputs[0][0].op is not None:
            out._outputs[0][0].name = name
        return out

    # ---- arithmetic ------------------------------------------------------------------------
    def _make(self, opname, inputs, kwargs, hint):
        op = REGISTRY[opname]
        return invoke(op, inputs, kwargs, None, hint=hint)

    def _binary(self, other, array_op, scalar_op, hint=None, scalar_hint=None):
        """``self <op> other``: ``array_op`` for a Symbol, ``scalar_op`` for a number."""
        if isinstance(other, Symbol):
            return self._make(array_op, [self, other], {}, hint or array_op.lower())
        if isinstance(other, (numbers.Number, np.generic)):
            return self._make(scalar_op, [self], {"scalar": other},
                              scalar_hint or _scalar_hint(scalar_op))
        return NotImplemented

    def _rbinary(self, other, array_op, rscalar_op, hint=None):
        """``other <op> self`` for a number ``other``: ``rscalar_op``."""
        if isinstance(other, (numbers.Number, np.generic)):
            return self._make(rscalar_op, [self], {"scalar": other},
                              hint or _scalar_hint(rscalar_op))
        return NotImplemented

    def astype(self, dtype):
        """``cast`` to ``dtype`` (MXNet's ``Symbol.astype``)."""
        return self._make("cast", [self], {"dtype": dtype}, "cast")

    def __neg__(self):
        return self._make("_mul_scalar", [self], {"scalar": -1.0}, "_mulscalar")

    def __pos__(self):
        return self

    def __abs__(self):
        return self._make("abs", [self], {}, "abs")

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    # ---- MXNet's JSON ------------------------------------------------------------------------
    def tojson(self, remove_amp_cast=True):
        """The graph as MXNet 1.x's JSON text (``mx.sym.load_json`` and MXNet read it).
        With ``remove_amp_cast`` (the default, as MXNet's) its ``amp_cast`` and
        ``amp_multicast`` nodes are left out: their users read the uncast inputs."""
        return _json.tojson(self, remove_amp_cast)

    def save(self, fname, remove_amp_cast=True):
        """Write ``tojson(remove_amp_cast)`` to the file ``fname`` (MXNet's
        ``prefix-symbol.json``)."""
        with open(fname, "w") as f:
            f.write(self.tojson(remove_amp_cast))

    def __getstate__(self):
        return {"json": self.tojson(remove_amp_cast=False)}

    def __setstate__(self, state):
        self._outputs = _json.load_json(state["json"])._outputs

    def debug_str(self):
        """One line per node: its op, name and inputs (for reading a graph)."""
        lines = []
        for n in self._nodes():
            if n.op is None:
                lines.append(f"Variable:{n.name}")
            else:
                ins = ", ".join(f"{c.name}[{i}]" for c, i in n.inputs)
                lines.append(f"Op:{n.op.name}, Name={n.name}, Inputs=[{ins}]")
        return "\n".join(lines)

    # ---- evaluation and gradients ------------------------------------------------------------
    def eval(self, ctx=None, **kwargs):
        """The outputs (a list of NDArrays) for the arrays given by variable name, each node
        run through ``mx.nd`` in graph order (MXNet's ``Symbol.eval``)."""
        from .grad import evaluate
        return evaluate(self, ctx, **kwargs)

    def gradient(self, wrt, head_grads=None, shapes=None, dtypes=None, ctx=None):
        """Gradient Symbols of this symbol's outputs with respect to the variables ``wrt``
        (``mxlite.symbol.grad``; MXNet declared ``Symbol.gradient`` but never implemented
        it). The result can be differentiated again."""
        from .grad import grad
        return grad(self, wrt, head_grads, shapes, dtypes, ctx)

    # ---- inference -----------------------------------------------------------------------
    def infer_shape(self, *args, **kwargs):
        """``(arg_shapes, out_shapes, aux_shapes)`` from the shapes given (positionally in
        ``list_arguments`` order, or by name) and the variables' ``__shape__``; (None, None,
        None) when some shape cannot be inferred. MXNetError names the node where shapes
        disagree."""
        return _infer.infer_shape(self, args, kwargs)

    def infer_shape_partial(self, *args, **kwargs):
        """As ``infer_shape``, with ``()`` for each shape that cannot be inferred (MXNet)."""
        return _infer.infer_shape(self, args, kwargs, partial=True)

    def infer_type(self, *args, **kwargs):
        """``(arg_types, out_types, aux_types)`` (NumPy types such as ``np.float32``) from the
        dtypes given and the variables' ``__dtype__``; (None, None, None) when incomplete."""
        return _infer.infer_type(self, args, kwargs)

    def infer_type_partial(self, *args, **kwargs):
        """As ``infer_type``, with None for each type that cannot be inferred."""
        return _infer.infer_type(self, args, kwargs, partial=True)



def without_inplace(fn):
    """The ``Symbol`` method of op function ``fn`` (``flatten``, ``squeeze``,
    ``expand_dims``) taking MXNet's ``inplace=``, which has no effect on a symbol (its
    NDArray form returns a view instead of a copy)."""
    def method(self, *args, inplace=False, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = getattr(fn, "__name__", "method")
    method.__doc__ = fn.__doc__
    return method


def _scalar_hint(opname):
    """MXNet's hint for a scalar op: ``_plus_scalar`` is called as ``_PlusScalar``, so its
    nodes are ``_plusscalar0``, ..."""
    return "_" + opname[1:].replace("_", "") if opname.startswith("_") else opname.lower()


# MXNet's Symbol + Symbol is the element-wise ``_Plus`` (``elemwise_add``); the ops MXNet
# has without broadcasting and mxlite only with it route to ``broadcast_*`` (a superset).
_SYMBOL_ARRAY_OPS = {"add": ("elemwise_add", "_plus"), "sub": ("elemwise_sub", "_minus"),
                     "mul": ("elemwise_mul", "_mul"), "truediv": ("elemwise_div", "_div"),
                     "mod": (None, "_mod"), "pow": (None, "_power"),
                     "eq": (None, "_equal"), "ne": (None, "_not_equal"),
                     "gt": (None, "_greater"), "ge": (None, "_greater_equal"),
                     "lt": (None, "_lesser"), "le": (None, "_lesser_equal")}


# While gradient graphs are built (``mxlite.symbol.grad``), FGradients written for NDArray
# semantics run with F = mx.sym: Symbol arithmetic then broadcasts as NDArray's does.
_mode = threading.local()


class broadcasting:
    """``with broadcasting():`` Symbol ``+ - * /`` of two symbols route to ``broadcast_*``
    (NDArray's rule) instead of MXNet's element-wise ``_Plus`` ..., on this thread."""

    def __enter__(self):
        self._old = getattr(_mode, "broadcast", False)
        _mode.broadcast = True
        return self

    def __exit__(self, *exc):
        _mode.broadcast = self._old


def _install_dunders():
    for stem, array_op, scalar_op, rscalar_op in ARITHMETIC:
        op, hint = _SYMBOL_ARRAY_OPS[stem]
        op = op or array_op

        def forward(self, other, op=op, s=scalar_op, hint=hint, b=array_op):
            return self._binary(other, b if getattr(_mode, "broadcast", False) else op, s,
                                hint)

        def reflected(self, other, op=op, r=rscalar_op):
            return self._rbinary(other, op, r)
        forward.__name__, reflected.__name__ = f"__{stem}__", f"__r{stem}__"
        forward.__doc__ = f"``{op}`` of two symbols, ``{scalar_op}`` with a number."
        reflected.__doc__ = f"``{rscalar_op}``: a number on the left."
        setattr(Symbol, forward.__name__, forward)
        setattr(Symbol, reflected.__name__, reflected)
    for stem, array_op, scalar_op in COMPARISONS:
        op, hint = _SYMBOL_ARRAY_OPS[stem]

        def compare(self, other, op=array_op, s=scalar_op, hint=hint):
            return self._binary(other, op, s, hint)
        compare.__name__ = f"__{stem}__"
        compare.__doc__ = f"``{array_op}`` of two symbols, ``{scalar_op}`` with a number."
        setattr(Symbol, compare.__name__, compare)
    Symbol.__div__, Symbol.__rdiv__ = Symbol.__truediv__, Symbol.__rtruediv__


_install_dunders()


def _ndarray_only(name):
    """A Symbol method for NDArray method ``name`` that raises NotImplementedForSymbol, so
    code written for both names the Symbol and the method (MXNet's Symbol has them too)."""
    def method(self, *args, **kwargs):
        raise NotImplementedForSymbol(method, None)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = "NDArray only: a Symbol has no values (raises NotImplementedForSymbol)."
    return method


for _name in ("wait_to_read", "asnumpy", "asscalar", "as_in_context", "detach", "backward"):
    setattr(Symbol, _name, _ndarray_only(_name))


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
             stype=None, **kwargs):
    """A variable (an argument of the graph) named ``name`` (MXNet's ``mx.sym.Variable``).

    ``shape`` and ``dtype`` seed shape/type inference (``__shape__``, ``__dtype__``),
    ``stype`` is the storage type ``simple_bind`` gives it (``__storage_type__``),
    ``init`` (an initializer or its JSON string) is ``__init__``, ``lr_mult``/``wd_mult``
    are ``__lr_mult__``/``__wd_mult__``; ``attr`` adds string attributes, and keyword
    arguments must be ``__key__`` attributes.
    """
    if not isinstance(name, str):
        raise TypeError(f"Variable: name must be a string, got {name!r}")
    user = _hidden_keys(naming.current_attrs(attr))
    if shape is not None:
        user["__shape__"] = str(tuple(int(d) for d in shape))
    if lr_mult is not None:
        user["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        user["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        key = np.dtype(dtype).name
        if key not in DTYPE_FLAGS:
            raise MXNetError(f"Variable {name!r}: unsupported dtype {dtype!r}")
        user["__dtype__"] = str(DTYPE_FLAGS[key])
    if init is not None:
        user["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        from ..ndarray.ndarray import _STORAGE_TYPE_STR_TO_ID as ids
        if stype not in ("default", "csr", "row_sparse"):
            raise MXNetError(f"Variable {name!r}: unknown storage type {stype!r}")
        user["__storage_type__"] = str(ids[stype])
    for k, v in kwargs.items():
        if not (k.startswith("__") and k.endswith("__")):
            raise ValueError(f"Variable {name!r}: attribute {k!r} must be of the form __key__")
        user[k] = str(v)
    return Symbol([(SymNode(None, name, user_attrs=user), 0)])


var = Variable


def Group(symbols):
    """One symbol with the outputs of every symbol in ``symbols``, in order."""
    symbols = list(symbols)
    if not symbols or not all(isinstance(s, Symbol) for s in symbols):
        raise MXNetError("Group: expected a non-empty list of Symbols")
    return Symbol([e for s in symbols for e in s._outputs])


def load_json(json_str):
    """The Symbol of MXNet JSON text (``Symbol.tojson``, or MXNet's ``prefix-symbol.json``)."""
    return _json.load_json(json_str)


def load(fname):
    """The Symbol saved in the file ``fname`` (``Symbol.save``, MXNet's ``sym.save``); a
    file that is not a symbol JSON raises MXNetError naming it and the bad field."""
    if not isinstance(fname, (str, bytes, os.PathLike)):
        raise MXNetError(f"load: fname must be a path, got {type(fname).__name__}")
    try:
        with open(fname, "rb") as f:
            text = f.read()
    except OSError as e:
        raise MXNetError(f"load: cannot read {fname!r}: {e}") from None
    return _json.load_json(text, source=repr(os.fsdecode(fname)))
