"""Mixed-precision graphs: ``convert_symbol``, ``convert_model`` and ``convert_hybrid_block``
(MXNet's ``MXReducePrecisionSymbol`` pass and its Python wrappers).

The pass copies a float32 graph node by node, in graph order, and gives each operator the
inputs its list asks for:

* a low-precision op (``Convolution``, ``FullyConnected``, ...): every input in the target
  dtype, through ``amp_cast``;
* a float32 op (``softmax``, ``LayerNorm``, losses, ... and every node named in
  ``excluded_sym_names``): every input in float32;
* a conditional float32 op (``Activation(act_type='softrelu')``): float32 for those
  parameter values, else as it is;
* a widest-type op (``elemwise_add``, ``concat``, ...): its inputs in the widest float dtype
  among them (``amp_cast`` of the narrower ones, as MXNet's pass; ``amp.init()``'s wrappers
  of ``mx.sym`` insert one ``amp_multicast`` instead, as MXNet's did);
* any other op runs in the dtype it is given.

It follows each output's dtype (``infer_type`` of each copied node, variables float32 unless
their ``__dtype__`` says otherwise), as MXNet's pass did, so no ``amp_cast`` is inserted
where the input already has the dtype wanted. Beyond MXNet, an op that would be given a
low-precision input its mxlite kernel does not take (``BatchNorm`` or ``LayerNorm`` in
bfloat16, say, or an op listed as low-precision whose kernel lacks that dtype) gets float32
inputs instead of failing at run time; and a widest-type op given a low-precision and a
float32 input always gets a cast (MXNet's pass sometimes left the pair mixed). Auxiliary
states (BatchNorm's moving statistics) are never cast: the op updates them in place.
"""
import numpy as np

from ... import symbol as sym_mod
from ...base import MXNetError, TYPE_FLAGS
from ...ops.registry import REGISTRY
from ...symbol.graph import SymNode, input_names
from ...symbol.symbol import Symbol
from .lists import for_dtype

__all__ = ["convert_symbol", "convert_model", "convert_hybrid_block",
           "convert_bucketing_module", "target_dtype_of"]

F16, F32 = np.dtype("float16"), np.dtype("float32")
_AMP_FLOATS = ("float16", "bfloat16", "float32")
_FLAG_NAMES = {str(flag): name for name, flag in TYPE_FLAGS.items()}   # '12' -> 'bfloat16'
# the cast the pass inserts, taken before amp.init() wraps anything
_amp_cast = sym_mod.amp_cast


def target_dtype_of(target_dtype, what):
    """The low-precision dtype ``target_dtype`` names ('float16' or 'bfloat16', or their
    dtypes). None picks by the current context: float16 on a GPU, bfloat16 on a CPU (MXNet
    always defaulted to float16, which CPUs compute slowly or not at all)."""
    from ...base import DTYPES, normalize_dtype
    from ...context import current_context
    if target_dtype is None:
        target_dtype = "float16" if current_context().device_type == "gpu" else "bfloat16"
        if target_dtype not in DTYPES:
            raise MXNetError(f"{what}: the CPU's target dtype is bfloat16, which needs the "
                             "ml_dtypes package (pip install ml_dtypes); or pass "
                             "target_dtype='float16'")
    try:
        dt = normalize_dtype(target_dtype, what)
    except MXNetError:
        dt = None
    if dt is None or dt.name not in ("float16", "bfloat16"):
        raise MXNetError(f"{what}: target_dtype must be 'float16' or 'bfloat16', got "
                         f"{target_dtype!r}")
    return dt


# ---- which list an op is in --------------------------------------------------------------------
class Plan:
    """The op lists of one conversion, by registered op (aliases folded: ``Cast`` and
    ``cast`` are one op), checked as MXNet checked them: names registered, no op in two
    of the target, float32 and conditional lists, and only ops from MXNet's lists."""

    def __init__(self, target, target_ops, fp32_ops, conditional_fp32_ops, excluded, what):
        lists = for_dtype(target)
        self.target = target
        target_ops = _names(what, "target_dtype_ops", target_ops, lists.lp16)
        fp32_ops = _names(what, "fp32_ops", fp32_ops, lists.fp32)
        conditional = _conditions(what, conditional_fp32_ops, lists.conditional_fp32)
        given = {"target_dtype_ops": target_ops, "fp32_ops": fp32_ops,
                 "conditional_fp32_ops": [c[0] for c in conditional]}
        _check_disjoint(what, given)
        known = set(lists.lp16) | set(lists.fp32) | set(lists.lp16_fp32) | {
            c[0] for c in lists.conditional_fp32}
        unknown = sorted(set(sum(given.values(), [])) - known)
        if unknown:
            raise MXNetError(f"{what}: ops {unknown} are in none of amp's lists for "
                             f"{target.name} (list_lp16_ops, list_fp32_ops, "
                             "list_lp16_fp32_ops, list_conditional_fp32_ops)")
        # a list entry naming the op itself beats one naming an alias: MXNet listed
        # elemwise_add under widest-type casts and two of its aliases elsewhere, and
        # matched graph nodes by the op's own name
        self.kind = {}
        for exact in (False, True):
            for kind, names in (("lp16_fp32", lists.lp16_fp32), ("widest", lists.widest),
                                ("fp32", fp32_ops), ("lp16", target_ops)):
                for name in names:
                    if (REGISTRY[name].name == name) == exact:
                        self.kind[REGISTRY[name].name] = kind
        self.conditional = {}
        for name, param, values in conditional:
            self.kind[REGISTRY[name].name] = "conditional"
            self.conditional[REGISTRY[name].name] = (param, set(values))
        self.excluded = set(excluded or ())

    def of(self, node):
        """'lp16', 'fp32', 'widest' or None (run as given) for op node ``node``."""
        if node.name in self.excluded:
            return "fp32"
        kind = self.kind.get(node.op.name)
        if kind == "conditional":
            param, values = self.conditional[node.op.name]
            value = node.op.format_attrs(node.attrs).get(param)
            return "fp32" if value in values else None
        return kind if kind in ("lp16", "fp32", "widest") else None


def _names(what, arg, names, default):
    if names is None:
        return list(default)
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise MXNetError(f"{what}: {arg} must be a list of op names, got {names!r}")
    missing = [n for n in names if n not in REGISTRY]
    if missing:
        raise MXNetError(f"{what}: {arg} names unknown operators {missing}")
    return list(names)


def _conditions(what, conditions, default):
    if conditions is None:
        return [tuple(c) for c in default]
    ok = isinstance(conditions, (list, tuple)) and all(
        isinstance(c, (list, tuple)) and len(c) == 3 and isinstance(c[0], str)
        and isinstance(c[1], str) and isinstance(c[2], (list, tuple)) for c in conditions)
    if not ok:
        raise MXNetError(f"{what}: conditional_fp32_ops must be a list of (op name, parameter "
                         f"name, list of values), got {conditions!r}")
    _names(what, "conditional_fp32_ops", [c[0] for c in conditions], ())
    return [(c[0], c[1], [str(v) for v in c[2]]) for c in conditions]


def _check_disjoint(what, given):
    keys = list(given)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            common = sorted({REGISTRY[n].name for n in given[a]}
                            & {REGISTRY[n].name for n in given[b]})
            if common:
                raise MXNetError(f"{what}: ops {common} are in both {a} and {b}; an op can "
                                 "be in one list only")


# ---- the pass -----------------------------------------------------------------------------------
class _Rewriter:
    """Copies a graph with the casts ``plan`` asks for, tracking each entry's dtype."""

    def __init__(self, plan):
        self.plan = plan
        self.copies = {}        # id(old node) -> new node
        self.dtypes = {}        # (id(new node), output index) -> np.dtype or None
        self.casts = {}         # (id(new node), output index, dtype name) -> cast entry

    def dtype(self, entry):
        return self.dtypes.get((id(entry[0]), entry[1]))

    def cast(self, entry, dtype):
        """``entry`` as ``dtype`` (one ``amp_cast`` per entry and dtype; none if it already
        is, or if it is not a float amp moves: integers and float64 pass amp_cast
        unchanged anyway)."""
        have = self.dtype(entry)
        if have is not None and (have == dtype or have.name not in _AMP_FLOATS):
            return entry
        key = (id(entry[0]), entry[1], dtype.name)
        if key not in self.casts:
            source = Symbol([entry]).list_outputs()[0]     # 'data', 'fc1_output' (MXNet's)
            cast = _amp_cast(Symbol([entry]), dtype=dtype.name,
                             name=f"{source}_amp_cast_{dtype.name}")
            self.casts[key] = out = cast._outputs[0]
            self.dtypes[(id(out[0]), 0)] = dtype if have is not None else None
        return self.casts[key]

    def widest(self, entries):
        """``entries`` (the inputs of a widest-type op) in the widest float dtype among them:
        ``amp_cast`` of the narrower ones, as MXNet's pass (float32 where a dtype is not
        known)."""
        known = [self.dtype(e) for e in entries]
        floats = {d for d in known if d is not None and d.name in _AMP_FLOATS}
        if None not in known and len(floats) <= 1:
            return entries
        widest = F32 if None in known or F32 in floats or len(floats) > 1 else floats.pop()
        return [self.cast(e, widest) for e in entries]

    def copy(self, node):
        """Copy ``node`` (its inputs are copied already) with the casts its list asks for."""
        if node.op is None:
            self.copy_variable(node)
            return
        given = [(self.copies[id(child)], i) for child, i in node.inputs]
        entries = list(given)
        fixed = _fixed_inputs(node)
        kind = self.plan.of(node)
        if kind in ("lp16", "fp32"):
            want = self.plan.target if kind == "lp16" else F32
            entries = [e if k in fixed else self.cast(e, want) for k, e in enumerate(entries)]
        elif kind == "widest":
            free = [k for k in range(len(entries)) if k not in fixed]
            for k, e in zip(free, self.widest([entries[k] for k in free])):
                entries[k] = e
        new = SymNode(node.op, node.name, node.attrs, entries, node.user_attrs, node.given)
        if not self.infer(new):
            # mxlite's kernel of this op takes no low-precision input here (its list said it
            # would, or it ran as given): the op runs in float32
            new.inputs = [e if k in fixed else self.widened(e) for k, e in enumerate(given)]
            self.infer(new)
        self.copies[id(node)] = new

    def copy_variable(self, node):
        """A variable holds its ``__dtype__``, float32 without one (the pass's assumption,
        MXNet's too)."""
        new = SymNode(None, node.name, None, (), node.user_attrs, node.given)
        flag = node.user_attrs.get("__dtype__")
        self.dtypes[(id(new), 0)] = np.dtype(_FLAG_NAMES.get(flag, "float32"))
        self.copies[id(node)] = new

    def widened(self, entry):
        have = self.dtype(entry)
        return self.cast(entry, F32) if have is not None and have.name in _AMP_FLOATS else entry

    def infer(self, new):
        """Record ``new``'s output dtypes; False when its op refuses the input dtypes."""
        known = [self.dtype(e) for e in new.inputs]
        n = new.num_outputs()
        if None in known:
            for i in range(n):
                self.dtypes[(id(new), i)] = None
            return True
        try:
            out = new.op.infer_type(known, new.attrs)
        except MXNetError:
            for i in range(n):
                self.dtypes[(id(new), i)] = None
            return False
        for i in range(n):
            self.dtypes[(id(new), i)] = np.dtype(out[i]) if i < len(out) else None
        return True


def _fixed_inputs(node):
    """Positions of ``node``'s inputs that are never cast: the auxiliary states and other
    inputs its op updates in place."""
    names = input_names(node)
    kept = set(node.op.list_auxiliary_states(node.attrs)) | {
        names[i] for i in node.op.mutated_indices(node.attrs) if i < len(names)}
    return {k for k, n in enumerate(names) if n in kept}


def _optional_params(sym, target, params):
    """Mark the parameters in ``params`` that only feed casts to ``target`` with
    ``__dtype__`` = target: stored in the low-precision dtype, the casts become copies of
    the same dtype (MXNet's ``cast_optional_params``)."""
    users = {}
    for node in sym._nodes():
        for child, _ in node.inputs:
            users.setdefault(id(child), []).append(node)
    flag = str(TYPE_FLAGS[target.name])
    for node in sym._nodes():
        if node.op is not None or node.name not in params:
            continue
        uses = users.get(id(node), [])
        if uses and all(u.op.name == "amp_cast" and np.dtype(u.attrs.dtype) == target
                        for u in uses):
            node.user_attrs["__dtype__"] = flag


def convert_symbol(sym, target_dtype=None, target_dtype_ops=None, fp32_ops=None,
                   conditional_fp32_ops=None, excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """A copy of float32 graph ``sym`` with ``amp_cast``/``amp_multicast`` nodes that run
    each operator in the dtype amp's lists give it (see the module docstring).

    ``target_dtype`` is 'float16' or 'bfloat16' (None: float16 on a GPU context, bfloat16 on
    a CPU); ``target_dtype_ops``, ``fp32_ops`` and ``conditional_fp32_ops`` replace the
    default lists (``list_lp16_ops`` ...); nodes named in ``excluded_sym_names`` run in
    float32. ``data_names`` are the graph's data inputs (default: the variables without a
    ``__dtype__``); with ``cast_optional_params`` the other variables that only feed
    low-precision casts get the target ``__dtype__``, so ``convert_model`` stores them in
    it. The graph's inputs are assumed float32, as in MXNet.

    >>> import json
    >>> from mxlite.contrib import amp
    >>> x = mx.sym.var('data')
    >>> fc = mx.sym.FullyConnected(x, num_hidden=4, name='fc')
    >>> net = mx.sym.softmax(fc, name='out')
    >>> mixed = amp.convert_symbol(net, target_dtype='float16')
    >>> [n['op'] for n in json.loads(mixed.tojson(remove_amp_cast=False))['nodes']]
    ['null', 'amp_cast', 'null', 'amp_cast', 'null', 'amp_cast', 'FullyConnected', 'amp_cast',
     'softmax']
    >>> mixed.get_internals().list_outputs()[:2]
    ['data', 'data_amp_cast_float16_output']
    """
    what = "amp.convert_symbol"
    if not isinstance(sym, Symbol):
        raise MXNetError(f"{what}: sym must be a Symbol, got {type(sym).__name__}")
    if excluded_sym_names is not None and not isinstance(excluded_sym_names, (list, tuple)):
        raise MXNetError(f"{what}: excluded_sym_names must be a list of names, got "
                         f"{excluded_sym_names!r}")
    target = target_dtype_of(target_dtype, what)
    plan = Plan(target, target_dtype_ops, fp32_ops, conditional_fp32_ops, excluded_sym_names,
                what)
    rewriter = _Rewriter(plan)
    for node in sym._nodes():
        rewriter.copy(node)
    out = Symbol([(rewriter.copies[id(n)], i) for n, i in sym._outputs])
    if cast_optional_params:
        if data_names is None:
            attrs = sym.attr_dict()
            data_names = [n for n in sym.list_inputs() if "__dtype__" not in attrs.get(n, {})]
        _optional_params(out, target, set(out.list_inputs()) - set(data_names))
    return out


def _dtype_attrs(sym):
    """{variable name: dtype} of the variables with a ``__dtype__``."""
    return {name: np.dtype(_FLAG_NAMES[a["__dtype__"]]) for name, a in sym.attr_dict().items()
            if a.get("__dtype__") in _FLAG_NAMES}


def convert_model(sym, arg_params, aux_params, target_dtype=None, target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """``(converted symbol, arg_params, aux_params)``: ``convert_symbol`` with the keys of
    the two parameter dicts as the model's parameters (every other input is data), and the
    parameters cast to the dtype the converted graph gives them. New dicts are returned;
    the arrays given are not changed (MXNet replaced entries of the dicts given)."""
    what = "amp.convert_model"
    if not isinstance(arg_params, dict) or not isinstance(aux_params, dict):
        raise MXNetError(f"{what}: arg_params and aux_params must be dicts of name to NDArray")
    if not isinstance(sym, Symbol):
        raise MXNetError(f"{what}: sym must be a Symbol, got {type(sym).__name__}")
    params = set(arg_params) | set(aux_params)
    data_names = [n for n in sym.list_inputs() if n not in params]
    out = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    dtypes = _dtype_attrs(out)
    cast = lambda d: {k: (v.astype(dtypes[k]) if k in dtypes and v.dtype != dtypes[k] else v)
                      for k, v in d.items()}      # noqa: E731
    return out, cast(arg_params), cast(aux_params)


def convert_hybrid_block(block, target_dtype=None, target_dtype_ops=None, fp32_ops=None,
                         conditional_fp32_ops=None, excluded_sym_names=None, ctx=None,
                         cast_optional_params=False):
    """A ``SymbolBlock`` running ``block``'s graph in mixed precision (``convert_symbol``),
    with ``block``'s parameter values (cast where the converted graph says so) on ``ctx``
    (default: where ``block``'s parameters are; MXNet's default was gpu(0)).

    ``block`` must be a hybridized ``HybridBlock`` that has run once (its graph is traced
    then). The result can be trained: the casts' gradients flow back to the float32
    parameters (use ``amp.init_trainer`` and ``amp.scale_loss`` for loss scaling)."""
    from ...gluon.block import HybridBlock, SymbolBlock
    what = "amp.convert_hybrid_block"
    if not isinstance(block, HybridBlock):
        raise MXNetError(f"{what}: block must be a HybridBlock, got {type(block).__name__}")
    if not block._cached_graph:
        raise MXNetError(f"{what}: call block.hybridize() and run it forward once first "
                         "(its graph is traced on the first call)")
    inputs, sym = block._cached_graph
    out = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, [v.name for v in inputs], cast_optional_params)
    dtypes = _dtype_attrs(out)
    values = {}
    for name, param in block.collect_params().items():
        data = param._reduce()
        if name in dtypes and data.dtype != dtypes[name]:
            data = data.astype(dtypes[name])
        values[name] = data
        if ctx is None:
            ctx = param.list_ctx()
    ret = SymbolBlock(out, inputs)
    ret.collect_params().load_dict(values, ctx=ctx, cast_dtype=True, dtype_source="saved")
    return ret


def convert_bucketing_module(bucketing_mod, target_dtype=None, target_dtype_ops=None,
                             fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                             cast_optional_params=False):
    """A ``BucketingModule`` whose every bucket runs ``bucketing_mod``'s graph of that bucket
    through ``convert_symbol``, with ``bucketing_mod``'s parameters (cast where the default
    bucket's converted graph says so), set when it is bound. ``bucketing_mod`` must be bound
    with its parameters initialized. Buckets MXNet had not bound yet convert too (MXNet's
    converted only the buckets already made)."""
    from ...module import BucketingModule
    what = "amp.convert_bucketing_module"
    if not isinstance(bucketing_mod, BucketingModule):
        raise MXNetError(f"{what}: expected a BucketingModule, got "
                         f"{type(bucketing_mod).__name__}")
    if not (bucketing_mod.binded and bucketing_mod.params_initialized):
        raise MXNetError(f"{what}: bind the module and initialize its parameters first")
    target = target_dtype_of(target_dtype, what)
    lists = (target_dtype_ops, fp32_ops, conditional_fp32_ops, excluded_sym_names)
    sym_gen = bucketing_mod._sym_gen

    def mixed_sym_gen(bucket_key):
        sym, data_names, label_names = sym_gen(bucket_key)
        inputs = list(data_names or ()) + list(label_names or ())
        return (convert_symbol(sym, target, *lists, data_names=inputs,
                               cast_optional_params=cast_optional_params),
                data_names, label_names)

    default, _, _ = bucketing_mod._call_sym_gen(bucketing_mod._default_bucket_key)
    arg_params, aux_params = bucketing_mod.get_params()
    _, arg_params, aux_params = convert_model(default, arg_params, aux_params, target, *lists,
                                              cast_optional_params=cast_optional_params)
    mod = BucketingModule(mixed_sym_gen, bucketing_mod._default_bucket_key,
                          **bucketing_mod._module_kwargs)
    mod._loaded_params = (arg_params, aux_params)       # set by bind, as load()'s
    mod.params_initialized = True
    return mod
