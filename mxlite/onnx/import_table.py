"""The ONNX operators ``mx.contrib.onnx.import_model`` reads, keyed by ONNX op type, each
with the registered mxlite operators it becomes (``into``; tests/onnx hold them against
the registry). The handlers are in ``import_ops.py``, ``import_more.py`` and
``import_scatter.py``."""
from collections import namedtuple

__all__ = ["Importer", "IMPORTS", "imports"]

#: fn(ic, node, ins) -> the node's outputs (``Value``s); ``into`` the registered operators
#: it may produce.
Importer = namedtuple("Importer", "fn into")

IMPORTS = {}


def imports(*op_types, into):
    """Decorator: register ``fn`` as the importer of the ONNX operators ``op_types``."""
    def register(fn):
        for t in op_types:
            if t in IMPORTS:
                raise ValueError(f"two importers for ONNX {t}")
            IMPORTS[t] = Importer(fn, tuple(into))
        return fn
    return register
