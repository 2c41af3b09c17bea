"""Operators written in Python (MXNet's ``mx.operator``) and introspection of the registry.

A custom operator is a ``CustomOpProp`` subclass registered under a name::

    class Cube(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] ** 3)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            x = in_data[0]
            self.assign(in_grad[0], req[0], 3 * x * x * out_grad[0])

    @mx.operator.register("cube")
    class CubeProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Cube()

    y = mx.nd.Custom(x, op_type="cube")          # or mx.sym.Custom(data, op_type="cube")

Every call goes through the one registry record ``Custom`` (``mxlite/ops/custom.py``), so
``mx.nd``, ``mx.sym``, executors, the autograd tape and symbol JSON treat it like any other
operator. A backward written with ``mx.nd`` calls differentiates again (the module
docstring of ``mxlite.ops.custom`` says how). A symbol JSON can name only an ``op_type``
registered in the running process.
"""
import collections

from .ops.custom import PROPS
from .ops.params import REQUIRED
from .ops.registry import REGISTRY, get_op, list_ops
from .base import MXNetError

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "get_operator_arguments", "OperatorArguments", "list_ops", "get_op"]


class CustomOp:
    """The computation of a custom operator: override ``forward`` and ``backward``."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Write the outputs: ``out_data[i]`` (NDArrays of the inferred shapes), from
        ``in_data`` and the auxiliary states ``aux`` (which it may update). ``req[i]`` says
        how to write output i ('write', 'add', 'null'; ``assign`` follows it)."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Write the gradient of each input into ``in_grad[i]`` per ``req[i]``, from the
        head gradients ``out_grad`` and the forward's ``in_data``/``out_data``/``aux``.
        Computed with ``mx.nd`` calls, it differentiates again."""

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` as ``req`` says: 'null' nothing, 'write' or 'inplace'
        overwrite, 'add' accumulate."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] += src
        else:
            raise MXNetError(f"CustomOp.assign: req must be 'null', 'write', 'inplace' or "
                             f"'add', got {req!r}")


class CustomOpProp:
    """The description of a custom operator: its inputs, outputs, shapes and types, and
    the ``CustomOp`` it creates. Constructor keywords come from the call, as strings."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """``(argument shapes, output shapes[, auxiliary shapes])`` from the arguments'
        shapes (lists, in ``list_arguments`` order). Default: every output has the first
        argument's shape, no auxiliary state."""
        return in_shape, [in_shape[0]] * len(self.list_outputs()), []

    def infer_type(self, in_type):
        """``(argument types, output types[, auxiliary types])`` from the arguments' NumPy
        types. Default: the first argument's type everywhere."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """Storage types (MXNet's sparse API): mxlite stores every array densely (sparse
        storage comes with issue 26) and never calls this; the default says 'default'."""
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        """Backward storage types (MXNet's sparse API): every one 'default' (dense)."""
        return tuple(["default"] * len(s) for s in (ograd_stype, in_stype, out_stype,
                                                     igrad_stype, aux_stype))

    def list_outputs(self):
        """The output names (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """The argument (input) names (default ``['data']``)."""
        return ["data"]

    def list_auxiliary_states(self):
        """The auxiliary state names (default none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """What ``backward`` reads, as MXNet declares it: the head gradients when
        ``need_top_grad``, the inputs and the outputs. mxlite keeps all of them on the tape
        whatever this returns (a backward may read any)."""
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def need_top_grad(self):
        """Whether ``backward`` uses the head gradients."""
        return self.need_top_grad_

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The ``CustomOp`` to run on ``ctx`` for inputs of these shapes and types."""
        raise NotImplementedError("CustomOpProp.create_operator must be overridden")


def register(reg_name):
    """Class decorator: register a ``CustomOpProp`` subclass as op_type ``reg_name``
    (re-registering a name replaces it, as MXNet does)."""
    if not isinstance(reg_name, str) or not reg_name:
        raise MXNetError(f"operator.register: the name must be a non-empty string, got "
                         f"{reg_name!r}")

    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXNetError(f"operator.register({reg_name!r}): {prop_cls!r} is not a "
                             "CustomOpProp subclass")
        PROPS[reg_name] = prop_cls
        return prop_cls
    return do_register


register("custom_op")(CustomOpProp)      # MXNet registers the base class under this name


def get_all_registered_operators():
    """The names of every registered operator, aliases included (sorted)."""
    return sorted(REGISTRY)


OperatorArguments = collections.namedtuple("OperatorArguments", ["narg", "names", "types"])


def _type_text(p):
    if p.default is REQUIRED:
        return f"{p.kind}, required"
    return f"{p.kind}, optional, default={p.format(p.default)}"


def get_operator_arguments(op_name):
    """``OperatorArguments(narg, names, types)`` of a registered operator: its inputs
    ('NDArray-or-Symbol'; a variadic op's one 'NDArray-or-Symbol[]') then its parameters
    ('<kind>, required' or '<kind>, optional, default=<value>')."""
    op = get_op(op_name)
    if op.variadic:
        names = [op.inputs[0] if op.inputs else "data"]
        types = ["NDArray-or-Symbol[]"]
    else:
        names, types = list(op.inputs), ["NDArray-or-Symbol"] * len(op.inputs)
    for p in op.params:
        names.append(p.name)
        types.append(_type_text(p))
    return OperatorArguments(len(names), names, types)
