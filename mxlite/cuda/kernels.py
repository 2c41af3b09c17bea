"""CUDA kernels as data: every kernel mxlite can launch is a ``Kernel`` in a family, made at
import time, so the tests can compile every one of them (every op x dtype instantiation)
without a GPU.

A kernel's ``code`` is CUDA C++ defining one ``extern "C" __global__`` function named
``name``; it is compiled after the preamble ``#include "mx_cuda.h"`` (``mxlite/_core``: the
index type ``mx_idx``, ``MX_GRID_LOOP``, ``mx_layout``, float16 conversions, ``mx_math.h``,
``philox.h``). Rules every kernel follows, so that the host emulator runs it exactly:

* a grid-stride loop (``MX_GRID_LOOP(i, n)``) over ``mx_idx`` (64-bit) indices: correct for
  any launch configuration;
* no shared memory, no ``__syncthreads``; a thread never reads what another thread of the
  same launch writes (atomics only for commutative accumulation, e.g. scatter-add);
* unit-local helpers are ``static __device__`` functions whose names start with the kernel's
  name, so the kernels of one family can be compiled as one translation unit.
"""
import glob
import hashlib
import os

__all__ = ["Kernel", "kernel", "family", "families", "PREAMBLE"]

def _headers_digest():
    """A digest of every kernel header (mxlite/_core/*.h and the emulator's), written into
    each source: the compile caches (CuPy's, the emulator's) key on the source text, and
    must not reuse a binary built against an older header."""
    core = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_core")
    paths = sorted(glob.glob(os.path.join(core, "*.h")))
    paths.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mx_cuda_emu.h"))
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


PREAMBLE = f'// mxlite kernel headers {_headers_digest()}\n#include "mx_cuda.h"\n'

_FAMILIES = {}      # family name -> {kernel name: Kernel}


class Kernel:
    """One CUDA kernel: ``family`` (a group compiled together by the checks), ``name`` (its
    ``extern "C"`` symbol) and ``code``. ``source`` is the whole translation unit."""

    __slots__ = ("family", "name", "code", "_key")

    def __init__(self, family, name, code):
        self.family, self.name, self.code = family, name, code
        self._key = None

    @property
    def source(self):
        return PREAMBLE + self.code

    @property
    def key(self):
        """A digest of the source: the cache key of its compiled form."""
        if self._key is None:
            self._key = hashlib.sha256(self.source.encode()).hexdigest()[:24]
        return self._key

    def __repr__(self):
        return f"<Kernel {self.family}/{self.name}>"


def kernel(family_name, name, code):
    """Register and return the kernel ``name`` of ``family_name`` (made once, at import)."""
    kernels = _FAMILIES.setdefault(family_name, {})
    if name in kernels:
        if kernels[name].code != code:
            raise ValueError(f"CUDA kernel {family_name}/{name} defined twice with different code")
        return kernels[name]
    k = kernels[name] = Kernel(family_name, name, code)
    return k


def family(name):
    """The kernels of family ``name`` ({kernel name: Kernel})."""
    return dict(_FAMILIES.get(name, {}))


def families():
    """Every family name."""
    return sorted(_FAMILIES)


def family_source(name):
    """The kernels of one family as one translation unit."""
    return PREAMBLE + "\n".join(k.code for k in _FAMILIES[name].values())
