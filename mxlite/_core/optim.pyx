# cython: language_level=3
# distutils: language = c++
"""Fused optimizer updates: one pass over the elements reads the weight, the gradient and
the optimizer states, writes the new states in place and the new weight into ``out``
(which may be the weight itself: each element is read before it is written).

The formulas are element functions of ``mx_optim.h``, shared with the CUDA kernels (MXNet
1.x's; see mxlite/ops/optimizer_ops.py for the operators and the few places where they
differ). ``mx_optim_run`` runs one loop per algorithm over float32 or float64 (the
parameters cast to the array's dtype first, as MXNet's kernels did); ``_drive`` splits the
elements into chunks run in parallel above ``PARALLEL_MIN`` (with the contention guard of
``mx_parallel.h``).

Sizes, indices and loop counters are ``int64_t``.
"""
from cython.parallel cimport prange
from libc.string cimport memcpy

cimport numpy as cnp
from .common cimport idx_t, real, PARALLEL_MIN
from .parallel cimport mx_region, mx_serial, mx_region_begin, mx_region_mark, mx_region_end

cnp.import_array()

cdef extern from "mx_optim.h":
    enum:
        MX_OPTIM_SGD
        MX_OPTIM_SGD_MOM
        MX_OPTIM_NAG_MOM
        MX_OPTIM_ADAM
        MX_OPTIM_ADAMW
        MX_OPTIM_RMSPROP
        MX_OPTIM_RMSPROPALEX
        MX_OPTIM_SIGNSGD
        MX_OPTIM_FTRL
        MX_OPTIM_SIGNUM
        MX_OPTIM_FTML
        MX_OPTIM_LAMB1
        MX_OPTIM_N_ALGOS
    cdef struct mx_optim_params:
        double lr, wd, rescale, clip, momentum, beta1, beta2, eps, eta
        double gamma1, gamma2, clip_weights, lamda1, beta, wd_lh, bias1, bias2
    bint mx_optim_skip(double) noexcept nogil
    void mx_optim_run[T](int, const mx_optim_params*, T*, const T*, const T*, T*, T*, T*,
                         idx_t, idx_t) noexcept nogil

ctypedef mx_optim_params Params

# algorithm name -> (id, number of state arrays)
ALGOS = {"sgd": (MX_OPTIM_SGD, 0), "sgd_mom": (MX_OPTIM_SGD_MOM, 1),
         "nag_mom": (MX_OPTIM_NAG_MOM, 1), "adam": (MX_OPTIM_ADAM, 2),
         "adamw": (MX_OPTIM_ADAMW, 2), "rmsprop": (MX_OPTIM_RMSPROP, 1),
         "rmspropalex": (MX_OPTIM_RMSPROPALEX, 3), "signsgd": (MX_OPTIM_SIGNSGD, 0),
         "ftrl": (MX_OPTIM_FTRL, 2), "signum": (MX_OPTIM_SIGNUM, 1),
         "ftml": (MX_OPTIM_FTML, 3), "lamb1": (MX_OPTIM_LAMB1, 2)}
cdef int _N_STATES[MX_OPTIM_N_ALGOS]
for _algo, _states in ALGOS.values():
    _N_STATES[_algo] = _states

# the names of the scalar parameters ``update`` takes (a missing one is 0), in the order of
# the fields of mx_optim_params
PARAMS = ("lr", "wd", "rescale_grad", "clip_gradient", "momentum", "beta1", "beta2",
          "epsilon", "eta", "gamma1", "gamma2", "clip_weights", "lamda1", "beta", "wd_lh", "bias1",
          "bias2")

DEF CHUNK = 16384


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
            mx_optim_run(algo, p, out, w, g, s0, s1, s2, lo, _min(lo + CHUNK, n))
        mx_region_end(&reg)
    else:
        mx_optim_run(algo, p, out, w, g, s0, s1, s2, 0, n)


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
    if not 0 <= algo < MX_OPTIM_N_ALGOS:
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
    p.bias1 = _get(params, "bias1")
    p.bias2 = _get(params, "bias2")
    if scale is not None:
        p.rescale = scale_value(scale)
        if mx_optim_skip(p.rescale):
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
