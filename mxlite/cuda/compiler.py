"""Compiling mxlite's CUDA source: include paths, options, and an NVRTC check that needs no
GPU (used by the tests to compile every kernel of every family)."""
import functools
import hashlib
import os
import tempfile

__all__ = ["include_dirs", "options", "nvrtc_unavailable", "nvrtc_check", "compile_ptx",
           "CompileError"]

CORE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_core")

# --fmad=false: no fused multiply-add, as the CPU build (-ffp-contract=off), so each operation
# rounds alike on both devices; --ftz=false, --prec-div=true, --prec-sqrt=true: IEEE float32
# (subnormal results kept, division and square root correctly rounded), as the CPU computes;
# -std=c++17 for mx_math.h's constexpr templates. mxlite compiles with NVRTC itself
# (``compile_ptx``): CuPy's RawModule appends -ftz=true to the caller's options, which
# flushed float32 subnormal results to zero on a real GPU.
OPTIONS = ("-std=c++17", "--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true")


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


def nvrtc_unavailable():
    """Why NVRTC cannot compile here (no CuPy, or no NVRTC runtime library), or None."""
    try:
        from cupy_backends.cuda.libs import nvrtc
        nvrtc.getVersion()
    except Exception as e:             # noqa: BLE001 - ImportError, or the library's load error
        return f"NVRTC is unavailable ({type(e).__name__}: {e}); pip install 'mxlite[gpu-compile]'"
    return None


def nvrtc_check(source, name="mxlite.cu", arch="compute_80"):
    """Compile ``source`` to PTX with NVRTC (no GPU needed: CuPy's NVRTC binding and the
    ``nvidia-cuda-nvrtc`` runtime); return the PTX text, or raise CompileError with the log."""
    from cupy_backends.cuda.libs import nvrtc
    prog = nvrtc.createProgram(source, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, list(options((f"--gpu-architecture={arch}",))))
        except nvrtc.NVRTCError as e:
            raise CompileError(f"{name}: {e}\n{nvrtc.getProgramLog(prog)}") from None
        ptx = nvrtc.getPTX(prog)
        return ptx.decode() if isinstance(ptx, bytes) else ptx
    finally:
        nvrtc.destroyProgram(prog)


def target_arch(capability):
    """The NVRTC virtual architecture for a device of compute ``capability`` (e.g. 90): the
    device's own, or the newest this NVRTC knows when the device is newer."""
    try:
        from cupy_backends.cuda.libs import nvrtc
        known = [int(a) for a in nvrtc.getSupportedArchs()]
    except Exception:                  # noqa: BLE001 - no NVRTC here, or one without the query
        known = []
    usable = [a for a in known if a <= capability]
    return f"compute_{max(usable) if usable else capability}"


def _cache_dir():
    return os.environ.get("MXLITE_KERNEL_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "mxlite", "kernels")


def compile_ptx(source, name, arch):
    """The PTX of ``source`` for ``arch`` with mxlite's options, from an on-disk cache keyed
    by the digest of the source, the options, the architecture and the NVRTC version (the
    driver loads PTX and caches its own machine code)."""
    from cupy_backends.cuda.libs import nvrtc
    key = hashlib.sha256(repr((source, options(), arch, nvrtc.getVersion())).encode())
    path = os.path.join(_cache_dir(), key.hexdigest() + ".ptx")
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        pass
    ptx = nvrtc_check(source, name, arch)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(ptx)
        os.replace(tmp, path)        # atomic: a concurrent reader sees all of it or none
    except OSError:
        pass                         # a read-only home: compile again next time
    return ptx
