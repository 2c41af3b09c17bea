"""The operator registry: one ``OpDef`` record per operator, the single source of truth.

``mxlite.nd.*`` and (later) ``mxlite.sym.*`` are generated from these records; the autograd
tape and the symbolic executor look operators up here and never import a family module.
"""
import warnings

from ..base import MXNetError, op_error
from .params import KINDS, REQUIRED, Param
from .shape_partial import infer_shape_partial, resolve_backward_shape

__all__ = ["Param", "OpDef", "Attrs", "register", "get_op", "list_ops", "REGISTRY",
           "NON_DIFFERENTIABLE", "REQUIRED", "namespace_of", "KINDS"]

NON_DIFFERENTIABLE = "non-differentiable"   # explicit gradient marker (comparisons, argmax, ...)


class Attrs(dict):
    """Parsed operator parameters; ``attrs.axis`` reads ``attrs['axis']``."""

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


_RULE_IDS = {None: 0, "same": 1, "broadcast": 2, "reduce": 3}   # as mxlite/_core/dispatch.pyx


class OpDef:
    """One operator record.

    Fields:
      name, aliases         MXNet names (``_random_randint`` is shown as ``random.randint``)
      inputs                input names (the most an op takes: they make the signature);
                            ``variadic=True`` makes them one ``*data`` list
      params                tuple of ``Param``
      infer_shape(shapes, attrs) -> list of output shapes (pure; raises MXNetError)
      infer_type(dtypes, attrs)  -> list of output dtypes (pure; raises MXNetError)
      compute               {'cpu': fn(rctx, in_arrays, out_arrays, attrs)}; kernels write into
                            outputs; ``rctx`` is the device's RunContext (``mxlite.device``)
      gradient              FGradient: fn(F, node, ograds) -> input gradients built from
                            registered ops; ``NON_DIFFERENTIABLE``; or None (not declared yet)
      grad_needs            what the gradient reads: subset of {'inputs', 'outputs'}
      grad_needs_by_attrs   fn(attrs) -> the part of ``grad_needs`` a call with these attrs
                            reads (default all): the tape keeps only that (Activation:
                            relu, sigmoid and tanh differentiate from the output alone)
      none_ograds           the gradient takes None for an output gradient nothing sent
                            (default: zeros of the output's shape are made for it), so a
                            hidden full-size output costs no zeros and no add (BatchNorm)
      num_outputs           an int, or a function of attrs (split: attrs.num_outputs)
      key_var_num_args      variadic ops: the int Param the front end fills with the number
                            of inputs (MXNet's ``num_args``) and checks against it
      list_inputs           fn(attrs) -> the input names a call takes (default ``inputs``;
                            ``FullyConnected(no_bias=True)`` drops ``bias``)
      output_names          names of the outputs, or fn(attrs) -> names
      num_visible_outputs   how many outputs a call returns (an int or fn(attrs); default all)
      optional_outputs      indices of hidden outputs the compute function accepts as None,
                            or fn(attrs) -> indices: where nothing will read them (a call off
                            the autograd tape, a planned step whose gradient does not read
                            them) the caller allocates nothing and passes None (BatchNorm's
                            xhat, RNN's saved gates); see ``optional_outputs_of``
      aux_inputs            inputs that are auxiliary states, not arguments of a symbol
      mutate_inputs         inputs the kernel updates in place (MXNet's FMutateInputs)
      var_init              {input name: initializer JSON} a symbolic call gives a variable
                            in that input that has no ``__init__`` (MXNet's
                            FSetInputVarAttrOnCompose: BatchNorm's moving_var ones,
                            LeakyReLU's prelu gamma 0.25)
      backward_shape        fn(in_shapes, out_shapes, attrs) -> input shapes, None where
                            still unknown, or ``'same'`` (see ``infer_shape_partial``)
      elementwise           output[i] depends only on inputs[i]: out= may alias an input
      in_place              out= may be an input itself (row-wise kernels that read a row
                            before writing it); a shifted overlap is copied first
      view                  fn(x, out_shape, attrs) -> an array sharing the memory of input 0
                            with the op's result as values (``x.reshape``, ``x.transpose``),
                            or None where x's layout allows no such view (a reshape of a
                            non-contiguous x); only a compiled graph (``static_alloc``) uses
                            it, on memory no caller can reach: ``mx.nd`` results stay copies
      strided_inputs        the compute functions take inputs of any strides, not only
                            C-contiguous ones (a graph's strided views reach them as they are;
                            other ops get a contiguous copy, made once per value)
      cpu_result            fn(xp, shape, dtype) -> a new array of the CPU namespace ``xp``
                            holding the op's result, which ``mx.nd`` calls on the CPU instead
                            of allocating an output and running compute['cpu'] (zeros: memory
                            the system zeroes on first use, so an array never written takes
                            no time or memory); a graph and ``out=`` still run compute
      storage               sparse storage (MXNet's FInferStorageType with FComputeEx): a
                            tuple of ``mxlite.ops.sparse.rules.StorageRule``, each the input
                            storage types one native sparse implementation takes, the output
                            storage types it makes and its compute functions; a call with a
                            sparse input that no rule takes runs on dense copies (MXNet's
                            storage fallback). Filled by ``mxlite.ops.sparse``; ops with a
                            rule make up ``mx.nd.sparse`` and ``mx.sym.sparse``
      grad_stypes           fn(attrs, in_stypes) -> the storage type of each input's gradient
                            (None: dense): MXNet's backward storage inference, which
                            ``simple_bind`` reads to give a variable a sparse gradient array
                            (Embedding with ``sparse_grad``, the rhs of ``dot(csr, dense)``)
      doc

    BatchNorm will declare ``inputs=('data', 'gamma', 'beta', 'moving_mean', 'moving_var')``
    with ``aux_inputs`` and ``mutate_inputs`` both ``('moving_mean', 'moving_var')``: a symbol
    lists those two as auxiliary states (``list_auxiliary_states``), not arguments, and the
    training kernel updates them in place; ``output_names=('output', 'mean', 'var')`` with
    ``num_visible_outputs`` 1 unless ``output_mean_var``.
    """

    __slots__ = ("name", "aliases", "inputs", "params", "infer_shape", "infer_type", "compute",
                 "gradient", "grad_needs", "num_outputs", "variadic", "doc", "_param_map",
                 "_defaults", "elementwise", "in_place", "key_var_num_args", "aux_inputs",
                 "mutate_inputs", "backward_shape", "_list_inputs", "_output_names",
                 "_num_visible", "float_rule", "rule_id", "cpu_kernel", "default_attrs",
                 "attrs_cache", "infer_cache", "var_init", "view", "strided_inputs",
                 "cpu_result", "optional_outputs", "none_ograds",
                 "grad_needs_by_attrs", "storage", "grad_stypes")

    deferred = False    # True only for the placeholder of mxlite.symbol._deferred

    def __init__(self, name, inputs, infer_shape, infer_type, compute, doc, params=(),
                 gradient=None, grad_needs=("inputs",), aliases=(), num_outputs=1,
                 variadic=False, elementwise=False, key_var_num_args=None, list_inputs=None,
                 output_names=None, num_visible_outputs=None, aux_inputs=(), mutate_inputs=(),
                 backward_shape=None, float_rule=None, cpu_kernel=None, in_place=False,
                 var_init=None, view=None, strided_inputs=False, cpu_result=None,
                 optional_outputs=(), none_ograds=False,
                 grad_needs_by_attrs=None):
        self.name, self.aliases, self.inputs = name, tuple(aliases), tuple(inputs)
        self.params = tuple(params)
        self.infer_shape, self.infer_type = infer_shape, infer_type
        self.compute = dict(compute)
        self.gradient, self.grad_needs = gradient, frozenset(grad_needs)
        self.num_outputs, self.variadic, self.doc = num_outputs, variadic, doc
        self.elementwise = elementwise   # output[i] depends only on inputs[i]: safe in place
        # out= may be an input itself (the same array, not a shifted view): the kernel reads
        # every input element an output element depends on before writing that element
        # (row-wise kernels: softmax rows, normalisations); element-wise ops are too
        self.in_place = in_place or elementwise
        # Declared rule the compiled invoke applies without calling infer_shape/infer_type
        # when every input has one dtype, float32 or float64: the one output has that dtype
        # and the shape of the rule: 'same' (inputs of one shape), 'broadcast' (two inputs,
        # NumPy broadcasting), 'reduce' (MXNet's axis/keepdims/exclude). Anything else (or
        # an input the rule does not cover) goes to the Python functions, which stay the
        # specification; tests/test_registry.py checks every rule against them.
        if float_rule not in _RULE_IDS:
            raise ValueError(f"OpDef {name}: unknown float_rule {float_rule!r}")
        self.float_rule, self.rule_id = float_rule, _RULE_IDS[float_rule]
        # With the float rule on CPU, the compiled invoke may call this kernel directly
        # instead of compute['cpu'] (a mxlite._core.dispatch.CpuKernel; see its docstring).
        self.cpu_kernel = cpu_kernel
        self._param_map = {p.name: p for p in self.params}
        self._defaults = Attrs((p.name, p.parse(name, p.default)) for p in self.params
                               if p.default is not REQUIRED)     # canonical, parsed once
        # a call without parameters shares this (read-only) Attrs: None if one is required
        self.default_attrs = (Attrs(self._defaults) if len(self._defaults) == len(self.params)
                              else None)
        # The compiled invoke memoises parse_attrs by the call's keywords and
        # infer_shape/infer_type by (keywords, input shapes, input dtypes): both are pure.
        self.attrs_cache, self.infer_cache = {}, {}
        self.key_var_num_args = key_var_num_args
        self._list_inputs, self._output_names = list_inputs, output_names
        self._num_visible = num_visible_outputs
        self.aux_inputs, self.mutate_inputs = tuple(aux_inputs), tuple(mutate_inputs)
        self.var_init = dict(var_init or {})
        self.view, self.strided_inputs = view, bool(strided_inputs)
        self.cpu_result = cpu_result
        self.optional_outputs = (optional_outputs if callable(optional_outputs)
                                 else frozenset(optional_outputs))
        self.none_ograds = bool(none_ograds)
        self.grad_needs_by_attrs = grad_needs_by_attrs
        self.storage = ()           # sparse storage rules (mxlite.ops.sparse adds them)
        self.grad_stypes = None     # backward storage inference (mxlite.ops.sparse sets it)
        self.backward_shape = resolve_backward_shape(name, backward_shape)
        self._check_declaration()

    def _check_declaration(self):
        """Programming errors in a record fail at import, naming the op."""
        where = f"OpDef {self.name}"
        key = self.key_var_num_args
        if key is not None and (not self.variadic or key not in self._param_map
                                or self._param_map[key].kind != "int"):
            raise ValueError(f"{where}: key_var_num_args={key!r} needs a variadic op and an "
                             "int Param of that name")
        for field in ("aux_inputs", "mutate_inputs", "var_init"):
            unknown = set(getattr(self, field)) - set(self.inputs)
            if unknown:
                raise ValueError(f"{where}: {field} {sorted(unknown)} are not inputs")
        if self.variadic and (self._list_inputs or self.aux_inputs or self.mutate_inputs
                              or self.var_init):
            raise ValueError(f"{where}: a variadic op lists its inputs from key_var_num_args")
        if self.float_rule == "reduce" and any(
                self._defaults.get(k, "missing") != v
                for k, v in (("axis", None), ("exclude", False), ("keepdims", False))):
            raise ValueError(f"{where}: float_rule 'reduce' needs the params axis=None, "
                             "exclude=False, keepdims=False (a call without parameters "
                             "reduces every axis)")
        names = self._output_names
        if isinstance(names, (tuple, list)) and isinstance(self.num_outputs, int) \
                and len(names) != self.num_outputs:
            raise ValueError(f"{where}: {len(names)} output_names for {self.num_outputs} outputs")

    @property
    def differentiable(self):
        """True when the op declares an FGradient."""
        return callable(self.gradient)

    def parse_attrs(self, kwargs):
        """Validate keyword parameters (values or MXNet's strings) once; fill defaults;
        reject unknown or missing ones."""
        attrs = Attrs(self._defaults)
        if kwargs:
            param_map = self._param_map
            for key, value in kwargs.items():
                p = param_map.get(key)
                if p is None:
                    if self._ignores_keyword(key):
                        continue
                    raise op_error(self.name, f"unknown parameter {key!r}; "
                                   f"expected one of {sorted(param_map)}")
                attrs[key] = p.parse(self.name, value)
        if len(attrs) != len(self.params):
            missing = [p.name for p in self.params if p.name not in attrs]
            raise op_error(self.name, f"missing required parameter(s) {missing}")
        return attrs

    def _ignores_keyword(self, key):
        """True for a keyword MXNet 1.x accepted and ignored: a hidden attribute ``__key__``
        (its parameter parser allowed them) or anything given to an op without parameters
        (it had no parser: ``broadcast_maximum(a, b, axis=1)``); the latter with a warning,
        as the keyword has no effect."""
        if len(key) > 4 and key.startswith("__") and key.endswith("__"):
            return True
        if self.params:
            return False
        warnings.warn(f"{self.name} takes no parameters: keyword {key!r} is ignored (as "
                      "MXNet 1.x ignored it)", stacklevel=4)
        return True

    def format_attrs(self, attrs):
        """``{name: MXNet's string}`` for each parameter in ``attrs`` (a symbol JSON's
        ``attrs``); ``parse_attrs`` reads it back to equal values."""
        unknown = set(attrs) - set(self._param_map)
        if unknown:
            raise op_error(self.name, f"unknown parameter(s) {sorted(unknown)}")
        return {p.name: p.format(attrs[p.name]) for p in self.params if p.name in attrs}

    # ---- inputs and outputs, as a symbol sees them ----
    def list_inputs(self, attrs):
        """The names of the inputs a call with ``attrs`` takes, in order (aux states included):
        ``inputs``, or ``list_inputs(attrs)`` where declared; ``arg0..argN-1`` for a variadic
        op with N inputs (MXNet's names)."""
        if self.variadic:
            n = attrs.get(self.key_var_num_args) if self.key_var_num_args else None
            if n is None:
                raise op_error(self.name, "the number of inputs is unknown (a variadic op "
                               "without its count parameter)")
            return tuple(f"arg{i}" for i in range(n))
        if self._list_inputs is None:
            return self.inputs
        names = tuple(self._list_inputs(attrs))
        if not set(names) <= set(self.inputs):
            raise ValueError(f"OpDef {self.name}: list_inputs gave {names}, not a subset of "
                             f"{self.inputs}")
        return names

    def list_arguments(self, attrs):
        """The inputs that are not auxiliary states (MXNet's ``list_arguments``)."""
        return tuple(n for n in self.list_inputs(attrs) if n not in self.aux_inputs)

    def list_auxiliary_states(self, attrs):
        """The inputs that are auxiliary states (MXNet's ``list_auxiliary_states``)."""
        return tuple(n for n in self.list_inputs(attrs) if n in self.aux_inputs)

    def mutated_indices(self, attrs):
        """Positions in ``list_inputs(attrs)`` of the inputs the kernel updates (FMutateInputs)."""
        return tuple(i for i, n in enumerate(self.list_inputs(attrs)) if n in self.mutate_inputs)

    def optional_outputs_of(self, attrs):
        """The indices of the hidden outputs a call with ``attrs`` may skip (None passed)."""
        opt = self.optional_outputs
        return frozenset(opt(attrs)) if callable(opt) else opt

    def output_count(self, attrs):
        """How many outputs a call with ``attrs`` has."""
        n = self.num_outputs
        return n(attrs) if callable(n) else n

    def list_outputs(self, attrs):
        """Output names: ``output_names``, else ``['output']`` or ``output0..outputN-1``."""
        names = self._output_names
        if names is not None:
            return list(names(attrs) if callable(names) else names)
        n = self.output_count(attrs)
        return ["output"] if n == 1 else [f"output{i}" for i in range(n)]

    def num_visible_outputs(self, attrs):
        """How many of the outputs a call returns (the rest are internal, MXNet's
        FNumVisibleOutputs)."""
        n = self._num_visible
        if n is None:
            return self.output_count(attrs)
        return n(attrs) if callable(n) else n

    def infer_shape_partial(self, in_shapes, attrs, out_shapes=None):
        """``(in_shapes, out_shapes)`` with every shape it can infer filled in; None marks an
        unknown shape (see ``mxlite.ops.shape_partial``)."""
        return infer_shape_partial(self, in_shapes, attrs, out_shapes)

    def __repr__(self):
        return f"<OpDef {self.name}>"


REGISTRY = {}


def register(op):
    """Add ``op`` (and its aliases) to the registry; a duplicate name is a programming error."""
    names = (op.name,) + op.aliases
    for name in names:          # check every name first: a clash registers nothing
        if name in REGISTRY or names.count(name) > 1:
            raise ValueError(f"operator {name!r} registered twice")
    for name in names:
        REGISTRY[name] = op
    return op


def get_op(name):
    """The ``OpDef`` registered under ``name`` (or an alias); MXNetError if unknown."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise MXNetError(f"unknown operator {name!r}") from None


# MXNet's prefixes: ``_sample_*`` (the per-element samplers) stay in _internal, as MXNet's
# (nd.random.uniform/multinomial are Python front ends over them: mxlite/_random_dispatch.py)
_PREFIXES = (("_random_", "random"), ("_contrib_", "contrib"), ("_linalg_", "linalg"),
             ("_image_", "image"), ("_sparse_", "sparse"))


def namespace_of(name):
    """Where a registered name appears: ('random', 'randint') for ``_random_randint``."""
    for prefix, ns in _PREFIXES:
        if name.startswith(prefix):
            return ns, name[len(prefix):]
    if name.startswith("_"):
        return "_internal", name
    return "", name


def list_ops():
    """Every registered op: a list of ``(name, namespace, differentiable)``, names sorted."""
    return [(name, namespace_of(name)[0], REGISTRY[name].differentiable)
            for name in sorted(REGISTRY)]
