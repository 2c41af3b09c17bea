"""The guard against 32-bit indices: every kernel source (the Cython kernels and their
templates, the C/C++ headers, the CUDA emulator header and the generated CUDA source of every
kernel family) is scanned for declarations of a 32-bit or platform-dependent integer type
(C ``int``, ``unsigned``, ``long`` -- 32-bit on Windows --, ``short``, ``int32_t``,
``uint32_t``; ``int8_t``..``uint16_t`` and ``char`` only ever hold elements). Sizes, indices, strides, offsets, counts
and loop counters are ``idx_t`` (Cython), ``int64_t`` or ``mx_idx`` (CUDA), so arrays past
2^32 elements index correctly; a narrow declaration passes only through ``ALLOWED`` below,
one entry per kind of value with its reason.

The scanner is a lexer-level heuristic, not a C parser: it drops comments, docstrings and
string literals (keeping the C blocks of ``cdef extern from *``), then reads each
``TYPE name`` that declares a variable, a parameter, a template parameter or a function (a
function or function-pointer declaration is named by the function), including the further
names of a declaration list (``cdef int i, j``, ``int a = 0, b;``). Pointers and arrays of
a narrow type (``const int32_t* x``, ``int[::1]``) are element storage and are not read.
"""
import glob
import os
import re

import mxlite  # noqa: F401  (imports every op family, so every CUDA kernel is registered)
from mxlite.cuda import kernels as cuda_kernels

CORE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(mxlite.__file__))),
                    "mxlite", "_core")
EMULATOR_HEADER = os.path.join(os.path.dirname(cuda_kernels.__file__), "mx_cuda_emu.h")

# A narrow or platform-dependent integer type. ``long long`` / ``unsigned long long`` are
# 64-bit everywhere; ``long double`` is a float; ``char`` is the byte type of raw buffers.
NARROW = (r"(?:unsigned\s+(?:int|short|long(?!\s+(?:long|double)))(?:\s+int)?"
          r"|unsigned(?!\s+(?:char|long|int|short))"
          r"|signed\s+int|short(?:\s+int)?|long(?!\s+(?:long|double))(?:\s+int)?"
          r"|u?int32_t|int)")
_IDENT = r"[A-Za-z_]\w*"
# TYPE name, or TYPE (*name) for a function pointer type; not a pointer or reference.
_DECL = re.compile(r"(?<![\w.:])(?P<type>" + NARROW + r")\b(?!\s*[*&])\s*"
                   r"(?P<fnptr>\(\s*\*\s*)?(?P<name>" + _IDENT + r")\s*(?P<after>[=;,)\[(:>{]|$)")
# 64-bit or non-integer spellings that contain a narrow keyword, read as one word first.
_WIDE = re.compile(r"\b(?:(?:unsigned\s+|signed\s+)?long\s+long(?:\s+int)?|long\s+double|"
                   r"unsigned\s+__int128|unsigned\s+char)\b")
# A Cython function returning a C tuple: cdef (int, idx_t) f(...).
_CTUPLE = re.compile(r"\s*c?p?def\s+(?:inline\s+)?\(([^)]*)\)\s*(" + _IDENT + r")\s*\(")
_NOT_NAMES = {"and", "or", "not", "is", "in", "if", "else", "return", "for", "as", "from",
              "long", "int", "short", "unsigned", "signed", "char", "double", "float", "const",
              "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t"}
# What may stand before a declaration that starts a statement (so a comma list follows).
_QUALIFIERS = re.compile(r"(?:\b(?:cdef|cpdef|ctypedef|public|readonly|inline|static|const|"
                         r"constexpr|extern|register|volatile|__device__|__global__|"
                         r"__forceinline__|[A-Z][A-Z0-9_]*)\b\s*)*$")


# The name a C line at file level defines: a macro with arguments, or a function.
_C_FUNCTION = re.compile(r"#\s*define\s+(" + _IDENT + r")\(|(?<![(\w])(?!__attribute__|if\b|"
                         r"for\b|while\b|switch\b|sizeof\b)(" + _IDENT + r")\s*\((?!\s*\*)")


class Declaration:
    """One narrow-typed declaration: where it is (file, line, the enclosing function), its
    type, the declared name, whether it names a function (its return type), and the line."""

    def __init__(self, path, line, function, ctype, name, returns, text):
        self.path, self.line, self.function = path, line, function
        self.ctype, self.name, self.returns, self.text = ctype, name, returns, text

    def __repr__(self):
        what = "returns" if self.returns else "declares"
        where = f" (in {self.function})" if self.function else ""
        return (f"{self.path}:{self.line}{where}: {what} {' '.join(self.ctype.split())} "
                f"{self.name}: {self.text.strip()}")


def _strip_strings(line):
    return re.sub(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', '""', line)


def _c_lines(lines, first=1):
    """(line number, code, enclosing function) for C/C++ source: comments and string
    literals removed; the function is the one whose body (brace depth > 0) holds the line."""
    out, in_block, depth, pending, function = [], False, 0, None, None
    for n, line in enumerate(lines, first):
        code = ""
        while line:
            if in_block:
                end = line.find("*/")
                if end < 0:
                    break
                line, in_block = line[end + 2:], False
                continue
            line = _strip_strings(line)
            start, slash = line.find("/*"), line.find("//")
            if slash >= 0 and (start < 0 or slash < start):
                code += line[:slash]
                break
            if start >= 0:
                code += line[:start] + " "
                line, in_block = line[start + 2:], True
                continue
            code += line
            break
        if depth == 0:
            head = _C_FUNCTION.search(code.replace("##", ""))
            pending = head.group(1) or head.group(2) if head else pending
            function = pending
        out.append((n, code, function))
        depth = max(0, depth + code.count("{") - code.count("}"))
        if depth == 0:
            function = pending = None if "{" in code or ";" in code else pending
    return out


def _cython_lines(text):
    """(line number, code, enclosing function) for Cython: the C blocks (the docstring of a
    ``cdef extern from *``) read as C, other docstrings dropped, comments and strings
    removed; the function is the latest ``def``/``cdef ... name(`` at column 0."""
    lines = text.splitlines()
    out, n, previous, function = [], 0, "", None
    while n < len(lines):
        line = lines[n]
        if line.strip().startswith(('"""', 'r"""')) and line.count('"""') == 1:
            end = next((m for m in range(n + 1, len(lines)) if '"""' in lines[m]), len(lines))
            if re.search(r"extern\s+from\s+\*.*:\s*$", previous):
                out.extend(_c_lines(lines[n + 1:end], n + 2))
            n, previous = end + 1, ""
            continue
        code = _strip_strings(re.sub(r'"""(?:.*?)"""|"""', '""', line))
        code = re.sub(r"#(?!define|include|if|endif|else|elif|undef|pragma).*", "", code)
        if code[:1].strip():
            head = re.match(r"(?:c?p?def|ctypedef)\b(?:\s*\([^)]*\))?[^(=]*?(?:\(\s*\*\s*)?("
                            + _IDENT + r")\s*[()]", code)
            function = head.group(1) if head else None
        out.append((n + 1, code, function))
        if code.strip():
            previous = code
        n += 1
    return out


def _split_top(text):
    """The items of a comma list up to the end of the statement (depth-0 ``;`` or ``)``)."""
    items, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and ch == ";":
            break
        elif depth == 0 and ch == ",":
            items.append(cur)
            cur = ""
            continue
        cur += ch
    items.append(cur)
    return items


def scan(path, text, language):
    """Every narrow-typed declaration in ``text`` (``language``: ``"c"`` or ``"cython"``)."""
    lines = _c_lines(text.splitlines()) if language == "c" else _cython_lines(text)
    found = []
    for n, code, function in lines:
        code = _WIDE.sub("wide_t", re.sub(r"\{\{.*?\}\}", "X", code))
        if code.lstrip().startswith(("from ", "cimport ", "import ")):
            continue
        ctuple = _CTUPLE.match(code)
        if ctuple and re.search(r"(?<![\w.:])" + NARROW + r"\b(?!\s*[*&])", ctuple.group(1)):
            found.append(Declaration(path, n, function, ctuple.group(1), ctuple.group(2), True,
                                     code))
        for m in _DECL.finditer(code):
            name = m.group("name")
            if name in _NOT_NAMES:
                continue
            after = m.group("after").strip()
            returns = bool(m.group("fnptr")) or after == "("
            found.append(Declaration(path, n, function, m.group("type"), name, returns, code))
            head = code[:m.start()].rstrip().rsplit(";", 1)[-1].rsplit("{", 1)[-1]
            head = re.split(r"\bfor\s*\(", head)[-1].strip()
            if not returns and after[:1] in ("=", ",") and _QUALIFIERS.search(head).start() == 0:
                for item in _split_top(code[m.end("name"):])[1:]:
                    more = re.match(r"\s*(" + _IDENT + r")\s*(?:[=\[]|$)", item)
                    if more:
                        found.append(Declaration(path, n, function, m.group("type"),
                                                 more.group(1), False, code))
    return found


def kernel_sources():
    """(display path, text, language) of every kernel source: the ``.pyx`` without a
    ``.pyx.in`` template, the templates, ``.pxd``/``.pxi``, the headers, the emulator header
    and one translation unit per CUDA kernel family."""
    out = []
    for pattern in ("*.pyx", "*.pyx.in", "*.pxd", "*.pxi", "*.h"):
        for path in sorted(glob.glob(os.path.join(CORE, pattern))):
            if path.endswith(".pyx") and os.path.exists(path + ".in"):
                continue            # generated from its template, which is scanned
            language = "c" if path.endswith(".h") else "cython"
            with open(path) as f:
                out.append((os.path.basename(path), f.read(), language))
    with open(EMULATOR_HEADER) as f:
        out.append(("mx_cuda_emu.h", f.read(), "c"))
    for family in cuda_kernels.families():
        out.append((f"cuda:{family}", cuda_kernels.family_source(family), "c"))
    return out


# (file, enclosing function, type, name, line, reason): the file, the function, the type and
# the name are regular expressions that must match whole (None: any), the line one that must
# occur in the declaration's line (None: any). Every other narrow declaration is taken for a
# size, index, stride, offset, count or loop counter, and fails.
_TAG = (r"kind|fkind|mkind|pkind|mode|log_mode|op|op_id|algo|ALGO|dist|rule|which|layout|"
        r"test|scan|axis|dt|fid|"
        r"typenum|kid|FORWARD|REFLECTED|INPLACE")
_FLAG = (r"final|inverse|include_pad|has_bias|has_xhat|deviations|masked|is64|out64|wide|"
         r"better|bad|failed|status|err|found|rc")
_STATUS_FN = (r"_drive|_\w*kind|_\w+_id|_check\w*|_run_items|_\w+_item|job_item|"
              r"_reduce_(rows|cols)|"
              r"_argreduce\w*|cols_fn|_softmax_f32|mx_act_f32|mxr_(cascade|cols)_\w+|mxv_nonzero|"
              r"mx_lemire(32|64)|mx_multinomial_cumsum|mx_serial")
ALLOWED = [
    (None, None, None, _TAG, None, "an enum, op id, dtype code, mode or axis selector: a tag"),
    (None, None, None, _FLAG, None, "a 0/1 flag or a status"),
    (None, None, None, None,
     r"\bint \w+ = (cnp\.PyArray_TYPE|_\w*(kind|_id))\(|= (CONTINUOUS|STREAM)\[",
     "holds what a tag function returns (a dtype code, kind or distribution id)"),
    (None, None, None, _STATUS_FN, None, "returns a status (0 / -1 / a failure flag) or a code"),
    (None, None, None, r"mx_(random|simd)_\w+|best|level|_level|mxwg_level", None,
     "a SIMD level (0..3)"),
    (None, None, None, None, r"\bfor \((int|unsigned) (\w+) = \d+; \2 <=? (\d+|[A-Z][A-Z0-9_]*);",
     "a loop with a compile-time constant trip count (SIMD lanes, a register tile, Philox "
     "rounds, series terms, the 3 spatial axes): the bound is a literal or macro"),
    (r"conv\.pyx", r"mx(wg|fw)_\w+", None, r"MR|NR|mr|nr", None,
     "rows/columns of a GEMM register tile (<= 4)"),
    (None, None, None, r"p|p_value|bits|order", None,
     "an exponent or an order (Lp pooling's p, mantissa bits, polygamma's order)"),
    (None, None, None, r"n|k|N|K", r"polygamma|factorial|template <int",
     "a derivative or series order (polygamma's n, a Taylor degree, a small factorial)"),
    (r"random\.pyx|philox\.h", None, r"uint32_t", r"k[01]|x[01]?|v|r|lo|hi|buf|attempt|"
     r"range(32)?|threshold(32)?|rejected|mx_\w+32\w*|mx_philox_word", None,
     "a Philox word, key half or counter word, or the range and threshold of the 32-bit "
     "Lemire path (int32 output)"),
    (r"philox\.h", None, None, r"pos", r"\bint pos;", "the next word of a 4-word Philox block"),
    (r"philox\.h", r"mx_(bits_f|from_bits_f|sel_[fd]|log_[fd]|exp_neg_[fd])", None, None, None,
     "the bit fields, binary exponents and branch-free selects of the sampler's arithmetic "
     "log and exp (no index)"),
    (r"philox\.h", r"mx_gamma_\w+|mx_open_f|mx_sample_gamma(_f)?", r"uint32_t", None, None,
     "a Philox word the gamma sampler consumes"),
    (r"philox\.h", None, r"int", r"boosted|squeeze|full|mx_gamma_try_[fd]", None,
     "a 0/1 flag of the gamma sampler (boosted, accepted by the squeeze or the full test)"),
    (r"mx_cuda\.h", r"mx_(half_to_float|float_to_half|double_to_half|double_to_i32)", None,
     None, None, "float16/float32 bit fields and an int32 element"),
    (r"resample\.pyx", r"mx_rs_half_to_float", r"uint32_t", r"sign|rest", None,
     "float16/float32 bit fields"),
    (r"random\.pyx", r"mx_double_to_half_fast", r"uint32_t", None, None,
     "float16/float32 bit fields"),
    (r"copy\.pyx", r"mx_cast_f(32_f16|16_f32|64_f16|16_f64)", r"uint32_t", None, None,
     "float16/float32 bit fields"),
    (r"mx_act\.h", None, r"int32_t", r"i|n|n1", None, "the exponent field of a float"),
    (r"mx_la_small\.h", r"mx_la_det_parts", None, r"e|ed", None,
     "the binary exponent frexp returns (an int in the C library's signature)"),
    (r"mx_math\.h", None, r"uint32_t", r"bits_of|b", None, "the bits of a float32 (bit casts)"),
    (r"finite\.pyx\.in", r"mxf_key_f\d+", None, None, None,
     "the sortable integer key of a float's bits"),
    (r"cuda:finite", r"mxlite_\w+_float(32|64)\w*", r"uint32_t", r"b", None,
     "a float32's bits, or a float64's high word"),
    (r"mx_cuda_emu\.h", None, None, None, None,
     "CUDA's own types, emulated: dim3 and the thread coordinates are unsigned int, bit "
     "casts take 32-bit words; kernels widen threadIdx and blockIdx to mx_idx before any "
     "arithmetic (MX_GRID_LOOP)"),
    (r"mx_cuda\.h", r"mx_offset", None, r"k", None, "the operand number (0..2) of a layout"),
    (r"mx_conv\.h", None, None, r"a", None, "a spatial axis (0..2)"),
    (r"mx_dnnl\w*\.h|dnnl\.pyx", None, None, None, r"\binline int \w+\(|\bint c_\w+ \"mxdnnl::",
     "a oneDNN wrapper returns a status (0, or -1 when oneDNN refuses the problem)"),
    (r"dnnl\.pyx", None, None, r"major|minor|patch", None, "oneDNN's version numbers"),
    (r"mx_dnnl\.h", None, None, r"a0|a1|ao", None,
     "a oneDNN argument id (DNNL_ARG_SRC, ...): a tag"),
    (r"optim\.pyx", None, None, r"_N_STATES", None,
     "the number of state arrays of an update (<= 2)"),
    (r"cuda:\w+", r"mxlite_\w*?(int32|_4)(_\w+)?", r"u?int32_t", None, None,
     "an element (or a 4-byte carrier) of the kernel's own int32/float32 dtype"),
]


def allowed_by(decl):
    """The ``ALLOWED`` entry that lets ``decl`` through, or None."""
    for entry in ALLOWED:
        where, function, ctype, name, text, _reason = entry
        if ((where is None or re.fullmatch(where, decl.path))
                and (function is None or re.fullmatch(function, decl.function or ""))
                and (ctype is None or re.fullmatch(ctype, " ".join(decl.ctype.split())))
                and (name is None or re.fullmatch(name, decl.name))
                and (text is None or re.search(text, decl.text))):
            return entry
    return None


def violations(sources):
    """The declarations of ``sources`` ((path, text, language) triples) no entry allows."""
    return [d for path, text, language in sources for d in scan(path, text, language)
            if allowed_by(d) is None]


def test_no_32bit_index_in_kernel_sources():
    """No kernel source declares a size, index, stride, offset, count or loop counter with a
    32-bit or platform-dependent integer type."""
    bad = violations(kernel_sources())
    assert not bad, ("32-bit or platform-dependent integer declarations (use idx_t / int64_t "
                     "/ mx_idx, or add an ALLOWED entry with a reason):\n"
                     + "\n".join(map(repr, bad)))


def test_sources_cover_every_kernel():
    """The scan reads the templates instead of their generated .pyx, every header and every
    CUDA family."""
    names = {path for path, _text, _language in kernel_sources()}
    assert {"elemwise.pyx.in", "reduce.pyx.in", "common.pxd", "philox.h", "mx_cuda.h",
            "mx_cuda_emu.h", "conv.pyx"} <= names
    assert "elemwise.pyx" not in names and "reduce.pyx" not in names
    families = cuda_kernels.families()
    assert len(families) > 20 and {f"cuda:{f}" for f in families} <= names


def test_every_allowed_entry_is_used():
    """An entry that no longer lets anything through goes (the list stays as short as the
    code allows)."""
    used = {id(allowed_by(d)) for path, text, language in kernel_sources()
            for d in scan(path, text, language)}
    stale = [entry for entry in ALLOWED if id(entry) not in used]
    assert not stale, f"ALLOWED entries that match nothing: {stale}"


PLANTED_C = """
// a kernel with a 32-bit loop counter over n elements, an int size and a 32-bit offset
extern "C" __global__ void mxlite_planted_int32(const int32_t* x, int32_t* y, int n) {
    for (int i = 0; i < n; ++i) {
        const int32_t v = x[i];                 /* an element: allowed */
        unsigned off = i * 2u, count;
        y[i] = v;
    }
    long stride = 4;
    for (mx_idx j = 0; j < (mx_idx)n; ++j) y[j] = 0;      // 64-bit: fine
}
"""

PLANTED_CYTHON = '''
cdef (int, idx_t) _shape2(cnp.ndarray x):
    """int docstrings are not code: int n = 0"""
    cdef int n = x.shape[0]      # the violation the guard exists for
    cdef int i, j = 0
    cdef idx_t k
    cdef int kind = _same_kind([x])
    cdef int32_t* p = <int32_t*>cnp.PyArray_DATA(x)
    for i in range(n):
        k = <int>i
    return n, k

cdef extern from *:
    """
    static int64_t mxp_sum(const int64_t* x, int64_t n) {
        int64_t s = 0;
        for (int i = 0; i < n; i++) s += x[i];
        return s;
    }
    """
'''


def _found(sources):
    return {(d.path, d.name, d.line) for d in violations(sources)}


def test_planted_violations_are_caught():
    """A test of the test: planted 32-bit sizes, offsets and loop counters are reported with
    file:line, and allowed element types, pointers, casts, docstrings and tags are not."""
    c = _found([("cuda:planted", PLANTED_C, "c")])
    assert c == {("cuda:planted", "n", 3), ("cuda:planted", "i", 4),
                 ("cuda:planted", "off", 6), ("cuda:planted", "count", 6),
                 ("cuda:planted", "stride", 9)}
    cy = _found([("planted.pyx", PLANTED_CYTHON, "cython")])
    assert cy == {("planted.pyx", "_shape2", 2), ("planted.pyx", "n", 4),
                  ("planted.pyx", "i", 5), ("planted.pyx", "j", 5),
                  ("planted.pyx", "i", 17)}
    message = repr(violations([("planted.pyx", PLANTED_CYTHON, "cython")])[1])
    assert message.startswith("planted.pyx:4 (in _shape2): declares int n:")


def test_allow_list_needs_the_right_place():
    """An allowed name is allowed only where its entry says: an int32 element outside an
    int32 kernel, or a Philox-named word in another file, is reported."""
    c = "static void f(const int32_t* x, int64_t i) { const int32_t v = x[i]; uint32_t r = 0; }"
    assert {d.name for d in violations([("mx_other.h", c, "c")])} == {"v", "r"}
    assert {d.name for d in violations([("philox.h", c, "c")])} == {"v"}
