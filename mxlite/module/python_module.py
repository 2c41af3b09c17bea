"""``PythonModule`` and ``PythonLossModule``: modules computed in Python, without a symbol
or parameters (MXNet 1.x's ``mx.mod.PythonModule``)."""
import logging

from .. import ndarray as nd
from ..base import MXNetError
from ..initializer import Uniform
from .base_module import BaseModule, _as_list, _parse_data_desc, _require

__all__ = ["PythonModule", "PythonLossModule"]


class PythonModule(BaseModule):
    """A module without parameters whose computation a subclass writes in Python:
    ``forward``, ``backward``, ``get_outputs``, ``get_input_grads`` and
    ``_compute_output_shapes`` (called by ``bind``)."""

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = list(_as_list(data_names))
        self._label_names = None if label_names is None else list(_as_list(label_names))
        self._output_names = list(_as_list(output_names))
        self._data_shapes = self._label_shapes = self._output_shapes = None

    @property
    def data_names(self):
        """The names of the data inputs."""
        return self._data_names

    @property
    def output_names(self):
        """The names of the outputs."""
        return self._output_names

    @property
    def data_shapes(self):
        """The data shapes given to ``bind``."""
        return self._data_shapes

    @property
    def label_shapes(self):
        """The label shapes given to ``bind``."""
        return self._label_shapes

    @property
    def output_shapes(self):
        """``(name, shape)`` of each output (``_compute_output_shapes``)."""
        return self._output_shapes

    def get_params(self):
        """No parameters: two empty dicts."""
        return {}, {}

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Nothing to initialize."""
        self.params_initialized = True

    def update(self):
        """Nothing to update."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with ``labels`` and the outputs (when bound with
        labels)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise MXNetError("update_metric: PythonModule does not take pre-sliced labels")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Record the shapes and compute the output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise MXNetError(f"bind: a PythonModule writes its gradients (grad_req='write'), "
                             f"got {grad_req!r}")
        if label_shapes is not None and self._label_names is None:
            raise MXNetError("bind: label_shapes given to a module without label_names")
        data, label = _parse_data_desc("bind", self._data_names, self._label_names or [],
                                       data_shapes, label_shapes)
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._data_shapes, self._label_shapes = data, label
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        """``(name, shape)`` of each output, from ``data_shapes`` / ``label_shapes``."""
        raise NotImplementedError()

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """No parameters: nothing to optimize."""
        self.optimizer_initialized = True


class PythonLossModule(PythonModule):
    """A loss module in Python: its output is its input (the scores), and its input
    gradient is ``grad_func(scores, labels)``."""

    def __init__(self, name="pyloss", data_names=("data",), label_names=("softmax_label",),
                 logger=logging, grad_func=None):
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        self._name = name
        if len(self._data_names) != 1 or len(self._label_names or []) != 1:
            raise MXNetError(f"PythonLossModule: one data and one label name, got "
                             f"{self._data_names} and {self._label_names}")
        if grad_func is not None and not callable(grad_func):
            raise MXNetError(f"PythonLossModule: grad_func must be callable, got {grad_func!r}")
        self._grad_func = grad_func
        self._scores = self._labels = self._scores_grad = None

    def _compute_output_shapes(self):
        return [(self._name + "_output", self._data_shapes[0].shape)]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (and, training, the labels)."""
        _require("forward", self, "binded")
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        """``[scores]``."""
        return [self._scores]

    def backward(self, out_grads=None):
        """The scores' gradient ``grad_func(scores, labels)`` (a loss takes no
        ``out_grads``)."""
        if out_grads is not None:
            raise MXNetError("backward: a loss module takes no out_grads")
        if not self.for_training:
            raise MXNetError("backward: the module was bound with for_training=False")
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule: give grad_func or override "
                                      "_backward_impl")
        self._backward_impl()

    def _backward_impl(self):
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context=True):
        """``[gradient of the scores]``."""
        return [self._scores_grad]

    def install_monitor(self, mon):
        """Not supported by a Python module."""
        raise NotImplementedError("PythonLossModule.install_monitor")
