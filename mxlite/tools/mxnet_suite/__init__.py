"""Run MXNet 1.9.1's own unit tests, unmodified, against mxlite (and against MXNet).

``python -m mxlite.tools.mxnet_suite /path/to/mxnet`` runs the files of
``tests/python/unittest`` with ``import mxnet`` resolving to mxlite, one process per file,
and prints how many tests pass; ``--mxnet-python`` runs the same files on a real MXNet
1.9.1 for the baseline. The tests are read from the MXNet tree you give; none ship with
mxlite. pytest is needed to run them (``pip install mxlite[test]``).
"""
from .report import FileTally, table
from .runner import GOAL_FILES, run_file, unittest_dir

__all__ = ["GOAL_FILES", "run_file", "unittest_dir", "FileTally", "table"]
