# Included by resample.pyx (the image kernels' extension): the gather of the bilinear sampler
# of mxlite/ops/spatial.py (BilinearSampler, _bilinear_sampler_d and so the deformable
# convolutions, GridGenerator's users), on the CPU.
#
#     out[n, c, p] = ((x[n, c, i0] w0 + x[n, c, i1] w1) + x[n, c, i2] w2) + x[n, c, i3] w3
#
# with the four corners (i_k, w_k) = (index[k, n, p], weight[k, n, p]) of each point: the
# NumPy path's products and sums in its order and dtype (-ffp-contract=off keeps each product
# rounded), so the results are its bits; there each corner was a fancy-indexed gather over
# the whole (N, C, P) block, here one pass, (n, c) rows across threads.

ctypedef fused gather_t:
    float
    double


cdef void _gather_row(const gather_t* x, const int64_t* idx, const gather_t* wt, gather_t* y,
                      idx_t p, idx_t plane) noexcept nogil:
    """One (n, c) row of P points; ``idx``/``wt`` hold the 4 corners' planes of ``plane``."""
    cdef idx_t j
    cdef gather_t acc
    for j in range(p):
        acc = x[idx[j]] * wt[j]
        acc = acc + x[idx[plane + j]] * wt[plane + j]
        acc = acc + x[idx[2 * plane + j]] * wt[2 * plane + j]
        acc = acc + x[idx[3 * plane + j]] * wt[3 * plane + j]
        y[j] = acc


cdef void _gather_drive(const gather_t* x, const int64_t* idx, const gather_t* wt, gather_t* y,
                        idx_t n, idx_t c, idx_t hw, idx_t p) noexcept nogil:
    cdef idx_t r, b, rows = n * c, plane = n * p
    cdef mx_region reg
    if rows > 1 and rows * p >= PARALLEL_MIN and not mx_serial(rows * p):
        mx_region_begin(&reg)
        for r in prange(rows, schedule="static"):
            mx_region_mark(&reg)
            b = r // c
            _gather_row(x + r * hw, idx + b * p, wt + b * p, y + r * p, p, plane)
        mx_region_end(&reg)
    else:
        for r in range(rows):
            b = r // c
            _gather_row(x + r * hw, idx + b * p, wt + b * p, y + r * p, p, plane)


def bilinear_gather(x, index, weight, out):
    """``out[n, c, p] = sum_k x[n, c, index[k, n, p]] * weight[k, n, p]`` over the 4 corners
    k in order (the formula above): ``x`` (N, C, HW), ``index`` (4, N, P) int64 in [0, HW),
    ``weight`` (4, N, P) and ``out`` (N, C, P), x, weight and out of one dtype, float32 or
    float64, all C-contiguous. Bad arguments raise MXNetError."""
    arrays = (("x", x, 3), ("index", index, 3), ("weight", weight, 3), ("out", out, 3))
    for name, a, nd in arrays:
        if not isinstance(a, np.ndarray) or a.ndim != nd or not a.flags.c_contiguous:
            raise MXNetError(f"bilinear_gather: {name} must be a C-contiguous {nd}-D numpy "
                             f"array, got {type(a).__name__} of shape {getattr(a, 'shape', None)}")
    if x.dtype not in (np.float32, np.float64) or weight.dtype != x.dtype \
            or out.dtype != x.dtype or index.dtype != np.int64 or not out.flags.writeable:
        raise MXNetError(f"bilinear_gather: x, weight and out must share float32 or float64 "
                         f"(out writeable) and index be int64, got {x.dtype}, {weight.dtype}, "
                         f"{out.dtype}, {index.dtype}")
    cdef idx_t n = x.shape[0], c = x.shape[1], hw = x.shape[2], p = out.shape[2]
    if index.shape != (4, n, p) or weight.shape != (4, n, p) or out.shape != (n, c, p):
        raise MXNetError(f"bilinear_gather: need index and weight (4, {n}, P), out ({n}, {c}, "
                         f"P); got {index.shape}, {weight.shape}, {out.shape}")
    if index.size and (int(index.min()) < 0 or int(index.max()) >= hw):
        raise MXNetError(f"bilinear_gather: index must lie in [0, {hw}), got "
                         f"[{int(index.min())}, {int(index.max())}]")
    if out.size == 0:
        return
    cdef const int64_t* ix = <const int64_t*>cnp.PyArray_DATA(index)
    cdef void* px = cnp.PyArray_DATA(x)
    cdef void* pw = cnp.PyArray_DATA(weight)
    cdef void* py = cnp.PyArray_DATA(out)
    if x.dtype == np.float32:
        with nogil:
            _gather_drive(<const float*>px, ix, <const float*>pw, <float*>py, n, c, hw, p)
    else:
        with nogil:
            _gather_drive(<const double*>px, ix, <const double*>pw, <double*>py, n, c, hw, p)
