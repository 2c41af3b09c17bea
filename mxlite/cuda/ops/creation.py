"""GPU compute functions of the creation ops (``mxlite/ops/creation.py``): ``zeros``,
``ones``, ``full``, ``zeros_like``, ``ones_like`` (the fill kernel), ``arange`` (one kernel
per dtype computing each value from its index) and ``cast``, ``_copy``, ``BlockGrad``,
``MakeLoss``, ``_identity_with_attr_like_rhs`` (the CPU compute functions, written against the namespace's
``cast_into``/``copyto``)."""
import numpy as np

from ...ops.creation import _I64, _arange_plan, _fill_value
from ..casts import BY_CHAR, CTYPE, DTYPES, convert, fill
from ..kernels import kernel
from . import attach, device_generic


def _full_compute(rctx, ins, outs, attrs):
    fill(rctx.xp, outs[0], _fill_value("full", attrs))


def _fill_like_compute(value):
    """Fill the output with the int ``value`` (zeros, ones, zeros_like, ones_like)."""
    def compute(rctx, ins, outs, attrs):
        fill(rctx.xp, outs[0], value)
    return compute


def _arange_kernels():
    """{dtype char: (exact integer kernel, float kernel)}. Element j holds value k = j /
    repeat: ``start + k * step`` in 64-bit modular arithmetic (the true values fit int64) or
    in float64 (two roundings, as the CPU's ``start + step * k``), converted to the dtype."""
    table = {}
    for dt in DTYPES:
        c = CTYPE[dt]
        exact = kernel("arange", f"mxlite_arange_{dt}", f"""
extern "C" __global__ void mxlite_arange_{dt}({c}* y, const uint64_t start, const uint64_t step,
                                              const mx_idx repeat, mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        uint64_t k = (uint64_t)(repeat == 1 ? i : i / repeat);
        y[i] = {convert("int64", dt, "(int64_t)(k * step + start)")};
    }}
}}
""")
        floating = kernel("arange", f"mxlite_arange_{dt}_float", f"""
extern "C" __global__ void mxlite_arange_{dt}_float({c}* y, const double start, const double step,
                                                    const mx_idx repeat, mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        double k = (double)(repeat == 1 ? i : i / repeat);
        y[i] = {convert("float64", dt, "start + step * k")};
    }}
}}
""")
        table[dt] = (exact, floating)
    return {char: table[name] for char, name in BY_CHAR.items()}


_ARANGE = _arange_kernels()


def _arange_compute(rctx, ins, outs, attrs):
    start, step, n, dt = _arange_plan(attrs)
    out = outs[0]
    if n == 0:
        return
    exact, floating = _ARANGE[out.dtype.char]
    size, repeat = np.int64(out.size), np.int64(attrs.repeat)
    last = start + (n - 1) * step
    if isinstance(start, int) and isinstance(step, int) and \
            _I64[0] <= min(start, last) and max(start, last) <= _I64[1]:
        rctx.xp.launch(exact, out.size, out, np.uint64(start % (1 << 64)),
                       np.uint64(step % (1 << 64)), repeat, size)
    else:
        rctx.xp.launch(floating, out.size, out, np.float64(start), np.float64(step), repeat,
                       size)


attach("zeros", _fill_like_compute(0))
attach("ones", _fill_like_compute(1))
attach("full", _full_compute)
attach("zeros_like", _fill_like_compute(0))
attach("ones_like", _fill_like_compute(1))
attach("arange", _arange_compute)
device_generic("cast", "_copy", "BlockGrad", "MakeLoss", "_identity_with_attr_like_rhs")
# operators written in Python (mxlite/ops/custom.py): NDArray calls on the run context's device
device_generic("Custom", "_backward_Custom")
