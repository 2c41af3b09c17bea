# Shared kernel types: every size, index, stride and loop counter is int64_t.
from libc.stdint cimport int64_t

ctypedef int64_t idx_t

# The element type of the kernels fused over float32 and float64.
ctypedef fused real:
    float
    double

# Loops over at least this many elements run in parallel (prange); below it, thread start-up
# costs more than it saves.
cdef enum:
    PARALLEL_MIN = 1 << 16
