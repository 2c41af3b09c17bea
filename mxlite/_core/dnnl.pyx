# cython: language_level=3
# distutils: language = c++
"""oneDNN primitives for the heavy CPU operators (``mx_dnnl.h`` holds the C++ side).

This module links against no library: ``mxlite/ops/onednn.py`` loads ``libdnnl`` (the
``onednn-cpu-gomp`` wheel) with its symbols global before importing it, and where that
library is missing the import fails and the reference kernels run instead. Each function
takes C-contiguous float32 arrays in mxlite's own layouts and raises ``Refused`` when oneDNN
does not take the problem (the caller falls back); it re-checks dtypes, contiguity and sizes
before touching a pointer. The GIL is released while a primitive runs.
"""
from libc.stdint cimport int64_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cimport numpy as cnp

cnp.import_array()


cdef extern from "mx_dnnl.h" namespace "mxdnnl" nogil:
    cdef enum class dt "dnnl::memory::data_type":
        f32 "dnnl::memory::data_type::f32"
        bf16 "dnnl::memory::data_type::bf16"

    cdef cppclass ConvProblem:
        vector[int64_t] x, w, b, y, stride, dilate, pad_l, pad_r, xs, ws, ys
        dt type

    cdef cppclass WeightStamp:
        uint64_t serial, version

    cdef cppclass WeightCache:
        void set_budget(size_t b)
        size_t bytes()
        size_t size()

    WeightCache& weight_cache()

    int c_conv_forward "mxdnnl::conv_forward"(const ConvProblem& p, void* x, void* w, void* b, void* y,
                     const WeightStamp& st, char* err, size_t errn) except +
    int c_conv_backward_data "mxdnnl::conv_backward_data"(const ConvProblem& p, void* gy, void* w, void* gx,
                           const WeightStamp& st, char* err, size_t errn) except +
    int c_conv_backward_weights "mxdnnl::conv_backward_weights"(const ConvProblem& p, void* x, void* gy, void* gw,
                              char* err, size_t errn) except +
    cdef cppclass MatmulProblem:
        vector[int64_t] a, a_strides, b, b_strides, c
        dt type

    int c_matmul "mxdnnl::matmul"(const MatmulProblem& p, void* a, void* b, void* c,
                                  char* err, size_t errn) except +
    size_t cached_primitives()
    void clear_caches()
    size_t& arena_keep_bytes()


cdef extern from "mx_dnnl_nn.h" namespace "mxdnnl" nogil:
    cdef cppclass PoolProblem:
        vector[int64_t] x, y, kernel, stride, pad_l, pad_r, xs, ys
        int kind
        dt type

    int c_pool_forward "mxdnnl::pool_forward"(const PoolProblem& p, void* x, void* y,
                                              char* err, size_t errn) except +
    int c_pool_backward "mxdnnl::pool_backward"(const PoolProblem& p, void* x, void* gy,
                                                void* gx, char* err, size_t errn) except +

    cdef cppclass NormProblem:
        vector[int64_t] x
        float eps
        cbool stats
        dt type

    int c_bnorm_forward "mxdnnl::bnorm_forward"(const NormProblem& p, void* x, void* gamma,
                                                void* beta, void* mean, void* var, void* y,
                                                char* err, size_t errn) except +
    int c_lnorm_forward "mxdnnl::lnorm_forward"(const NormProblem& p, void* x, void* gamma,
                                                void* beta, void* mean, void* var, void* y,
                                                char* err, size_t errn) except +
    size_t cached_nn_primitives()
    void clear_nn_caches()


cdef extern from "mx_dnnl_softmax.h" namespace "mxdnnl" nogil:
    cdef cppclass SoftmaxProblem:
        vector[int64_t] shape
        int64_t axis
        cbool log
        dt type

    int c_softmax_backward "mxdnnl::softmax_backward"(const SoftmaxProblem& p, void* y,
                                                      void* g, void* dx, char* err,
                                                      size_t errn) except +
    size_t softmax_cache_size "mxdnnl::softmax_bwd_cache().size"()
    void softmax_cache_clear "mxdnnl::softmax_bwd_cache().clear"()


cdef extern from "mx_dnnl_lrn.h" namespace "mxdnnl" nogil:
    cdef cppclass LrnProblem:
        vector[int64_t] x
        int64_t size
        float alpha, beta, k
        dt type

    int c_lrn_forward "mxdnnl::lrn_forward"(const LrnProblem& p, void* x, void* y,
                                            char* err, size_t errn) except +
    size_t lrn_cache_size "mxdnnl::lrn_fwd_cache().size"()
    void lrn_cache_clear "mxdnnl::lrn_fwd_cache().clear"()


cdef extern from "mx_dnnl_rnn.h" namespace "mxdnnl" nogil:
    cdef cppclass RnnProblem:
        vector[int64_t] x, wx_strides, wh_strides
        int64_t H, D
        int mode
        dt type

    int c_rnn_forward "mxdnnl::rnn_forward"(const RnnProblem& p, void* x, void* wx, void* wh,
                                            void* bias, void* h0, void* c0, void* y, void* hy,
                                            void* cy, char* err, size_t errn) except +
    size_t rnn_cache_size "mxdnnl::rnn_fwd_cache().size"()
    void rnn_cache_clear "mxdnnl::rnn_fwd_cache().clear"()


cdef extern from "oneapi/dnnl/dnnl.h" nogil:
    ctypedef struct dnnl_version_t:
        int major, minor, patch
        const char* hash
    const dnnl_version_t* dnnl_version()


class Refused(Exception):
    """oneDNN does not take this problem; run the reference kernel."""


def version():
    """The loaded oneDNN library's version, ``(major, minor, patch)``."""
    cdef const dnnl_version_t* v = dnnl_version()
    return (v.major, v.minor, v.patch)


def cache_size():
    """Primitives held in the bounded caches (tests check they stay bounded)."""
    return (cached_primitives() + cached_nn_primitives() + softmax_cache_size()
            + lrn_cache_size() + rnn_cache_size())


def set_scratch_keep(size_t nbytes):
    """The bytes of scratch (blocked copies, scratchpads) a thread keeps between calls;
    larger buffers are freed when their call ends. Returns the previous value."""
    cdef size_t old = arena_keep_bytes()
    (&arena_keep_bytes())[0] = nbytes
    return old


def clear():
    """Drop every cached primitive."""
    clear_caches()
    clear_nn_caches()
    rnn_cache_clear()
    softmax_cache_clear()
    lrn_cache_clear()


cdef dt _type(arrays, contiguous=True) except *:
    first = arrays[0].dtype
    for a in arrays:
        if a is None:
            continue
        if not isinstance(a, cnp.ndarray) or (contiguous and not a.flags.c_contiguous):
            raise Refused("arrays must be C-contiguous NumPy arrays")
        if a.dtype != first:
            raise Refused(f"dtypes differ: {[str(b.dtype) for b in arrays if b is not None]}")
    if first == "float32":
        return dt.f32
    if first.name == "bfloat16":
        return dt.bf16
    raise Refused(f"dtype {first} is not float32 or bfloat16")


cdef void* _ptr(a):
    return NULL if a is None else cnp.PyArray_DATA(<cnp.ndarray>a)


cdef list _element_strides(a):
    """``a``'s strides in elements ([] for a C-contiguous array); Refused unless positive
    whole elements (a channels-last array's channels-first view, say)."""
    if a.flags.c_contiguous:
        return []
    strides = [t // a.itemsize for t in a.strides]
    if any(s * a.itemsize != t or (s <= 0 and n > 1) for s, t, n in
           zip(strides, a.strides, a.shape)):
        raise Refused("strides are not positive whole elements")
    return strides


cdef ConvProblem _conv_problem(x, w, y, stride, dilate, pad, groups, arrays) except *:
    """oneDNN's description of ``y = conv(x, w)``: MXNet's dilation (1 = dense) becomes
    oneDNN's (0 = dense), a grouped weight gets its leading group axis, and the right
    padding is what makes the last window end where MXNet's output size says (none where
    the last windows stop short of the data's end, as a strided 1x1 kernel over an even
    size does: oneDNN's output size rounds down, as MXNet's). The arrays may be strided
    views (the channels-first views of channels-last arrays): their strides go with them."""
    cdef ConvProblem p
    nd = len(stride)
    w_shape = w.shape
    if x.ndim != nd + 2 or y.ndim != nd + 2 or len(w_shape) != nd + 2:
        raise Refused("ranks do not match the kernel")
    p.type = _type(arrays, contiguous=False)
    p.x = list(x.shape)
    p.y = list(y.shape)
    p.xs = _element_strides(x)
    p.ys = _element_strides(y)
    ws = _element_strides(w)
    p.w = list(w_shape) if groups == 1 else \
        [groups, w_shape[0] // groups] + list(w_shape[1:])
    p.ws = ws if groups == 1 or not ws else [ws[0] * (w_shape[0] // groups)] + ws
    p.b = [y.shape[1]]
    p.stride = list(stride)
    p.dilate = [d - 1 for d in dilate]
    p.pad_l = list(pad)
    right = []
    for i in range(nd):
        extent = (w_shape[2 + i] - 1) * dilate[i] + 1
        r = (y.shape[2 + i] - 1) * stride[i] + extent - x.shape[2 + i] - pad[i]
        if r < 0 and (x.shape[2 + i] + pad[i] - extent) // stride[i] + 1 == y.shape[2 + i]:
            r = 0           # the rows past the last window are read by none
        if r < 0:
            raise Refused("a negative right padding")
        right.append(r)
    p.pad_r = right
    return p


cdef _check(int rc, char* err):
    if rc != 0:
        raise Refused(err.decode("utf-8", "replace"))


cdef WeightStamp _stamp(stamp) except *:
    """A weight's (serial, version) for the weight cache; None: not tracked (serial 0)."""
    cdef WeightStamp st
    if stamp is not None:
        st.serial, st.version = stamp
    return st


def set_weight_cache_bytes(size_t nbytes):
    """The bytes of blocked weight copies kept across calls (0: none)."""
    weight_cache().set_budget(nbytes)


def weight_cache_info():
    """(copies kept, their bytes)."""
    return weight_cache().size(), weight_cache().bytes()


def conv_forward(x, w, b, y, stride, dilate, pad, groups, stamp=None):
    """``y = Convolution(x, w) (+ b)``: x ``(N, C, *in)``, w ``(O, C/groups, *k)``, b
    ``(O,)`` or None, y ``(N, O, *out)`` (written). ``stamp``: the weight's (serial,
    version) where it is tracked (``mxlite.ops.onednn.weight_stamp``), else None."""
    if b is not None and not b.flags.c_contiguous:
        raise Refused("the bias must be C-contiguous")
    cdef ConvProblem p = _conv_problem(x, w, y, stride, dilate, pad, groups, [x, w, b, y])
    cdef char err[256]
    cdef void* px = _ptr(x)
    cdef void* pw = _ptr(w)
    cdef void* pb = _ptr(b)
    cdef void* py = _ptr(y)
    cdef WeightStamp st = _stamp(stamp)
    cdef int rc
    with nogil:
        rc = c_conv_forward(p, px, pw, pb, py, st, err, 256)
    _check(rc, err)


def conv_backward_data(gy, w, gx, stride, dilate, pad, groups, stamp=None):
    """``gx`` = the data gradient of ``Convolution(gx-shaped x, w)`` at output gradient
    ``gy`` (MXNet's Deconvolution of gy with w, without bias); ``stamp`` as for
    ``conv_forward``."""
    cdef ConvProblem p = _conv_problem(gx, w, gy, stride, dilate, pad, groups, [gy, w, gx])
    cdef char err[256]
    cdef void* pgy = _ptr(gy)
    cdef void* pw = _ptr(w)
    cdef void* pgx = _ptr(gx)
    cdef WeightStamp st = _stamp(stamp)
    cdef int rc
    with nogil:
        rc = c_conv_backward_data(p, pgy, pw, pgx, st, err, 256)
    _check(rc, err)


def conv_backward_weights(x, gy, gw, stride, dilate, pad, groups):
    """``gw`` (``(O, C/groups, *k)``) = the weight gradient of ``Convolution(x, w)`` at
    output gradient ``gy``."""
    cdef ConvProblem p = _conv_problem(x, gw, gy, stride, dilate, pad, groups, [x, gy, gw])
    cdef char err[256]
    cdef void* px = _ptr(x)
    cdef void* pgy = _ptr(gy)
    cdef void* pgw = _ptr(gw)
    cdef int rc
    with nogil:
        rc = c_conv_backward_weights(p, px, pgy, pgw, err, 256)
    _check(rc, err)


def _batched(a):
    """dims and element strides of a 2-D or 3-D array as 3-D (a leading batch of 1)."""
    item = a.itemsize
    strides = [s // item for s in a.strides]
    if any(s * item != t for s, t in zip(strides, a.strides)) or min(strides, default=0) < 0:
        raise Refused("strides are not whole, non-negative elements")
    if a.ndim == 2:
        return [1] + list(a.shape), [a.shape[0] * a.shape[1]] + strides
    if a.ndim == 3:
        return list(a.shape), strides
    raise Refused("matmul takes 2-D or 3-D arrays")


def matmul(a, b, c):
    """``c = a @ b`` for 2-D or 3-D (batched) arrays; ``a`` and ``b`` may be transposed
    views (any non-negative strides), ``c`` is C-contiguous."""
    cdef MatmulProblem p
    if a.ndim != b.ndim or c.ndim != a.ndim or not c.flags.c_contiguous:
        raise Refused("matmul: ranks differ or the output is not C-contiguous")
    if a.size == 0 or b.size == 0 or c.size == 0:
        raise Refused("matmul: empty operands")
    p.type = _type([a, b, c], contiguous=False)
    p.a, p.a_strides = _batched(a)
    p.b, p.b_strides = _batched(b)
    p.c = _batched(c)[0]
    cdef char err[256]
    cdef void* pa = _ptr(a)
    cdef void* pb = _ptr(b)
    cdef void* pc = _ptr(c)
    cdef int rc
    with nogil:
        rc = c_matmul(p, pa, pb, pc, err, 256)
    _check(rc, err)


# ---- pooling ---------------------------------------------------------------------------------
cdef PoolProblem _pool_problem(x, y, kernel, stride, pad, int kind, arrays) except *:
    """oneDNN's description of a pooling of ``x`` into ``y`` (both channels first; strided
    views, the channels-first views of channels-last arrays, keep their strides): the
    right padding is what makes the last window end where MXNet's output size says
    ('valid' or 'full'). Refused where oneDNN's result would differ from MXNet's: a window
    covering padding only (MXNet: 0), or avg counting the padding with a last window past
    the padded input (MXNet's divisor stops at the padded input's end, oneDNN's counts the
    whole kernel)."""
    cdef PoolProblem p
    nd = len(kernel)
    if kind not in (0, 1, 2, 3):
        raise Refused(f"pooling: unknown kind {kind}")
    if not 1 <= nd <= 3 or x.ndim != nd + 2 or y.ndim != nd + 2 \
            or len(stride) != nd or len(pad) != nd:
        raise Refused("pooling: ranks do not match the kernel")
    if x.shape[:2] != y.shape[:2] or x.size == 0 or y.size == 0:
        raise Refused(f"pooling: data {x.shape} and windows {y.shape} differ or are empty")
    p.type = _type(arrays, contiguous=False)
    right = []
    for i in range(nd):
        r = max((y.shape[2 + i] - 1) * stride[i] + kernel[i] - x.shape[2 + i] - pad[i], 0)
        if pad[i] >= kernel[i] or r >= kernel[i]:
            raise Refused("pooling: a window covering only padding")
        if kind == 1 and r > pad[i]:
            raise Refused("pooling: avg counting the padding past the padded input")
        right.append(r)
    p.x = list(x.shape)
    p.y = list(y.shape)
    p.xs = _element_strides(x)
    p.ys = _element_strides(y)
    p.kernel = list(kernel)
    p.stride = list(stride)
    p.pad_l = list(pad)
    p.pad_r = right
    p.kind = kind
    return p


def pool_forward(x, y, kernel, stride, pad, kind):
    """``y`` = the pooling of ``x`` (``(N, C, *in)`` to ``(N, C, *out)``): kind 0 max, 1 avg
    counting the padding, 2 avg counting only input elements, 3 sum."""
    cdef PoolProblem p = _pool_problem(x, y, kernel, stride, pad, kind, [x, y])
    cdef char err[256]
    cdef void* px = _ptr(x)
    cdef void* py = _ptr(y)
    cdef int rc
    with nogil:
        rc = c_pool_forward(p, px, py, err, 256)
    _check(rc, err)


def pool_max_backward(x, gy, gx, kernel, stride, pad):
    """``gx`` = ``gy`` added at the first maximum of each max-pooling window of ``x``
    (zeros elsewhere); ``gx`` may be ``x`` itself (the maxima are found first)."""
    if gx.shape != x.shape or gx.strides != x.strides:
        raise Refused("pooling: gradient and data layouts differ")
    cdef PoolProblem p = _pool_problem(x, gy, kernel, stride, pad, 0, [x, gy, gx])
    cdef char err[256]
    cdef void* px = _ptr(x)
    cdef void* pgy = _ptr(gy)
    cdef void* pgx = _ptr(gx)
    cdef int rc
    with nogil:
        rc = c_pool_backward(p, px, pgy, pgx, err, 256)
    _check(rc, err)


def pool_avg_backward(gy, gx, kernel, stride, pad, kind):
    """``gx`` = each window's ``gy`` divided by its count (kind 1: counting the padding,
    2: input elements only) added to every input element it covers."""
    if kind not in (1, 2):
        raise Refused("pooling: not an avg kind")
    cdef PoolProblem p = _pool_problem(gx, gy, kernel, stride, pad, kind, [gy, gx])
    cdef char err[256]
    cdef void* pgy = _ptr(gy)
    cdef void* pgx = _ptr(gx)
    cdef int rc
    with nogil:
        rc = c_pool_backward(p, NULL, pgy, pgx, err, 256)
    _check(rc, err)


# ---- normalisation ---------------------------------------------------------------------------
cdef NormProblem _norm_problem(x, y, dims, vectors, eps, stats) except *:
    """``x``/``y`` read as ``dims`` (their element count), ``vectors`` (None skipped) as
    ``(length, array)`` pairs of float32 vectors."""
    cdef NormProblem p
    p.type = _type([x, y])
    if p.type != dt.f32:
        raise Refused("normalisation: float32 data only")
    size = 1
    for d in dims:
        size *= d
    if size == 0 or x.size != size or y.size != size:
        raise Refused(f"normalisation: data of {x.size} elements read as {dims}")
    for n, v in vectors:
        if v is None:
            continue
        if not isinstance(v, cnp.ndarray) or v.dtype != "float32" \
                or not v.flags.c_contiguous or v.size != n:
            raise Refused(f"normalisation: a vector is not {n} contiguous float32 values")
    p.x = list(dims)
    p.eps = eps
    p.stats = stats
    return p


def bnorm_forward(x, gamma, beta, mean, var, y, a, c, b, eps, stats):
    """Batch normalisation of ``x`` read as ``(a, c, b)`` per channel ``c`` into ``y``:
    ``stats`` True computes the batch mean and biased variance into ``mean``/``var``
    (``(c,)``), False reads them. ``gamma``/``beta`` None: ``y`` is the normalised data."""
    if (gamma is None) != (beta is None):
        raise Refused("batch norm: gamma and beta come together")
    cdef NormProblem p = _norm_problem(x, y, (a, c, b), [(c, gamma), (c, beta), (c, mean),
                                                          (c, var)], eps, stats)
    cdef char err[256]
    cdef void* px = _ptr(x)
    cdef void* pg = _ptr(gamma)
    cdef void* pb = _ptr(beta)
    cdef void* pm = _ptr(mean)
    cdef void* pv = _ptr(var)
    cdef void* py = _ptr(y)
    cdef int rc
    with nogil:
        rc = c_bnorm_forward(p, px, pg, pb, pm, pv, py, err, 256)
    _check(rc, err)


def lnorm_forward(x, gamma, beta, mean, var, y, rows, cols, eps):
    """Layer normalisation of each row of ``x`` read as ``(rows, cols)`` into ``y``, with
    the rows' mean and biased variance written to ``mean``/``var`` (``rows`` values each);
    ``gamma``/``beta`` (``(cols,)``) None: ``y`` is the normalised data."""
    if (gamma is None) != (beta is None):
        raise Refused("layer norm: gamma and beta come together")
    cdef NormProblem p = _norm_problem(x, y, (rows, cols), [(cols, gamma), (cols, beta),
                                                            (rows, mean), (rows, var)],
                                       eps, True)
    cdef char err[256]
    cdef void* px = _ptr(x)
    cdef void* pg = _ptr(gamma)
    cdef void* pb = _ptr(beta)
    cdef void* pm = _ptr(mean)
    cdef void* pv = _ptr(var)
    cdef void* py = _ptr(y)
    cdef int rc
    with nogil:
        rc = c_lnorm_forward(p, px, pg, pb, pm, pv, py, err, 256)
    _check(rc, err)


def softmax_backward(y, g, dx, axis, log):
    """``dx``: the input gradient of softmax (``log`` False: ``y * (g - sum(g * y))``) or
    log-softmax (``log`` True: ``g - exp(y) * sum(g)``) along ``axis``, from the op's
    output ``y`` and its output gradient ``g`` (all of one shape)."""
    cdef SoftmaxProblem p
    if y.shape != g.shape or y.shape != dx.shape or not 0 <= axis < max(y.ndim, 1):
        raise Refused("softmax_backward: shapes differ or the axis is out of range")
    if y.size == 0:
        raise Refused("softmax_backward: empty arrays")
    p.type = _type([y, g, dx])
    p.shape = list(y.shape) if y.ndim else [1]
    p.axis = axis
    p.log = bool(log)
    cdef char err[256]
    cdef void* py = _ptr(y)
    cdef void* pg = _ptr(g)
    cdef void* pdx = _ptr(dx)
    cdef int rc
    with nogil:
        rc = c_softmax_backward(p, py, pg, pdx, err, 256)
    _check(rc, err)


def lrn_forward(x, y, size, alpha, beta, k):
    """``y`` = the local response normalisation of ``x`` (N, C, H, W) across ``size``
    channels (odd), oneDNN's convention: ``x / (k + alpha / size * sum(x**2))**beta``."""
    cdef LrnProblem p
    if x.ndim != 4 or x.shape != y.shape or x.size == 0:
        raise Refused("lrn_forward: data must be 4-D, non-empty and shaped as the output")
    if size < 1 or size % 2 == 0:
        raise Refused("lrn_forward: the window must be an odd number of channels")
    p.type = _type([x, y])
    p.x = list(x.shape)
    p.size, p.alpha, p.beta, p.k = size, alpha, beta, k
    cdef char err[256]
    cdef void* px = _ptr(x)
    cdef void* py = _ptr(y)
    cdef int rc
    with nogil:
        rc = c_lrn_forward(p, px, py, err, 256)
    _check(rc, err)


_RNN_MODES = {"lstm": 0, "rnn_tanh": 1, "rnn_relu": 2, "gru": 3}


def rnn_forward(x, params, wx_offset, wh_offset, wx_step, wh_step, bias, h0, c0, y, hy, cy,
                mode, state_size):
    """One layer of ``mode`` (lstm, rnn_tanh, rnn_relu, gru) over ``x`` (T, N, I),
    inference: writes ``y`` (T, N, D*H), ``hy`` and (lstm) ``cy`` (D, N, H) from
    ``h0``/``c0``. The weights are read in place from ``params`` (1-D): direction 0's i2h
    (G*H, I) at element ``wx_offset`` and h2h (G*H, H) at ``wh_offset``, direction 1's
    ``wx_step`` / ``wh_step`` elements further on, gates in oneDNN's order; ``bias`` (D,
    G*H) holds both biases summed (gru: (D, 4*H), see mx_dnnl_rnn.h)."""
    cdef RnnProblem p
    if mode not in _RNN_MODES:
        raise Refused(f"rnn_forward: mode {mode!r} runs on the reference kernels")
    arrays = [x, params, bias, h0, y, hy] + ([c0, cy] if mode == "lstm" else [])
    p.type = _type(arrays)
    p.mode = _RNN_MODES[mode]
    cdef int64_t T = x.shape[0], N = x.shape[1], I = x.shape[2], H = state_size
    cdef int64_t D = h0.shape[0], G = {"lstm": 4, "gru": 3}.get(mode, 1)
    cdef int64_t B = 4 if mode == "gru" else G
    if y.shape != (T, N, D * H) or hy.shape != (D, N, H) or bias.shape != (D, B * H):
        raise Refused("rnn_forward: shapes do not agree")
    if min(wx_offset, wh_offset, wx_step, wh_step) < 0 or \
            wx_offset + (D - 1) * wx_step + G * H * I > params.shape[0] or \
            wh_offset + (D - 1) * wh_step + G * H * H > params.shape[0]:
        raise Refused("rnn_forward: the weights lie outside the parameters")
    p.x = [T, N, I]
    p.H, p.D = H, D
    total = params.shape[0]
    # (layer, direction, input, gate, output) strides of a (G*H, K) row-major matrix
    p.wx_strides = [total, wx_step, 1, H * I, I]
    p.wh_strides = [total, wh_step, 1, H * H, H]
    cdef char err[256]
    cdef char* base = <char*>_ptr(params)
    cdef size_t item = params.itemsize
    cdef void* px = _ptr(x)
    cdef int64_t ox = wx_offset, oh = wh_offset
    cdef void* pwx = base + ox * item
    cdef void* pwh = base + oh * item
    cdef void* pb = _ptr(bias)
    cdef void* ph0 = _ptr(h0)
    cdef void* pc0 = _ptr(c0) if mode == "lstm" else NULL
    cdef void* py = _ptr(y)
    cdef void* phy = _ptr(hy)
    cdef void* pcy = _ptr(cy) if mode == "lstm" else NULL
    cdef int rc
    with nogil:
        rc = c_rnn_forward(p, px, pwx, pwh, pb, ph0, pc0, py, phy, pcy, err, 256)
    _check(rc, err)
