"""``KVStoreBase`` (MXNet 1.x's abstract key-value store and its registry) and ``create``."""

from ..base import MXNetError, register_class

__all__ = ["KVStoreBase", "TestStore", "create"]

# The built-in store types: name -> (module, class name), imported on first use so that
# ``import mxlite`` never loads MPI.
_BUILTIN = {
    "local": ("local", "KVStoreLocal"),
    "device": ("local", "KVStoreLocal"),
    # MXNet's older names of the same two stores
    "local_update_cpu": ("local", "KVStoreLocal"),
    "local_allreduce_cpu": ("local", "KVStoreLocal"),
    "local_allreduce_device": ("local", "KVStoreLocal"),
    "dist_sync": ("dist", "KVStoreDist"),
    "dist_device_sync": ("dist", "KVStoreDist"),
    "dist_sync_device": ("dist", "KVStoreDist"),
}

_UNSUPPORTED = {
    "dist_async": "asynchronous updates need parameter servers, which mxlite does not run: "
                  "its dist stores allreduce gradients between the workers (MPI), so every "
                  "worker applies the same update at the same step; use 'dist_sync'",
    "dist_device_async": "asynchronous updates need parameter servers; use "
                         "'dist_device_sync'",
    "nccl": "use 'device' in one process, or 'dist_device_sync' (NCCL between the processes "
            "of an MPI job, one GPU each)",
    "horovod": "mxlite's 'dist_sync' is an allreduce over MPI, the same data-parallel scheme; "
               "use it with mpiexec",
    "byteps": "use 'dist_sync' (an allreduce over MPI)",
}


class KVStoreBase:
    """The interface every key-value store implements (MXNet 1.x's ``KVStoreBase``).

    Subclasses registered with ``KVStoreBase.register`` are created by name with
    ``mx.kv.create(name)`` (the lower-cased class name).
    """

    OPTIMIZER = "optimizer"
    kv_registry = {}

    def broadcast(self, key, value, out, priority=0):
        """Initialize ``key`` with rank 0's ``value`` and write it into ``out``."""
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` and pull the result into ``out`` (``value`` when omitted)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        """Apply ``optimizer`` to the stored values on every push."""
        raise NotImplementedError()

    def is_capable(self, capability):
        """Whether the store supports ``capability`` (``KVStoreBase.OPTIMIZER``)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states to file ``fname``."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname, allow_pickle=False):
        """Read the optimizer states from file ``fname`` (MXNet's pickled files only with
        ``allow_pickle=True``: unpickling runs the code a file names)."""
        raise NotImplementedError()

    @property
    def type(self):
        """The store's type name."""
        raise NotImplementedError()

    @property
    def rank(self):
        """This worker's rank, in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register a store class under its lower-cased name (a class decorator).

        >>> @mx.kv.KVStoreBase.register
        ... class MyStore(mx.kv.KVStoreBase):
        ...     pass
        >>> type(mx.kv.create('MyStore')).__name__
        'MyStore'
        """
        return register_class(KVStoreBase.kv_registry, klass, "KVStoreBase.register")


@KVStoreBase.register
class TestStore(KVStoreBase):
    """The smallest store (MXNet's ``'teststore'``, for testing the ``KVStoreBase``
    interface and a Trainer with a user's store): ``pushpull`` sums a key's values on the
    first one's context and writes the sum into ``out`` (or back into the values);
    ``broadcast`` copies the value into ``out``. It applies no optimizer
    (``is_capable('optimizer')`` is False), so a Trainer updates on the devices."""

    def broadcast(self, key, value, out, priority=0):
        """Copy ``value`` into every array of ``out``."""
        for o in out if isinstance(out, (list, tuple)) else [out]:
            value.copyto(o)

    def pushpull(self, key, value, out=None, priority=0):
        """The sum of ``value`` (an NDArray or a list of them) into ``out`` (or ``value``)."""
        values = value if isinstance(value, (list, tuple)) else [value]
        total = values[0].copy()
        for v in values[1:]:
            total += v.as_in_context(total.context)
        targets = values if out is None else out if isinstance(out, (list, tuple)) else [out]
        for o in targets:
            total.copyto(o)

    def is_capable(self, capability):
        """False for ``'optimizer'``; MXNetError for other names."""
        if isinstance(capability, str) and capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise MXNetError(f"is_capable: unknown capability {capability!r}; expected "
                         f"{KVStoreBase.OPTIMIZER!r}")

    @property
    def type(self):
        """``'teststore'``."""
        return "teststore"

    @property
    def rank(self):
        """0: one process."""
        return 0

    @property
    def num_workers(self):
        """1: one process."""
        return 1


def create(name="local"):
    """A new key-value store.

    ``'local'`` sums the values pushed for a key (copies of a gradient, one per device) on
    the CPU and keeps the stored value there; ``'device'`` does the same on the device of
    the values. ``'dist_sync'`` and ``'dist_device_sync'`` run data-parallel between the
    processes of an MPI job (``mpiexec -n N python train.py``): values pushed for a key are
    summed over every worker by an allreduce, and an optimizer set with ``set_optimizer``
    updates the weights on every worker alike, so ``dist_sync`` with a batch of ``b`` per
    worker trains as ``local`` with a batch of ``N * b``. They need ``pip install
    mxlite[dist]``. Names are case-insensitive; classes registered with
    ``KVStoreBase.register`` are found first.

    >>> kv = mx.kv.create('local')
    >>> kv.type, kv.rank, kv.num_workers
    ('local', 0, 1)
    """
    if not isinstance(name, str):
        raise MXNetError(f"kvstore.create: name must be a string, got {name!r}")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if name in _UNSUPPORTED:
        raise MXNetError(f"kvstore.create: {name!r} is not supported: {_UNSUPPORTED[name]}")
    if name not in _BUILTIN:
        known = sorted(set(_BUILTIN) | set(KVStoreBase.kv_registry))
        raise MXNetError(f"kvstore.create: unknown type {name!r}; expected one of {known}")
    module, cls = _BUILTIN[name]
    from importlib import import_module
    return getattr(import_module(f"{__package__}.{module}"), cls)(name)
