# The contention guard of mx_parallel.h, for drivers that run OpenMP loops (prange):
#
#     if work >= PARALLEL_MIN and not mx_serial(work):
#         mx_region_begin(&reg)
#         for i in prange(...):
#             mx_region_mark(&reg)
#             ...
#         mx_region_end(&reg)
from .common cimport idx_t

cdef extern from "mx_parallel.h" nogil:
    ctypedef struct mx_region:
        pass
    bint mx_serial(idx_t work)
    void mx_region_begin(mx_region* r)
    void mx_region_mark(mx_region* r)
    void mx_region_end(mx_region* r)
