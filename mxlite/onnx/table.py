"""The ONNX translation of each registered operator, keyed by its registered name.

``translates(name, ...)`` registers the function that writes one mxlite node as ONNX nodes
(export). Every registered operator has a translation here or a reason in
``NOT_EXPRESSIBLE`` (why ONNX cannot express it); ``tests/onnx/test_table.py`` holds the
table against the registry, and the support matrix of docs/guide/onnx.rst is generated
from it.
"""
from collections import namedtuple

__all__ = ["Translation", "TRANSLATIONS", "NOT_EXPRESSIBLE", "translates", "not_expressible"]

#: fn(ctx, node, ins, outs) writes the ONNX nodes of one mxlite node: ``ins`` the ONNX
#: value names of its inputs (None for an absent optional one), ``outs`` of its outputs;
#: ``onnx_ops`` the ONNX operators it emits (for the support matrix); ``opset`` the least
#: opset it needs; ``notes`` what the user should know (in the matrix); ``unread`` the input
#: positions the exported graph does not read (a loss layer's label): a variable read only
#: there is not an input of the ONNX graph.
Translation = namedtuple("Translation", "fn onnx_ops opset notes unread")

TRANSLATIONS = {}
NOT_EXPRESSIBLE = {}


def translates(*names, onnx_ops, opset=17, notes="", unread=()):
    """Decorator: register ``fn`` as the translation of the registered ops ``names``."""
    def register(fn):
        for name in names:
            if name in TRANSLATIONS:
                raise ValueError(f"two ONNX translations for {name}")
            TRANSLATIONS[name] = Translation(fn, tuple(onnx_ops), opset, notes, tuple(unread))
        return fn
    return register


def not_expressible(reason, *names):
    """Record that ONNX cannot express the registered ops ``names``, and why."""
    for name in names:
        NOT_EXPRESSIBLE[name] = reason
