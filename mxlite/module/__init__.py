"""``mx.mod`` / ``mx.module``: MXNet 1.x's symbolic training modules.

``Module`` binds a symbol for training on one or more contexts, ``BucketingModule`` keeps
one ``Module`` per bucket key sharing the parameters, ``SequentialModule`` chains modules,
``PythonModule`` / ``PythonLossModule`` are modules written in Python. The ``fit`` /
``score`` / ``predict`` loops are ``BaseModule``'s. See docs/guide/module.rst.
"""
from .base_module import BaseModule
from .module import Module
from .bucketing_module import BucketingModule
from .sequential_module import SequentialModule
from .python_module import PythonModule, PythonLossModule
from . import executor_group

__all__ = ["BaseModule", "Module", "BucketingModule", "SequentialModule", "PythonModule",
           "PythonLossModule"]
