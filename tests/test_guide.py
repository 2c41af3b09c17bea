"""The ``>>>`` examples of the user guide (docs/guide/*.rst, docs/differences.rst) run, each
page in order in a fresh namespace, as pasted into a fresh interpreter."""
import doctest
import glob
import os

import numpy as np
import pytest

import mxlite as mx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = sorted(glob.glob(os.path.join(ROOT, "docs", "guide", "*.rst"))
               + glob.glob(os.path.join(ROOT, "docs", "differences.rst")))


def test_the_guide_is_there():
    assert len(PAGES) >= 8, PAGES


@pytest.mark.parametrize("path", PAGES, ids=[os.path.relpath(p, ROOT) for p in PAGES])
def test_guide_examples(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # a fresh namespace, as a fresh interpreter: each page imports what its examples use
    test = doctest.DocTestParser().get_doctest(text, {}, path, path, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    result = runner.run(test, out=out.append, clear_globs=True)
    assert result.failed == 0, "".join(out)
