"""Gluon layers (MXNet 1.x ``mx.gluon.nn``): every layer is a thin block over registered
operators, so its gradients (of any order, imperatively) are the operators' own."""
from .activations import *          # noqa: F401,F403
from .basic_layers import *         # noqa: F401,F403
from .conv_layers import *          # noqa: F401,F403
from .norm_layers import *          # noqa: F401,F403
from .padding_layers import *       # noqa: F401,F403
from . import activations, basic_layers, conv_layers, norm_layers, padding_layers
from ..block import Block, HybridBlock, SymbolBlock

__all__ = (activations.__all__ + basic_layers.__all__ + conv_layers.__all__
           + norm_layers.__all__ + padding_layers.__all__
           + ["Block", "HybridBlock", "SymbolBlock"])
