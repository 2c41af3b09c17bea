"""dtype conversions on the GPU: the C types of mxlite's dtypes, the C expression converting a
value between two dtypes exactly as the CPU casts (NumPy's unsafe cast on x86-64), and the
cast and fill kernels behind ``GpuNamespace.cast_into`` / ``fill_zero`` and the creation ops.

Conversions, as the CPU gives them:

* to bool: non-zero is true (NaN too; float16 tests its bits, so -0 is false);
* float to integer: toward zero; NaN and out-of-range values give INT_MIN of 32 bits (int8,
  uint8, int32: the low bits of it) or of 64 bits (int64), x86-64's "integer indefinite"
  (``mx_double_to_i32``/``mx_double_to_i64`` of mx_cuda.h; CUDA itself would saturate);
* to float16: one rounding to nearest even (float64 directly, not through float32), overflow
  to infinity; from float16: exact;
* integer to integer: the low bits (two's complement); integer to float: to nearest.
"""
import numpy as np

from .._core.kernel_table import DTYPES as _TABLE_DTYPES
from ..base import MXNetError
from .kernels import kernel
from .layout import element_strides, layout

__all__ = ["DTYPES", "FLOATS", "CTYPE", "work_dtype", "convert", "cast_into", "fill"]

# every dtype an NDArray holds, with its C storage type (float16 is its 16 bits)
CTYPE = {"float16": "uint16_t", **{name: ctype for name, ctype, _ in _TABLE_DTYPES}}
DTYPES = tuple(CTYPE)
FLOATS = ("float16", "float32", "float64")
# NumPy dtype char -> dtype name (int64 is 'l' or 'q' depending on the platform)
BY_CHAR = {np.dtype(name).char: name for name in DTYPES}
BY_CHAR.setdefault("q", "int64")
BY_CHAR.setdefault("l", "int64")


def work_dtype(name):
    """The dtype kernels compute ``name`` in: float16 is stored, computed in float32."""
    return "float32" if name == "float16" else name


def convert(src, dst, expr):
    """C expression: the value ``expr`` of dtype ``src`` (its storage form) as dtype ``dst``
    (its storage form), with the CPU's cast semantics (module docstring)."""
    if src == dst:
        return expr
    if dst == "bool":
        test = f"(({expr}) & 0x7fffu)" if src == "float16" else f"({expr})"
        return f"(uint8_t)({test} != 0)"
    if src == "float16":
        return convert("float32", dst, f"mx_half_to_float({expr})")
    if dst == "float16":
        if src == "float64":
            return f"mx_double_to_half({expr})"
        return f"mx_float_to_half((float)({expr}))"
    if src in FLOATS and dst not in FLOATS:
        to_int = "mx_double_to_i64" if dst == "int64" else "mx_double_to_i32"
        return f"({CTYPE[dst]}){to_int}((double)({expr}))"
    return f"({CTYPE[dst]})({expr})"


def _cast_kernels():
    dense, strided = {}, {}
    for src in DTYPES:
        for dst in DTYPES:
            if src == dst:
                continue
            s, d = CTYPE[src], CTYPE[dst]
            name = f"mxlite_cast_{src}_{dst}"
            dense[(src, dst)] = kernel("cast", name, f"""
extern "C" __global__ void {name}(const {s}* x, {d}* y, mx_idx n) {{
    MX_GRID_LOOP(i, n) y[i] = {convert(src, dst, "x[i]")};
}}
""")
            strided[(src, dst)] = kernel("cast", name + "_strided", f"""
extern "C" __global__ void {name}_strided(const {s}* x, {d}* y, const mx_layout l, mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        mx_idx ix, iy;
        mx_offset2(l, i, ix, iy);
        y[iy] = {convert(src, dst, "x[ix]")};
    }}
}}
""")
    return dense, strided


def _fill_kernels():
    dense, strided = {}, {}
    for size in (1, 2, 4, 8):
        u = f"uint{8 * size}_t"
        dense[size] = kernel("fill", f"mxlite_fill_{size}", f"""
extern "C" __global__ void mxlite_fill_{size}({u}* y, const {u} v, mx_idx n) {{
    MX_GRID_LOOP(i, n) y[i] = v;
}}
""")
        strided[size] = kernel("fill", f"mxlite_fill_{size}_strided", f"""
extern "C" __global__ void mxlite_fill_{size}_strided({u}* y, const {u} v, const mx_layout l,
                                                      mx_idx n) {{
    MX_GRID_LOOP(i, n) y[mx_offset(l, 0, i)] = v;
}}
""")
    return dense, strided


CAST, CAST_STRIDED = _cast_kernels()
FILL, FILL_STRIDED = _fill_kernels()
_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# (source char, destination char) -> (dense kernel, strided kernel)
_CAST_BY_CHAR = {(a, b): (CAST[(BY_CHAR[a], BY_CHAR[b])], CAST_STRIDED[(BY_CHAR[a], BY_CHAR[b])])
                 for a in BY_CHAR for b in BY_CHAR if BY_CHAR[a] != BY_CHAR[b]}
_FILL_BITS = {}     # (dtype char, int value) -> the value's bits (zeros, ones, constants)


def cast_into(xp, dst, src):
    """``dst[...] = src`` converted to ``dst``'s dtype, by a cast kernel of namespace ``xp``
    (``src`` may broadcast to ``dst``'s shape; either may be strided)."""
    ks = _CAST_BY_CHAR.get((src.dtype.char, dst.dtype.char))
    if ks is None or not (src.dtype.isnative and dst.dtype.isnative):
        raise MXNetError(f"cast_into: no GPU cast from {src.dtype} to {dst.dtype}")
    n = dst.size
    if n == 0:
        return
    if src.shape == dst.shape and src.flags.c_contiguous and dst.flags.c_contiguous:
        xp.launch(ks[0], n, src, dst, np.int64(n))
        return
    if src.shape != dst.shape:
        src = xp.lib.broadcast_to(src, dst.shape)
    lay = layout(dst.shape, element_strides(src), element_strides(dst))
    xp.launch(ks[1], n, src, dst, lay, np.int64(n))


def _bits(value, dt):
    """``value`` converted to ``dt`` on the host, as the unsigned integer of its bits."""
    if type(value) is int:
        key = (dt.char, value)
        bits = _FILL_BITS.get(key)
        if bits is None:
            if len(_FILL_BITS) >= 256:
                _FILL_BITS.clear()
            bits = _FILL_BITS[key] = np.asarray(value, dt).view(_BITS[dt.itemsize])[()]
        return bits
    return np.asarray(value, dt).view(_BITS[dt.itemsize])[()]


def fill(xp, out, value):
    """Every element of ``out`` (any strides) set to ``value`` converted to ``out``'s dtype
    (a NumPy conversion on the host: the kernel stores its bits)."""
    n = out.size
    if n == 0:
        return
    bits = _bits(value, out.dtype)
    if out.flags.c_contiguous:
        xp.launch(FILL[out.dtype.itemsize], n, out, bits, np.int64(n))
    else:
        lay = layout(out.shape, element_strides(out))
        xp.launch(FILL_STRIDED[out.dtype.itemsize], n, out, bits, lay, np.int64(n))
