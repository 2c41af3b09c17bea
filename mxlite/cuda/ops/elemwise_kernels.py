"""CUDA kernels of the element-wise operators, generated from the expression tables of
``mxlite/_core/kernel_table.py`` (the strings the CPU template compiles, never restated).

Each expression becomes a ``static __device__`` function of its kernel, computing in the work
type (float16 loads and stores its bits and computes in float32, as on the CPU); the kernel
converts the stored operands to it and the result back (``mxlite.cuda.casts.convert``).
One family per operator (``elemwise_<op>``), so the emulator and the NVRTC check compile one
operator's kernels together.

* unary ``mxlite_<op>_<dtype>(x, y, n)``: one kernel per *input* dtype; integer or bool input
  of a float-only op reads as float32 and writes float32 (the CPU's dtype rule), with no
  temporary;
* binary ``mxlite_<op>_<dtype>_<variant>``: a, b and the output of one dtype, in variants
  ``vv`` (same-size contiguous operands: a plain index), ``vs``/``sv`` (one operand a scalar
  passed by value, in the work type), ``v1``/``1v`` (one operand a one-element array) and
  ``lay`` (broadcasting through an ``mx_layout``);
* ``mxlite_polygamma_<dtype>(x, y, order, n)``.
"""
import numpy as np

from ..._core.kernel_table import BINARY, BOOL_UNARY, UNARY
from ..casts import CTYPE, DTYPES, FLOATS, convert, work_dtype
from ..kernels import kernel

__all__ = ["UnaryKernel", "unary_kernels", "binary_kernels", "polygamma_kernels"]


class UnaryKernel:
    """A unary kernel, the dtype it writes (``out``) and that dtype's NumPy char."""

    __slots__ = ("kernel", "out", "char")

    def __init__(self, kernel_, out):
        self.kernel, self.out = kernel_, np.dtype(out)
        self.char = self.out.char


def _unary_types(name, src):
    """(work dtype, output dtype, expression) of unary op ``name`` on ``src`` input, as the
    CPU's dtype rule gives them (mxlite/ops/elemwise.py ``_unary_type``)."""
    float_expr, int_expr = UNARY[name]
    if src in FLOATS:
        return work_dtype(src), src, float_expr
    if src == "bool":
        if name in BOOL_UNARY:
            return "bool", "bool", int_expr
        return "float32", "float32", float_expr
    if int_expr is not None:
        return src, src, int_expr
    return "float32", "float32", float_expr


def _function(kname, work, params, expr):
    """The ``static __device__`` function ``<kname>_f`` computing ``expr`` in ``work``."""
    w = CTYPE[work]
    args = ", ".join(f"{w} {p}" for p in params)
    return (f"static __device__ __forceinline__ {w} {kname}_f({args}) {{\n"
            f"    typedef {w} T;\n    return {expr};\n}}\n")


def unary_kernels(name):
    """{input dtype: UnaryKernel} of unary op ``name``."""
    table = {}
    for src in DTYPES:
        work, out, expr = _unary_types(name, src)
        k = f"mxlite_{name}_{src}"
        value = convert(work, out, f"{k}_f({convert(src, work, 'x[i]')})")
        code = _function(k, work, ("x",), expr) + f"""
extern "C" __global__ void {k}(const {CTYPE[src]}* x, {CTYPE[out]}* y, mx_idx n) {{
    MX_GRID_LOOP(i, n) y[i] = {value};
}}
"""
        table[src] = UnaryKernel(kernel(f"elemwise_{name}", k, code), out)
    return table


# variant: (parameters before the output, load of a, load of b, set-up line)
_BINARY_VARIANTS = {
    "vv": ("const S* a, const S* b", "LD(a[i])", "LD(b[i])", ""),
    "vs": ("const S* a, const W b", "LD(a[i])", "b", ""),
    "sv": ("const W a, const S* b", "a", "LD(b[i])", ""),
    "v1": ("const S* a, const S* b", "LD(a[i])", "bv", "\n    const W bv = LD(b[0]);"),
    "1v": ("const S* a, const S* b", "av", "LD(b[i])", "\n    const W av = LD(a[0]);"),
    "lay": ("const S* a, const S* b", "LD(a[ia])", "LD(b[ib])", ""),
}


def _binary_expr(name, dtype):
    """The kernel_table expression of binary op ``name`` for ``dtype`` (None: no kernel)."""
    float_expr, int_expr, bool_expr = BINARY[name]
    if dtype in FLOATS:
        return float_expr
    return bool_expr if dtype == "bool" else int_expr


def binary_kernels(name):
    """{dtype: {variant: Kernel}} of binary op ``name``: the dtypes with an expression."""
    table = {}
    for dt in DTYPES:
        expr = _binary_expr(name, dt)
        if expr is None:
            continue
        work = work_dtype(dt)
        s, w = CTYPE[dt], CTYPE[work]
        variants = {}
        for variant, (params, load_a, load_b, setup) in _BINARY_VARIANTS.items():
            k = f"mxlite_{name}_{dt}_{variant}"
            la, lb, su = (_load(x, dt, work) for x in (load_a, load_b, setup))
            layout_param = ", const mx_layout l" if variant == "lay" else ""
            params_c, su = (t.replace("const S*", f"const {s}*").replace("const W", f"const {w}")
                            for t in (params, su))
            value = convert(work, dt, f"{k}_f({la}, {lb})")
            body = f"o[i] = {value};"
            if variant == "lay":
                body = f"{{\n        mx_idx ia, ib;\n        mx_offset2(l, i, ia, ib);\n" \
                       f"        {body}\n    }}"
            code = _function(k, work, ("a", "b"), expr) + f"""
extern "C" __global__ void {k}({params_c}, {s}* o{layout_param}, mx_idx n) {{{su}
    MX_GRID_LOOP(i, n) {body}
}}
"""
            variants[variant] = kernel(f"elemwise_{name}", k, code)
        table[dt] = variants
    return table


def _load(text, dtype, work):
    """``text`` with each ``LD(e)`` replaced by the conversion of ``e`` to the work type."""
    while "LD(" in text:
        start = text.index("LD(")
        depth, end = 0, start + 2
        for end in range(start + 2, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
        text = text[:start] + convert(dtype, work, text[start + 3:end]) + text[end + 1:]
    return text


def polygamma_kernels():
    """{input dtype: UnaryKernel} of ``_polygamma``: float64 computes in float64, every other
    dtype in float32 (float16 stored back as float16), as the CPU does."""
    table = {}
    for src in DTYPES:
        out = src if src in FLOATS else "float32"
        work = "float64" if src == "float64" else "float32"
        k = f"mxlite_polygamma_{src}"
        w = CTYPE[work]
        value = convert(work, out, f"({w})mx::polygamma(order, (double)"
                                   f"{convert(src, work, 'x[i]')})")
        code = f"""
extern "C" __global__ void {k}(const {CTYPE[src]}* x, {CTYPE[out]}* y, const int order,
                               mx_idx n) {{
    MX_GRID_LOOP(i, n) y[i] = {value};
}}
"""
        table[src] = UnaryKernel(kernel("polygamma", k, code), out)
    return table
