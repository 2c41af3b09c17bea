"""The GPU backend: ``mx.gpu(i)`` arrays and CUDA kernels generated from the same tables and
headers as the CPU kernels (``kernel_table.py``, ``mx_math.h``, ``philox.h``).

* ``kernels``: every CUDA kernel as data (family, name, code), made at import;
* ``ops``: the GPU compute functions of the registered operators (``op.compute['gpu']``)
  and the documented exemptions;
* ``namespace``: the GPU array namespace (CuPy arrays, or NumPy under the emulator);
* ``runtime``: which backend runs (a CUDA device through CuPy, the host emulator of the
  tests, or none and why); ``launch``: NVRTC-compiled PTX launched through CuPy;
  ``emulator``: the host emulator; ``compiler``: include paths, options, the NVRTC check
  and the PTX cache.

Importing this package needs neither CuPy nor a GPU; it registers ``runtime`` as the GPU
backend of ``mxlite.device`` (the core asks that registry and never imports this package).
"""
from .. import device as _device
from . import kernels, layout, namespace, runtime
from . import ops

_device.register_gpu_backend(runtime)

__all__ = ["kernels", "layout", "namespace", "runtime", "ops"]
