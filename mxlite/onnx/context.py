"""What a translation writes into: the ONNX nodes and constants of one export, with the
shape and dtype of every mxlite value (from mxlite's own shape and type inference)."""
import numpy as np

from ..base import MXNetError

__all__ = ["ExportContext", "Names"]


class Names:
    """Unique value and node names: ``reserve`` claims a name, ``fresh(base)`` makes one."""

    def __init__(self):
        self._names = set()
        self._count = 0

    def reserve(self, name):
        """Claim ``name`` (a graph input, output or mxlite value) so ``fresh`` avoids it."""
        self._names.add(name)
        return name

    def fresh(self, base):
        """A name not used yet, starting with ``base``."""
        while True:
            self._count += 1
            name = f"{base}__{self._count}"
            if name not in self._names:
                self._names.add(name)
                return name


class ExportContext(Names):
    """The ONNX graph under construction.

    ``shape(entry)`` / ``dtype(entry)``: an mxlite value's static shape and dtype (an entry
    is ``(SymNode, output index)``); ``node(...)`` adds an ONNX node, ``const(...)`` an
    initializer, ``fresh(base)`` a new unique value name; ``dynamic`` is True when the
    graph's batch axis is symbolic (then translations must not bake it into constants)."""

    def __init__(self, onnx, opset, shapes, dtypes, dynamic):
        self.onnx, self.helper = onnx, onnx.helper
        self.opset, self.dynamic = opset, dynamic
        self._shapes, self._dtypes = shapes, dtypes
        self.nodes, self.initializers = [], []
        super().__init__()

    # ---- values ----------------------------------------------------------------------------
    def shape(self, entry):
        return tuple(self._shapes.get(*entry))

    def dtype(self, entry):
        return np.dtype(self._dtypes.get(*entry))

    # ---- nodes ------------------------------------------------------------------------------
    def node(self, op_type, inputs, outputs=None, name=None, **attrs):
        """Add ONNX node ``op_type``; ``outputs`` default to one fresh name. Returns the
        output names (one name when there is one output)."""
        if outputs is None:
            outputs = [self.fresh(op_type.lower())]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.helper.make_node(op_type, list(inputs), list(outputs),
                                                name=name or self.fresh(op_type), **attrs))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def takes(self, op_type, dtype, input_index=0):
        """True when ONNX operator ``op_type`` (at this export's opset) accepts ``dtype`` at
        input ``input_index`` (its type constraint)."""
        helper = self.onnx.helper
        schema = self.onnx.defs.get_schema(op_type, self.opset)
        formal = schema.inputs[min(input_index, len(schema.inputs) - 1)].type_str
        tensor_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        wanted = f"tensor({helper.tensor_dtype_to_string(tensor_type).split('.')[-1].lower()})"
        for c in schema.type_constraints:
            if c.type_param_str == formal:
                return wanted in c.allowed_type_strs
        return wanted == formal

    def cast(self, value, dtype):
        """``value`` cast to ``dtype`` (a NumPy dtype)."""
        return self.node("Cast", [value], to=self.onnx.helper.np_dtype_to_tensor_dtype(
            np.dtype(dtype)))

    def in_dtype_it_takes(self, op_type, node, ins, outs, **attrs):
        """``op_type`` on ``ins`` giving ``node``'s output dtype: inputs of another dtype
        are cast to it first (mxlite computes an integer's sqrt in float32), and a dtype
        the ONNX operator does not take goes through float64 and back."""
        out = self.dtype((node, 0))
        ins = [x if self.dtype(e) == out else self.cast(x, out)
               for x, e in zip(ins, node.inputs)]
        if self.takes(op_type, out):
            return self.node(op_type, ins, outs, **attrs)
        wide = [self.cast(x, np.float64) for x in ins]
        return self.node("Cast", [self.node(op_type, wide, **attrs)], outs,
                         to=self.onnx.helper.np_dtype_to_tensor_dtype(out))

    def const(self, value, dtype=None, base="const"):
        """An initializer holding ``value`` (a NumPy array or a Python number/list)."""
        array = np.asarray(value, dtype=dtype)
        name = self.fresh(base)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def int64s(self, values, base="shape"):
        """A 1-D int64 constant (shapes, axes, pads)."""
        return self.const(np.asarray(list(values), dtype=np.int64), base=base)

    def unsupported(self, node, what):
        """MXNetError: ``node``'s attributes ask for something its translation cannot
        write (named, with the attribute)."""
        return MXNetError(f"export_model: node {node.name!r} ({node.op.name}): {what} has no "
                          "ONNX translation")
