"""``mx.runtime``: what this mxlite build and machine can do, under MXNet 1.9.1's feature names.

>>> features = mx.runtime.Features()
>>> features.is_enabled("INT64_TENSOR_SIZE")
True
>>> features["CUDNN"].enabled
False

MXNet reports the options its library was compiled with; mxlite has no such library, so each
feature says what is true here:

* ``CUDA``: a GPU backend is usable (``mxlite.device`` has one registered with at least one
  GPU: CuPy with a CUDA device, or the host emulator of the tests); ``CUDNN``, ``NCCL``,
  ``CUDA_RTC`` (``mx.rtc``), ``TENSORRT``, ``MKLDNN``, ``CAFFE``,
  ``OPENCV`` (``mx.image``), ``TVM_OP``, ``JEMALLOC``: off, mxlite has none of them;
* ``PROFILER``: on (``mx.profiler`` times every operator);
* ``CPU_SSE`` ... ``CPU_AVX2``, ``SSE``, ``F16C``: the instruction sets this CPU has (from
  ``/proc/cpuinfo``; all off where that cannot be read);
* ``OPENMP``: the Cython kernels run on an OpenMP thread pool (its runtime is loaded);
* ``BLAS_OPEN``/``BLAS_MKL``/``BLAS_ATLAS``/``BLAS_APPLE``: the BLAS NumPy loaded (matrix
  products run there); ``LAPACK``: on (NumPy's ``linalg``);
* ``DIST_KVSTORE``: ``mpi4py`` is importable (``mx.kv.create('dist_sync')`` runs over MPI);
* ``INT64_TENSOR_SIZE``: on, every index is 64-bit; ``CXX14``, ``DEBUG``, ``SIGNAL_HANDLER``:
  off (no C++ library, no debug build, no fatal-signal handler is installed).

The features are read once, by the first ``Features()`` (a singleton, as in MXNet).
"""
import collections
import importlib.util

from .base import MXNetError

__all__ = ["Feature", "Features", "feature_list"]

# MXNet 1.9.1's feature names, in its order
FEATURE_NAMES = (
    "CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
    "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C",
    "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN",
    "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
    "SIGNAL_HANDLER", "DEBUG", "TVM_OP")

# feature -> the /proc/cpuinfo flag that shows it ("pni" is Linux's name for SSE3)
_CPU_FLAGS = {"CPU_SSE": "sse", "CPU_SSE2": "sse2", "CPU_SSE3": "pni", "CPU_SSE4_1": "sse4_1",
              "CPU_SSE4_2": "sse4_2", "CPU_SSE4A": "sse4a", "CPU_AVX": "avx", "CPU_AVX2": "avx2",
              "SSE": "sse", "F16C": "f16c"}

# feature -> substrings of the file names of the shared libraries that provide it
_LIBRARIES = {"OPENMP": ("libgomp", "libomp", "libiomp"),
              "BLAS_OPEN": ("openblas",), "BLAS_MKL": ("libmkl", "mkl_rt"),
              "BLAS_ATLAS": ("libatlas", "libsatlas", "libtatlas"),
              "BLAS_APPLE": ("Accelerate.framework", "libBLAS.dylib")}


class Feature:
    """One feature: ``name`` and ``enabled``."""

    __slots__ = ("name", "enabled")

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self):
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _cpu_flags():
    """The flags of the first CPU in ``/proc/cpuinfo`` (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def _loaded_libraries():
    """The paths of the shared libraries mapped into this process (Linux; empty elsewhere)."""
    try:
        with open("/proc/self/maps") as f:
            return frozenset(line.split()[-1] for line in f if "/" in line)
    except OSError:
        return frozenset()


def _detect():
    """{feature name: enabled} for this process."""
    from . import _core  # noqa: F401  (loads the kernels and their OpenMP runtime)
    from .device import gpu_count
    import numpy  # noqa: F401  (loads its BLAS)
    flags, libs = _cpu_flags(), _loaded_libraries()
    on = {name: False for name in FEATURE_NAMES}
    on.update({name: flag in flags for name, flag in _CPU_FLAGS.items()})
    on.update({name: any(part in lib for lib in libs for part in parts)
               for name, parts in _LIBRARIES.items()})
    on["CUDA"] = gpu_count() > 0
    on["LAPACK"] = True
    on["INT64_TENSOR_SIZE"] = True
    on["PROFILER"] = True
    on["DIST_KVSTORE"] = importlib.util.find_spec("mpi4py") is not None
    return on


def feature_list():
    """The features of this build, a list of ``Feature`` in MXNet's order."""
    on = _detect()
    return [Feature(name, on[name]) for name in FEATURE_NAMES]


class Features(collections.OrderedDict):
    """The features by name (an ordered dict of ``Feature``); one instance per process."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            inst = super().__new__(cls)
            super().__init__(inst, [(f.name, f) for f in feature_list()])
            cls.instance = inst
        return cls.instance

    def __init__(self):     # filled once, in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether feature ``feature_name`` (any case) is on; RuntimeError, as in MXNet, for a
        name that is not a feature (an MXNetError, which is a ValueError, would not be
        caught by code written for MXNet)."""
        if not isinstance(feature_name, str):
            raise MXNetError(f"Features.is_enabled: feature_name must be a str, got "
                             f"{feature_name!r}")
        key = feature_name.upper()
        if key not in self:
            raise RuntimeError(f"Features.is_enabled: unknown feature {feature_name!r}; "
                               f"known features: {list(self)}")
        return self[key].enabled
