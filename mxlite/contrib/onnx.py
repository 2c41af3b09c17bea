"""``mx.contrib.onnx`` (MXNet 1.9.1's names): ``import_model``, ``get_model_metadata`` and
``import_to_gluon`` read ONNX models (``mxlite/onnx/importer.py``); ``export_model`` is
``mx.onnx.export_model``. They need the optional ``onnx`` package."""

__all__ = ["import_model", "get_model_metadata", "import_to_gluon", "export_model"]


def import_model(model_file):
    """``(sym, arg_params, aux_params)`` of an ONNX file (see ``mxlite.onnx.importer``)."""
    from ..onnx.importer import import_model as run
    return run(model_file)


def get_model_metadata(model_file):
    """The input and output names and shapes of an ONNX file."""
    from ..onnx.importer import get_model_metadata as run
    return run(model_file)


def import_to_gluon(model_file, ctx=None):
    """An ONNX file as a ``gluon.SymbolBlock`` with its parameters on ``ctx``."""
    from ..onnx.importer import import_to_gluon as run
    return run(model_file, ctx)


def export_model(*args, **kwargs):
    """``mx.onnx.export_model`` (MXNet 1.x also had it here)."""
    from ..onnx.export import export_model as run
    return run(*args, **kwargs)
