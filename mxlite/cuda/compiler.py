"""Compiling mxlite's CUDA source: include paths, options, and an NVRTC check that needs no
GPU (used by the tests to compile every kernel of every family)."""
import functools
import os

__all__ = ["include_dirs", "options", "nvrtc_check", "CompileError"]

CORE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_core")

# --fmad=false: no fused multiply-add, as the CPU build (-ffp-contract=off), so each operation
# rounds alike on both devices; -std=c++17 for mx_math.h's constexpr templates.
OPTIONS = ("-std=c++17", "--fmad=false")


class CompileError(RuntimeError):
    """A CUDA translation unit failed to compile; the message holds the compiler's log."""


@functools.lru_cache(maxsize=None)
def include_dirs():
    """mxlite's kernel headers (mx_cuda.h, mx_math.h, philox.h), then the libcu++ headers
    (``cuda/std/...``) NVRTC needs, from the CuPy installation that ships them."""
    dirs = [CORE]
    try:
        import cupy
    except ImportError:
        return tuple(dirs)
    root = os.path.join(os.path.dirname(cupy.__file__), "_core", "include")
    for base, subdirs, files in os.walk(root):
        if os.path.isfile(os.path.join(base, "cuda", "std", "cstdint")):
            dirs.append(base)
            break
    return tuple(dirs)


def options(extra=()):
    """NVRTC options: include paths, OPTIONS, then ``extra``."""
    return tuple(f"-I{d}" for d in include_dirs()) + OPTIONS + tuple(extra)


def nvrtc_check(source, name="mxlite.cu", arch="compute_80"):
    """Compile ``source`` to PTX with NVRTC (no GPU needed: CuPy's NVRTC binding and the
    ``nvidia-cuda-nvrtc`` runtime); raise CompileError with the log on failure."""
    from cupy_backends.cuda.libs import nvrtc
    prog = nvrtc.createProgram(source, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, list(options((f"--gpu-architecture={arch}",))))
        except nvrtc.NVRTCError as e:
            raise CompileError(f"{name}: {e}\n{nvrtc.getProgramLog(prog)}") from None
        return nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)
