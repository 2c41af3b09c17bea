"""``Trainer``: applies an optimizer to a list of Parameters (MXNet 1.x
``mx.gluon.Trainer``).

``step(batch_size)`` = ``allreduce_grads()`` (sum each gradient over its contexts, and over
the workers of a ``dist`` kvstore) + ``update(batch_size)`` (the optimizer with
``rescale_grad = scale / batch_size``). As in MXNet, a ``'device'``/``'local'`` kvstore
named by a string is used only for parameters on several contexts (one context updates
directly); a ``KVStore`` object is always used; a ``dist`` store is always used and
updates on the store (every worker applies the same summed gradient).

Parameters of ``stype='row_sparse'`` live in the kvstore, which always applies the
optimizer to them (a kvstore named by a string is made even for one context; ``None`` or
``update_on_kvstore=False`` is an error): ``Parameter.row_sparse_data(row_id)`` pulls the
rows a batch needs, ``step`` pushes their row_sparse gradients, and nothing is pulled back
until the next ``row_sparse_data``.

With a ``dist`` store the Trainer's constructor (a collective call: every worker makes it)
gives every worker rank 0's values of the initialized parameters, so the first gradients
are already taken at the same weights; a parameter still waiting for deferred
initialization gets rank 0's values at the first ``step``, after that step's gradients
(as every parameter did in MXNet): give ``in_units``/``in_channels`` or run one forward
before making the Trainer.
"""

from .. import kvstore as kvs
from .. import optimizer as opt
from ..base import MXNetError
from ..optimizer import states_io
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]


class Trainer:
    """Updates ``params`` (a list, a dict or a ParameterDict of Parameters) with
    ``optimizer`` (a name with ``optimizer_params``, or an ``mx.optimizer.Optimizer``).

    Parameters
    ----------
    params : list, dict or ParameterDict of Parameter
    optimizer : str or Optimizer
    optimizer_params : dict
        Keyword arguments of the optimizer (``learning_rate``, ``wd``, ``momentum``, ...).
    kvstore : str, KVStore or None, default 'device'
        How gradients of several contexts/workers are summed (see the module docstring).
    compression_params : dict
        Refused unless None (gradients are reduced in full precision).
    update_on_kvstore : bool or None
        Whether the store applies the optimizer (default: only for dist stores).

    >>> w = mx.gluon.Parameter('w', shape=(2,), init=mx.init.One())
    >>> w.initialize()
    >>> trainer = mx.gluon.Trainer([w], 'sgd', {'learning_rate': 0.5})
    >>> with mx.autograd.record():
    ...     y = (w.data() * mx.nd.array([1.0, 2.0])).sum()
    >>> y.backward()
    >>> trainer.step(1)
    >>> w.data().asnumpy().tolist()
    [0.5, 0.0]
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[k] for k in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise MXNetError(f"Trainer: the first argument must be a list or dict of "
                             f"Parameters, got {type(params).__name__}")
        self._params = []
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise MXNetError(f"Trainer: first argument must be a list or dict of "
                                 f"Parameters, got list of {type(param).__name__}")
            if param.name in self._param2idx:
                raise MXNetError(f"Trainer: parameter {param.name!r} is given twice")
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
        if compression_params is not None:
            raise MXNetError("Trainer: compression_params is not supported (gradients are "
                             "reduced in full precision)")
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        self._amp_loss_scaler = None    # amp.init_trainer's DynamicLossScaler
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._kv_keys = (None, set())   # (a store, the keys this Trainer initialized in it)
        self._reset_kvstore()
        store_type = kvstore if isinstance(kvstore, str) else getattr(kvstore, "type", "")
        if "dist" in (store_type or ""):
            # every worker starts from rank 0's weights before its first backward (MXNet
            # broadcast them at the first step, after each worker's first gradient)
            self._prepare()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise MXNetError(f"Trainer: all Parameters must be initialized on the same "
                                 f"set of contexts, but Parameter {param.name!r} is on {ctx} "
                                 f"while previous Parameters are on {contexts}")
            contexts = ctx
        return contexts or []

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise MXNetError("Trainer: optimizer_params must be None if optimizer is an "
                                 "instance of Optimizer instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    def _reset_kvstore(self):
        """Forget the kvstore (it is made again, from the parameters' current values, on
        the next step)."""
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _sparse_weights(self):
        return [p.name for p in self._params if p._stype != "default"]

    def _init_kvstore(self):
        config = self._kvstore_params
        kvstore = config["kvstore"]
        sparse = self._sparse_weights()
        if sparse:
            if not isinstance(kvstore, (str, kvs.KVStoreBase)):
                raise MXNetError(f"Trainer: the row_sparse Parameters {sparse} live in a "
                                 f"kvstore; kvstore must be a KVStore or its name, got "
                                 f"{kvstore!r}")
            if config["update_on_kvstore"] is False:
                raise MXNetError(f"Trainer: update_on_kvstore=False with the row_sparse "
                                 f"Parameters {sparse}: their kvstore applies the optimizer")
        if kvstore is None:
            kv = None
        elif isinstance(kvstore, kvs.KVStoreBase):
            kv = kvstore
        elif isinstance(kvstore, str):
            kv = None if len(self._contexts) == 1 and "dist" not in kvstore and not sparse \
                else kvs.create(kvstore)
        else:
            raise MXNetError(f"Trainer: kvstore must be a KVStore, a str or None, got "
                             f"{type(kvstore).__name__}")
        self._distributed = kv is not None and "dist" in kv.type
        update_on_kvstore = config["update_on_kvstore"]
        capable = kv is not None and kv.is_capable(kvs.KVStoreBase.OPTIMIZER)
        if update_on_kvstore and kv is not None and not capable:
            raise MXNetError(f"Trainer: update_on_kvstore=True, but the {kv.type!r} store "
                             "applies no optimizer (is_capable('optimizer') is False)")
        if update_on_kvstore is None:
            update_on_kvstore = capable and (self._distributed or bool(sparse))
        if kv is None:
            update_on_kvstore = False
        if kv is not self._kv_keys[0]:
            self._kv_keys = (kv, set())
            if kv is not None and update_on_kvstore:
                kv.set_optimizer(self._optimizer)
        self._kvstore = kv
        self._update_on_kvstore = update_on_kvstore if kv is not None else None
        self._kv_initialized = True

    def _init_params(self, only=None):
        """Put the parameters whose data exist (or just ``only``) into the kvstore (rank 0's
        values go to every worker of a dist store)."""
        pending = []
        for param in self._params_to_init:
            if param._deferred_init or (only is not None and param is not only):
                pending.append(param)
                continue
            if self._kvstore is not None:
                key = self._param2idx[param.name]
                keys = self._kv_keys[1]
                if key not in keys:
                    if param._stype != "default":
                        # kept dense in the store: a row_sparse gradient updates only its
                        # rows (lazy updates), and rows are pulled as each batch needs them
                        self._kvstore.init(key, param._data[0].tostype("default"))
                    else:
                        arrays = param.list_data()
                        self._kvstore.broadcast(key, arrays[0], arrays)
                    keys.add(key)
                elif self._update_on_kvstore:
                    raise MXNetError(
                        f"Trainer: Parameter {param.name!r} was given new values (set_data, "
                        "load_parameters) after the KVStore object given to this Trainer "
                        "took its weights, and that store applies the optimizer to its own "
                        "copy: make a new Trainer (or pass the kvstore by name)")
        self._params_to_init = pending

    def _prepare(self, only=None):
        if not self._kv_initialized:
            self._contexts = self._check_contexts()
            if len(self._updaters) != len(self._contexts):
                self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]
            self._init_kvstore()
        if self._params_to_init:
            self._init_params(only)

    def _row_sparse_pull(self, parameter, out, row_id):
        """Pull rows ``row_id`` of row_sparse ``parameter`` from the kvstore into ``out`` (a
        list of RowSparseNDArrays)."""
        # only this parameter goes into the store now: writing the others' values to every
        # context could change arrays a recorded forward has already read
        self._prepare(only=parameter)
        if parameter._deferred_init or self._kvstore is None:
            raise MXNetError(f"Trainer: Parameter {parameter.name!r} is not in the kvstore "
                             "yet (initialize it before pulling rows)")
        self._kvstore.row_sparse_pull(self._param2idx[parameter.name], out=out,
                                      row_ids=row_id)

    # ---- learning rate -----------------------------------------------------------------
    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        """The optimizer."""
        return self._optimizer

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate (not with an ``lr_scheduler``)."""
        self._optimizer.set_learning_rate(lr)

    # ---- steps -----------------------------------------------------------------------------
    def step(self, batch_size, ignore_stale_grad=False):
        """One update: gradients summed over contexts/workers, then the optimizer with
        ``rescale_grad = scale / batch_size``. A parameter whose gradient backward did not
        write since the last step raises unless ``ignore_stale_grad`` (then it is
        skipped)."""
        self._check_and_rescale_grad(self._scale / batch_size)
        self._prepare()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def _check_and_rescale_grad(self, scale):
        # MXNet refused a new batch size once a dist store held the optimizer (its servers
        # had a pickled copy); mxlite's dist stores apply this very optimizer on each worker
        self._optimizer.rescale_grad = scale

    def allreduce_grads(self):
        """Sum the gradients over contexts (and workers) without updating, for a manual
        ``update`` (e.g. after gradient clipping). Not with ``update_on_kvstore``."""
        self._prepare()
        if self._kvstore is not None and self._update_on_kvstore:
            raise MXNetError("Trainer.allreduce_grads() when parameters are updated on the "
                             "kvstore is not supported; create the Trainer with "
                             "update_on_kvstore=False")
        self._allreduce_grads()

    def _allreduce_grads(self):
        if self._kvstore is None:
            return
        keys = [i for i, p in enumerate(self._params) if p.grad_req != "null"]
        if not keys:
            return
        params = [self._params[i] for i in keys]
        fresh = [p._fresh_grads() for p in params]
        grads = [p.list_grad() for p in params]
        if not isinstance(self._kvstore, kvs.KVStoreLocal):     # a user's store: per key
            for key, g, p in zip(keys, grads, params):
                self._kvstore.pushpull(key, g, out=p.list_data() if self._update_on_kvstore
                                       else None)
        # one call for every parameter, so a dist store fuses the small ones into buckets
        elif self._update_on_kvstore:
            dense = [i for i, p in enumerate(params) if p._stype == "default"]
            sparse = [i for i, p in enumerate(params) if p._stype != "default"]
            if sparse:                      # row_sparse weights: pulled at the next use
                self._kvstore.push([keys[i] for i in sparse], [grads[i] for i in sparse])
            if dense:
                self._kvstore.pushpull([keys[i] for i in dense], [grads[i] for i in dense],
                                       out=[params[i].list_data() for i in dense])
        else:
            self._kvstore.pushpull(keys, grads)
        for param, f_list in zip(params, fresh):
            # the reduction writes every gradient: a stale one stays stale
            param._seen = [g._version[0] if not f else v
                           for g, f, v in zip(param.list_grad(), f_list, param._seen)]

    def update(self, batch_size, ignore_stale_grad=False):
        """Apply the optimizer to the (already reduced) gradients; see ``step``."""
        self._prepare()
        if self._kvstore is not None and self._update_on_kvstore:
            raise MXNetError("Trainer.update() when parameters are updated on the kvstore is "
                             "not supported; create the Trainer with update_on_kvstore=False")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad=False):
        if self._amp_loss_scaler is not None and self._amp_loss_scaler.check(self._params):
            return      # amp: the gradients overflowed; the step is skipped, the scale shrank
        # every parameter is checked before any is touched (MXNet had already consumed the
        # fresh flags of the parameters before the stale one, so a retry skipped them)
        fresh = {}
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            fresh[i] = param._fresh_grads()
            if ignore_stale_grad:
                continue
            for ok, data in zip(fresh[i], param._data):
                if not ok:
                    raise MXNetError(
                        f"Trainer: gradient of Parameter {param.name!r} on context "
                        f"{data.context} has not been updated by backward since last "
                        "step. This could mean a bug in your model that made it only use "
                        "a subset of the Parameters (Blocks) for this iteration. If you "
                        "are intentionally only using a subset, call step with "
                        "ignore_stale_grad=True to suppress this error and skip "
                        "updating of Parameters with stale gradient")
        updates = [[] for _ in self._updaters]
        on_kvstore = self._kvstore is not None and self._update_on_kvstore
        for i, ok_list in fresh.items():
            param = self._params[i]
            if not on_kvstore:
                for upd, arr, grad, ok in zip(updates, param.list_data(), param.list_grad(),
                                              ok_list):
                    if ok:
                        upd.append((i, grad, arr))
            param._mark_stale()
        for updater, upd in zip(self._updaters, updates):
            if upd:
                idx, grads, weights = zip(*upd)
                updater(list(idx), list(grads), list(weights))

    # ---- states ------------------------------------------------------------------------------
    def save_states(self, fname):
        """Write the optimizer and its states to ``fname``: the state arrays in an
        ``mx.nd.save`` container with a JSON header, not MXNet's pickle (MXNet cannot read
        the file; loading it runs no code)."""
        self._prepare()
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            with open(fname, "wb") as f:
                f.write(self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname, allow_pickle=False):
        """Read the optimizer and its states written by ``save_states``.

        ``save_states`` writes data only (an ``mx.nd.save`` container with a JSON header), so
        loading runs no code. MXNet's ``.states`` files are pickles, which can run any code
        when loaded (MXNet loads them without asking): mxlite reads them only with
        ``allow_pickle=True``, for files you trust.
        """
        self._prepare()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname, allow_pickle=allow_pickle)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            who = "Trainer.load_states"
            data = states_io.read_file(fname, who)
            for updater in self._updaters:
                updater._restore(data, who, repr(fname), allow_pickle)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
