# cython: language_level=3
"""Fused optimizer updates: one pass over the elements reads the weight, the gradient and
the optimizer states, writes the new states in place and the new weight into ``out``
(which may be the weight itself: each element is read before it is written).

Every algorithm is one case of ``_update`` (fused over float32/float64; the parameters are
cast to the array's dtype first, as MXNet's kernels did); ``_drive`` splits the elements
into chunks run in parallel above ``PARALLEL_MIN`` (with the contention guard of
``mx_parallel.h``). The formulas are MXNet 1.x's (src/operator/optimizer_op-inl.h,
contrib/adamw-inl.h); see mxlite/ops/optimizer_ops.py for the operators and the few places
where they differ. Gradient clipping applies when ``clip_gradient > 0`` (MXNet's
documented rule; its kernels clipped for ``>= 0``); a NaN gradient stays NaN.

Sizes, indices and loop counters are ``int64_t``.
"""
from cython.parallel cimport prange
from libc.math cimport sqrt, sqrtf, isfinite
from libc.string cimport memcpy

cimport numpy as cnp
from .common cimport idx_t, real, PARALLEL_MIN
from .parallel cimport mx_region, mx_serial, mx_region_begin, mx_region_mark, mx_region_end

cnp.import_array()

# algorithm ids: name -> (id, number of state arrays)
cdef enum:
    SGD = 0
    SGD_MOM = 1
    NAG_MOM = 2
    ADAM = 3
    ADAMW = 4
    RMSPROP = 5
    RMSPROPALEX = 6
    SIGNSGD = 7
    FTRL = 8
    SIGNUM = 9
    N_ALGOS = 10

cdef int _N_STATES[N_ALGOS]
_N_STATES[:] = [0, 1, 1, 2, 2, 1, 3, 0, 2, 1]

ALGOS = {"sgd": (SGD, 0), "sgd_mom": (SGD_MOM, 1), "nag_mom": (NAG_MOM, 1),
         "adam": (ADAM, 2), "adamw": (ADAMW, 2), "rmsprop": (RMSPROP, 1),
         "rmspropalex": (RMSPROPALEX, 3), "signsgd": (SIGNSGD, 0), "ftrl": (FTRL, 2),
         "signum": (SIGNUM, 1)}

# the names of the scalar parameters ``update`` takes (a missing one is 0)
PARAMS = ("lr", "wd", "rescale_grad", "clip_gradient", "momentum", "beta1", "beta2",
          "epsilon", "eta", "gamma1", "gamma2", "clip_weights", "lamda1", "beta", "wd_lh")

DEF CHUNK = 16384


cdef struct Params:
    double lr, wd, rescale, clip, momentum, beta1, beta2, eps, eta
    double gamma1, gamma2, clip_weights, lamda1, beta, wd_lh


cdef inline real _clip(real x, real bound) noexcept nogil:
    # NaN compares false both ways and passes through, as MXNet's clip
    return bound if x > bound else (-bound if x < -bound else x)


cdef inline real _sqrt(real x) noexcept nogil:
    if real is float:
        return sqrtf(x)
    else:
        return sqrt(x)


cdef inline real _sign(real x) noexcept nogil:
    return <real>((x > 0) - (x < 0))


cdef inline real _clipped(real gr, bint clipping, real clip) noexcept nogil:
    """The rescaled gradient ``gr``, clipped when ``clip_gradient > 0``."""
    return _clip(gr, clip) if clipping else gr


cdef inline void _adam_moments(real* s0, real* s1, idx_t i, real gr, real b1, real b2,
                               real* m, real* v) noexcept nogil:
    """Adam's moments, stored and returned: m = b1 s0[i] + (1 - b1) gr into s0[i] and *m,
    v = b2 s1[i] + (1 - b2) gr**2 into s1[i] and *v."""
    cdef real one = 1
    m[0] = b1 * s0[i] + (one - b1) * gr
    v[0] = b2 * s1[i] + (one - b2) * gr * gr
    s0[i] = m[0]
    s1[i] = v[0]


cdef void _update(int algo, real* out, const real* w, const real* g, real* s0, real* s1,
                  real* s2, const Params* p, idx_t lo, idx_t hi) noexcept nogil:
    """Elements [lo, hi) of algorithm ``algo``; ``s0..s2`` are its states (or NULL)."""
    cdef idx_t i
    cdef real lr = <real>p.lr, wd = <real>p.wd, rescale = <real>p.rescale
    cdef real clip = <real>p.clip, mom = <real>p.momentum
    cdef real b1 = <real>p.beta1, b2 = <real>p.beta2, eps = <real>p.eps, eta = <real>p.eta
    cdef real g1 = <real>p.gamma1, g2 = <real>p.gamma2, cw = <real>p.clip_weights
    cdef real l1 = <real>p.lamda1, beta = <real>p.beta, wd_lh = <real>p.wd_lh
    cdef bint clipping = p.clip > 0, clip_w = p.clip_weights > 0
    cdef real one = 1, decay = one - lr * wd
    cdef real x, gr, m, v, d, n_old, y
    if algo == SGD:
        for i in range(lo, hi):
            gr = _clipped(rescale * g[i], clipping, clip)
            out[i] = decay * w[i] - lr * gr
    elif algo == SGD_MOM:
        for i in range(lo, hi):
            gr = _clipped(rescale * g[i], clipping, clip)
            x = w[i]
            m = mom * s0[i] - lr * wd * x - lr * gr
            s0[i] = m
            out[i] = x + m
    elif algo == NAG_MOM:
        for i in range(lo, hi):
            gr = _clipped(rescale * g[i], clipping, clip)
            x = w[i]
            gr = lr * (gr + wd * x)
            m = mom * s0[i]
            out[i] = x - m + (mom + one) * (m - gr)
            s0[i] = m - gr
    elif algo == ADAM:
        for i in range(lo, hi):
            x = w[i]
            gr = _clipped(rescale * g[i] + wd * x, clipping, clip)
            _adam_moments(s0, s1, i, gr, b1, b2, &m, &v)
            out[i] = x - lr * m / (_sqrt(v) + eps)
    elif algo == ADAMW:
        for i in range(lo, hi):
            x = w[i]
            gr = _clipped(rescale * g[i], clipping, clip)
            _adam_moments(s0, s1, i, gr, b1, b2, &m, &v)
            out[i] = x - eta * (lr * m / (_sqrt(v) + eps) + wd * x)
    elif algo == RMSPROP:
        for i in range(lo, hi):
            x = w[i]
            gr = _clipped(rescale * g[i] + wd * x, clipping, clip)
            v = (one - g1) * (gr * gr) + g1 * s0[i]
            s0[i] = v
            y = x - lr * (gr / _sqrt(v + eps))
            out[i] = _clip(y, cw) if clip_w else y
    elif algo == RMSPROPALEX:
        for i in range(lo, hi):
            x = w[i]
            gr = _clipped(rescale * g[i] + wd * x, clipping, clip)
            v = (one - g1) * gr * gr + g1 * s0[i]
            m = (one - g1) * gr + g1 * s1[i]
            d = g2 * s2[i] - lr * gr / _sqrt(v - m * m + eps)
            s0[i] = v
            s1[i] = m
            s2[i] = d
            y = x + d
            out[i] = _clip(y, cw) if clip_w else y
    elif algo == SIGNSGD:
        for i in range(lo, hi):
            out[i] = decay * w[i] - lr * _sign(g[i])
    elif algo == FTRL:
        # s0 = z, s1 = n (MXNet's input order: weight, grad, z, n)
        for i in range(lo, hi):
            x = w[i]
            gr = _clipped(rescale * g[i], clipping, clip)
            n_old = s1[i]
            v = n_old + gr * gr
            m = s0[i] + gr - (_sqrt(v) - _sqrt(n_old)) * x / lr
            s0[i] = m
            s1[i] = v
            if (m if m >= 0 else -m) > l1:
                out[i] = (_sign(m) * l1 - m) / ((beta + _sqrt(v)) / lr + wd)
            else:
                out[i] = 0
    elif algo == SIGNUM:
        for i in range(lo, hi):
            x = w[i]
            gr = _clipped(rescale * g[i], clipping, clip)
            m = mom * s0[i] - (one - mom) * wd * x - (one - mom) * gr
            s0[i] = m
            out[i] = (one - lr * wd_lh) * x + lr * _sign(m)


cdef inline idx_t _min(idx_t a, idx_t b) noexcept nogil:
    return a if a < b else b


cdef void _drive(int algo, real* out, const real* w, const real* g, real* s0, real* s1,
                 real* s2, const Params* p, idx_t n) noexcept nogil:
    cdef idx_t c, lo, nchunks = (n + CHUNK - 1) // CHUNK
    cdef mx_region reg
    if n >= PARALLEL_MIN and not mx_serial(n):
        mx_region_begin(&reg)
        for c in prange(nchunks, schedule="static"):
            mx_region_mark(&reg)
            lo = c * CHUNK
            _update(algo, out, w, g, s0, s1, s2, p, lo, _min(lo + CHUNK, n))
        mx_region_end(&reg)
    else:
        _update(algo, out, w, g, s0, s1, s2, p, 0, n)


cdef void* _ptr(cnp.ndarray a):
    return cnp.PyArray_DATA(a)


cdef inline double _get(object params, str key):
    # an op's Attrs is a dict subclass: read it as a dict (no method lookup per key)
    v = (<dict>params).get(key) if isinstance(params, dict) else params.get(key)
    return 0.0 if v is None else <double>v


def update(int algo, cnp.ndarray weight, cnp.ndarray grad, list states, cnp.ndarray out,
           object params, cnp.ndarray scale=None):
    """Run algorithm ``algo`` (an id of ``ALGOS``): reads ``weight`` and ``grad``, updates
    ``states`` in place, writes the new weight into ``out`` (which may be ``weight``).

    Every array must be C-contiguous, of one dtype (float32 or float64) and one size;
    ``params`` (a mapping: an op's attrs) maps names of ``PARAMS`` to numbers (a missing one
    is 0; other keys are ignored). ``scale``, a one-element float array, replaces
    ``rescale_grad`` when given, and when it is NaN, infinite or 0 nothing is updated (MXNet's ``_adamw_update``): the
    weight is copied to a separate ``out``.

    Returns None, or ``(i, j)``: positions in ``[weight, grad, out] + states`` of two arrays
    whose memory overlaps where it must not (a state with anything else, or ``grad`` with
    ``out``), in which case nothing was written."""
    if not 0 <= algo < N_ALGOS:
        raise ValueError(f"optim.update: unknown algorithm id {algo}")
    cdef Py_ssize_t k, j, n_arrays = 3 + len(states)
    if len(states) != _N_STATES[algo]:
        raise ValueError(f"optim.update: algorithm {algo} takes {_N_STATES[algo]} state "
                         f"array(s), got {len(states)}")
    cdef list arrays = [weight, grad, out] + states
    cdef cnp.ndarray a
    cdef idx_t n = cnp.PyArray_SIZE(weight)
    cdef int typenum = cnp.PyArray_TYPE(weight)
    cdef char* lo[6]
    cdef char* hi[6]
    for k in range(n_arrays):
        a = <cnp.ndarray?>arrays[k]
        if cnp.PyArray_TYPE(a) != typenum or cnp.PyArray_SIZE(a) != n:
            raise ValueError(f"optim.update: arrays differ in dtype or size ({a.dtype}, "
                             f"{a.size} against {weight.dtype}, {n})")
        if not cnp.PyArray_IS_C_CONTIGUOUS(a):
            raise ValueError("optim.update: arrays must be C-contiguous")
        lo[k] = <char*>cnp.PyArray_DATA(a)
        hi[k] = lo[k] + cnp.PyArray_NBYTES(a)
    # states (positions 3..) overlap nothing; grad (1) does not overlap out (2)
    for k in range(n_arrays):
        for j in range(k + 1, n_arrays):
            if (j >= 3 or (k == 1 and j == 2)) and n > 0 and lo[k] < hi[j] and lo[j] < hi[k]:
                return (k, j)
    cdef Params p
    p.lr = _get(params, "lr")
    p.wd = _get(params, "wd")
    p.rescale = _get(params, "rescale_grad")
    p.clip = _get(params, "clip_gradient")
    p.momentum = _get(params, "momentum")
    p.beta1 = _get(params, "beta1")
    p.beta2 = _get(params, "beta2")
    p.eps = _get(params, "epsilon")
    p.eta = _get(params, "eta")
    p.gamma1 = _get(params, "gamma1")
    p.gamma2 = _get(params, "gamma2")
    p.clip_weights = _get(params, "clip_weights")
    p.lamda1 = _get(params, "lamda1")
    p.beta = _get(params, "beta")
    p.wd_lh = _get(params, "wd_lh")
    if scale is not None:
        p.rescale = scale_value(scale)
        if not (isfinite(p.rescale) and p.rescale != 0):
            if lo[0] != lo[2]:
                memcpy(lo[2], lo[0], hi[0] - lo[0])
            return None
    cdef void* s[3]
    for k in range(3):
        s[k] = lo[3 + k] if k < len(states) else NULL
    if typenum == cnp.NPY_FLOAT32:
        with nogil:
            _drive(algo, <float*>lo[2], <const float*>lo[0], <const float*>lo[1],
                   <float*>s[0], <float*>s[1], <float*>s[2], &p, n)
    elif typenum == cnp.NPY_FLOAT64:
        with nogil:
            _drive(algo, <double*>lo[2], <const double*>lo[0], <const double*>lo[1],
                   <double*>s[0], <double*>s[1], <double*>s[2], &p, n)
    else:
        raise TypeError(f"optim.update: unsupported dtype {weight.dtype} (float32 or float64)")
    return None


def scale_value(cnp.ndarray scale):
    """The value of the one-element float ``scale`` as a Python float."""
    if cnp.PyArray_SIZE(scale) != 1:
        raise ValueError(f"optim.scale_value: expected one element, got {scale.size}")
    if scale.dtype.num == cnp.NPY_FLOAT32:
        return (<float*>cnp.PyArray_DATA(scale))[0]
    if scale.dtype.num == cnp.NPY_FLOAT64:
        return (<double*>cnp.PyArray_DATA(scale))[0]
    raise TypeError(f"optim.scale_value: unsupported dtype {scale.dtype}")
