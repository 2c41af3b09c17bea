"""Small inference helpers and the float16/bfloat16 compute rule shared by operator families."""
import functools

import numpy as np

from ..base import FLOAT_DTYPES, NARROW_FLOATS, dtype_kind, op_error

__all__ = ["same_shape", "same_type", "F16", "F32", "compute_dtype", "run_in", "write_back",
           "in_work_dtype", "float_grad_type", "check_num_inputs", "kernels", "DEVICE_KERNELS",
           "truncates"]

F16 = np.dtype("float16")
F32 = np.dtype("float32")


def same_shape(shapes, attrs):
    """Output shape = the first input's shape."""
    return [shapes[0]]


def same_type(dtypes, attrs):
    """Output dtype = the first input's dtype."""
    return [dtypes[0]]


def compute_dtype(dtype):
    """float16 and bfloat16 are stored, not computed: kernels run in float32 and the result
    is cast back (rounded once, to nearest even)."""
    return F32 if dtype in NARROW_FLOATS else dtype


def run_in(dtype, arrays, xp=None):
    """``arrays`` cast to ``dtype`` where they differ (a copy only when needed), by the device
    namespace ``xp``'s ``converted`` where given (the CPU's converts float16 by a compiled
    cast, NumPy's bits in a tenth of the time)."""
    convert = getattr(xp, "converted", None)
    if convert is None:
        return [a if a.dtype == dtype else a.astype(dtype) for a in arrays]
    return [a if a.dtype == dtype else convert(a, dtype) for a in arrays]


def in_work_dtype(xp, ins, out, work=None):
    """``(work, ins, target)``: the dtype kernels compute in (``work``, by default
    ``compute_dtype``: float32 for float16), the inputs cast to it, and the array the result
    goes to: ``out`` itself, or a scratch array of the work dtype that ``write_back`` casts
    into ``out``."""
    work = compute_dtype(out.dtype) if work is None else work
    ins = run_in(work, ins, xp)
    return work, ins, (out if out.dtype == work else xp.empty(out.shape, work))


def float_grad_type(op):
    """The ``infer_type`` of backward operator ``op`` whose first input is the head gradient:
    it must be a float array, and the output has its dtype."""
    def infer_type(dtypes, attrs):
        if dtypes[0] not in FLOAT_DTYPES:
            raise op_error(op, f"grad must be a float array, got {dtypes[0]}")
        return [dtypes[0]]
    return infer_type


def truncates(from_dtype, to_dtype):
    """True where a conversion takes float values to integers or bool: the map is piecewise
    constant, so its derivative is zero wherever it exists (MXNet's ``Cast`` passed the head
    gradient through instead, torch detaches)."""
    return dtype_kind(from_dtype) == "f" and np.dtype(to_dtype).kind in "iub"


FLOAT16_BLOCK = 1 << 22     # elements of a float16 element-wise op computed at a time


def float16_in_blocks(compute, applies=lambda attrs: True):
    """An element-wise compute function (every input has the output's shape) that runs over
    flat blocks of ``FLOAT16_BLOCK`` elements when the output is float16 or bfloat16: its
    float32 copies (``in_work_dtype``) then hold one block, not the whole array (8 GiB of
    float16 data would otherwise need 16 GiB for the input copy and 16 GiB for the result).
    ``applies(attrs)`` says when the op is element-wise (LeakyReLU's prelu is not)."""
    def run(rctx, ins, outs, attrs):
        out = outs[0]
        if (out.dtype not in NARROW_FLOATS or out.size <= FLOAT16_BLOCK or len(outs) != 1
                or not applies(attrs)
                or any(a.shape != out.shape or not a.flags.c_contiguous for a in ins + outs)):
            return compute(rctx, ins, outs, attrs)
        flat_ins, flat_out = [a.reshape(-1) for a in ins], out.reshape(-1)
        for lo in range(0, out.size, FLOAT16_BLOCK):
            part = slice(lo, lo + FLOAT16_BLOCK)
            compute(rctx, [a[part] for a in flat_ins], [flat_out[part]], attrs)
    return functools.wraps(compute)(run)     # its module names the op's family (API docs)


def write_back(xp, result, out):
    """Store ``result`` into the preallocated ``out`` unless it already is ``out`` (a cast
    through namespace ``xp``: float16 overflow is inf)."""
    if result is not out:
        xp.cast_into(out, result)


def check_num_inputs(op, shapes, n):
    if len(shapes) != n:
        raise op_error(op, f"expected {n} input(s), got {len(shapes)}")


# ---- kernels of other devices -----------------------------------------------------------------
# A device backend whose kernels take the arguments of a CPU kernel module's functions
# (``mxlite._core.reduce.reduce``, ...) registers them here, so one compute function serves
# every device: {(rctx.kernels, CPU module name): an object with those functions}.
DEVICE_KERNELS = {}


def kernels(rctx, cpu_module):
    """``cpu_module`` (a ``mxlite._core`` kernel module) on the CPU, else the functions with
    the same signatures that ``rctx``'s device registered in DEVICE_KERNELS."""
    if rctx.kernels == "cpu":
        return cpu_module
    found = DEVICE_KERNELS.get((rctx.kernels, cpu_module.__name__))
    if found is None:
        raise op_error(cpu_module.__name__, f"no {rctx.kernels} kernels registered")
    return found


def plus(a, b):
    """``a + b`` where None is a zero: a head gradient nothing sent (``OpDef.none_ograds``)."""
    return a if b is None else b if a is None else a + b
