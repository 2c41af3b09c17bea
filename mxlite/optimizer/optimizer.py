"""The ``Optimizer`` base class, its registry, and MXNet 1.x's optimizers.

An optimizer turns ``(index, weight, grad, state)`` into an in-place update of ``weight``
(and of ``state``, made once per weight by ``create_state``). Learning rate and weight decay
come from the optimizer (``learning_rate`` or an ``lr_scheduler``, ``wd``) times per-weight
multipliers (``set_lr_mult``/``set_wd_mult``, by index or by name through
``param_idx2name``). The dense updates run the fused operators of
``mxlite/ops/optimizer_ops.py`` with ``out=weight`` where MXNet did (``sgd_update``,
``adam_update``, ...), so one call is one pass over the weight.

float16 weights train with ``multi_precision=True``: the state holds a float32 master copy of
the weight, MXNet's layouts -- ``(weight32, state)`` for most optimizers (the update runs on
the master copy with the gradient cast to float32, and the weight gets it cast back),
``(state, weight32)`` for SGD, NAG and LARS, which run the fused ``mp_`` operators. Without
``multi_precision`` a float16 weight raises MXNetError naming its index (MXNet warned and
accumulated in float16).
"""
import math
import warnings

import numpy as np

from ..base import MXNetError, register_class
from .. import ndarray as nd
from ..ndarray import NDArray
from ..util import is_np_array

__all__ = ["Optimizer", "register", "create", "SGD", "ccSGD", "NAG", "Signum", "Adam", "AdamW",
           "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "Adamax", "Nadam", "SGLD", "Test", "LARS",
           "LBSGD", "DCASGD", "FTML", "LAMB"]

_F16 = np.dtype("float16")


def _check_range(cls, name, value, low, high, high_open=True):
    """MXNetError unless ``low <= value < high`` (``<= high`` with ``high_open=False``)."""
    ok = isinstance(value, (int, float)) and math.isfinite(value) and low <= value and (
        value < high if high_open else value <= high)
    if not ok:
        bound = f"[{low}, {high})" if high_open else f"[{low}, {high}]"
        raise MXNetError(f"{cls}: {name} must be in {bound}, got {value!r}")


class Optimizer:
    """The base class of every optimizer.

    Parameters
    ----------
    rescale_grad : float, default 1.0
        Multiplies the gradient before the update (often ``1.0 / batch_size``).
    param_idx2name : dict of int to str, optional
        Names of the weights by index; weights whose name ends in neither ``_weight`` nor
        ``_gamma`` get weight decay multiplier 0 (MXNet's rule).
    wd : float, default 0.0
        Weight decay (L2 regularization) coefficient.
    clip_gradient : float, optional
        Clips the gradient to ``[-clip_gradient, clip_gradient]``; None, 0 or a negative
        value clips nothing (MXNet passed a negative value on to the update operators, which
        ignored it, but its AdaGrad/AdaDelta/Adamax/Nadam clipped to an empty range).
    learning_rate : float, optional
        The learning rate; with an ``lr_scheduler`` it replaces the scheduler's ``base_lr``.
        0.01 when neither is given.
    lr_scheduler : LRScheduler, optional
        Gives the learning rate as a function of ``num_update``.
    sym : optional
        A symbol whose ``attr_dict()`` holds ``__lr_mult__``/``__wd_mult__`` attributes.
    begin_num_update : int, default 0
        The update count to start from (``num_update``).
    multi_precision : bool, default False
        Keep a float32 master copy of each float16 weight in its state and update that (see
        ``create_state_multi_precision``); without it a float16 weight raises MXNetError.
    param_dict : dict of int to Parameter-like, optional
        Objects with ``lr_mult`` and ``wd_mult`` attributes, by index (gluon's parameters);
        they take precedence over ``set_lr_mult``/``set_wd_mult``.

    Examples
    --------
    >>> opt = mx.optimizer.create('sgd', learning_rate=0.1)
    >>> w, g = mx.nd.array([1.0, 2.0]), mx.nd.array([0.5, 0.5])
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> [round(v, 4) for v in w.asnumpy().tolist()]
    [0.95, 1.95]
    """

    opt_registry = {}

    def __init__(self, rescale_grad=1.0, param_idx2name=None, wd=0.0, clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None:
            if lr_scheduler.base_lr != learning_rate:
                warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by "
                              "``learning_rate`` in optimizer.", UserWarning, stacklevel=2)
                lr_scheduler.base_lr = learning_rate
        if clip_gradient is not None:
            if isinstance(clip_gradient, bool) or not isinstance(clip_gradient, (int, float)) \
                    or math.isnan(clip_gradient):
                raise MXNetError(f"{type(self).__name__}: clip_gradient must be None or a "
                                 f"number, got {clip_gradient!r}")
            if clip_gradient <= 0:      # the update ops' rule: <= 0 turns clipping off
                clip_gradient = None
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        # made under npx.set_np() (MXNet's attribute; the update operators take np and legacy
        # arrays alike, so nothing depends on it)
        self.allow_np_array = is_np_array()
        # how many weights an Updater hands over in one call (lists); 0: one at a time. SGD
        # runs a list as one multi-tensor update (MXNet's MXNET_OPTIMIZER_AGGREGATION_SIZE
        # default, 4); the others update a list's weights one by one
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise MXNetError(f"{type(self).__name__}: param_idx2name should be a dict of "
                             f"param indexes to names, got {type(param_idx2name).__name__}")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # ---- the registry ----
    @staticmethod
    def register(klass):
        """Register an optimizer class under its lower-case name (``create`` finds it).

        >>> @mx.optimizer.Optimizer.register
        ... class MyOptimizer(mx.optimizer.Optimizer):
        ...     pass
        >>> type(mx.optimizer.Optimizer.create_optimizer('MyOptimizer')).__name__
        'MyOptimizer'
        """
        return register_class(Optimizer.opt_registry, klass, "Optimizer.register")

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An instance of the optimizer registered as ``name`` (case-insensitive).

        >>> type(mx.optimizer.Optimizer.create_optimizer('Adam', learning_rate=0.1)).__name__
        'Adam'
        """
        klass = Optimizer.opt_registry.get(str(name).lower())
        if klass is None:
            raise MXNetError(f"Cannot find optimizer {name!r}; registered: "
                             f"{sorted(Optimizer.opt_registry)}")
        return klass(**kwargs)

    # ---- learning rate ----
    @property
    def learning_rate(self):
        """The current learning rate (the scheduler's at ``num_update``, if there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    @learning_rate.setter
    def learning_rate(self, lr):
        self.set_learning_rate(lr)

    def set_learning_rate(self, lr):
        """Set the learning rate; an error when an ``lr_scheduler`` decides it."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note "
                              "that set_learning_rate can mutate the value of the learning "
                              "rate of the optimizer only when the LRScheduler of the "
                              "optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        """[DEPRECATED] Use ``set_lr_mult``."""
        raise DeprecationWarning("set_lr_scale is deprecated: use set_lr_mult")

    def set_lr_mult(self, args_lr_mult):
        """Set per-weight learning-rate multipliers: ``{index or name: multiplier}``
        (names through ``param_idx2name``; a symbol's ``__lr_mult__`` attributes first)."""
        self.lr_mult = self._sym_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Set per-weight weight-decay multipliers: ``{index or name: multiplier}``. Weights
        named in ``param_idx2name`` that end in neither ``_weight`` nor ``_gamma`` (biases,
        ``beta``) get 0 unless given here."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith("_weight") or n.endswith("_gamma")):
                self.wd_mult[n] = 0.0
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _sym_mults(self, key):
        """``{name: multiplier}`` from the symbol's ``key`` attributes (``__lr_mult__``,
        ``__wd_mult__``); empty without a symbol."""
        if not self.sym_info:
            return {}
        attr, arg_names = self.sym_info
        return {name: float(attr[name][key]) for name in arg_names
                if name in attr and key in attr[name]}

    def _set_current_context(self, device_id):
        """Keep separate update counts per device (MXNet's kvstore updater)."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        """Count one more update of ``index`` (or of each index of a list)."""
        if not isinstance(index, (list, tuple)):
            index = [index]
        for idx in index:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _multiplied(self, value, indices, kind):
        """``value`` times the ``kind`` ("lr" or "wd") multiplier of each weight of
        ``indices``: its gluon Parameter's, else the one set by index, else by name."""
        mults, attr = getattr(self, kind + "_mult"), kind + "_mult"
        values = [value for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                values[i] *= getattr(self.param_dict[index], attr)
            elif index in mults:
                values[i] *= mults[index]
            elif index in self.idx2name:
                values[i] *= mults.get(self.idx2name[index], 1.0)
        return values

    def _get_lrs(self, indices):
        """Learning rates of the weights ``indices``: the current rate times each multiplier."""
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return self._multiplied(lr, indices, "lr")

    def _get_lr(self, index):
        """The learning rate of weight ``index``."""
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        """Weight decays of the weights ``indices``: ``wd`` times each multiplier."""
        return self._multiplied(self.wd, indices, "wd")

    def _get_wd(self, index):
        """The weight decay of weight ``index``."""
        return self._get_wds([index])[0]

    # ---- states and updates ----
    def create_state(self, index, weight):
        """The optimizer state of a weight (None, an NDArray or a tuple of them), made once
        per weight."""
        return None

    def _check_weight(self, index, weight, grad):
        if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
            raise MXNetError(f"{type(self).__name__}.update: weight and grad must be "
                             f"NDArrays, got {type(weight).__name__} and "
                             f"{type(grad).__name__} (index {index!r})")
        if weight.dtype == _F16:
            raise MXNetError(
                f"{type(self).__name__}: weight {index!r} is float16; pass "
                "multi_precision=True to keep a float32 master copy of it (mxlite optimizers "
                "do not accumulate in float16)")

    def _uses_master_copy(self, weight):
        """True where ``weight`` is updated through a float32 master copy."""
        return self.multi_precision and weight.dtype == _F16

    def create_state_multi_precision(self, index, weight):
        """The state of ``weight``; with ``multi_precision`` and a float16 weight,
        ``(weight32, create_state(index, weight32))`` where ``weight32`` is a float32 copy of
        the weight (MXNet's layout). Without ``multi_precision`` a float16 weight raises
        MXNetError.

        >>> opt = mx.optimizer.Adam(multi_precision=True)
        >>> w = mx.nd.array([1.0, 2.0], dtype='float16')
        >>> master, (mean, var) = opt.create_state_multi_precision(0, w)
        >>> master.dtype.__name__, mean.dtype.__name__
        ('float32', 'float32')
        """
        if self._uses_master_copy(weight):
            master = weight.astype(np.float32)
            return (master, self.create_state(index, master))
        if weight.dtype == _F16:
            self._check_weight(index, weight, weight)
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Update ``weight`` (in place) and ``state`` with gradient ``grad``."""
        raise NotImplementedError(f"{type(self).__name__} must define update")

    def update_multi_precision(self, index, weight, grad, state):
        """``update``, through the float32 master copy of ``create_state_multi_precision``
        for a float16 weight under ``multi_precision`` (the weight gets the updated copy cast
        back). Lists of indices, weights, gradients and states (MXNet's aggregated form) are
        updated one by one."""
        if isinstance(index, (list, tuple)):
            if not len(index) == len(weight) == len(grad) == len(state):
                raise MXNetError(f"{type(self).__name__}.update_multi_precision: {len(index)} "
                                 f"indices, {len(weight)} weights, {len(grad)} gradients and "
                                 f"{len(state)} states")
            for i, w, g, st in zip(index, weight, grad, state):
                self.update_multi_precision(i, w, g, st)
            return
        if self._uses_master_copy(weight):
            master, inner = self._master_state(index, state)
            self.update(index, master, grad.astype(np.float32), inner)
            nd.cast(master, dtype=weight.dtype, out=weight)
            return
        self._check_weight(index, weight, grad)
        self.update(index, weight, grad, state)

    def _master_state(self, index, state):
        """``(weight32, inner state)`` of a multi-precision state; MXNetError when ``state``
        is not one (made without ``multi_precision``)."""
        if not (isinstance(state, (tuple, list)) and len(state) == 2
                and isinstance(state[0], NDArray) and state[0].dtype == np.float32):
            raise MXNetError(f"{type(self).__name__}.update_multi_precision: the state of "
                             f"float16 weight {index!r} is not (weight32, state); make it with "
                             "create_state_multi_precision under multi_precision=True")
        return state[0], state[1]

    def _common(self, index, weight, grad):
        """Count the update and return ``(lr, wd)`` for weight ``index``."""
        self._check_weight(index, weight, grad)
        self._update_count(index)
        return self._get_lr(index), self._get_wd(index)

    def _clip_kwargs(self, kwargs):
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        return kwargs

    def _zeros(self, weight):
        return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype)

    def _zeros_pair(self, weight):
        return (self._zeros(weight), self._zeros(weight))

    def _clipped(self, grad):
        """``grad`` clipped to ``[-clip_gradient, clip_gradient]`` (as is when None)."""
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        return grad

    def _set_betas(self, beta1, beta2):
        name = type(self).__name__
        _check_range(name, "beta1", beta1, 0.0, 1.0)
        _check_range(name, "beta2", beta2, 0.0, 1.0)
        self.beta1 = beta1
        self.beta2 = beta2

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("param_dict", None)       # gluon parameters are not pickled (MXNet)
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}

    def __repr__(self):
        return f"<{type(self).__name__} learning_rate={self.learning_rate} wd={self.wd}>"


register = Optimizer.register
create = Optimizer.create_optimizer


# ---- SGD family ------------------------------------------------------------------------------
class _MomentumOptimizer(Optimizer):
    """SGD, NAG, Signum: a ``momentum`` in [0, 1] and one zero state unless it is 0."""

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        _check_range(type(self).__name__, "momentum", momentum, 0.0, 1.0, high_open=False)
        self.momentum = momentum

    def create_state(self, index, weight):
        return self._zeros(weight) if self.momentum != 0.0 else None

    def _step_args(self, index, weight, grad):
        """lr, wd and the rescale/clip keyword arguments of the update operators."""
        lr, wd = self._common(index, weight, grad)
        return lr, wd, self._clip_kwargs({"rescale_grad": self.rescale_grad})


def _one_dtype(weights):
    """True for a non-empty list of NDArrays of one dtype."""
    return (len(weights) > 0 and all(isinstance(w, NDArray) for w in weights)
            and len({w.dtype for w in weights}) == 1)


class _MasterLastOptimizer(_MomentumOptimizer):
    """SGD, NAG, LARS: a multi-precision state is ``(momentum or None, weight32)`` and the
    fused ``mp_`` operators update it (``_mp_step``); otherwise ``update`` (``_sgd_step``)."""

    def create_state_multi_precision(self, index, weight):
        """``(create_state(index, weight32), weight32)`` for a float16 weight under
        ``multi_precision`` (MXNet's SGD layout), else ``create_state``."""
        if self._uses_master_copy(weight):
            master = weight.astype(np.float32)
            return (self.create_state(index, master), master)
        return super().create_state_multi_precision(index, weight)

    def update_multi_precision(self, index, weight, grad, state):
        if isinstance(index, (list, tuple)) or not self._uses_master_copy(weight):
            super().update_multi_precision(index, weight, grad, state)
            return
        self._master_last(index, state)
        self._update_count(index)
        lr, wd = self._step_lr_wd(index, state[1], grad)
        kwargs = self._clip_kwargs({"rescale_grad": self.rescale_grad})
        self._mp_step(weight, grad, state, lr, wd, kwargs)

    def _master_last(self, index, state):
        """MXNetError unless ``state`` is a multi-precision ``(momentum, weight32)``."""
        if not (isinstance(state, (tuple, list)) and len(state) == 2
                and isinstance(state[1], NDArray) and state[1].dtype == np.float32):
            raise MXNetError(f"{type(self).__name__}.update_multi_precision: the state of "
                             f"float16 weight {index!r} is not (momentum, weight32); make it "
                             "with create_state_multi_precision under multi_precision=True")

    def _step_lr_wd(self, index, master, grad):
        """The learning rate and weight decay of this step (LARS scales the rate)."""
        return self._get_lr(index), self._get_wd(index)


@register
class SGD(_MasterLastOptimizer):
    """Stochastic gradient descent with momentum and weight decay (``sgd_update``,
    ``sgd_mom_update``)::

        rescaled_grad = lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)
        state = momentum * state + rescaled_grad
        weight = weight - state

    Parameters: ``momentum`` (default 0: no state), ``lazy_update`` (row_sparse only: no
    effect), and those of ``Optimizer``.

    >>> opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    >>> w, g = mx.nd.array([1.0]), mx.nd.array([1.0])
    >>> state = opt.create_state(0, w)
    >>> for _ in range(2):
    ...     opt.update(0, w, g, state)
    >>> round(float(w.asscalar()), 4)
    0.71
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(momentum=momentum, **kwargs)
        self.lazy_update = lazy_update
        self.aggregate_num = 4

    def update(self, index, weight, grad, state):
        lr, wd, kwargs = self._step_args(index, weight, grad)
        self._sgd_step(weight, grad, state, lr, wd, kwargs)

    def update_multi_precision(self, index, weight, grad, state):
        """As ``Optimizer.update_multi_precision``; lists of weights of one dtype go through
        one multi-tensor operator (``multi_sgd_update``, ``multi_sgd_mom_update``, or their
        ``multi_mp_`` forms with master copies), as MXNet's aggregated SGD."""
        if not isinstance(index, (list, tuple)) or not _one_dtype(weight):
            super().update_multi_precision(index, weight, grad, state)
            return
        if not len(index) == len(weight) == len(grad) == len(state):
            raise MXNetError(f"SGD.update_multi_precision: {len(index)} indices, "
                             f"{len(weight)} weights, {len(grad)} gradients and {len(state)} "
                             "states")
        mp = self._uses_master_copy(weight[0])
        for i, w, g, st in zip(index, weight, grad, state):
            if mp:
                self._master_last(i, st)
            else:
                self._check_weight(i, w, g)
        self._update_count(list(index))
        kwargs = self._clip_kwargs({"rescale_grad": self.rescale_grad,
                                    "lrs": self._get_lrs(index), "wds": self._get_wds(index),
                                    "num_weights": len(index)})
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        moms = [st[0] if mp else st for st in state]
        groups = []
        for w, g, mom, st in zip(weight, grad, moms, state):
            groups += [w, g] + ([mom] if self.momentum > 0 else []) + ([st[1]] if mp else [])
        op = {(False, False): nd.multi_sgd_update, (False, True): nd.multi_sgd_mom_update,
              (True, False): nd.multi_mp_sgd_update,
              (True, True): nd.multi_mp_sgd_mom_update}[(mp, self.momentum > 0)]
        op(*groups, out=list(weight), **kwargs)

    def _sgd_step(self, weight, grad, state, lr, wd, kwargs):
        """One SGD step with the fused operators."""
        if state is not None:
            nd.sgd_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd,
                              momentum=self.momentum, lazy_update=self.lazy_update, **kwargs)
        else:
            nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd,
                          lazy_update=self.lazy_update, **kwargs)

    def _mp_step(self, weight, grad, state, lr, wd, kwargs):
        mom, master = state
        if mom is not None:
            nd.mp_sgd_mom_update(weight, grad, mom, master, out=weight, lr=lr, wd=wd,
                                 momentum=self.momentum, lazy_update=self.lazy_update,
                                 **kwargs)
        else:
            nd.mp_sgd_update(weight, grad, master, out=weight, lr=lr, wd=wd,
                             lazy_update=self.lazy_update, **kwargs)


@register
class ccSGD(SGD):
    """[DEPRECATED] The same as ``SGD`` (MXNet kept the name)."""


@register
class NAG(_MasterLastOptimizer):
    """Nesterov accelerated gradient (``nag_mom_update``)::

        state = momentum * state + grad + wd * weight
        weight = weight - lr * (grad + wd * weight + momentum * state)

    Without momentum it is plain SGD.
    """

    def update(self, index, weight, grad, state):
        lr, wd, kwargs = self._step_args(index, weight, grad)
        if state is not None:
            nd.nag_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd,
                              momentum=self.momentum, **kwargs)
        else:
            nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)

    def _mp_step(self, weight, grad, state, lr, wd, kwargs):
        mom, master = state
        if mom is not None:
            nd.mp_nag_mom_update(weight, grad, mom, master, out=weight, lr=lr, wd=wd,
                                 momentum=self.momentum, **kwargs)
        else:
            nd.mp_sgd_update(weight, grad, master, out=weight, lr=lr, wd=wd, **kwargs)


@register
class Signum(_MomentumOptimizer):
    """signSGD with momentum (``signum_update``; ``signsgd_update`` without momentum), per
    weight::

        state = momentum * state - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)
        weight = (1 - lr * wd_lh) * weight + lr * sign(state)

    and with ``momentum=0`` (no state) ``weight = (1 - lr * (wd + wd_lh)) * weight - lr *
    sign(grad)``, as MXNet documented (its optimizer passed ``wd_lh`` to ``signsgd_update``,
    which has no such parameter, and failed).
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(momentum=momentum, learning_rate=learning_rate, **kwargs)
        self.wd_lh = wd_lh

    def update(self, index, weight, grad, state):
        lr, wd, kwargs = self._step_args(index, weight, grad)
        if state is not None:
            nd.signum_update(weight, grad, state, out=weight, lr=lr, wd=wd,
                             momentum=self.momentum, wd_lh=self.wd_lh, **kwargs)
        else:   # decoupled decay wd_lh adds to wd when there is no momentum to keep it out of
            nd.signsgd_update(weight, grad, out=weight, lr=lr, wd=wd + self.wd_lh, **kwargs)


# ---- adaptive methods ------------------------------------------------------------------------
class _AdamOptimizer(Optimizer):
    """Adam and AdamW: ``beta1``, ``beta2``, ``epsilon``; mean and variance states."""

    def __init__(self, learning_rate, beta1, beta2, epsilon, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self._set_betas(beta1, beta2)
        _check_range(type(self).__name__, "epsilon", epsilon, 0.0, math.inf)
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return self._zeros_pair(weight)     # mean, variance

    def _bias_corrected(self, index, lr):
        """lr * sqrt(1 - beta2**t) / (1 - beta1**t) at step t of weight ``index``."""
        t = self._index_update_count[index]
        return lr * (math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t))

    def _adam_kwargs(self, **extra):
        return self._clip_kwargs({"beta1": self.beta1, "beta2": self.beta2,
                                  "epsilon": self.epsilon, **extra})


@register
class Adam(_AdamOptimizer):
    """Adam (Kingma & Ba), with MXNet's bias correction folded into the learning rate
    (``adam_update``); at step ``t`` of a weight::

        grad = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad**2
        lr_t = learning_rate * sqrt(1 - beta2**t) / (1 - beta1**t)
        weight = weight - lr_t * m / (sqrt(v) + epsilon)

    >>> opt = mx.optimizer.Adam(learning_rate=0.1)
    >>> w, g = mx.nd.array([1.0, 1.0]), mx.nd.array([0.5, -2.0])
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> [round(v, 4) for v in w.asnumpy().tolist()]      # first step: lr * sign(g)
    [0.9, 1.1]
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate, beta1, beta2, epsilon, **kwargs)
        self.lazy_update = lazy_update

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        lr = self._bias_corrected(index, lr)
        kwargs = self._adam_kwargs(rescale_grad=self.rescale_grad)
        mean, var = state
        nd.adam_update(weight, grad, mean, var, out=weight, lazy_update=self.lazy_update,
                       lr=lr, wd=wd, **kwargs)


@register
class AdamW(_AdamOptimizer):
    """AdamW (Loshchilov & Hutter: weight decay decoupled from the gradient), as MXNet 2's
    ``mx.optimizer.AdamW`` through ``contrib.adamw_update`` (MXNet 1.x had the operator
    only)::

        grad = clip(rescale_grad * grad, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad**2
        lr_t = learning_rate * sqrt(1 - beta2**t) / (1 - beta1**t)   (learning_rate if not
                                                                     correct_bias)
        weight = weight - lr_t * (m / (sqrt(v) + epsilon) + wd * weight)

    ``rescale_grad`` may be a one-element NDArray (a dynamic loss scale); an update whose
    scale is NaN, infinite or 0 is skipped.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 correct_bias=True, **kwargs):
        super().__init__(learning_rate, beta1, beta2, epsilon, **kwargs)
        self.correct_bias = correct_bias

    def _scale(self, weight):
        scale = self.rescale_grad
        if isinstance(scale, NDArray):
            return scale.as_in_context(weight.context)
        return nd.full((1,), scale, ctx=weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        if self.correct_bias:
            lr = self._bias_corrected(index, lr)
        kwargs = self._adam_kwargs()
        mean, var = state
        nd.contrib.adamw_update(weight, grad, mean, var, self._scale(weight), out=weight,
                                lr=1.0, eta=lr, wd=wd, **kwargs)


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al.)::

        grad = clip(rescale_grad * grad, clip_gradient)
        history += grad**2
        weight -= lr * (grad / sqrt(history + eps) + wd * weight)

    ``eps`` (default 1e-7) keeps the division finite (MXNet's name; MXNet 2 calls it
    ``epsilon``, also accepted). A row_sparse gradient without weight decay updates its
    rows alone (``sparse.adagrad_update``, MXNet's sparse AdaGrad).
    """

    def __init__(self, eps=1e-7, epsilon=None, **kwargs):
        super().__init__(**kwargs)
        eps = eps if epsilon is None else epsilon
        _check_range(type(self).__name__, "eps", eps, 0.0, math.inf)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return self._zeros(weight)      # history

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        history = state
        if grad.stype == "row_sparse" and wd == 0:      # the lazy update of those rows
            nd.sparse.adagrad_update(weight, grad, history, out=weight, lr=lr,
                                     epsilon=self.float_stable_eps,
                                     rescale_grad=self.rescale_grad,
                                     clip_gradient=self.clip_gradient or -1.0)
            return
        grad = self._clipped(grad * self.rescale_grad)
        history += nd.square(grad)
        div = grad / nd.sqrt(history + self.float_stable_eps)
        weight += (div + weight * wd) * -lr


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton's (``rmsprop_update``), or with ``centered=True`` Graves's
    (``rmspropalex_update``). ``gamma1`` is the decay of the squared-gradient average,
    ``gamma2`` the momentum of the centered version, ``clip_weights`` clips the updated
    weights to ``[-clip_weights, clip_weights]``.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        name = type(self).__name__
        _check_range(name, "gamma1", gamma1, 0.0, 1.0)
        _check_range(name, "gamma2", gamma2, 0.0, 1.0, high_open=False)
        _check_range(name, "epsilon", epsilon, 0.0, math.inf)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        if self.centered:
            return (self._zeros(weight), self._zeros(weight), self._zeros(weight))  # n, g, delta
        return (self._zeros(weight),)   # n

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        kwargs = self._clip_kwargs({"gamma1": self.gamma1, "epsilon": self.epsilon,
                                    "rescale_grad": self.rescale_grad})
        if self.clip_weights:
            kwargs["clip_weights"] = self.clip_weights
        if self.centered:
            n, g, delta = state
            nd.rmspropalex_update(weight, grad, n, g, delta, out=weight, lr=lr, wd=wd,
                                  gamma2=self.gamma2, **kwargs)
        else:
            (n,) = state
            nd.rmsprop_update(weight, grad, n, out=weight, lr=lr, wd=wd, **kwargs)


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler)::

        grad = clip(rescale_grad * grad, clip_gradient)
        acc_g = rho * acc_g + (1 - rho) * grad**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * grad
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        weight -= delta + wd * weight

    (MXNet scaled the caller's gradient array in place; this one leaves it alone.)
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        _check_range(type(self).__name__, "rho", rho, 0.0, 1.0)
        _check_range(type(self).__name__, "epsilon", epsilon, 0.0, math.inf)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return self._zeros_pair(weight)     # accumulated g, delta

    def update(self, index, weight, grad, state):
        _, wd = self._common(index, weight, grad)
        grad = self._clipped(grad * self.rescale_grad)
        acc_g, acc_delta = state
        acc_g *= self.rho
        acc_g += (1.0 - self.rho) * grad * grad
        delta = nd.sqrt(acc_delta + self.epsilon) / nd.sqrt(acc_g + self.epsilon) * grad
        acc_delta *= self.rho
        acc_delta += (1.0 - self.rho) * delta * delta
        weight -= delta + wd * weight


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., ``ftrl_update``), per weight with state
    ``(z, n)``::

        grad = clip(rescale_grad * grad, clip_gradient)
        z += grad - (sqrt(n + grad**2) - sqrt(n)) * weight / lr
        n += grad**2
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.lamda1 = lamda1
        self.beta = beta

    def create_state(self, index, weight):
        return self._zeros_pair(weight)     # z, n

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        kwargs = self._clip_kwargs({"lamda1": self.lamda1, "beta": self.beta,
                                    "rescale_grad": self.rescale_grad})
        z, n = state
        nd.ftrl_update(weight, grad, z, n, out=weight, lr=lr, wd=wd, **kwargs)


@register
class Adamax(Optimizer):
    """AdaMax (Adam with the infinity norm); at step ``t`` of a weight, with state
    ``(m, u)``::

        grad = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad
        u = maximum(beta2 * u, |grad|)
        weight -= lr / (1 - beta1**t) * m / u
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self._set_betas(beta1, beta2)

    def create_state(self, index, weight):
        return self._zeros_pair(weight)     # mean, infinity norm

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        t = self._index_update_count[index]
        lr /= 1.0 - self.beta1 ** t
        grad = self._clipped(grad * self.rescale_grad + wd * weight)
        m_t, u_t = state
        m_t *= self.beta1
        m_t += (1.0 - self.beta1) * grad
        u_t[:] = nd.maximum(self.beta2 * u_t, nd.abs(grad))
        weight -= lr * m_t / u_t


@register
class Nadam(Optimizer):
    """Nesterov Adam (Dozat), with MXNet's momentum schedule (``schedule_decay``)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self._set_betas(beta1, beta2)
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index, weight):
        return self._zeros_pair(weight)     # mean, variance

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        t = self._index_update_count[index]
        grad = self._clipped(grad * self.rescale_grad + wd * weight)
        momentum_t = self.beta1 * (1.0 - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1.0 - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state
        m_t *= self.beta1
        m_t += (1.0 - self.beta1) * grad
        v_t *= self.beta2
        v_t += (1.0 - self.beta2) * grad * grad
        grad_prime = grad / (1.0 - self.m_schedule)
        m_t_prime = m_t / (1.0 - m_schedule_next)
        v_t_prime = v_t / (1.0 - pow(self.beta2, t))
        m_t_bar = (1.0 - momentum_t) * grad_prime + momentum_t_1 * m_t_prime
        weight -= lr * m_t_bar / (nd.sqrt(v_t_prime) + self.epsilon)


@register
class LARS(_MasterLastOptimizer):
    """SGD with layer-wise adaptive rate scaling (You et al., 2017, *Large Batch Training of
    Convolutional Networks*): the step of a weight whose name ends in neither ``gamma``,
    ``beta`` nor ``bias`` has its learning rate scaled by::

        eta * norm(weight) / (norm(rescale_grad * grad) + wd * norm(weight) + eps)

    (by 1 where either norm is 0), then runs ``sgd_update``/``sgd_mom_update``. With
    ``momentum_correction`` the momentum is scaled by ``lr / last_lr`` when a schedule
    changes the rate. Weights named in ``param_idx2name`` that do not end in ``_weight`` get
    weight decay multiplier 0. Weights are updated one at a time (MXNet's aggregated path
    computes the same steps with fused multi-tensor kernels).
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(momentum=momentum, **kwargs)
        self.lazy_update = lazy_update
        self.momentum_correction = momentum_correction
        self.eta = eta
        self.eps = eps
        self.last_lr = None
        self.cur_lr = None

    def set_wd_mult(self, args_wd_mult):
        """As ``Optimizer.set_wd_mult``, but only names ending in ``_weight`` keep weight
        decay by default (MXNet's LARS rule)."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith("_weight")}
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _get_lrs(self, indices):
        # remember the previous global rate for the momentum correction
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        self.last_lr = lr if self.cur_lr is None else self.cur_lr
        self.cur_lr = lr
        return self._multiplied(lr, indices, "lr")

    def _momentum_now(self):
        if self.momentum_correction and self.last_lr:
            return self.momentum * (self.cur_lr / self.last_lr)
        return self.momentum

    def _norm(self, array, scale=1.0):
        return float(nd.norm(array.astype(np.float32) * scale).asscalar())

    def _lars_lr(self, index, weight, grad, lr, wd):
        name = self.idx2name.get(index, str(index))
        if name.endswith(("gamma", "beta", "bias")):
            return lr
        w_norm = self._norm(weight)
        g_norm = self._norm(grad, self.rescale_grad)
        if w_norm > 0.0 and g_norm > 0.0:
            return lr * self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        return lr

    def _step_lr_wd(self, index, master, grad):
        lr, wd = self._get_lr(index), self._get_wd(index)
        return self._lars_lr(index, master, grad, lr, wd), wd

    def update(self, index, weight, grad, state):
        self._check_weight(index, weight, grad)
        self._update_count(index)
        lr, wd = self._step_lr_wd(index, weight, grad)
        self._sgd_step(weight, grad, state, lr, wd,
                       self._clip_kwargs({"rescale_grad": self.rescale_grad}))

    def _sgd_step(self, weight, grad, state, lr, wd, kwargs):
        if state is not None:
            nd.sgd_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd,
                              momentum=self._momentum_now(), lazy_update=self.lazy_update,
                              **kwargs)
        else:
            nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, lazy_update=self.lazy_update,
                          **kwargs)

    def _mp_step(self, weight, grad, state, lr, wd, kwargs):
        mom, master = state
        if mom is not None:
            nd.mp_sgd_mom_update(weight, grad, mom, master, out=weight, lr=lr, wd=wd,
                                 momentum=self._momentum_now(), **kwargs)
        else:
            nd.mp_sgd_update(weight, grad, master, out=weight, lr=lr, wd=wd, **kwargs)


@register
class LBSGD(_MomentumOptimizer):
    """Large-batch SGD: gradients accumulate over ``batch_scale`` calls per weight, and every
    ``batch_scale``-th call takes one SGD step with their mean, its learning rate multiplied
    by a warm-up factor that grows from 1 to ``batch_scale`` over ``warmup_epochs *
    updates_per_epoch`` steps (``warmup_strategy`` 'linear', 'power2' or 'sqrt'; 'lars' uses
    the layer's ``sqrt(|w|^2 / (|g|^2 + wd |w|^2))`` clipped to [0.01, 100] instead).
    The other calls leave the weight as it is (MXNet ran ``sgd_update`` with ``lr=0``, which
    also leaves it unchanged).
    """

    _STRATEGIES = ("linear", "power2", "sqrt", "lars")

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy="linear",
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(momentum=momentum, multi_precision=multi_precision, **kwargs)
        if warmup_strategy not in self._STRATEGIES:
            raise MXNetError(f"LBSGD: warmup_strategy must be one of {self._STRATEGIES}, got "
                             f"{warmup_strategy!r}")
        if isinstance(batch_scale, bool) or not isinstance(batch_scale, int) or batch_scale < 1:
            raise MXNetError(f"LBSGD: batch_scale must be an integer >= 1, got {batch_scale!r}")
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.cumgrads = {}

    def _warmup_mult(self, nup):
        """The warm-up factor after ``nup`` accumulated calls."""
        nwup = self.warmup_epochs * self.updates_per_epoch
        top = float(self.batch_scale)
        if nup >= nwup:
            return top
        if nwup <= 1:
            return 1.0
        frac = nup / nwup
        if self.warmup_strategy == "linear":
            return 1.0 + (top - 1) * frac
        if self.warmup_strategy == "power2":
            return 1.0 + (top - 1) * frac * frac
        return 1.0 + (top - 1) * math.sqrt(frac)

    def _lars_mult(self, weight, grad, wd):
        w2 = float(nd.sum(weight * weight).asscalar())
        g2 = float(nd.sum(grad * grad).asscalar())
        return min(max(math.sqrt(w2 / (g2 + wd * w2 + 1e-18)), 0.01), 100.0)

    def _accumulate(self, index, grad):
        """Add ``grad`` to the weight's sum; returns ``(sum, count)``."""
        entry = self.cumgrads.get(index)
        if entry is None or entry["num_cums"] == 0:
            total, count = grad.copy(), self.init_updates + 1
        else:
            previous = entry["cum_grad"]
            total = grad.copy() if previous is None else previous + grad
            count = entry["num_cums"] + 1
        self.cumgrads[index] = {"cum_grad": total, "num_cums": count}
        return total, count

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        total, count = self._accumulate(index, grad)
        if count % self.batch_scale != 0:
            return
        grad = total / self.batch_scale
        if self.warmup_strategy == "lars":
            lr *= self._lars_mult(weight, grad, wd)
        else:
            lr *= self._warmup_mult(count)
        kwargs = self._clip_kwargs({"rescale_grad": self.rescale_grad})
        if state is not None:
            nd.sgd_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd,
                              momentum=self.momentum, **kwargs)
        else:
            nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
        self.cumgrads[index]["cum_grad"] = None      # a new large batch begins


@register
class DCASGD(_MomentumOptimizer):
    """Delay-compensated asynchronous SGD (Zheng et al., 2017), with state
    ``(momentum or None, previous weight)``::

        grad = clip(rescale_grad * grad, clip_gradient)
        step = -lr * (grad + wd * weight + lamda * grad**2 * (weight - previous_weight))
        mom = momentum * mom + step         (step itself without momentum)
        previous_weight = weight
        weight = weight + mom
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(momentum=momentum, **kwargs)
        self.lamda = lamda

    def create_state(self, index, weight):
        return (super().create_state(index, weight), weight.copy())

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        grad = self._clipped(grad * self.rescale_grad)
        mom, previous = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous))
        if mom is not None:
            mom *= self.momentum
            mom += step
            step = mom
        previous[:] = weight
        weight += step


@register
class FTML(Optimizer):
    """FTML (Zheng & Kwok, 2017, *Follow the Moving Leader*) through ``ftml_update``, with
    state ``(d, v, z)``; at step ``t`` of a weight::

        grad = clip(rescale_grad * grad + wd * weight, clip_gradient)
        v = beta2 * v + (1 - beta2) * grad**2
        d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)
        z = beta1 * z + (1 - beta1) * grad - (d_t - beta1 * d_(t-1)) * weight
        weight = -z / d_t
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self._set_betas(beta1, beta2)
        _check_range("FTML", "epsilon", epsilon, 0.0, math.inf)
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (self._zeros(weight), self._zeros(weight), self._zeros(weight))  # d, v, z

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad, "t": self._index_update_count[index]}
        if self.clip_gradient:
            kwargs["clip_grad"] = self.clip_gradient
        d, v, z = state
        nd.ftml_update(weight, grad, d, v, z, out=weight, lr=lr, wd=wd, **kwargs)


@register
class LAMB(Optimizer):
    """LAMB (You et al., 2019, *Large Batch Optimization for Deep Learning*): Adam's step
    direction plus weight decay, scaled per weight by the trust ratio ``norm(weight) /
    norm(step)`` (``lamb_update_phase1`` then ``lamb_update_phase2``; the ``mp_`` operators
    on the float32 master copy under ``multi_precision``). ``lower_bound``/``upper_bound``
    bound the weight norm in the ratio; ``bias_correction`` divides the moments by
    ``1 - beta**t``. State ``(mean, var)``, ``(weight32, (mean, var))`` with a master copy.
    Aggregated calls (lists) are updated one weight at a time.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self._set_betas(beta1, beta2)
        _check_range("LAMB", "epsilon", epsilon, 0.0, math.inf)
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction

    def create_state(self, index, weight):
        return self._zeros_pair(weight)     # mean, var

    def _phase_kwargs(self, index, wd):
        one = self._clip_kwargs({"beta1": self.beta1, "beta2": self.beta2,
                                 "epsilon": self.epsilon, "t": self._index_update_count[index],
                                 "bias_correction": self.bias_correction,
                                 "rescale_grad": self.rescale_grad, "wd": wd})
        two = {}
        if self.lower_bound:
            two["lower_bound"] = self.lower_bound
        if self.upper_bound:
            two["upper_bound"] = self.upper_bound
        return one, two

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        one, two = self._phase_kwargs(index, wd)
        mean, var = state
        g = nd.lamb_update_phase1(weight, grad, mean, var, **one)
        nd.lamb_update_phase2(weight, g, nd.norm(weight), nd.norm(g), lr=lr, out=weight, **two)

    def update_multi_precision(self, index, weight, grad, state):
        if isinstance(index, (list, tuple)) or not self._uses_master_copy(weight):
            super().update_multi_precision(index, weight, grad, state)
            return
        master, (mean, var) = self._master_state(index, state)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        one, two = self._phase_kwargs(index, wd)
        g = nd.mp_lamb_update_phase1(weight, grad, mean, var, master, **one)
        nd.mp_lamb_update_phase2(weight, g, nd.norm(master), nd.norm(g), master, lr=lr,
                                 out=weight, **two)


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: half an SGD step plus Gaussian noise of
    variance ``lr`` (drawn from ``mx.nd.random``, so ``mx.random.seed`` fixes it)."""

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        grad = self._clipped(grad * self.rescale_grad)
        weight += -lr / 2 * (grad + wd * weight)
        weight += nd.random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                                   ctx=weight.context)


@register
class Test(Optimizer):
    """MXNet's test optimizer: ``weight += rescale_grad * grad``; the state copies the
    weight."""

    def create_state(self, index, weight):
        return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        weight += grad * self.rescale_grad
        state[:] = weight
