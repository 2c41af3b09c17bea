"""Helpers shared by the hand-written backward operators of several families
(``_sequence_last_grad``, ``_take_along_axis_grad``)."""
from ..base import FLOAT_DTYPES, op_error


def float_grad_type(op):
    """The ``infer_type`` of backward operator ``op`` whose first input is the head gradient:
    it must be a float array, and the output has its dtype."""
    def infer_type(dtypes, attrs):
        if dtypes[0] not in FLOAT_DTYPES:
            raise op_error(op, f"grad must be a float array, got {dtypes[0]}")
        return [dtypes[0]]
    return infer_type
