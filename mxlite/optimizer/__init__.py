"""``mx.optimizer``: MXNet 1.x's optimizers, their registry (``create``, case-insensitive)
and ``get_updater``.

>>> opt = mx.optimizer.create('ADAM', learning_rate=0.01)
>>> type(opt).__name__, opt.learning_rate
('Adam', 0.01)
"""
from .optimizer import (DCASGD, FTML, LAMB, LARS, LBSGD, SGD, SGLD, AdaDelta, AdaGrad, Adam,
                        Adamax, AdamW, Ftrl, NAG, Nadam, Optimizer, RMSProp, Signum, Test,
                        ccSGD, create, register)
from . import contrib
from .updater import Updater, get_updater

__all__ = ["Optimizer", "register", "create", "get_updater", "Updater", "SGD", "ccSGD", "NAG",
           "Signum", "Adam", "AdamW", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "Adamax",
           "Nadam", "SGLD", "Test", "LARS", "LBSGD", "DCASGD", "FTML", "LAMB", "contrib"]
