"""Large-tensor rows: operators written in Python (mx.operator.Custom) and their backward
node, over a custom op that doubles its input (int8, wrapping)."""
import mxlite as mx

from . import elementwise


class _Double(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] + in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] + out_grad[0])


@mx.operator.register("largespec_double")
class _DoubleProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Double()


ROWS = {
    "Custom": elementwise(lambda x: mx.nd.Custom(x, op_type="largespec_double")),
    # the head gradient, the input and the output all the one big array
    "_backward_Custom": elementwise(lambda g: mx.nd._internal._backward_Custom(
        g, g, g, op_type="largespec_double")),
}
