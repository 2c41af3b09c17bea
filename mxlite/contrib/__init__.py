"""Contributed utilities built on the operators: ``mxlite.contrib.amp`` (automatic mixed
precision and loss scaling) and ``mxlite.contrib.onnx`` (ONNX import; the ``onnx`` package
is imported only when it is used)."""
from . import amp, onnx  # noqa: F401

__all__ = ["amp", "onnx"]
