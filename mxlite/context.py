"""Device contexts: ``mx.cpu()``, ``mx.gpu(i)``, ``mx.current_context()``."""
import threading

from .base import MXNetError

__all__ = ["Context", "cpu", "gpu", "current_context", "num_gpus", "gpu_memory_info"]


# The kernels each device type runs: pinned and shared CPU memory are CPU memory.
_COMPUTE_DEVICE = {"cpu": "cpu", "cpu_pinned": "cpu", "cpu_shared": "cpu", "gpu": "gpu"}


class Context:
    """A device: ``Context('cpu', 0)`` or ``Context('gpu', i)``. Usable as a ``with`` block.

    ``'cpu_pinned'`` and ``'cpu_shared'`` (MXNet's page-locked and shared CPU memory) hold
    ordinary CPU buffers here and run the CPU kernels (``compute_device == 'cpu'``).
    """

    # _run: the device's RunContext (mxlite.device), cached by the first operator call
    __slots__ = ("device_type", "device_id", "compute_device", "_run")
    _state = threading.local()

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if device_type not in _COMPUTE_DEVICE:
            raise MXNetError(f"Context: unknown device_type {device_type!r}; expected one of "
                             f"{sorted(_COMPUTE_DEVICE)}")
        self.device_type = device_type
        self.device_id = int(device_id)
        self.compute_device = _COMPUTE_DEVICE[device_type]
        self._run = None

    def __reduce__(self):
        return (Context, (self.device_type, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    def empty_cache(self):
        """Give the device memory cached for reuse back to the driver (MXNet's
        ``Context.empty_cache``): CuPy's memory pool of this GPU; nothing for the CPU, whose
        buffers glibc keeps, or the GPU emulator."""
        if self.compute_device == "gpu":
            from .cuda import runtime
            runtime.empty_cache(self.device_id)

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()


def num_gpus():
    """Number of visible CUDA devices (0 when CuPy or a GPU is missing; 1 under the host
    emulator of the tests, ``MXLITE_GPU_EMULATOR=1``)."""
    from .cuda import runtime
    return runtime.device_count()


def cpu(device_id=0):
    """The CPU context."""
    return Context("cpu", device_id)


def gpu(device_id=0):
    """GPU context ``device_id``. As in MXNet it exists on any machine; the first array put
    on it raises MXNetError saying why when there is no such GPU (no CuPy, no CUDA device,
    or fewer devices)."""
    return Context("gpu", device_id)


def gpu_memory_info(device_id=0):
    """``(free, total)`` bytes of GPU ``device_id``'s memory (MXNet's
    ``mx.context.gpu_memory_info``); MXNetError without such a GPU."""
    from .cuda import runtime
    return runtime.memory_info(int(device_id))


_CPU = Context("cpu", 0)


def _stack():
    """This thread's stack of ``with ctx:`` blocks (a stack, so one Context may nest in itself)."""
    stack = getattr(Context._state, "stack", None)
    if stack is None:
        stack = Context._state.stack = []
    return stack


def current_context():
    """The context set by the innermost ``with ctx:`` block, else ``cpu(0)``."""
    stack = getattr(Context._state, "stack", None)
    return stack[-1] if stack else _CPU
