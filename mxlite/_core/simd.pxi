# SIMD level selection for the kernel modules that dispatch through mx_simd.h (elemwise,
# reduce): ``include``d by their templates. Each module indexes its function tables with
# ``_level``.
cdef extern from "mx_simd.h":
    int mx_simd_best() noexcept nogil
    int mx_simd_default() noexcept nogil

SIMD_NAMES = ("baseline", "avx2", "avx512")
cdef int _level = mx_simd_default()


def use_simd(name=None):
    """Run the loops compiled for SIMD level ``name`` ('baseline', 'avx2', 'avx512'; None:
    the best this CPU runs; a level the CPU lacks is lowered to the best it has) and return
    the name of the level now in use. Every level gives the same bits; this hook lets the
    tests check each one."""
    global _level
    _level = mx_simd_best() if name is None else min(SIMD_NAMES.index(name), mx_simd_best())
    return SIMD_NAMES[_level]


def available_simd():
    """The SIMD levels this CPU runs, slowest first."""
    return SIMD_NAMES[:mx_simd_best() + 1]


def simd_level():
    """The name of the SIMD level in use (the best available unless MXLITE_SIMD or
    ``use_simd`` lowered it)."""
    return SIMD_NAMES[_level]
