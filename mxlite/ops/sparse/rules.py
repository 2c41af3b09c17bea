"""The ``storage`` field of an operator record: which sparse inputs an op computes natively.

A ``StorageRule`` is one native implementation (MXNet's FInferStorageType choosing
FComputeEx): the storage types of the inputs it takes, the storage types of the outputs it
makes, and its compute functions. ``find`` picks the first rule of a record that takes a
call; a call with a sparse input that no rule takes runs on dense copies of its inputs
(``mxlite.ndarray._sparse_invoke``: MXNet's storage fallback, with its one-time warning).

A sparse compute function is ``fn(rctx, values, attrs, shapes, dtypes) -> [values]``: the
inputs as raw values (a dense device array, or a ``CSR``/``RowSparse`` of
``mxlite.ops.sparse.formats``), the inferred output shapes and dtypes, and it returns the
outputs as raw values of the storage types the rule declares (a sparse result's number of
stored values is known only once it is computed, so outputs are made, not filled).
"""
from ..registry import REGISTRY
from .formats import DEFAULT, STYPES

__all__ = ["StorageRule", "add_rule", "find", "ANY", "SPARSE", "MXNET_SPARSE_NAMESPACE"]

# The ops of MXNet 1.9.1's ``mx.nd.sparse`` that have no storage rule here: MXNet computes
# them natively only for some storage types (a row_sparse weight of FullyConnected, ...)
# and falls back otherwise; here every sparse call of them runs on dense copies. With the
# ops that have a rule they make up ``mx.nd.sparse`` and ``mx.sym.sparse``.
MXNET_SPARSE_NAMESPACE = (
    "ElementWiseSum", "FullyConnected", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "arccos", "arccosh", "broadcast_add",
    "broadcast_minus", "broadcast_plus", "broadcast_sub", "concat", "cos", "cosh",
    "elemwise_div", "exp", "gamma", "gammaln", "log", "log10", "log2", "norm", "rsqrt",
    "sigmoid")

ANY = "*"                   # an input of any storage type
SPARSE = "sparse"           # an input of either sparse storage type


class StorageRule:
    """One native sparse implementation of an op.

    - ``inputs``: a storage type per input ('default', 'csr', 'row_sparse', ``ANY`` or
      ``SPARSE``); a variadic op's rule may give one type that every input must have;
    - ``outputs``: the output storage types, or ``fn(attrs, in_stypes)`` -> them;
    - ``compute``: {kernels: fn} as an OpDef's (see the module docstring);
    - ``when``: ``fn(attrs, in_shapes)`` -> whether this call is taken (default: always),
      e.g. ``sum`` of a csr matrix along axis 0 or 1 only;
    - ``writes_out``: the compute function takes ``out=`` (the raw dense arrays of the
      call's ``out=``, or None) and writes its results there, returning those arrays (an
      optimizer's in-place update of a few rows); inputs the op mutates are updated in
      place as with its dense kernels.
    """

    __slots__ = ("inputs", "outputs", "compute", "when", "writes_out")

    def __init__(self, inputs, outputs, compute, when=None, writes_out=False):
        for s in inputs:
            if s not in STYPES + (ANY, SPARSE):
                raise ValueError(f"StorageRule: unknown storage type {s!r}")
        self.inputs, self.outputs = tuple(inputs), outputs
        self.compute, self.when, self.writes_out = dict(compute), when, writes_out

    def takes(self, stypes, attrs, shapes, variadic):
        """Whether this rule computes a call with inputs of ``stypes`` and ``shapes``."""
        pattern = self.inputs * len(stypes) if variadic and len(self.inputs) == 1 \
            else self.inputs
        if len(pattern) != len(stypes):
            return False
        for want, have in zip(pattern, stypes):
            if want == ANY or want == have or (want == SPARSE and have != DEFAULT):
                continue
            return False
        return self.when is None or bool(self.when(attrs, shapes))

    def output_stypes(self, attrs, stypes):
        """The storage types of the outputs of a call this rule takes."""
        return tuple(self.outputs(attrs, stypes) if callable(self.outputs) else self.outputs)


def add_rule(name, rule):
    """Append ``rule`` to the record of op ``name`` (and so to its aliases')."""
    op = REGISTRY[name]
    op.storage = op.storage + (rule,)
    return rule


def find(op, stypes, attrs, shapes):
    """The first rule of ``op`` that takes inputs of these storage types and shapes, or None."""
    for rule in op.storage:
        if rule.takes(stypes, attrs, shapes, op.variadic):
            return rule
    return None
