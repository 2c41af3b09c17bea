"""One generator turns an ``OpDef`` into a front-end function (``mx.nd.X`` and ``mx.sym.X``).

The function gets a real ``inspect.Signature`` and a docstring built from the record; an
*invoke* strategy decides what a call does (execute for ``nd``, build a node for ``sym``).
No source text is generated or ``exec``'d.
"""
import functools
import inspect
import types

from ..base import op_error
from .._core.dispatch import OpFunction, parse_cached
from .registry import REGISTRY, REQUIRED, namespace_of

__all__ = ["make_function", "populate"]

_P = inspect.Parameter


def _signature(op):
    params = []
    if op.variadic:
        params.append(_P(op.inputs[0] if op.inputs else "data", _P.VAR_POSITIONAL))
        kind = _P.KEYWORD_ONLY
    else:
        params += [_P(name, _P.POSITIONAL_OR_KEYWORD) for name in op.inputs]
        kind = _P.POSITIONAL_OR_KEYWORD
    for p in op.params:
        default = _P.empty if p.default is REQUIRED else p.default
        if default is _P.empty and any(q.default is not _P.empty for q in params
                                       if q.kind == _P.POSITIONAL_OR_KEYWORD):
            kind = _P.KEYWORD_ONLY   # a required param after an optional one
        params.append(_P(p.name, kind, default=default))
    params += [_P("out", _P.KEYWORD_ONLY, default=None), _P("name", _P.KEYWORD_ONLY, default=None)]
    return inspect.Signature(params)


def _docstring(op, public_name):
    lines = [op.doc.strip(), ""]
    if op.inputs:
        lines.append("Inputs: " + (f"*{op.inputs[0]}" if op.variadic else ", ".join(op.inputs)))
    for p in op.params:
        default = "required" if p.default is REQUIRED else f"default {p.default!r}"
        lines.append(f"  {p.name} ({p.kind}, {default}): {p.doc}")
    lines.append("  out: optional NDArray to write the result into.")
    grad = "yes" if op.differentiable else ("no" if op.gradient else "not declared")
    lines += ["", f"Registered operator ``{op.name}`` (differentiable: {grad})."]
    return "\n".join(lines)


def _count_inputs(op, inputs, kwargs):
    """Fill a variadic op's ``key_var_num_args`` with the number of inputs, or check it."""
    key = op.key_var_num_args
    given = kwargs.get(key)
    if given is None:
        kwargs[key] = len(inputs)
        return
    n = op._param_map[key].parse(op.name, given)
    if n != len(inputs):
        raise op_error(op.name, f"{key}={n} but {len(inputs)} array(s) were given")
    kwargs[key] = n


def _bind_inputs(op, given, kwargs):
    """The inputs a call takes (``op.list_inputs`` of its parameters), in order, None for
    each one not given; MXNetError for one given that these parameters do not take."""
    names = op.list_inputs(parse_cached(op, kwargs)) if op._list_inputs else op.inputs
    unused = [n for n, x in given.items() if n not in names and x is not None]
    if unused:
        raise op_error(op.name, f"input(s) {unused} given, but these parameters take only "
                       f"{list(names)}")
    return [given.get(n) for n in names]


# an invoke strategy -> the one it hands ops with storage rules for dense inputs (mx.nd's:
# cast_storage(dense, stype='csr') must reach the rule, which the compiled path never asks)
_STORAGE_STRATEGIES = {}


def set_storage_strategy(invoke, storage_invoke):
    """Give ``invoke``'s ops that have a storage rule taking dense inputs ``storage_invoke``."""
    _STORAGE_STRATEGIES[invoke] = storage_invoke


def _dense_input_rule(op):
    return any(all(s in ("default", "*") for s in rule.inputs) for rule in op.storage)


def make_function(op, invoke, public_name=None, registered_name=None):
    """Build the front-end function for ``op`` whose calls go to ``invoke(op, inputs, kwargs, out)``.

    An input the caller leaves out reaches ``invoke`` as None: the strategy decides (``nd``
    raises MXNetError, a symbolic one creates a variable). A variadic op's count parameter
    (``num_args``) is filled from the inputs given, or checked against them.

    A strategy with a true ``named`` attribute (``mx.sym``'s) is called as
    ``invoke(op, inputs, kwargs, out, name=, attr=, hint=)``: the call's ``name`` and
    ``attr`` keywords and the name the function is registered under (``registered_name``,
    MXNet's naming hint: ``FullyConnected`` names nodes ``fullyconnected0``, ...). Other
    strategies never see them (``name`` is dropped, as MXNet's ``nd`` ignores it).
    """
    if op.storage and invoke in _STORAGE_STRATEGIES and _dense_input_rule(op):
        invoke = _STORAGE_STRATEGIES[invoke]
    n_inputs = len(op.inputs)
    input_names = op.inputs
    param_names = tuple(p.name for p in op.params)
    variadic = op.variadic
    counted = op.key_var_num_args is not None
    dynamic = op._list_inputs is not None       # inputs depend on the parameters
    op_name = op.name
    named = getattr(invoke, "named", False)
    hint = (registered_name or op.name).lower()
    takes_attr = named and "attr" not in param_names
    # a symbolic strategy takes attribute keywords (lr_mult=, __layout__=) out of the call
    attribute_keywords = getattr(invoke, "attribute_keywords", None)
    # an op whose inputs depend on its parameters beyond list_inputs binds a call itself:
    # bind_call(args, kwargs) -> (inputs, parsed attrs)
    bind = getattr(op, "bind_call", None)

    def function(*args, out=None, name=None, **kwargs):
        call = invoke
        if named:
            attr = kwargs.pop("attr", None) if takes_attr else None
            if attribute_keywords is not None:
                attr = attribute_keywords(op, kwargs, attr)
            call = functools.partial(invoke, name=name, attr=attr, hint=hint)
        if bind is not None:        # inputs named by the call's parameters (Custom)
            inputs, attrs = bind(args, kwargs)
            return call(op, inputs, attrs, out)
        if variadic:
            inputs = list(args)
            if not inputs and input_names and input_names[0] in kwargs:
                inputs = list(kwargs.pop(input_names[0]))
            if counted:
                _count_inputs(op, inputs, kwargs)
            return call(op, inputs, kwargs, out)
        if len(args) > n_inputs + len(param_names):
            raise op_error(op_name, f"takes at most {n_inputs + len(param_names)} positional "
                           f"arguments, got {len(args)}")
        for pname, value in zip(param_names, args[n_inputs:]):
            if pname in kwargs:
                raise op_error(op_name, f"got multiple values for {pname!r}")
            kwargs[pname] = value
        if len(args) >= n_inputs and not dynamic:
            return call(op, list(args[:n_inputs]), kwargs, out)
        # some input left out, or attr-dependent: positional arrays name the inputs these
        # parameters take (MXNet's order: CTCLoss(data, label, label_lengths,
        # use_label_lengths=True) passes label_lengths third)
        keyword_inputs = {n: kwargs.pop(n) for n in input_names if n in kwargs}
        order = op.list_inputs(parse_cached(op, kwargs)) if dynamic else input_names
        if len(args) > len(order):
            order = input_names
        given = dict(zip(order, args))
        for iname, value in keyword_inputs.items():
            if iname in given:
                raise op_error(op_name, f"got multiple values for input {iname!r}")
            given[iname] = value
        return call(op, _bind_inputs(op, given, kwargs), kwargs, out)

    public_name = public_name or namespace_of(op.name)[1]
    function.__name__ = function.__qualname__ = public_name
    function.__signature__ = _signature(op)
    function.__doc__ = _docstring(op, public_name)
    function.op = op
    # the compiled callable takes the common call straight to ``invoke``
    return OpFunction(op, invoke, function, not (variadic or dynamic))


def populate(target, invoke, module_prefix):
    """Fill module ``target`` and its namespaces (random, contrib, _internal, ...) from the registry.

    Every registered name (aliases included) becomes a function; returns the dict of
    namespace modules created.
    """
    namespaces = {}
    for name in sorted(REGISTRY):
        op = REGISTRY[name]
        ns, public = namespace_of(name)
        fn = make_function(op, invoke, public, name)
        fn.__module__ = target.__name__ + (f".{ns}" if ns else "")
        if ns:
            module = namespaces.get(ns)
            if module is None:
                module = namespaces[ns] = types.ModuleType(f"{module_prefix}.{ns}",
                                                           f"``{module_prefix}.{ns}`` operators.")
            setattr(module, public, fn)
            if ns == "_internal":
                continue
            # MXNet also exposes namespaced ops under _internal with their full name.
            internal = namespaces.setdefault("_internal", types.ModuleType(
                f"{module_prefix}._internal", "Internal operators."))
            setattr(internal, name, fn)
        else:
            setattr(target, public, fn)
    _add_sparse_namespace(target, namespaces, module_prefix)
    for ns, module in namespaces.items():
        setattr(target, ns, module)
    return namespaces


def _add_sparse_namespace(target, namespaces, module_prefix):
    """``sparse``: the ``_sparse_`` ops and every op with a storage rule (MXNet's
    ``mx.nd.sparse.dot``, ``mx.sym.sparse.sqrt``, ...)."""
    module = namespaces.get("sparse")
    if module is None:
        module = namespaces["sparse"] = types.ModuleType(
            f"{module_prefix}.sparse", f"``{module_prefix}.sparse`` operators.")
    from .sparse.rules import MXNET_SPARSE_NAMESPACE
    for name in sorted(REGISTRY):
        op = REGISTRY[name]
        ns, public = namespace_of(name)
        if not (op.storage or name in MXNET_SPARSE_NAMESPACE):
            continue
        if ns == "" and not name.startswith("_"):
            setattr(module, public, getattr(target, public))
        elif ns == "contrib":
            setattr(module, name, getattr(namespaces["contrib"], public))
