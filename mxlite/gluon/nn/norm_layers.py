"""The normalization layers MXNet 1.9.1 added to ``gluon.nn`` beside BatchNorm:
``GroupNorm`` (over the ``GroupNorm`` operator) and ``BatchNormReLU`` (over
``contrib.BatchNormWithReLU``)."""
import numbers

from ...base import MXNetError
from ..block import HybridBlock
from .basic_layers import BatchNorm

__all__ = ["GroupNorm", "BatchNormReLU"]


class GroupNorm(HybridBlock):
    """Group normalization (Wu and He, 2018) of ``(N, C, ...)`` data: the C channels are
    split into ``num_groups`` groups of consecutive channels, each (sample, group) is
    normalized over its channels and spatial positions to zero mean and unit (biased)
    variance, ``(x - mean) / sqrt(var + epsilon)``, then scaled by ``gamma`` and shifted by
    ``beta``.

    As in MXNet 1.9.1, ``gamma`` and ``beta`` hold one value per *group* (shape
    ``(num_groups,)``, known at construction, so there is no ``in_channels``); the
    per-channel affine of the paper (and of MXNet 2.x) is a ``(C,)`` parameter this layer
    does not have. ``scale=False`` / ``center=False`` leave gamma at its initial ones /
    beta at its initial zeros (grad_req 'null'), as MXNet does.

    >>> layer = mx.gluon.nn.GroupNorm(num_groups=2)
    >>> layer.initialize()
    >>> y = layer(mx.nd.arange(12).reshape((1, 4, 3)))
    >>> round(float(y[0, :2].mean().asscalar()), 6), layer.gamma.shape
    (0.0, (2,))
    """

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if isinstance(num_groups, bool) or not isinstance(num_groups, numbers.Integral) \
                or num_groups < 1:
            raise MXNetError(f"GroupNorm: num_groups must be a positive integer, got "
                             f"{num_groups!r}")
        num_groups = int(num_groups)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(num_groups,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(num_groups,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        """The normalization (the operator checks that num_groups divides the channels)."""
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon, name="fwd")

    def __repr__(self):
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({content})"


class BatchNormReLU(BatchNorm):
    """``BatchNorm`` followed by ReLU in one operator (``contrib.BatchNormWithReLU``): the
    same parameters, statistics and running averages as ``BatchNorm``, then
    ``max(0, .)``.

    >>> layer = mx.gluon.nn.BatchNormReLU(in_channels=2)
    >>> layer.initialize()
    >>> layer(mx.nd.array([[-1.0, 2.0], [3.0, -4.0]])).asnumpy().round(3).tolist()
    [[0.0, 2.0], [3.0, 0.0]]
    """

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        """The normalization and the ReLU."""
        return F.contrib.BatchNormWithReLU(x, gamma, beta, running_mean, running_var,
                                           name="fwd", **self._kwargs)
