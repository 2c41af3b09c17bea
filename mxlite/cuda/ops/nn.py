"""GPU compute functions of the neural-network operators: ``activation`` (ops/nn.py),
``conv`` (ops/conv.py), ``pooling`` (ops/pooling.py) and ``norm`` (ops/norm.py), each
attaching its operators on import."""
from . import activation, conv, norm, pooling  # noqa: F401
