"""Activation layers (MXNet 1.x ``mx.gluon.nn.activations``): thin blocks over the
registered ``Activation``, ``LeakyReLU`` and ``sigmoid`` operators."""
from ... import initializer
from ...base import MXNetError
from ..block import HybridBlock

__all__ = ["Activation", "LeakyReLU", "PReLU", "ELU", "SELU", "Swish", "GELU"]


class Activation(HybridBlock):
    """``Activation(x, act_type=activation)``: 'relu', 'sigmoid', 'tanh', 'softrelu' or
    'softsign'. Its prefix is the activation's name (``relu0_``)."""

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        """The activation."""
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self):
        return f"{type(self).__name__}({self._act_type})"


class LeakyReLU(HybridBlock):
    """``x`` for x > 0, ``alpha * x`` otherwise (``LeakyReLU(act_type='leaky')``)."""

    def __init__(self, alpha, **kwargs):
        if alpha < 0:
            raise MXNetError(f"LeakyReLU: the slope alpha must be no less than 0, got {alpha}")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        """The leaky ReLU."""
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha, name="fwd")

    def __repr__(self):
        return f"{type(self).__name__}({self._alpha})"


class PReLU(HybridBlock):
    """Leaky ReLU with a learned slope per channel (``alpha``, shape ``(in_channels,)``,
    initialized to 0.25)."""

    def __init__(self, alpha_initializer=None, in_channels=1, **kwargs):
        super().__init__(**kwargs)
        if alpha_initializer is None:
            alpha_initializer = initializer.Constant(0.25)
        with self.name_scope():
            self.alpha = self.params.get("alpha", shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        """The parametric ReLU."""
        return F.LeakyReLU(x, alpha, act_type="prelu", name="fwd")


class ELU(HybridBlock):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        """The ELU."""
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    """The scaled ELU (Klambauer et al.)."""

    def hybrid_forward(self, F, x):
        """The SELU."""
        return F.LeakyReLU(x, act_type="selu", name="fwd")


class GELU(HybridBlock):
    """The Gaussian error linear unit, ``x * Phi(x)`` (erf form)."""

    def hybrid_forward(self, F, x):
        """The GELU."""
        return F.LeakyReLU(x, act_type="gelu", name="fwd")


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)``."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        """The swish."""
        return x * F.sigmoid(self._beta * x, name="fwd")
