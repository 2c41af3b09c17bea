"""ONNX export (MXNet 1.9.1's ``mx.onnx``): ``export_model`` writes a Symbol, a
``-symbol.json`` or a hybridized Gluon block with its parameters as an ONNX model, one
translation per registered operator (``mxlite/onnx/table.py``, filled by
``mxlite/onnx/translations/``); ``get_operator_support`` lists what exports. Needs the
optional ``onnx`` package (``pip install 'mxlite[onnx]'``); ``import mxlite`` does not.
See docs/guide/onnx.rst."""
from .export import MIN_OPSET, export_model, get_operator_support

__all__ = ["export_model", "get_operator_support", "MIN_OPSET"]
