# cython: language_level=3
"""Kernels of the convolution family: im2col/col2im (Convolution, Deconvolution and the
weight gradient ``_conv_weight_grad``), pooling (max, avg, sum; max pooling's scatter and
gather), and the layout moves between ``(N, F, L)`` and ``(F, N*L)``.

Every kernel works on 3 spatial axes ``(D, H, W)``: 1-D and 2-D calls pass leading spatial
axes of size 1 (kernel 1, stride 1, pad 0, dilation 1), so one loop nest serves NCW, NCHW and
NCDHW. The geometry is a tuple ``(N, C, in[3], out[3], kernel[3], stride[3], pad[3],
dilate[3])``; the caller (``mxlite/ops/conv.py``) computes the output sizes and validates
every shape, and each public function re-checks dtypes, sizes and contiguity before it
touches a pointer. Indices are int64 throughout.

Column layout: ``col[(c * K + k), n * L + l]`` with ``K`` the kernel volume and ``L`` the
output volume, so one GEMM per group covers the whole batch.
"""
from cython.parallel cimport prange
from libc.math cimport sqrt, cbrt

cimport numpy as cnp
from .common cimport idx_t, real, PARALLEL_MIN
from .parallel cimport mx_region, mx_serial, mx_region_begin, mx_region_mark, mx_region_end

cnp.import_array()


cdef struct Geom:
    idx_t N, C
    idx_t i0, i1, i2, o0, o1, o2
    idx_t k0, k1, k2, s0, s1, s2
    idx_t p0, p1, p2, d0, d1, d2
    idx_t vi, vo, vk


cdef Geom _geom(tuple g) except *:
    cdef Geom r
    N, C, i, o, k, s, p, d = g
    if not (len(i) == len(o) == len(k) == len(s) == len(p) == len(d) == 3):
        raise ValueError("conv kernels: geometry must have 3 spatial axes")
    r.N, r.C = N, C
    r.i0, r.i1, r.i2 = i
    r.o0, r.o1, r.o2 = o
    r.k0, r.k1, r.k2 = k
    r.s0, r.s1, r.s2 = s
    r.p0, r.p1, r.p2 = p
    r.d0, r.d1, r.d2 = d
    if min(r.N, r.C, r.i0, r.i1, r.i2, r.o0, r.o1, r.o2, r.k0, r.k1, r.k2) < 0 \
            or min(r.s0, r.s1, r.s2, r.d0, r.d1, r.d2) < 1 or min(r.p0, r.p1, r.p2) < 0:
        raise ValueError(f"conv kernels: invalid geometry {g}")
    r.vi = r.i0 * r.i1 * r.i2
    r.vo = r.o0 * r.o1 * r.o2
    r.vk = r.k0 * r.k1 * r.k2
    return r


cdef int _kind(cnp.ndarray a) except -1:
    """0 for float32, 1 for float64 (C-contiguous only); ValueError otherwise."""
    if not cnp.PyArray_IS_C_CONTIGUOUS(a):
        raise ValueError("conv kernels: arrays must be C-contiguous")
    t = cnp.PyArray_TYPE(a)
    if t == cnp.NPY_FLOAT32:
        return 0
    if t == cnp.NPY_FLOAT64:
        return 1
    raise ValueError(f"conv kernels: float32 or float64 arrays only, got {a.dtype}")


cdef int _same_kind(list arrays) except -1:
    cdef int k = _kind(arrays[0])
    for a in arrays[1:]:
        if _kind(a) != k:
            raise ValueError("conv kernels: arrays must share one dtype")
    return k


cdef void _check_size(cnp.ndarray a, idx_t n, str what) except *:
    if cnp.PyArray_SIZE(a) != n:
        raise ValueError(f"conv kernels: {what} has {cnp.PyArray_SIZE(a)} elements, "
                         f"expected {n}")


cdef inline bint _parallel(idx_t items, idx_t work) noexcept nogil:
    return items > 1 and work >= PARALLEL_MIN and not mx_serial(work)


# ---- im2col / col2im ---------------------------------------------------------------------------
cdef inline void _valid_range(idx_t n_out, idx_t n_in, idx_t stride, idx_t offset,
                              idx_t* lo, idx_t* hi) noexcept nogil:
    """The outputs ``o`` in [lo, hi) whose input ``o*stride + offset`` lies in [0, n_in)."""
    cdef idx_t a, b
    a = 0 if offset >= 0 else (-offset + stride - 1) // stride
    b = 0 if n_in - offset <= 0 else (n_in - offset + stride - 1) // stride
    lo[0] = a if a < n_out else n_out
    hi[0] = b if b < n_out else n_out
    if hi[0] < lo[0]:
        hi[0] = lo[0]


cdef void _im2col_item(const real* x, real* col, Geom* g, idx_t item) noexcept nogil:
    """Row ``r = item // N`` of col for image ``n = item % N``: one output row at a time,
    zeros outside [lo, hi) and a strided (stride 1: contiguous) copy inside."""
    cdef idx_t r = item // g.N, n = item % g.N
    cdef idx_t c = r // g.vk, kk = r % g.vk
    cdef idx_t ka = kk // (g.k1 * g.k2), kb = (kk // g.k2) % g.k1, kc = kk % g.k2
    cdef const real* src = x + (n * g.C + c) * g.vi
    cdef const real* row
    cdef real* dst = col + r * (g.N * g.vo) + n * g.vo
    cdef idx_t od, oh, ow, iz, iy, lo, hi, j = 0
    cdef idx_t off = kc * g.d2 - g.p2, s2 = g.s2
    _valid_range(g.o2, g.i2, s2, off, &lo, &hi)
    for od in range(g.o0):
        iz = od * g.s0 - g.p0 + ka * g.d0
        for oh in range(g.o1):
            iy = oh * g.s1 - g.p1 + kb * g.d1
            if iz < 0 or iz >= g.i0 or iy < 0 or iy >= g.i1:
                for ow in range(g.o2):
                    dst[j + ow] = 0
            else:
                row = src + (iz * g.i1 + iy) * g.i2 + off
                for ow in range(lo):
                    dst[j + ow] = 0
                if s2 == 1:
                    for ow in range(lo, hi):
                        dst[j + ow] = row[ow]
                else:
                    for ow in range(lo, hi):
                        dst[j + ow] = row[ow * s2]
                for ow in range(hi, g.o2):
                    dst[j + ow] = 0
            j += g.o2


cdef void _col2im_item(const real* col, real* x, Geom* g, idx_t item) noexcept nogil:
    """Image plane ``(n, c) = divmod(item, C)``: zeroed, then every column entry that reads
    it is added back (the adjoint of im2col)."""
    cdef idx_t n = item // g.C, c = item % g.C
    cdef real* dst = x + item * g.vi
    cdef real* row
    cdef const real* src
    cdef idx_t kk, ka, kb, kc, od, oh, ow, iz, iy, j, t, lo, hi, off, s2 = g.s2
    for t in range(g.vi):
        dst[t] = 0
    for kk in range(g.vk):
        ka = kk // (g.k1 * g.k2)
        kb = (kk // g.k2) % g.k1
        kc = kk % g.k2
        off = kc * g.d2 - g.p2
        _valid_range(g.o2, g.i2, s2, off, &lo, &hi)
        src = col + (c * g.vk + kk) * (g.N * g.vo) + n * g.vo
        j = 0
        for od in range(g.o0):
            iz = od * g.s0 - g.p0 + ka * g.d0
            for oh in range(g.o1):
                iy = oh * g.s1 - g.p1 + kb * g.d1
                if 0 <= iz < g.i0 and 0 <= iy < g.i1:
                    row = dst + (iz * g.i1 + iy) * g.i2 + off
                    if s2 == 1:
                        for ow in range(lo, hi):
                            row[ow] += src[j + ow]
                    else:
                        for ow in range(lo, hi):
                            row[ow * s2] += src[j + ow]
                j += g.o2


cdef inline void _cols_item(const real* src, real* dst, Geom* g, idx_t item,
                            bint adjoint) noexcept nogil:
    if adjoint:
        _col2im_item(src, dst, g, item)
    else:
        _im2col_item(src, dst, g, item)


cdef void _cols(const real* src, real* dst, Geom* g, bint adjoint) noexcept nogil:
    """im2col (src x, dst col: one item a column row and image) or, with ``adjoint``,
    col2im (src col, dst x: one item an image plane); the work is N*C*K*L either way."""
    cdef idx_t item, items = g.N * g.C if adjoint else g.C * g.vk * g.N
    cdef mx_region reg
    if _parallel(items, g.N * g.C * g.vk * g.vo):
        mx_region_begin(&reg)
        for item in prange(items, schedule="static"):
            mx_region_mark(&reg)
            _cols_item(src, dst, g, item, adjoint)
        mx_region_end(&reg)
    else:
        for item in range(items):
            _cols_item(src, dst, g, item, adjoint)


cdef void _im2col_both(cnp.ndarray x, cnp.ndarray col, tuple geometry, bint adjoint,
                       str x_what, str col_what) except *:
    """im2col (x to col) or, with ``adjoint``, col2im (col to x), after the checks."""
    cdef Geom g = _geom(geometry)
    cdef int kind = _same_kind([x, col])
    _check_size(x, g.N * g.C * g.vi, x_what)
    _check_size(col, g.C * g.vk * g.N * g.vo, col_what)
    cdef void* src = cnp.PyArray_DATA(col if adjoint else x)
    cdef void* dst = cnp.PyArray_DATA(x if adjoint else col)
    with nogil:
        if kind == 0:
            _cols(<const float*>src, <float*>dst, &g, adjoint)
        else:
            _cols(<const double*>src, <double*>dst, &g, adjoint)


def im2col(cnp.ndarray x, cnp.ndarray col, tuple geometry):
    """``col[(c*K + k), n*L + l]`` = the input element under kernel tap ``k`` of output
    position ``l`` (0 in the padding). ``x`` is ``(N, C, *in)``; ``col`` ``(C*K, N*L)``."""
    _im2col_both(x, col, geometry, False, "im2col input", "im2col columns")


def col2im(cnp.ndarray col, cnp.ndarray x, tuple geometry):
    """The adjoint of ``im2col``: ``x`` (overwritten) is the sum of the column entries that
    read each input element."""
    _im2col_both(x, col, geometry, True, "col2im output", "col2im columns")


# ---- layout moves: (N, F, L) <-> (F, N*L), with an optional bias --------------------------------
cdef inline void _move_row(const real* src, const real* bias, idx_t f, real* dst,
                           idx_t L) noexcept nogil:
    cdef idx_t l
    cdef real b
    if bias == NULL:
        for l in range(L):
            dst[l] = src[l]
    else:
        b = bias[f]
        for l in range(L):
            dst[l] = src[l] + b


cdef inline void _relayout_row(const real* src, const real* bias, real* dst, idx_t N, idx_t F,
                               idx_t L, bint to_nfl, idx_t item) noexcept nogil:
    """Row ``item`` = (n, f) of the (N, F, L) side, moved from (to_nfl) or to the
    (F, N*L) side."""
    cdef idx_t fnl = ((item % F) * N + item // F) * L
    if to_nfl:
        _move_row(src + fnl, bias, item % F, dst + item * L, L)
    else:
        _move_row(src + item * L, <const real*>NULL, 0, dst + fnl, L)


cdef void _relayout(const real* src, const real* bias, real* dst, idx_t N, idx_t F, idx_t L,
                    bint to_nfl) noexcept nogil:
    """(F, N*L) to (N, F, L) with the optional bias (to_nfl), or (N, F, L) to (F, N*L)."""
    cdef idx_t item
    cdef mx_region reg
    if _parallel(N * F, N * F * L):
        mx_region_begin(&reg)
        for item in prange(N * F, schedule="static"):
            mx_region_mark(&reg)
            _relayout_row(src, bias, dst, N, F, L, to_nfl, item)
        mx_region_end(&reg)
    else:
        for item in range(N * F):
            _relayout_row(src, bias, dst, N, F, L, to_nfl, item)


cdef void _relayout_checked(cnp.ndarray src, object bias, cnp.ndarray dst, idx_t N, idx_t F,
                            idx_t L, bint to_nfl, str src_what, str dst_what) except *:
    cdef int kind = _same_kind([src, dst] if bias is None else [src, dst, bias])
    _check_size(src, N * F * L, src_what)
    _check_size(dst, N * F * L, dst_what)
    if bias is not None:
        _check_size(bias, F, "bias")
    cdef void* s = cnp.PyArray_DATA(src)
    cdef void* b = NULL if bias is None else cnp.PyArray_DATA(bias)
    cdef void* d = cnp.PyArray_DATA(dst)
    with nogil:
        if kind == 0:
            _relayout(<const float*>s, <const float*>b, <float*>d, N, F, L, to_nfl)
        else:
            _relayout(<const double*>s, <const double*>b, <double*>d, N, F, L, to_nfl)


def fnl_to_nfl(cnp.ndarray src, object bias, cnp.ndarray dst, idx_t N, idx_t F, idx_t L):
    """``dst[n, f, l] = src[f, n, l] (+ bias[f])``: GEMM rows back to the NC... layout."""
    _relayout_checked(src, bias, dst, N, F, L, True, "fnl_to_nfl source",
                      "fnl_to_nfl target")


def nfl_to_fnl(cnp.ndarray src, cnp.ndarray dst, idx_t N, idx_t F, idx_t L):
    """``dst[f, n, l] = src[n, f, l]``: the layout a GEMM over the whole batch reads."""
    _relayout_checked(src, None, dst, N, F, L, False, "nfl_to_fnl source",
                      "nfl_to_fnl target")


cdef void _add_into(real* dst, const real* src, idx_t n) noexcept nogil:
    cdef idx_t i
    for i in range(n):
        dst[i] += src[i]


def add_into(cnp.ndarray dst, cnp.ndarray src):
    """``dst += src`` (same size and dtype): accumulates batch chunks of a weight gradient."""
    cdef int kind = _same_kind([dst, src])
    cdef idx_t n = cnp.PyArray_SIZE(dst)
    _check_size(src, n, "add_into source")
    if kind == 0:
        with nogil:
            _add_into(<float*>cnp.PyArray_DATA(dst), <const float*>cnp.PyArray_DATA(src), n)
    else:
        with nogil:
            _add_into(<double*>cnp.PyArray_DATA(dst), <const double*>cnp.PyArray_DATA(src), n)


# ---- the weight gradient, fused: im2col of a few images, then their product ------------------
# dW[f, j] = sum over images n and outputs l of gy[n, f, l] * col_n[j, l]. BLAS runs this
# shape (a few rows, a reduction over the whole batch) on one thread and well below its
# peak, after im2col wrote the whole batch's columns out of cache. Here the batch is cut
# into fixed groups of images (_WG_SPAN output positions or one image, and at least two
# groups for two images or more), one work item each:
# the item's columns go to a buffer of its own (still in cache when read), a product with
# explicit vectors (the widest level mx_simd.h allows) makes its partial weight gradient,
# and the partials are added in item order, so the result does not depend on the threads.
cdef extern from *:
    """
    #include "mx_simd.h"
    static int mxwg_level = 0;
    static void mxwg_init(void) { mxwg_level = mx_simd_default(); }
    #define MXWG_DEF(SUF, TGT, W)                                                            \\
    typedef float mxwg_v_##SUF __attribute__((vector_size(4 * W)));                        \\
    typedef float mxwg_u_##SUF __attribute__((vector_size(4 * W), aligned(4), may_alias)); \\
    static inline __attribute__((always_inline)) TGT void mxwg_tile_##SUF(                  \\
            const float* a, int64_t lda, int64_t aseg, const float* b, int64_t ldb,         \\
            int64_t bseg, int64_t k, int64_t nseg, float* c, int64_t ldc,                   \\
            const int MR, const int NR) {                                                   \\
        mxwg_v_##SUF acc[4][4], av[4], bv[4];                                               \\
        float tail[4][4];                                                                   \\
        for (int i = 0; i < MR; i++)                                                        \\
            for (int j = 0; j < NR; j++) { acc[i][j] = (mxwg_v_##SUF){0}; tail[i][j] = 0; } \\
        for (int64_t sg = 0; sg < nseg; sg++) {                                             \\
            const float* as = a + sg * aseg; const float* bs = b + sg * bseg;              \\
            int64_t p = 0;                                                                  \\
            for (; p + W <= k; p += W) {                                                    \\
                for (int i = 0; i < MR; i++) av[i] = *(const mxwg_u_##SUF*)(as + i * lda + p); \\
                for (int j = 0; j < NR; j++) bv[j] = *(const mxwg_u_##SUF*)(bs + j * ldb + p); \\
                for (int i = 0; i < MR; i++)                                                \\
                    for (int j = 0; j < NR; j++) acc[i][j] += av[i] * bv[j];                \\
            }                                                                               \\
            for (; p < k; p++)                                                              \\
                for (int i = 0; i < MR; i++)                                                \\
                    for (int j = 0; j < NR; j++)                                            \\
                        tail[i][j] += as[i * lda + p] * bs[j * ldb + p];                    \\
        }                                                                                   \\
        for (int i = 0; i < MR; i++)                                                        \\
            for (int j = 0; j < NR; j++) {                                                  \\
                float s = 0;                                                                \\
                for (int v = 0; v < W; v++) s += acc[i][j][v];                              \\
                c[i * ldc + j] = s + tail[i][j];                                            \\
            }                                                                               \\
    }                                                                                       \\
    static TGT void mxwg_block_##SUF(const float* a, int64_t lda, int64_t aseg,             \\
            const float* b, int64_t ldb, int64_t bseg, int64_t k, int64_t nseg, float* c,   \\
            int64_t m, int64_t n) {                                                         \\
        for (int64_t i = 0; i < m; i += 4)                                                  \\
            for (int64_t j = 0; j < n; j += 4) {                                            \\
                const float* ai = a + i * lda; const float* bj = b + j * ldb;               \\
                float* cij = c + i * n + j;                                                 \\
                int mr = m - i < 4 ? (int)(m - i) : 4, nr = n - j < 4 ? (int)(n - j) : 4;   \\
                switch (mr * 8 + nr) {                                                      \\
                case 36: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 4, 4); break; \\
                case 35: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 4, 3); break; \\
                case 34: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 4, 2); break; \\
                case 33: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 4, 1); break; \\
                case 28: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 3, 4); break; \\
                case 27: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 3, 3); break; \\
                case 26: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 3, 2); break; \\
                case 25: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 3, 1); break; \\
                case 20: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 2, 4); break; \\
                case 19: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 2, 3); break; \\
                case 18: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 2, 2); break; \\
                case 17: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 2, 1); break; \\
                case 12: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 1, 4); break; \\
                case 11: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 1, 3); break; \\
                case 10: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 1, 2); break; \\
                default: mxwg_tile_##SUF(ai, lda, aseg, bj, ldb, bseg, k, nseg, cij, n, 1, 1); break; \\
                }                                                                           \\
            }                                                                               \\
    }
    #define MXFW_DEF(SUF, TGT, W)                                                            \\
    static inline __attribute__((always_inline)) TGT void mxfw_tile_##SUF(                  \\
            const float* w, int64_t ldw, const float* b, int64_t ldb, int64_t kk,           \\
            const float* bias, float* c, int64_t ldc, const int MR) {                       \\
        mxwg_v_##SUF acc[4][2], b0, b1;                                                     \\
        for (int i = 0; i < MR; i++) { acc[i][0] = (mxwg_v_##SUF){0}; acc[i][1] = acc[i][0]; } \\
        for (int64_t j = 0; j < kk; j++) {                                                  \\
            b0 = *(const mxwg_u_##SUF*)(b + j * ldb);                                       \\
            b1 = *(const mxwg_u_##SUF*)(b + j * ldb + W);                                   \\
            for (int i = 0; i < MR; i++) {                                                  \\
                float s = w[i * ldw + j];                                                   \\
                acc[i][0] += s * b0; acc[i][1] += s * b1;                                   \\
            }                                                                               \\
        }                                                                                   \\
        for (int i = 0; i < MR; i++) {                                                      \\
            float bi = bias ? bias[i] : 0.0f;                                               \\
            if (bias) { acc[i][0] += bi; acc[i][1] += bi; }                                 \\
            *(mxwg_u_##SUF*)(c + i * ldc) = acc[i][0];                                      \\
            *(mxwg_u_##SUF*)(c + i * ldc + W) = acc[i][1];                                  \\
        }                                                                                   \\
    }                                                                                       \\
    static TGT void mxfw_block_##SUF(const float* w, int64_t ldw, const float* b,           \\
            int64_t ldb, int64_t kk, const float* bias, float* c, int64_t ldc, int64_t m,   \\
            int64_t n) {                                                                    \\
        int64_t l = 0;                                                                      \\
        for (; l + 2 * W <= n; l += 2 * W)                                                  \\
            for (int64_t i = 0; i < m; i += 4) {                                            \\
                const float* wi = w + i * ldw; const float* bi = bias ? bias + i : 0;       \\
                float* ci = c + i * ldc + l;                                                \\
                switch (m - i < 4 ? (int)(m - i) : 4) {                                     \\
                case 4: mxfw_tile_##SUF(wi, ldw, b + l, ldb, kk, bi, ci, ldc, 4); break;    \\
                case 3: mxfw_tile_##SUF(wi, ldw, b + l, ldb, kk, bi, ci, ldc, 3); break;    \\
                case 2: mxfw_tile_##SUF(wi, ldw, b + l, ldb, kk, bi, ci, ldc, 2); break;    \\
                default: mxfw_tile_##SUF(wi, ldw, b + l, ldb, kk, bi, ci, ldc, 1); break;   \\
                }                                                                           \\
            }                                                                               \\
        for (int64_t i = 0; i < m; i++)                                                     \\
            for (int64_t q = l; q < n; q++) {                                               \\
                float s = 0;                                                                \\
                for (int64_t j = 0; j < kk; j++) s += w[i * ldw + j] * b[j * ldb + q];      \\
                c[i * ldc + q] = bias ? s + bias[i] : s;                                    \\
            }                                                                               \\
    }
    MXWG_DEF(0, MX_TARGET_0, 4)
    MXWG_DEF(1, MX_TARGET_1, 8)
    MXWG_DEF(2, MX_TARGET_2, 16)
    MXFW_DEF(0, MX_TARGET_0, 4)
    MXFW_DEF(1, MX_TARGET_1, 8)
    MXFW_DEF(2, MX_TARGET_2, 16)
    /* c (m, n; row stride ldc) = w (m rows of kk, stride ldw) times b (kk rows of n,
       stride ldb), plus bias[i] on row i when bias is not NULL */
    static void mxfw_block(const float* w, int64_t ldw, const float* b, int64_t ldb,
                           int64_t kk, const float* bias, float* c, int64_t ldc, int64_t m,
                           int64_t n) {
        if (mxwg_level == 2) mxfw_block_2(w, ldw, b, ldb, kk, bias, c, ldc, m, n);
        else if (mxwg_level == 1) mxfw_block_1(w, ldw, b, ldb, kk, bias, c, ldc, m, n);
        else mxfw_block_0(w, ldw, b, ldb, kk, bias, c, ldc, m, n);
    }
    /* c (m, n, contiguous) = sum over nseg segments s of a_s (m rows of k, row stride lda)
       times b_s (n rows of k, row stride ldb) transposed; segment s starts at a + s*aseg,
       b + s*bseg. */
    static void mxwg_block(const float* a, int64_t lda, int64_t aseg, const float* b,
                           int64_t ldb, int64_t bseg, int64_t k, int64_t nseg, float* c,
                           int64_t m, int64_t n) {
        if (mxwg_level == 2) mxwg_block_2(a, lda, aseg, b, ldb, bseg, k, nseg, c, m, n);
        else if (mxwg_level == 1) mxwg_block_1(a, lda, aseg, b, ldb, bseg, k, nseg, c, m, n);
        else mxwg_block_0(a, lda, aseg, b, ldb, bseg, k, nseg, c, m, n);
    }
    """
    void mxwg_init() nogil
    void mxfw_block(const float* w, idx_t ldw, const float* b, idx_t ldb, idx_t kk,
                    const float* bias, float* c, idx_t ldc, idx_t m, idx_t n) nogil
    void mxwg_block(const float* a, idx_t lda, idx_t aseg, const float* b, idx_t ldb,
                    idx_t bseg, idx_t k, idx_t nseg, float* c, idx_t m, idx_t n) nogil

mxwg_init()

from libc.stdlib cimport malloc, free

# output positions (images times output volume) one work item of weight_grad covers
cdef idx_t _WG_SPAN = 4096


cdef struct Job:
    # one fused kernel call: its operands and geometry (fields a kernel does not use are 0)
    const float* a          # data (conv, weight gradient) or output gradient (deconv)
    const float* b          # weight, or the output gradient (weight gradient)
    const float* bias
    float* out
    Geom* g
    idx_t G, F, per, cin


ctypedef int (*job_item)(Job* job, idx_t item) noexcept nogil


cdef int _run_items(job_item fn, Job* job, idx_t items, idx_t work) noexcept nogil:
    """``fn(job, i)`` for every work item ``i``, on the OpenMP threads when the work is
    large (with the contention guard); 1 when an item could not allocate its buffer."""
    cdef idx_t i
    cdef int failed = 0
    cdef mx_region reg
    if _parallel(items, work):
        mx_region_begin(&reg)
        for i in prange(items, schedule="static"):
            mx_region_mark(&reg)
            if fn(job, i) < 0:
                failed = 1
        mx_region_end(&reg)
    else:
        for i in range(items):
            if fn(job, i) < 0:
                failed = 1
    return failed


cdef int _wg_item(Job* job, idx_t item) noexcept nogil:
    """Images [item*per, ...) : their columns into a buffer, then part[item] (F, C/G*K);
    -1 when the buffer cannot be allocated."""
    cdef const float* x = job.a
    cdef const float* gy = job.b
    cdef float* part = job.out
    cdef Geom* g = job.g
    cdef idx_t G = job.G, F = job.F, per = job.per
    cdef idx_t n0 = item * per, nb = g.N - item * per, i, r, grp
    cdef idx_t rows = g.C * g.vk, fg = F // G, cg = rows // G
    cdef Geom one = g[0]
    cdef float* buf
    if nb > per:
        nb = per
    buf = <float*>malloc(max(nb * rows * g.vo, 1) * sizeof(float))
    if buf == NULL:
        return -1
    one.N = 1
    for i in range(nb):
        for r in range(rows):
            _im2col_item(x + (n0 + i) * g.C * g.vi, buf + i * rows * g.vo, &one, r)
    for grp in range(G):
        mxwg_block(gy + (n0 * F + grp * fg) * g.vo, g.vo, F * g.vo,
                   buf + grp * cg * g.vo, g.vo, rows * g.vo, g.vo, nb,
                   part + item * F * cg + grp * fg * cg, fg, cg)
    free(buf)
    return 0


def weight_grad(cnp.ndarray x, cnp.ndarray gy, cnp.ndarray out, tuple geometry, idx_t G):
    """float32 ``out`` (F, C/G, *kernel) = the weight gradient of a convolution of ``x``
    (N, C, *in) with output gradient ``gy`` (N, F, *out): im2col and the product, fused
    (see above)."""
    cdef Geom g = _geom(geometry)
    if _same_kind([x, gy, out]) != 0:
        raise ValueError("conv kernels: weight_grad takes float32 arrays")
    cdef idx_t F = gy.shape[1] if gy.ndim > 1 else 0
    if G < 1 or F % G or g.C % G:
        raise ValueError("conv kernels: weight_grad: groups must divide channels and filters")
    _check_size(x, g.N * g.C * g.vi, "weight_grad data")
    _check_size(gy, g.N * F * g.vo, "weight_grad ograd")
    _check_size(out, F * (g.C // G) * g.vk, "weight_grad output")
    cdef idx_t size = F * (g.C // G) * g.vk
    cdef idx_t per = max(1, min((g.N + 1) // 2, _WG_SPAN // max(g.vo, 1)))
    cdef idx_t items = (g.N + per - 1) // per if g.N else 0
    cdef idx_t item, c
    cdef int failed = 0
    cdef const float* xp = <const float*>cnp.PyArray_DATA(x)
    cdef const float* gp = <const float*>cnp.PyArray_DATA(gy)
    cdef float* op = <float*>cnp.PyArray_DATA(out)
    cdef float* part = <float*>malloc(max(items * size, 1) * sizeof(float))
    if part == NULL:
        raise MemoryError()
    cdef Job job = Job(a=xp, b=gp, bias=NULL, out=part, g=&g, G=G, F=F, per=per, cin=0)
    with nogil:
        failed = _run_items(_wg_item, &job, items, g.N * g.C * g.vk * g.vo)
        for c in range(size):
            op[c] = 0
        for item in range(items):
            for c in range(size):
                op[c] += part[item * size + c]
    free(part)
    if failed:
        raise MemoryError()


# ---- Convolution's forward, fused: per image, im2col into a buffer of its own, then
# out[n] (F, L) = weight (F, C/G*K) times the columns (C*K, L) per group, plus the bias --------
cdef int _fw_item(Job* job, idx_t n) noexcept nogil:
    cdef const float* x = job.a
    cdef const float* w = job.b
    cdef const float* bias = job.bias
    cdef float* out = job.out
    cdef Geom* g = job.g
    cdef idx_t G = job.G, F = job.F
    cdef idx_t rows = g.C * g.vk, fg = F // G, cg = rows // G, r, grp
    cdef Geom one = g[0]
    cdef float* buf = <float*>malloc(max(rows * g.vo, 1) * sizeof(float))
    if buf == NULL:
        return -1
    one.N = 1
    for r in range(rows):
        _im2col_item(x + n * g.C * g.vi, buf, &one, r)
    for grp in range(G):
        mxfw_block(w + grp * fg * cg, cg, buf + grp * cg * g.vo, g.vo, cg,
                   NULL if bias == NULL else bias + grp * fg,
                   out + (n * F + grp * fg) * g.vo, g.vo, fg, g.vo)
    free(buf)
    return 0


def conv_forward(cnp.ndarray x, cnp.ndarray w, object bias, cnp.ndarray out, tuple geometry,
                 idx_t G):
    """float32 ``out`` (N, F, *out) = the convolution of ``x`` (N, C, *in) with ``w``
    (F, C/G, *kernel) (+ ``bias`` (F,)): im2col and the product fused, one image a work
    item."""
    cdef Geom g = _geom(geometry)
    if _same_kind([x, w, out] if bias is None else [x, w, out, bias]) != 0:
        raise ValueError("conv kernels: conv_forward takes float32 arrays")
    cdef idx_t F = w.shape[0] if w.ndim > 0 else 0
    if G < 1 or F % G or g.C % G:
        raise ValueError("conv kernels: conv_forward: groups must divide channels and filters")
    _check_size(x, g.N * g.C * g.vi, "conv_forward data")
    _check_size(w, F * (g.C // G) * g.vk, "conv_forward weight")
    _check_size(out, g.N * F * g.vo, "conv_forward output")
    if bias is not None:
        _check_size(bias, F, "bias")
    cdef const float* xp = <const float*>cnp.PyArray_DATA(x)
    cdef const float* wp = <const float*>cnp.PyArray_DATA(w)
    cdef const float* bp = NULL if bias is None else <const float*>cnp.PyArray_DATA(bias)
    cdef float* op = <float*>cnp.PyArray_DATA(out)
    cdef Job job = Job(a=xp, b=wp, bias=bp, out=op, g=&g, G=G, F=F, per=1, cin=0)
    cdef int failed
    with nogil:
        failed = _run_items(_fw_item, &job, g.N, g.N * g.C * g.vk * g.vo)
    if failed:
        raise MemoryError()


# ---- Deconvolution, fused: per image, cols (F*K, L) = weight^T times the data, then col2im ----
cdef int _dc_item(Job* job, idx_t n) noexcept nogil:
    cdef const float* y = job.a
    cdef const float* wt = job.b
    cdef float* out = job.out
    cdef Geom* g = job.g
    cdef idx_t G = job.G, Cin = job.cin
    cdef idx_t rows = g.C * g.vk, fk = rows // G, cin = Cin // G, c, grp
    cdef Geom one = g[0]
    cdef float* buf = <float*>malloc(max(rows * g.vo, 1) * sizeof(float))
    if buf == NULL:
        return -1
    one.N = 1
    for grp in range(G):
        mxfw_block(wt + grp * fk * cin, cin, y + (n * Cin + grp * cin) * g.vo, g.vo, cin,
                   NULL, buf + grp * fk * g.vo, g.vo, fk, g.vo)
    for c in range(g.C):
        _col2im_item(buf, out + n * g.C * g.vi, &one, c)
    free(buf)
    return 0


def deconv_forward(cnp.ndarray y, cnp.ndarray wt, cnp.ndarray out, tuple geometry, idx_t G):
    """float32 ``out`` (N, F, *out) = the deconvolution of ``y`` (N, Cin, *in) with the
    weight transposed per group, ``wt`` (G, F/G*K, Cin/G): per image the product and col2im,
    fused. ``geometry`` is the convolution's, from ``out`` (N, F, ...) to ``y``'s size."""
    cdef Geom g = _geom(geometry)
    if _same_kind([y, wt, out]) != 0:
        raise ValueError("conv kernels: deconv_forward takes float32 arrays")
    cdef idx_t Cin = y.shape[1] if y.ndim > 1 else 0
    if G < 1 or Cin % G or g.C % G:
        raise ValueError("conv kernels: deconv_forward: groups must divide the channels")
    _check_size(y, g.N * Cin * g.vo, "deconv_forward data")
    _check_size(wt, g.C * g.vk * (Cin // G), "deconv_forward weight")
    _check_size(out, g.N * g.C * g.vi, "deconv_forward output")
    cdef const float* yp = <const float*>cnp.PyArray_DATA(y)
    cdef const float* wp = <const float*>cnp.PyArray_DATA(wt)
    cdef float* op = <float*>cnp.PyArray_DATA(out)
    cdef Job job = Job(a=yp, b=wp, bias=NULL, out=op, g=&g, G=G, F=0, per=1, cin=Cin)
    cdef int failed
    with nogil:
        failed = _run_items(_dc_item, &job, g.N, g.N * g.C * g.vk * g.vo)
    if failed:
        raise MemoryError()


# ---- pooling -----------------------------------------------------------------------------------
# Window w of a plane covers [w*s - p, w*s - p + k) on each axis, clipped to the input.
# avg divides by the window clipped to the padded input [-p, in + p) (count_include_pad) or
# to the input itself; MXNet's rule, which 'full' windows running past the padding shrink.
cdef enum:
    POOL_MAX = 0
    POOL_AVG = 1
    POOL_SUM = 2
    POOL_LP = 3


cdef inline idx_t _lo(idx_t start) noexcept nogil:
    return start if start > 0 else 0


cdef inline idx_t _hi(idx_t end, idx_t n) noexcept nogil:
    return end if end < n else n


cdef inline idx_t _argmax(const real* x, Geom* g, idx_t od, idx_t oh, idx_t ow) noexcept nogil:
    """Flat index in the plane of the window's first maximum, a NaN being the maximum of
    any window it is in (as NumPy's max: a window's NaN is not silently dropped); -1 for an
    empty window."""
    cdef idx_t zs = od * g.s0 - g.p0, ys = oh * g.s1 - g.p1, xs = ow * g.s2 - g.p2
    cdef idx_t ze = _hi(zs + g.k0, g.i0), ye = _hi(ys + g.k1, g.i1), xe = _hi(xs + g.k2, g.i2)
    cdef idx_t z, y, xx, t, best = -1
    cdef real v, m = 0
    for z in range(_lo(zs), ze):
        for y in range(_lo(ys), ye):
            for xx in range(_lo(xs), xe):
                t = (z * g.i1 + y) * g.i2 + xx
                v = x[t]
                if best < 0 or v > m or (v != v and m == m):
                    best, m = t, v
    return best


cdef inline double _scale(Geom* g, idx_t od, idx_t oh, idx_t ow, int mode,
                        bint include_pad) noexcept nogil:
    """1 for sum; 1 / (the window's element count) for avg."""
    if mode != POOL_AVG:
        return 1
    cdef idx_t zs = od * g.s0 - g.p0, ys = oh * g.s1 - g.p1, xs = ow * g.s2 - g.p2
    cdef idx_t ze = _hi(zs + g.k0, g.i0 + g.p0), ye = _hi(ys + g.k1, g.i1 + g.p1)
    cdef idx_t xe = _hi(xs + g.k2, g.i2 + g.p2)
    cdef idx_t count
    if include_pad:
        count = (ze - zs) * (ye - ys) * (xe - xs)
    else:
        count = ((_hi(ze, g.i0) - _lo(zs)) * (_hi(ye, g.i1) - _lo(ys))
                 * (_hi(xe, g.i2) - _lo(xs)))
    return 1.0 / count if count > 0 else 0.0


cdef inline real _power(real v, int p) noexcept nogil:
    """v ** p for lp pooling (p in 1, 2, 3; signed, as MXNet)."""
    return v if p == 1 else (v * v if p == 2 else v * v * v)


cdef inline real _root(real v, int p) noexcept nogil:
    """The inverse of _power: v, sqrt(v), cbrt(v) (cbrt keeps the sign)."""
    return v if p == 1 else (sqrt(v) if p == 2 else cbrt(v))


cdef void _pool_plane(const real* x, const real* h, real* out, Geom* g, int op, int mode,
                      bint include_pad, idx_t plane, int p) noexcept nogil:
    """One (n, c) plane. op 0: forward (max value, or the scaled sum); 2: max gather
    (out[w] = h[argmax w]); 3: sum/avg backward (out = input gradient of the scaled sum,
    h = output gradient). (op 1, the max scatter, is ``_scatter_plane``.)"""
    cdef const real* xp = x + plane * g.vi if x != NULL else NULL
    cdef idx_t od, oh, ow, zs, ys, xs, z, y, xx, w = 0, t
    cdef real acc, sc
    cdef real* op_out
    if op == 3:
        op_out = out + plane * g.vi
        for t in range(g.vi):
            op_out[t] = 0
    else:
        op_out = out + plane * g.vo
    cdef const real* hp = NULL
    if h != NULL:
        hp = h + plane * (g.vo if op != 2 else g.vi)
    for od in range(g.o0):
        for oh in range(g.o1):
            for ow in range(g.o2):
                if mode == POOL_MAX:
                    t = _argmax(xp, g, od, oh, ow)
                    if op == 0:
                        op_out[w] = xp[t] if t >= 0 else 0
                    else:
                        op_out[w] = hp[t] if t >= 0 else 0
                else:
                    sc = <real>_scale(g, od, oh, ow, mode, include_pad)
                    zs = od * g.s0 - g.p0
                    ys = oh * g.s1 - g.p1
                    xs = ow * g.s2 - g.p2
                    if op == 0:
                        acc = 0
                        for z in range(_lo(zs), _hi(zs + g.k0, g.i0)):
                            for y in range(_lo(ys), _hi(ys + g.k1, g.i1)):
                                for xx in range(_lo(xs), _hi(xs + g.k2, g.i2)):
                                    acc = acc + _power(xp[(z * g.i1 + y) * g.i2 + xx], p)
                        op_out[w] = acc * sc if mode != POOL_LP else _root(acc, p)
                    else:
                        acc = hp[w] * sc
                        for z in range(_lo(zs), _hi(zs + g.k0, g.i0)):
                            for y in range(_lo(ys), _hi(ys + g.k1, g.i1)):
                                for xx in range(_lo(xs), _hi(xs + g.k2, g.i2)):
                                    op_out[(z * g.i1 + y) * g.i2 + xx] += acc
                w += 1


cdef bint _scatter_plane(const real* x, const real* h, real* out, Geom* g,
                        idx_t plane) noexcept nogil:
    """Max scatter of one plane: ``h`` added at each window's first maximum of ``x``. The
    maxima are all found before the plane of ``out`` is written, so ``out`` may be ``x``
    itself (in place). Returns True when the scratch of a large plane could not be had."""
    cdef idx_t stack[256]
    cdef idx_t* best = stack
    cdef idx_t od, oh, ow, w = 0, t
    cdef const real* xp = x + plane * g.vi
    cdef const real* hp = h + plane * g.vo
    cdef real* po = out + plane * g.vi
    if g.vo > 256:
        best = <idx_t*>malloc(g.vo * sizeof(idx_t))
        if best == NULL:
            return True
    for od in range(g.o0):
        for oh in range(g.o1):
            for ow in range(g.o2):
                best[w] = _argmax(xp, g, od, oh, ow)
                w += 1
    for t in range(g.vi):
        po[t] = 0
    for w in range(g.vo):
        if best[w] >= 0:
            po[best[w]] += hp[w]
    if best != stack:
        free(best)
    return False


cdef idx_t _pool(const real* x, const real* h, real* out, Geom* g, int op, int mode,
                 bint include_pad, int p) noexcept nogil:
    """Every (n, c) plane; returns the number of planes that ran out of scratch memory."""
    cdef idx_t plane, planes = g.N * g.C, failed = 0
    cdef mx_region reg
    if _parallel(planes, planes * g.vo * g.vk):
        mx_region_begin(&reg)
        for plane in prange(planes, schedule="static"):
            mx_region_mark(&reg)
            if op == 1:
                failed += _scatter_plane(x, h, out, g, plane)
            else:
                _pool_plane(x, h, out, g, op, mode, include_pad, plane, p)
        mx_region_end(&reg)
    else:
        for plane in range(planes):
            if op == 1:
                failed += _scatter_plane(x, h, out, g, plane)
            else:
                _pool_plane(x, h, out, g, op, mode, include_pad, plane, p)
    return failed


_MODES = {"max": POOL_MAX, "avg": POOL_AVG, "sum": POOL_SUM, "lp": POOL_LP}


def pool(int op, str pool_type, object x, object h, cnp.ndarray out, tuple geometry,
         bint count_include_pad=True, int p_value=1):
    """Pooling over (N, C) planes.

    op 0 forward: ``out`` (N, C, *out) from ``x``. op 1 max scatter: ``out`` (N, C, *in) is
    ``h`` (N, C, *out) added at each window's first maximum of ``x``. op 2 max gather:
    ``out`` (N, C, *out) reads ``h`` (N, C, *in) at each window's first maximum of ``x``.
    op 3 avg/sum backward: ``out`` (N, C, *in) = the adjoint of op 0 applied to ``h``.
    An empty window (only padding) gives 0. lp (forward only): the p-th root of the sum of
    ``x**p`` (p in 1, 2, 3; signed powers and cube root, as MXNet)."""
    cdef Geom g = _geom(geometry)
    cdef int mode = _MODES[pool_type]
    if op < 0 or op > 3 or (op in (1, 2) and mode != POOL_MAX) or (op == 3 and mode == POOL_MAX) \
            or (mode == POOL_LP and (op != 0 or p_value not in (1, 2, 3))):
        raise ValueError(f"conv kernels: pool op {op} does not apply to {pool_type}")
    arrays = [out] + [a for a in (x, h) if a is not None]
    cdef int kind = _same_kind(arrays)
    cdef idx_t nin = g.N * g.C * g.vi, nout = g.N * g.C * g.vo
    if (op < 3 or mode == POOL_MAX) and x is None or op > 0 and h is None:
        raise ValueError("conv kernels: pool is missing an input")
    if x is not None:
        _check_size(x, nin, "pool input")
    if h is not None:
        _check_size(h, nin if op == 2 else nout, "pool head")
    _check_size(out, nin if op in (1, 3) else nout, "pool output")
    cdef void* xd = NULL if x is None else cnp.PyArray_DATA(x)
    cdef void* hd = NULL if h is None else cnp.PyArray_DATA(h)
    cdef idx_t failed
    if kind == 0:
        with nogil:
            failed = _pool(<const float*>xd, <const float*>hd, <float*>cnp.PyArray_DATA(out),
                           &g, op, mode, count_include_pad, p_value)
    else:
        with nogil:
            failed = _pool(<const double*>xd, <const double*>hd,
                           <double*>cnp.PyArray_DATA(out), &g, op, mode, count_include_pad,
                           p_value)
    if failed:
        raise MemoryError("pool: no memory for the window maxima of a plane")


cdef void _add_bias(real* dst, const real* bias, idx_t N, idx_t F, idx_t L) noexcept nogil:
    cdef idx_t item, l
    cdef real b
    for item in range(N * F):
        b = bias[item % F]
        for l in range(L):
            dst[item * L + l] += b


def add_bias(cnp.ndarray dst, cnp.ndarray bias, idx_t N, idx_t F, idx_t L):
    """``dst[n, f, l] += bias[f]`` in place."""
    cdef int kind = _same_kind([dst, bias])
    _check_size(dst, N * F * L, "add_bias target")
    _check_size(bias, F, "bias")
    if kind == 0:
        with nogil:
            _add_bias(<float*>cnp.PyArray_DATA(dst), <const float*>cnp.PyArray_DATA(bias),
                      N, F, L)
    else:
        with nogil:
            _add_bias(<double*>cnp.PyArray_DATA(dst), <const double*>cnp.PyArray_DATA(bias),
                      N, F, L)
