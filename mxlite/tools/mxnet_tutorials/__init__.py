"""Run MXNet 1.9.1's tutorial pages, offline, against mxlite (and against MXNet).

``python -m mxlite.tools.mxnet_tutorials /path/to/mxnet`` reads the Markdown pages of
``docs/python_docs/python/tutorials`` from the MXNet source tree you give, takes each page's
Python code blocks in order and runs them one after another in a fresh process per page,
``import mxnet`` resolving to mxlite, with downloads replaced by stand-ins of the same shapes
(``site/standins.py``). ``--mxnet-python`` runs the same pages on MXNet 1.9.1 for the
baseline. The table says, per page, how many blocks each side runs and whether mxlite gets
as far as MXNet. No tutorial ships with mxlite. See docs/guide/mxnet_tutorials.rst.
"""
from .pages import EXCLUDED, extract_blocks, page_set, tutorials_dir
from .report import PageTally, failure_report, outputs_agree, table
from .runner import run_page

__all__ = ["EXCLUDED", "extract_blocks", "page_set", "tutorials_dir", "PageTally",
           "failure_report", "outputs_agree", "table", "run_page"]
