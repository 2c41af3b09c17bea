"""Small helpers shared by the compute and type functions of several operator families
(``nn.py``, ``conv.py``, ``sequence.py``, ``sorting.py``)."""
from ..base import FLOAT_DTYPES, op_error
from .common import compute_dtype, run_in


def in_work_dtype(xp, ins, out):
    """``(work, ins, target)``: the dtype kernels compute in (float32 for float16), the
    inputs cast to it, and the array the result goes to: ``out`` itself, or a scratch array
    of the work dtype that ``write_back`` casts into ``out``."""
    work = compute_dtype(out.dtype)
    ins = run_in(work, ins)
    return work, ins, (out if out.dtype == work else xp.empty(out.shape, work))


def float_grad_type(op):
    """The ``infer_type`` of backward operator ``op`` whose first input is the head gradient:
    it must be a float array, and the output has its dtype."""
    def infer_type(dtypes, attrs):
        if dtypes[0] not in FLOAT_DTYPES:
            raise op_error(op, f"grad must be a float array, got {dtypes[0]}")
        return [dtypes[0]]
    return infer_type
