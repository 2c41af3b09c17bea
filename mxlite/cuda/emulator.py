"""The host emulator of mxlite's CUDA kernels: a test tool, not a device.

With ``MXLITE_GPU_EMULATOR=1`` and no CUDA device, ``mx.gpu(0)`` stores its arrays in NumPy
and runs the *GPU* compute functions, whose CUDA kernels are compiled by the host C++
compiler (``$CXX``, default ``g++``) against ``mx_cuda_emu.h`` and run one thread after
another. The whole GPU path (compute functions, layouts, index arithmetic, the kernels'
source) is then exercised on machines without a GPU, CI included. What it cannot show:
timing, races between threads, and the CUDA math library's last-ulp differences from libm.

Each family is compiled once into a shared library, cached by the digest of its source
under ``$MXLITE_EMULATOR_CACHE`` (default ``~/.cache/mxlite/cuda-emulator``).
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

import numpy as np

from . import compiler, kernels as _kernels

__all__ = ["available", "launch", "GRID", "BLOCK"]

# An odd launch configuration, so that grid-stride loops are exercised across blocks.
GRID, BLOCK = 2, 3

HERE = os.path.dirname(os.path.abspath(__file__))
_LIBS = {}          # (family, source digest) -> CDLL
_LOCK = threading.Lock()


def compiler_command():
    """The host C++ compiler, or None."""
    return shutil.which(os.environ.get("CXX", "g++"))


def available():
    """Why the emulator cannot run (a string), or None when it can."""
    if compiler_command() is None:
        return "the GPU emulator needs a C++ compiler (g++ or $CXX) on PATH"
    return None


def _cache_dir():
    d = os.environ.get("MXLITE_EMULATOR_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "mxlite", "cuda-emulator")
    os.makedirs(d, exist_ok=True)
    return d


def _library(family):
    source = _kernels.family_source(family)
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    lib = _LIBS.get((family, digest))
    if lib is not None:
        return lib
    with _LOCK:
        lib = _LIBS.get((family, digest))
        if lib is None:
            path = os.path.join(_cache_dir(), f"{family}-{digest}.so")
            if not os.path.exists(path):
                _compile(source, path, family)
            lib = _LIBS[(family, digest)] = ctypes.CDLL(path)
    return lib


def _compile(source, path, family):
    with tempfile.TemporaryDirectory() as tmp:
        cu = os.path.join(tmp, f"{family}.cpp")
        with open(cu, "w") as f:
            f.write(source)
        out = os.path.join(tmp, "lib.so")
        cmd = [compiler_command(), "-std=c++17", "-O1", "-fPIC", "-shared", "-w",
               "-ffp-contract=off", "-fno-strict-aliasing", "-include",
               os.path.join(HERE, "mx_cuda_emu.h"), f"-I{compiler.CORE}", cu, "-o", out]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            raise compiler.CompileError(f"CUDA family {family!r} (host emulator):\n"
                                        f"{run.stderr[-4000:]}")
        shutil.move(out, path + f".{os.getpid()}")
        os.replace(path + f".{os.getpid()}", path)


_SCALARS = {("i", 1): ctypes.c_int8, ("i", 2): ctypes.c_int16, ("i", 4): ctypes.c_int32,
            ("i", 8): ctypes.c_int64, ("u", 1): ctypes.c_uint8, ("u", 2): ctypes.c_uint16,
            ("u", 4): ctypes.c_uint32, ("u", 8): ctypes.c_uint64, ("b", 1): ctypes.c_uint8,
            ("f", 4): ctypes.c_float, ("f", 8): ctypes.c_double}
_RECORDS = {}


def _argument(a):
    """A kernel argument as ctypes: arrays by pointer, NumPy scalars by value, records
    (layouts) as a struct of the same size passed by value."""
    if isinstance(a, np.ndarray):
        return ctypes.c_void_p(a.ctypes.data)
    if isinstance(a, np.void):
        size = a.dtype.itemsize
        if size % 8:
            raise TypeError(f"kernel struct arguments must be whole 8-byte words ({a.dtype})")
        cls = _RECORDS.get(size)
        if cls is None:
            cls = _RECORDS[size] = type(f"Record{size}", (ctypes.Structure,),
                                        {"_fields_": [("w", ctypes.c_int64 * (size // 8))]})
        rec = cls()
        ctypes.memmove(ctypes.addressof(rec), a.tobytes(), size)
        return rec
    if isinstance(a, np.generic):
        return _SCALARS[(a.dtype.kind, a.dtype.itemsize)](a.item())
    raise TypeError(f"kernel arguments are arrays, NumPy scalars or layouts, not {type(a)}; "
                    "pass Python numbers as NumPy scalars of the kernel's parameter type")


def launch(kernel, n, args):
    """Run ``kernel`` over ``n`` work items: every thread of a GRID x BLOCK launch in turn."""
    if n <= 0:
        return
    lib = _library(kernel.family)
    fn = getattr(lib, kernel.name)
    cargs = [_argument(a) for a in args]
    for b in range(GRID):
        for t in range(BLOCK):
            lib.mx_emu_set_thread(b, t, GRID, BLOCK)
            fn(*cargs)
