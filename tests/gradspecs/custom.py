"""Gradient specs: operators written in Python (mx.operator.Custom).

The cube's backward is written with ``mx.nd`` calls, so its gradient differentiates again:
the row checks orders 1..3 by finite differences. ``_backward_Custom`` (the backward as a
graph node) has no gradient of its own (as in MXNet) and so no row here."""
import mxlite as mx

from . import Spec


class _Cube(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        x = in_data[0]
        self.assign(in_grad[0], req[0], 3 * x * x * out_grad[0])


@mx.operator.register("gradspec_cube")
class _CubeProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Cube()


SPECS = {
    "Custom": Spec([(3, 4)], lambda nd, x: nd.Custom(x, op_type="gradspec_cube")),
}
