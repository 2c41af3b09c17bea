"""Basic layers (MXNet 1.x ``mx.gluon.nn.basic_layers``): containers, ``Dense``,
``Dropout``, the normalization layers, ``Embedding``, ``Flatten`` and the lambdas -- each a
thin block over the registered operator of the same name."""
import warnings

import numpy as np

from ... import ndarray as nd
from ... import symbol as sym
from ...base import MXNetError
from ..block import Block, HybridBlock, _indent
from .activations import Activation

__all__ = ["Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "BatchNorm",
           "InstanceNorm", "LayerNorm", "Flatten", "Lambda", "HybridLambda"]


class _Stack:
    """What Sequential and HybridSequential share: ``add``, indexing, ``len``, repr."""

    def add(self, *blocks):
        """Append blocks (run in order)."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self):
        mods = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                         for key, block in self._children.items())
        return f"{type(self).__name__}(\n{mods}\n)"

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)


class Sequential(_Stack, Block):
    """Blocks run one after another (imperatively).

    >>> net = mx.gluon.nn.Sequential()
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(4, activation='relu'), mx.gluon.nn.Dense(2))
    >>> net.initialize()
    >>> net(mx.nd.ones((3, 5))).shape
    (3, 2)
    """

    def forward(self, x):
        """Each child on the previous one's output."""
        for block in self._children.values():
            x = block(x)
        return x

    def hybridize(self, active=True, **kwargs):
        """Hybridize the children (use HybridSequential to cache the whole stack)."""
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          "HybridBlocks. Consider using HybridSequential for the best "
                          "performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_Stack, HybridBlock):
    """HybridBlocks run one after another; ``hybridize()`` caches the whole stack as one
    graph."""

    def hybrid_forward(self, F, x):
        """Each child on the previous one's output."""
        for block in self._children.values():
            x = block(x)
        return x


class Dense(HybridBlock):
    """``activation(dot(x, weight.T) + bias)`` (``FullyConnected``): weight
    ``(units, in_units)``; ``in_units=0`` is inferred at the first forward. ``flatten``
    collapses all but the first axis of ``x`` (else the last axis is the features)."""

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") \
                if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):
        """The affine map and the activation."""
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name="fwd")
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        shape = self.weight.shape
        return (f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, "
                f"{self.act if self.act else 'linear'})")


class Dropout(HybridBlock):
    """Zeroes elements with probability ``rate`` in training (scaling the rest by
    ``1 / (1 - rate)``); ``axes`` shares the mask along those axes. Identity in
    inference."""

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        """Dropout (``identity`` for rate 0)."""
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return f"{type(self).__name__}(p = {self._rate}, axes={self._axes})"


class _Normalization(HybridBlock):
    """What the normalization layers share: the affine parameters and the repr."""

    def _affine(self, center, scale, beta_initializer, gamma_initializer, in_channels):
        """``gamma`` and ``beta`` of shape ``(in_channels,)``, trained where ``scale`` /
        ``center``."""
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def __repr__(self):
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        in_channels = self.gamma.shape[0]
        return f"{type(self).__name__}({content}, in_channels={in_channels or None})"


class BatchNorm(_Normalization):
    """Batch normalization over axis ``axis`` (``BatchNorm``): batch statistics in
    training, which also update ``running_mean``/``running_var`` (auxiliary states,
    grad_req 'null') with ``momentum``; the running statistics in inference.
    ``scale=False`` fixes gamma at 1, ``center=False`` beta at 0."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        if in_channels != 0:
            self.in_channels = in_channels
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get("running_mean", grad_req="null",
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null",
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        """Cast the parameters (float16 stays float32, as MXNet's BatchNorm needs)."""
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        """The normalization."""
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                           **self._kwargs)


class InstanceNorm(_Normalization):
    """Instance normalization (``InstanceNorm``): each sample and channel normalized over
    the spatial axes; ``axis`` is the channel axis. ``scale`` defaults to False (gamma
    fixed at its initial 1, not trained)."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._affine(center, scale, beta_initializer, gamma_initializer, in_channels)

    def hybrid_forward(self, F, x, gamma, beta):
        """The normalization (channels moved to axis 1 and back for another ``axis``)."""
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = F.swapaxes(x, dim1=1, dim2=self._axis)
        return F.swapaxes(F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon),
                          dim1=1, dim2=self._axis)


class LayerNorm(_Normalization):
    """Layer normalization over axis ``axis`` (``LayerNorm``) with learned gamma and
    beta of shape ``(in_channels,)`` (inferred at the first forward)."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._affine(center, scale, beta_initializer, gamma_initializer, in_channels)

    def hybrid_forward(self, F, data, gamma, beta):
        """The normalization."""
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class Embedding(HybridBlock):
    """Rows of ``weight`` (``(input_dim, output_dim)``) picked by integer indices
    (``Embedding``). With ``sparse_grad=True`` the weight's gradient is row_sparse (the rows
    a batch looked up), so the optimizer updates only those rows (its lazy update); a
    hybridized block computes it dense (the same values)."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True,
                                      grad_stype="row_sparse" if sparse_grad else "default")

    def hybrid_forward(self, F, x, weight):
        """The lookup."""
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    """Collapses every axis but the first (``flatten``)."""

    def hybrid_forward(self, F, x):
        """The reshape to ``(batch, -1)``."""
        return F.flatten(x)

    def __repr__(self):
        return type(self).__name__


def _named_function(function, namespaces, who):
    for ns in namespaces:
        if not hasattr(ns, function):
            raise MXNetError(f"{who}: function name {function!r} is not found in "
                             f"{ns.__name__}")
    return {ns: getattr(ns, function) for ns in namespaces}


class Lambda(Block):
    """A Block around a function of NDArrays (or the name of an ``mx.nd`` function)."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            self._func_impl = _named_function(function, [nd], "Lambda")[nd]
        elif callable(function):
            self._func_impl = function
        else:
            raise MXNetError(f"Lambda: unrecognized function {function!r} of type "
                             f"{type(function).__name__}")

    def forward(self, *args):
        """The function on the inputs."""
        return self._func_impl(*args)

    def __repr__(self):
        return f"{type(self).__name__}({getattr(self._func_impl, '__name__', '')})"


class HybridLambda(HybridBlock):
    """A HybridBlock around ``function(F, x, *args)`` (or the name of a function that both
    ``mx.nd`` and ``mx.sym`` have)."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            funcs = _named_function(function, [nd, sym], "HybridLambda")
            self._func = lambda F, *args: funcs[F](*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = getattr(function, "__name__", "")
        else:
            raise MXNetError(f"HybridLambda: unrecognized function {function!r} of type "
                             f"{type(function).__name__}")

    def hybrid_forward(self, F, x, *args):
        """The function with the namespace ``F``."""
        return self._func(F, x, *args)

    def __repr__(self):
        return f"{type(self).__name__}({self._func_name})"
