"""Sphinx configuration for mxlite's documentation.

Build with ``sphinx-build -W --keep-going -b html docs docs/_build/html`` in an environment
where mxlite is installed (``pip install -e '.[docs]'``, or the wheel). The operator
reference (``api/ops/``) is written from the registry when the build starts, by the
``mxlite_apigen`` extension in ``docs/_ext``.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

import mxlite  # noqa: E402  (the installed package: the docs describe what users get)

project = "mxlite"
author = "the mxlite authors"
copyright = "the mxlite authors"
release = version = mxlite.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",      # NumPy-style "Parameters" sections in docstrings
    "mxlite_apigen",            # docs/_ext: the operator reference, from the registry
    "mxlite_onnx_matrix",       # docs/_ext: the ONNX support matrix, from the translations
]

root_doc = "index"
exclude_patterns = ["_build", "architecture.md", "guide/_generated"]
templates_path = []
html_theme = "alabaster"
html_static_path = []
html_title = f"mxlite {release}"

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_inherit_docstrings = False
napoleon_google_docstring = False
napoleon_numpy_docstring = True


def _skip_generated(app, what, name, obj, skip, options):
    """Leave out the NDArray methods generated from registry records (``x.sum`` ...): the
    operator reference documents each, with its parameters."""
    if getattr(obj, "op", None) is not None:
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_generated)
