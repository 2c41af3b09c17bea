"""Small inference helpers and the float16 compute rule shared by operator families."""
import numpy as np

from ..base import op_error

__all__ = ["same_shape", "same_type", "F16", "F32", "compute_dtype", "run_in", "check_num_inputs"]

F16 = np.dtype("float16")
F32 = np.dtype("float32")


def same_shape(shapes, attrs):
    """Output shape = the first input's shape."""
    return [shapes[0]]


def same_type(dtypes, attrs):
    """Output dtype = the first input's dtype."""
    return [dtypes[0]]


def compute_dtype(dtype):
    """float16 is stored, not computed: kernels run in float32 and the result is cast back."""
    return F32 if dtype == F16 else dtype


def run_in(dtype, arrays):
    """``arrays`` cast to ``dtype`` where they differ (a copy only when needed)."""
    return [a if a.dtype == dtype else a.astype(dtype) for a in arrays]


def write_back(xp, result, out):
    """Store ``result`` into the preallocated ``out`` unless it already is ``out`` (a cast
    through namespace ``xp``: float16 overflow is inf)."""
    if result is not out:
        xp.cast_into(out, result)


def check_num_inputs(op, shapes, n):
    if len(shapes) != n:
        raise op_error(op, f"expected {n} input(s), got {len(shapes)}")
