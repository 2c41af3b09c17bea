"""``KVStoreLocal``: the ``'local'`` and ``'device'`` stores of one process, and the
push/pull logic the distributed store shares."""

import numpy as np

from .. import autograd
from ..base import MXNetError
from ..context import cpu
from ..optimizer import Updater, get_updater, states_io
from .base import KVStoreBase
from .buffers import direct_targets, is_sparse as _sparse, local_sum, new_like, rows_of, \
    same_buffer
from .keys import group

__all__ = ["KVStoreLocal"]


class _Entry:
    """A key's stored value: ``value`` (the store's own copy), unless ``borrowed`` is set:
    the output a ``pushpull`` without an optimizer wrote the result into, which holds it
    while its version is still ``version``."""

    __slots__ = ("value", "borrowed", "version")

    def __init__(self, value):
        self.value, self.borrowed, self.version = value, None, 0


class KVStoreLocal(KVStoreBase):
    """A store in one process (``mx.kv.create('local')`` or ``'device'``).

    ``push`` sums the values given for a key (MXNet's copies of a gradient, one per device)
    and stores the sum, or, after ``set_optimizer``, applies the optimizer to the stored
    value with that sum as the gradient. ``pull`` copies the stored value into every output.
    Calls run synchronously; ``priority`` is accepted and ignored.

    ``pushpull`` without an optimizer writes the sum straight into its first output and
    keeps no second copy: a later ``pull`` of the key reads that output, and raises
    MXNetError if the output was written since (MXNet's store held a reference to the
    pushed buffer in that case and returned whatever it held by then).

    >>> kv = mx.kv.create('local')
    >>> kv.init('w', mx.nd.zeros((2,)))
    >>> kv.push('w', [mx.nd.ones((2,)), mx.nd.ones((2,)) * 2])
    >>> out = mx.nd.zeros((2,))
    >>> kv.pull('w', out=out)
    >>> out.asnumpy().tolist()
    [3.0, 3.0]
    """

    def __init__(self, name="local"):
        self._type = name
        self._store = {}          # key -> _Entry
        self._merge = {}          # key -> NDArray: the summed gradient given to the updater
        self._kind = None         # 'int' or 'str' once a key was used (MXNet: never mixed)
        self._updater = None

    # ---- what the store is -----------------------------------------------------------
    @property
    def type(self):
        """The type name given to ``create`` (lower case)."""
        return self._type

    @property
    def rank(self):
        """This worker's rank: 0 in one process."""
        return 0

    @property
    def num_workers(self):
        """The number of workers: 1 in one process."""
        return 1

    def is_capable(self, capability):
        """True for ``'optimizer'`` (updates run in the store); MXNetError for other names."""
        if isinstance(capability, str) and capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise MXNetError(f"is_capable: unknown capability {capability!r}; expected "
                         f"{KVStoreBase.OPTIMIZER!r}")

    def _store_context(self, value):
        """Where a key's stored value lives: the CPU (MXNet's 'local'), or the device of
        the value it was initialised with for the ``device`` types."""
        return value.context if "device" in self._type else cpu()

    # ---- validation --------------------------------------------------------------------
    def _group(self, what, key, value, argument="value", single=False):
        kind, pairs = group(f"kv.{what}", key, value, argument, single)
        if kind is not None and self._kind is not None and kind != self._kind:
            raise MXNetError(f"kv.{what}: the store uses {self._kind} keys; mixed key types "
                             f"are not allowed (got {kind} keys)")
        return kind, pairs

    def _entry(self, what, key):
        entry = self._store.get(key)
        if entry is None:
            raise MXNetError(f"kv.{what}: key {key!r} has not been initialized (call "
                             f"kv.init first)")
        return entry

    def _check_like(self, what, key, arrays, entry, argument):
        want = entry.value
        for i, a in enumerate(arrays):
            if a.shape != want.shape or a.dtype != want.dtype:
                where = f"{argument}[{i}]" if len(arrays) > 1 else argument
                raise MXNetError(f"kv.{what}: {where} for key {key!r} has shape {a.shape} "
                                 f"and dtype {np.dtype(a.dtype)}; the key was initialized "
                                 f"with shape {want.shape} and dtype {np.dtype(want.dtype)}")

    def _stored(self, what, key, entry):
        """The NDArray holding ``key``'s current value."""
        if entry.borrowed is None:
            return entry.value
        if entry.borrowed._version[0] != entry.version:
            raise MXNetError(
                f"kv.{what}: key {key!r} was last set by pushpull, which left its value only "
                "in its output, and that output has been written since; pull right after "
                "pushpull, or push instead")
        return entry.borrowed

    def _plan(self, what, key, value, out=None):
        """Validated ``[(key, values, outs, entry)]`` of a push (``out`` None) or pushpull."""
        _, pairs = self._group(what, key, value)
        outs = dict(pairs)
        if out is not None:
            _, out_pairs = self._group(what, key, out, "out")
            outs = dict(out_pairs)
        plan = []
        for k, arrays in pairs:
            entry = self._entry(what, k)
            self._check_like(what, k, arrays, entry, "value")
            self._check_like(what, k, outs[k], entry, "out")
            if self._updater is not None:
                self._stored(what, k, entry)
            plan.append((k, arrays, outs[k], entry))
        return plan

    # ---- collective hooks (the distributed store overrides these) -----------------------
    def _agree(self, what, plan, error):
        """Called by every public method that communicates, with its validated plan or the
        MXNetError that validation raised; here (one process) the error is raised."""
        if error is not None:
            raise error

    def _validated(self, what, planner):
        try:
            plan, error = planner(), None
        except MXNetError as e:
            plan, error = None, e
        self._agree(what, plan, error)
        return plan

    def _reduce(self, items):
        """Write the sum of each item's values into its target; ``items`` is a list of
        ``(values, target)``."""
        for arrays, target in items:
            total = local_sum(arrays, target._ctx)
            if not same_buffer(total, target):
                total.copyto(target)

    def _sum_sparse(self, items):
        """The sums of ``items``, ``(values, ctx)`` pairs with some value in sparse storage,
        as new arrays on ``ctx`` (row_sparse when every value is; the dist store adds the
        workers' sums)."""
        return [local_sum(arrays, ctx) for arrays, ctx in items]

    def _initial_values(self, pairs):
        """The stored copies of ``init``'s values (here: copies of the given values)."""
        return [arrays[0].copyto(self._store_context(arrays[0])) for _, arrays in pairs]

    # ---- the API -------------------------------------------------------------------------
    def init(self, key, value):
        """Initialize one key or a list of keys with one NDArray each (a copy is stored;
        in the dist stores rank 0's values are stored on every worker). A key is
        initialized once."""
        def plan():
            kind, pairs = self._group("init", key, value, single=True)
            for k, _ in pairs:
                if k in self._store:
                    raise MXNetError(f"kv.init: duplicate init of key {k!r} (kv.init or "
                                     f"kv.broadcast was called with it before)")
            return kind, pairs
        kind, pairs = self._validated("init", plan)
        with autograd.pause():
            values = self._initial_values(pairs)
        for (k, _), v in zip(pairs, values):
            self._store[k] = _Entry(v)
        if kind is not None:
            self._kind = kind

    def push(self, key, value, priority=0):
        """Push one key or a list of keys. A key's value may be a list of NDArrays (copies
        from several devices), which are summed; in the dist stores the sums of all
        workers are added. Without an optimizer the sum is stored; with one, the optimizer
        updates the stored value with it."""
        plan = self._validated("push", lambda: self._plan("push", key, value))
        with autograd.pause():
            self._push(plan)

    def _push(self, plan):
        if self._updater is None:
            for _, _, _, entry in plan:
                entry.borrowed = None
            self._reduce([(arrays, entry.value) for _, arrays, _, entry in plan])
            return
        # row_sparse gradients are summed into a new row_sparse array (the optimizer's
        # lazy update reads its rows); dense ones into the key's merge buffer
        sparse = [_sparse(arrays) for _, arrays, _, _ in plan]
        sums = iter(self._sum_sparse([(arrays, entry.value._ctx)
                                      for (_, arrays, _, entry), s in zip(plan, sparse) if s]))
        merged = [next(sums) if s else self._merge_buffer(k, entry)
                  for (k, _, _, entry), s in zip(plan, sparse)]
        self._reduce([(arrays, m) for (_, arrays, _, _), m, s in zip(plan, merged, sparse)
                      if not s])
        for (k, _, _, entry), m in zip(plan, merged):
            if entry.borrowed is not None:        # the optimizer updates the store's copy
                entry.borrowed.copyto(entry.value)
                entry.borrowed = None
            self._updater(k, m, entry.value)

    def _merge_buffer(self, key, entry):
        buf = self._merge.get(key)
        if buf is None:
            buf = self._merge[key] = new_like(entry.value)
        return buf

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored value of one key (or a list of keys) into ``out``: an NDArray or
        a list of NDArrays per key, each of which gets the value. Pulling needs no other
        worker."""
        if out is None:
            raise MXNetError("kv.pull: out is required (the NDArrays to pull into)")
        _, pairs = self._group("pull", key, out, "out")
        sources = []
        for k, outs in pairs:
            entry = self._entry("pull", k)
            self._check_like("pull", k, outs, entry, "out")
            sources.append(self._stored("pull", k, entry))
        with autograd.pause():
            for (_, outs), src in zip(pairs, sources):
                for o in outs:
                    if not same_buffer(src, o):
                        src.copyto(o)

    def pushpull(self, key, value, out=None, priority=0):
        """``push`` then ``pull`` into ``out`` (into ``value`` when ``out`` is None), in one
        call: in the dist stores, one allreduce, written straight into the output."""
        plan = self._validated("pushpull", lambda: self._plan("pushpull", key, value, out))
        with autograd.pause():
            if self._updater is not None:
                self._push(plan)
                self._copy_out([(outs, entry.value) for _, _, outs, entry in plan])
            else:
                self._pushpull(plan)

    def _pushpull(self, plan):
        direct = direct_targets([(arrays, outs[0]) for _, arrays, outs, _ in plan])
        items, copies = [], []
        for (_, arrays, outs, entry), ok in zip(plan, direct):
            target = outs[0] if ok else entry.value
            items.append((arrays, target))
            copies.append((outs[1:] if ok else outs, target))
        self._reduce(items)
        for (_, _, outs, entry), ok in zip(plan, direct):
            entry.borrowed = outs[0] if ok else None
            entry.version = outs[0]._version[0]
        self._copy_out(copies)

    @staticmethod
    def _copy_out(copies):
        for outs, src in copies:
            for o in outs:
                if not same_buffer(src, o):
                    src.copyto(o)

    def broadcast(self, key, value, out, priority=0):
        """``init(key, value)`` then ``pull(key, out)``: in the dist stores every worker's
        ``out`` gets rank 0's value."""
        self.init(key, value)
        self.pull(key, out)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Copy the rows ``row_ids`` of one key's stored value (or of each key of a list)
        into ``out``, a RowSparseNDArray (or a list of them per key, with a ``row_ids``
        NDArray each): the rows a worker needs of a large table, not the table. Row ids may
        repeat and come in any order; ``out`` holds each row once, in increasing order."""
        if out is None or row_ids is None:
            raise MXNetError("kv.row_sparse_pull: out and row_ids are required")
        _, pairs = self._group("row_sparse_pull", key, out, "out")
        _, id_pairs = self._group("row_sparse_pull", key, row_ids, "row_ids")
        ids = dict(id_pairs)
        for k, outs in pairs:
            entry = self._entry("row_sparse_pull", k)
            self._check_like("row_sparse_pull", k, outs, entry, "out")
            rows = ids[k]
            if len(rows) not in (1, len(outs)):
                raise MXNetError(f"kv.row_sparse_pull: {len(rows)} row_ids arrays for "
                                 f"{len(outs)} outputs of key {k!r}")
            for o in outs:
                if o.stype != "row_sparse":
                    raise MXNetError(f"kv.row_sparse_pull: out for key {k!r} must be a "
                                     f"RowSparseNDArray, got stype {o.stype!r}")
            stored = self._stored("row_sparse_pull", k, entry)
            with autograd.pause():
                for i, o in enumerate(outs):
                    pick = rows[i if len(rows) > 1 else 0]
                    rows_of(stored, pick).copyto(o)

    def set_gradient_compression(self, compression_params):
        """Not supported (MXNetError): MXNet's 2-bit compression quantized what workers sent
        to parameter servers; mxlite's allreduce sends full-precision gradients."""
        raise MXNetError(
            f"kv.set_gradient_compression: gradient compression is not supported by the "
            f"{self._type!r} store (got {compression_params!r}); gradients are reduced in "
            "full precision")

    # ---- optimizer -----------------------------------------------------------------------
    def set_optimizer(self, optimizer):
        """Apply ``optimizer`` (an ``mx.optimizer.Optimizer``) in the store: each later push
        updates the stored value with the pushed sum as gradient (``get_updater``)."""
        self._validated("set_optimizer", lambda: self._check_optimizer(optimizer))
        self._set_updater(get_updater(optimizer))

    @staticmethod
    def _check_optimizer(optimizer):
        from ..optimizer import Optimizer
        if not isinstance(optimizer, Optimizer):
            raise MXNetError(f"kv.set_optimizer: expected an mx.optimizer.Optimizer, got "
                             f"{type(optimizer).__name__}")
        return (type(optimizer).__name__, repr(optimizer))

    def _set_updater(self, updater):
        """Set ``updater(key, summed_gradient, stored_value)``, called on each push instead of
        storing the sum (it updates the stored value in place)."""
        if not callable(updater):
            raise MXNetError(f"kv._set_updater: expected a callable, got {updater!r}")
        self._updater = updater

    def _updater_or_error(self, what):
        if self._updater is None:
            raise MXNetError(f"kv.{what}: no optimizer is set (call kv.set_optimizer)")
        if not hasattr(self._updater, "get_states"):
            raise MXNetError(f"kv.{what}: the updater set with _set_updater has no states")
        return self._updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states (and the optimizer with ``dump_optimizer``) to file
        ``fname``, as ``Updater.get_states`` makes them (data only, not MXNet's pickle)."""
        states = self._updater_or_error("save_optimizer_states").get_states(dump_optimizer)
        with open(fname, "wb") as f:
            f.write(states)

    def load_optimizer_states(self, fname, allow_pickle=False):
        """Read the optimizer states written by ``save_optimizer_states`` from ``fname``.

        MXNet's states files are pickles; they load only with ``allow_pickle=True``, because
        unpickling runs whatever code the file names (MXNet unpickles without asking).
        mxlite's own files hold data only and need no such trust.
        """
        who = "kv.load_optimizer_states"
        updater = self._updater_or_error("load_optimizer_states")
        data = states_io.read_file(fname, who)
        if isinstance(updater, Updater):
            updater._restore(data, who, repr(fname), allow_pickle)
        else:                                   # an updater of the caller's (_set_updater)
            updater.set_states(data)

    def barrier(self):
        """Wait until every worker reaches this call (returns at once in one process)."""
        self._validated("barrier", lambda: None)

    _barrier = barrier
