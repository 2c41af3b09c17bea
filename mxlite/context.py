"""Device contexts: ``mx.cpu()``, ``mx.gpu(i)``, ``mx.current_context()``."""
import threading
import warnings

from .base import MXNetError

__all__ = ["Context", "cpu", "cpu_pinned", "gpu", "current_context", "num_gpus",
           "gpu_memory_info"]


# The kernels each device type runs: pinned and shared CPU memory are CPU memory.
_COMPUTE_DEVICE = {"cpu": "cpu", "cpu_pinned": "cpu", "cpu_shared": "cpu", "gpu": "gpu"}


class _ContextMeta(type):
    """``Context.default_ctx``: this thread's current context, a class property (MXNet's
    deprecated spelling of ``mx.current_context()``)."""

    @property
    def default_ctx(cls):
        _warn_default_ctx()
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, ctx):
        _warn_default_ctx()
        if not isinstance(ctx, Context):
            raise MXNetError(f"Context.default_ctx: expected a Context, got {ctx!r}")
        _set_current(ctx)


def _warn_default_ctx():
    warnings.warn("Context.default_ctx is deprecated; use mx.current_context() and "
                  "'with ctx:' blocks", DeprecationWarning, stacklevel=3)


class Context(metaclass=_ContextMeta):
    """A device: ``Context('cpu', 0)`` or ``Context('gpu', i)``. Usable as a ``with`` block.

    ``'cpu_pinned'`` and ``'cpu_shared'`` (MXNet's page-locked and shared CPU memory) hold
    ordinary CPU buffers here and run the CPU kernels (``compute_device == 'cpu'``).
    ``device_typeid`` is MXNet's number for the device type (``devstr2type``).
    """

    # _run: the device's RunContext (mxlite.device), cached by the first operator call
    __slots__ = ("device_type", "device_id", "compute_device", "_run")
    _state = threading.local()
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {v: k for k, v in devtype2str.items()}

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

    @property
    def device_typeid(self):
        """MXNet's number for ``device_type`` (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared)."""
        return Context.devstr2type[self.device_type]

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
            from .device import gpu_backend
            backend = gpu_backend()
            if backend is not None:
                backend.empty_cache(self.device_id)

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()


def num_gpus():
    """Number of visible CUDA devices (0 when CuPy or a GPU is missing; 1 under the host
    emulator of the tests, ``MXLITE_GPU_EMULATOR=1``)."""
    from .device import gpu_count
    return gpu_count()


def cpu(device_id=0):
    """The CPU context."""
    return Context("cpu", device_id)


def cpu_pinned(device_id=0):
    """The pinned (page-locked) CPU memory context, MXNet's staging area for GPU copies;
    ordinary CPU memory here (see ``Context``)."""
    return Context("cpu_pinned", device_id)


def gpu(device_id=0):
    """GPU context ``device_id``. As in MXNet it exists on any machine; the first array put
    on it raises MXNetError saying why when there is no such GPU (no CuPy, no CUDA device,
    or fewer devices)."""
    return Context("gpu", device_id)


def gpu_memory_info(device_id=0):
    """``(free, total)`` bytes of GPU ``device_id``'s memory (MXNet's
    ``mx.context.gpu_memory_info``); MXNetError without such a GPU."""
    from .device import _require_gpu_backend
    return _require_gpu_backend("gpu_memory_info").memory_info(int(device_id))


_CPU = Context("cpu", 0)


def _stack():
    """This thread's stack of ``with ctx:`` blocks (a stack, so one Context may nest in itself)."""
    stack = getattr(Context._state, "stack", None)
    if stack is None:
        stack = Context._state.stack = []
    return stack


def current_context():
    """The context set by the innermost ``with ctx:`` block, else this thread's default
    (``cpu(0)`` unless ``Context.default_ctx`` was set in this thread)."""
    stack = getattr(Context._state, "stack", None)
    return stack[-1] if stack else getattr(Context._state, "default", _CPU)


def _set_current(ctx):
    """Make ``ctx`` this thread's current context: it replaces the innermost ``with`` block's
    context until that block ends, or, outside any block, the thread's default (MXNet's
    ``Context.default_ctx = ctx``)."""
    stack = _stack()
    if stack:
        stack[-1] = ctx
    else:
        Context._state.default = ctx
