"""``KVStoreDist``: ``'dist_sync'`` and ``'dist_device_sync'``, data-parallel training over
MPI with an allreduce instead of MXNet's parameter servers."""
import numpy as np

from ..base import MXNetError
from ..device import namespace_for
from ..ops import sync_norm
from .buffers import is_sparse, local_sum, new_like, same_buffer, written
from .fusion import Fusion
from .local import KVStoreLocal
from .mpi import signature, world
from .nccl import GpuReducer

__all__ = ["KVStoreDist"]


class KVStoreDist(KVStoreLocal):
    """A store shared by the processes of an MPI job (``mx.kv.create('dist_sync')``; run
    the script with ``mpiexec -n N python train.py`` or ``python -m mxlite.launch -n N
    train.py``).

    * ``init`` stores rank 0's values on every worker (an MPI broadcast).
    * ``push``/``pushpull`` sum the values each worker gives for a key (its local copies),
      then sum over the workers with ``MPI_Allreduce`` on the arrays' own buffers (NCCL for
      GPU arrays when CuPy has it). Tensors of at most ``fusion_threshold`` bytes share one
      allreduce per ``fusion_bucket`` bytes; larger ones go to MPI directly, in pieces
      below 2^31 elements.
    * After ``set_optimizer`` every worker applies the optimizer to its copy of the
      weights with the same summed gradient, so the copies stay identical; ``pull`` reads
      the local copy and needs no other worker.

    Every worker must make the same collective calls (``init``, ``push``, ``pushpull``,
    ``broadcast``, ``set_optimizer``, ``barrier``) with the same keys, shapes and dtypes, in
    the same order: each call first checks that with the others, so a bad argument raises
    MXNetError on every worker instead of leaving the others waiting. There is no
    ``dist_async``: without servers there is nowhere to apply updates out of step.
    ``'dist_sync'`` keeps stored values and sums on the CPU, ``'dist_device_sync'`` on the
    device of the values.
    """

    fusion_threshold = 64 << 10     #: tensors of at most this many bytes are fused
    fusion_bucket = 4 << 20         #: the most bytes one fused allreduce carries

    def __init__(self, name="dist_sync"):
        super().__init__(name)
        self._world = world()
        self._fusion = Fusion()
        self._gpu = None
        if self._world.size > 1:        # SyncBatchNorm's statistics cover every rank
            sync_norm.set_rank_reducer(lambda values: self._world.allreduce(None, values))

    @property
    def rank(self):
        """This worker's rank in the MPI job, in ``[0, num_workers)``."""
        return self._world.rank

    @property
    def num_workers(self):
        """The number of processes in the MPI job."""
        return self._world.size

    # ---- agreement -----------------------------------------------------------------------
    def _agree(self, what, plan, error):
        sig = 0 if error is not None else signature(
            (what, self._updater is not None, _describe(what, plan)))
        self._world.agree(f"kv.{what}", sig, error)

    # ---- data movement -------------------------------------------------------------------
    def _initial_values(self, pairs):
        values = []
        with self._world.collective("kv.init"):
            for _, arrays in pairs:
                ctx = self._store_context(arrays[0])
                stored = arrays[0].copyto(ctx) if self.rank == 0 else new_like(arrays[0], ctx)
                self._device_bcast(stored)
                values.append(stored)
        return values

    def _device_bcast(self, array):
        if self._world.size == 1 or array.size == 0:
            return
        xp = namespace_for(array.context)
        if array.context.device_type == "cpu":
            self._world.bcast(array._data.reshape(-1))
        else:                                   # GPU: through host memory, once per key
            host = xp.asnumpy(array._data).reshape(-1)
            self._world.bcast(host)
            xp.copyto(array._data, xp.from_host(host.reshape(array.shape)))
        written(array)

    def _allreduce(self, ctx, send, recv):
        if ctx.device_type == "cpu":
            self._world.allreduce(send, recv)
            return
        if self._gpu is None:
            self._gpu = GpuReducer(self._world)
        self._gpu.allreduce(ctx, namespace_for(ctx), send, recv)

    def _reduce(self, items):
        if self._world.size == 1:
            super()._reduce(items)
            return
        if any(target._data is None or is_sparse(arrays) for arrays, target in items):
            raise MXNetError("kv: row_sparse values across MPI ranks are not supported yet "
                             "(push them dense, or use one process)")
        with self._world.collective("kv allreduce"):
            pairs, targets = [], []
            for arrays, target in items:
                recv = target._data
                if recv.size == 0:
                    continue
                total = local_sum(arrays, target._ctx)
                send = None if same_buffer(total, target) else total._data.reshape(-1)
                pairs.append((target._ctx, send, recv.reshape(-1)))
                targets.append(target)
            buckets, singles = Fusion.plan(pairs, self.fusion_threshold, self.fusion_bucket)
            for group in buckets:
                self._fusion.run(group, namespace_for(group[0][0]), self._allreduce)
            for ctx, send, recv in singles:
                self._allreduce(ctx, send, recv)
            for target in targets:
                written(target)

    # ---- optimizer states ------------------------------------------------------------------
    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Rank 0 writes the optimizer states (the same on every worker) to ``fname``; every
        worker returns once the file is written (a collective call)."""
        updater = self._validated("save_optimizer_states",
                                  lambda: self._updater_or_error("save_optimizer_states"))
        if self.rank == 0:
            with open(fname, "wb") as f:
                f.write(updater.get_states(dump_optimizer))
        self.barrier()


def _arrays_signature(key, array):
    return key, array.shape, np.dtype(array.dtype).num, array.stype, array.context.device_type


def _describe(what, plan):
    """What the workers must agree on about a validated plan: keys, shapes, dtypes and
    device types in order (for ``set_optimizer``: the optimizer's class and settings)."""
    if what in ("push", "pushpull"):
        return [_arrays_signature(key, arrays[0]) for key, arrays, _, _ in plan]
    if what == "init":
        return [_arrays_signature(key, arrays[0]) for key, arrays in plan[1]]
    if what == "set_optimizer":
        return plan
    return None
