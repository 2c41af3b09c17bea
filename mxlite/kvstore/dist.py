"""``KVStoreDist``: ``'dist_sync'`` and ``'dist_device_sync'``, data-parallel training over
MPI with an allreduce instead of MXNet's parameter servers."""
import numpy as np

from ..base import MXNetError
from ..device import namespace_for
from ..ndarray import NDArray
from ..ndarray.sparse import wrap
from ..ops import sync_norm
from ..ops.sparse import formats as F
from .buffers import local_sum, merge_rows, new_like, same_buffer, summed_stype, written
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
    * row_sparse values (``Embedding(sparse_grad=True)``'s gradients) are summed on each
      worker, then only the rows they store travel: the workers gather each other's row
      ids and rows (``MPI_Allgatherv``) and each adds them up in rank order into the same
      row_sparse sum (bit-identical on every worker). A worker with no rows sends none.
      A key's values must be row_sparse on every worker or on none (else MXNetError on
      every worker); values in other storage (csr, or dense mixed with row_sparse on one
      worker) are summed dense. ``init`` of a sparse value broadcasts rank 0's stored
      values and indices.
    * After ``set_optimizer`` every worker applies the optimizer to its copy of the
      weights with the same summed gradient (lazily, to the rows of a row_sparse one), so
      the copies stay identical; ``pull`` and ``row_sparse_pull`` read the local copy and
      need no other worker.

    Every worker must make the same collective calls (``init``, ``push``, ``pushpull``,
    ``broadcast``, ``set_optimizer``, ``barrier``) with the same keys, shapes, dtypes and
    storage types, in the same order: each call first checks that with the others, so a
    bad argument raises MXNetError on every worker instead of leaving the others waiting.
    There is no ``dist_async``: without servers there is nowhere to apply updates out of
    step.
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

    def _plan(self, what, key, value, out=None):
        plan = super()._plan(what, key, value, out)
        for k, arrays, outs, entry in plan:   # rows travel as they are: canonical ones only
            for a in arrays:
                if a.stype == "row_sparse":
                    F.checked(a._sp, f"kv.{what}")
            if summed_stype(arrays) != "row_sparse":
                continue
            for t in [entry.value] + list(outs):
                if t.context.device_type != "cpu":
                    raise MXNetError(f"kv.{what}: row_sparse values for key {k!r} are summed "
                                     f"across the ranks on the CPU ('dist_sync'), but the key "
                                     f"or its output is on {t.context}")
        return plan

    # ---- data movement -------------------------------------------------------------------
    def _initial_values(self, pairs):
        values = []
        with self._world.collective("kv.init"):
            for _, arrays in pairs:
                ctx = self._store_context(arrays[0])
                stored = arrays[0].copyto(ctx) if self.rank == 0 else new_like(arrays[0], ctx)
                if stored._data is None:
                    self._sparse_bcast(stored)
                else:
                    self._device_bcast(stored)
                values.append(stored)
        return values

    def _sparse_bcast(self, array):
        """Give every worker rank 0's sparse ``array``: its stored values and indices."""
        if self._world.size == 1:
            return
        parts = [array._sp.data] + list(array._sp.aux)
        lengths = np.array([p.shape[0] for p in parts], np.int64)
        self._world.bcast(lengths)
        if self.rank != 0:
            parts = [np.empty((int(n),) + p.shape[1:], p.dtype) for n, p in zip(lengths, parts)]
        for p in parts:
            self._world.bcast(p.reshape(-1))
        if self.rank != 0:
            shape = array.shape
            array._sp = F.RowSparse(parts[0], parts[1], shape) if array.stype == "row_sparse" \
                else F.CSR(parts[0], parts[2], parts[1], shape)
            written(array)

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
        with self._world.collective("kv allreduce"):
            rows = [item for item in items if summed_stype(item[0]) == "row_sparse"]
            self._allreduce_values([item for item in items
                                    if summed_stype(item[0]) != "row_sparse"])
            sums = self._sum_rows([(arrays, target._ctx) for arrays, target in rows])
            for (_, target), total in zip(rows, sums):
                total.copyto(target)

    def _sum_sparse(self, items):
        if self._world.size == 1:
            return super()._sum_sparse(items)
        with self._world.collective("kv allreduce"):
            sums = [None if summed_stype(arrays) == "row_sparse" else _dense_like(arrays[0], ctx)
                    for arrays, ctx in items]
            self._allreduce_values([(arrays, s) for (arrays, _), s in zip(items, sums)
                                    if s is not None])
            rows = iter(self._sum_rows([item for item, s in zip(items, sums) if s is None]))
            return [next(rows) if s is None else s for s in sums]

    def _allreduce_values(self, items):
        """Write the sum over every worker of each item's values (summed dense) into its
        target: one allreduce per large tensor, fused ones for the small."""
        pairs, targets, sparse_targets = [], [], []
        for arrays, target in items:
            if 0 in target.shape:
                continue
            total = local_sum(arrays, target._ctx)
            if total._data is None:             # csr values: their sum goes dense
                total = total.tostype("default")
            recv = target
            if target._data is None:            # a sparse target: through a dense buffer
                recv = _dense_like(target, target._ctx)
                sparse_targets.append((recv, target))
            send = None if same_buffer(total, recv) else total._data.reshape(-1)
            pairs.append((recv._ctx, send, recv._data.reshape(-1)))
            targets.append(recv)
        buckets, singles = Fusion.plan(pairs, self.fusion_threshold, self.fusion_bucket)
        for group in buckets:
            self._fusion.run(group, namespace_for(group[0][0]), self._allreduce)
        for ctx, send, recv in singles:
            self._allreduce(ctx, send, recv)
        for target in targets:
            written(target)
        for recv, target in sparse_targets:
            recv.copyto(target)

    def _sum_rows(self, items):
        """The sums over every worker of ``items``, ``(values, ctx)`` pairs of row_sparse
        values, as new RowSparseNDArrays on ``ctx``. Each worker sums its own values; the
        workers then gather the stored row counts (one allgather for every key), and per
        key the row ids and the rows (Allgatherv: only stored rows travel), which each
        merges alike (``merge_rows``)."""
        if not items:
            return []
        parts = [local_sum(arrays, ctx)._sp for arrays, ctx in items]
        counts = self._world.allgather(np.array([p.nnz for p in parts], np.int64))
        sums = []
        for (_, ctx), part, per_rank in zip(items, parts, counts.T):
            total = int(per_rank.sum())
            if total == 0:
                value = F.rsp_zeros(part.shape, part.dtype)
            else:
                width = int(np.prod(part.shape[1:], dtype=np.int64))
                ids = self._world.allgatherv(part.indices, per_rank)
                rows = self._world.allgatherv(part.data.reshape(-1), per_rank * width)
                ids, rows = merge_rows(ids, rows.reshape((total,) + part.shape[1:]), per_rank)
                value = F.RowSparse(rows, ids, part.shape, valid=True)
            sums.append(wrap(value, ctx))
        return sums

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


def _arrays_signature(key, arrays):
    a = arrays[0]
    return key, a.shape, np.dtype(a.dtype).num, summed_stype(arrays), a.context.device_type


def _dense_like(array, ctx):
    """An uninitialised dense NDArray of ``array``'s shape and dtype on ``ctx``."""
    return NDArray._wrap(namespace_for(ctx).empty(array.shape, np.dtype(array.dtype)), ctx)


def _describe(what, plan):
    """What the workers must agree on about a validated plan: keys, shapes, dtypes, storage
    types (of a key's summed values) and device types in order (for ``set_optimizer``: the
    optimizer's class and settings)."""
    if what in ("push", "pushpull"):
        return [_arrays_signature(key, arrays) for key, arrays, _, _ in plan]
    if what == "init":
        return [_arrays_signature(key, arrays) for key, arrays in plan[1]]
    if what == "set_optimizer":
        return plan
    return None
