"""The optional ``onnx`` package, imported on first use (``import mxlite`` never needs it)."""
from ..base import MXNetError

__all__ = ["require"]


def require(what="mx.onnx"):
    """The ``onnx`` module; MXNetError saying what to install when it is missing."""
    try:
        import onnx
    except ImportError:
        raise MXNetError(f"{what} needs the onnx package: pip install 'mxlite[onnx]' (or pip "
                         "install onnx onnxruntime)") from None
    return onnx
