"""Gluon: ``Block``/``HybridBlock`` models, layers, losses, ``Trainer`` and data loading
(MXNet 1.x's ``mx.gluon``)."""
from . import parameter, block, nn, loss, trainer, data, utils
from . import rnn
from . import model_zoo
from . import contrib
from .block import Block, HybridBlock, SymbolBlock
from .parameter import Constant, Parameter, ParameterDict
from .trainer import Trainer

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "ParameterDict", "Constant",
           "Trainer", "nn", "loss", "data", "utils", "rnn", "model_zoo", "contrib"]
