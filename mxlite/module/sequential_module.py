"""``SequentialModule``: modules run one after another, each one's outputs the next one's
data (MXNet 1.x's ``mx.mod.SequentialModule``)."""
import copy
import logging

from ..base import MXNetError
from ..initializer import Uniform
from .base_module import BaseModule, _as_list, _parse_shape, _require

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """A chain of modules. ``add(module, take_labels=True)`` gives a module the batch's
    labels (a loss module); ``auto_wiring=True`` renames the previous module's outputs to
    the module's ``data_names`` when binding."""

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module, **kwargs):
        """Append ``module`` (keywords ``take_labels``, ``auto_wiring``); returns self, so
        calls chain. The chain must be bound and initialized again afterwards."""
        if not isinstance(module, BaseModule):
            raise MXNetError(f"SequentialModule.add: module must be a module, got "
                             f"{type(module).__name__}")
        unknown = sorted(set(kwargs) - self._meta_keys)
        if unknown:
            raise MXNetError(f"SequentialModule.add: unknown keywords {unknown}; expected "
                             f"{sorted(self._meta_keys)}")
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    def _takes_labels(self, i):
        return bool(self._metas[i].get(self.META_TAKE_LABELS, False))

    # ---- properties ------------------------------------------------------------------------
    @property
    def data_names(self):
        """The first module's data names."""
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        """The last module's output names."""
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        """The first module's data shapes."""
        _require("data_shapes", self, "binded")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        """The label shapes (None when no module takes labels)."""
        _require("label_shapes", self, "binded")
        return self._label_shapes

    @property
    def output_shapes(self):
        """The last module's output shapes."""
        _require("output_shapes", self, "binded")
        return self._modules[-1].output_shapes

    # ---- parameters ------------------------------------------------------------------------
    def get_params(self):
        """Every module's parameters in one ``(arg_params, aux_params)``."""
        _require("get_params", self, "binded", "params_initialized")
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize every module's parameters; two modules may not share a name."""
        if self.params_initialized and not force_init:
            return
        _require("init_params", self, "binded")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=True)
        owner = {}
        for i, module in enumerate(self._modules):
            arg, aux = module.get_params()
            for name in list(arg) + list(aux):
                if name in owner:
                    raise MXNetError(f"SequentialModule.init_params: parameter {name!r} is in "
                                     f"module {owner[name]} and module {i}")
                owner[name] = i
        if arg_params and not allow_extra:
            extra = sorted(set(arg_params) - set(owner))
            if extra:
                raise MXNetError(f"SequentialModule.init_params: arg_params has names {extra} "
                                 "that no module has; pass allow_extra=True to ignore them")
        self.params_initialized = True

    # ---- binding ---------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind each module to the previous one's output shapes; every module after the
        first keeps its input gradients when training (to pass them back)."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise MXNetError("bind: inputs_need_grad=True needs for_training=True")
        if shared_module is not None:
            raise MXNetError("bind: shared_module is not supported by SequentialModule")
        if not self._modules:
            raise MXNetError("bind: the SequentialModule has no module (call add first)")
        if label_shapes is not None:
            label_shapes = [_parse_shape("bind", "label", d) for d in _as_list(label_shapes)]
        shapes = data_shapes
        any_labels = False
        for i, module in enumerate(self._modules):
            labels = label_shapes if self._takes_labels(i) else None
            any_labels |= labels is not None
            if self._metas[i].get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(shapes):
                    raise MXNetError(f"bind: module {i} takes {len(names)} data inputs, the "
                                     f"previous module gives {len(shapes)}")
                shapes = [(name, tuple(s[1])) for name, s in zip(names, shapes)]
            module.bind(data_shapes=shapes, label_shapes=labels, for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            shapes = module.output_shapes
        self._label_shapes = label_shapes if any_labels else None
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self.binded = True

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set up the optimizer of every module."""
        _require("init_optimizer", self, "binded", "params_initialized")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    # ---- computation -----------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Forward through each module in turn, the outputs becoming the next data."""
        _require("forward", self, "binded", "params_initialized")
        batch = copy.copy(data_batch)
        last = len(self._modules) - 1
        for i, module in enumerate(self._modules):
            module.forward(batch, is_train=is_train)
            if i == last:
                break
            batch.data = module.get_outputs()
            if hasattr(batch, "provide_data"):
                # the next module names its inputs itself (auto_wiring), so only shapes pass
                batch.provide_data = None

    def backward(self, out_grads=None):
        """Backward from the last module to the first, each module's input gradients the
        previous one's head gradients."""
        _require("backward", self, "binded", "params_initialized")
        for i in range(len(self._modules) - 1, -1, -1):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i > 0:
                out_grads = module.get_input_grads()

    def update(self):
        """Update every module."""
        _require("update", self, "binded", "params_initialized", "optimizer_initialized")
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        """The last module's outputs."""
        _require("get_outputs", self, "binded", "params_initialized")
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The first module's input gradients."""
        _require("get_input_grads", self, "binded", "params_initialized", "inputs_need_grad")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the outputs of each module that takes labels."""
        _require("update_metric", self, "binded", "params_initialized")
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every module."""
        _require("install_monitor", self, "binded")
        for module in self._modules:
            module.install_monitor(mon)
