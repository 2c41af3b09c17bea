"""The package users install: what CI tests, the sdist's contents, and the docs generator.

``.ci/run`` builds a wheel from the sdist, installs it into a fresh environment and runs
this suite from a copy of ``tests/`` outside the source tree with
``MXLITE_TEST_INSTALLED=1``; then ``test_mxlite_is_the_installed_package`` fails unless
``mxlite`` really came from that environment's site-packages.
"""
import importlib
import importlib.util
import os
import re
import sys
import sysconfig

import pytest

import mxlite as mx
from mxlite.ops.registry import REGISTRY

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def _inside(path, directory):
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory


@pytest.mark.skipif(not os.environ.get("MXLITE_TEST_INSTALLED"),
                    reason="CI's wheel run only (MXLITE_TEST_INSTALLED=1)")
def test_mxlite_is_the_installed_package():
    site = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    where = mx.__file__
    assert any(_inside(where, s) for s in site), (
        f"mxlite was imported from {where}, not from this environment's site-packages "
        f"{sorted(site)}: the tests would not test the installed wheel")
    assert not os.path.exists(os.path.join(ROOT, "mxlite")), (
        f"{ROOT} holds an mxlite/ source tree: run the installed-package tests from a copy "
        "of tests/ outside the source tree")


def test_core_is_a_package_with_its_table_and_kernels():
    """``pip install .`` once shipped no ``mxlite._core`` (it had no ``__init__.py``)."""
    core = importlib.import_module("mxlite._core")
    assert core.__file__ and core.__file__.endswith("__init__.py")
    for name in ("kernel_table", "elemwise", "copy", "reduce", "index", "finite", "random"):
        importlib.import_module(f"mxlite._core.{name}")


def test_sdist_leaves_out_exactly_the_generated_pyx():
    """MANIFEST.in excludes the .pyx that setup.py generates from templates, and only those
    (a hand-written .pyx left out would break the wheel built from the sdist)."""
    templated = set(re.findall(r'^\s*\("(\w+)", True\)', read("setup.py"), flags=re.M))
    plain = set(re.findall(r'^\s*\("(\w+)", False\)', read("setup.py"), flags=re.M))
    assert templated and plain
    excluded = set()
    for line in read("MANIFEST.in").splitlines():
        if line.startswith("exclude "):
            excluded |= set(re.findall(r"mxlite/_core/(\w+)\.pyx\b", line))
    assert excluded == templated


def test_setup_declares_the_docs_extra():
    assert re.search(r'"docs":\s*\["sphinx', read("setup.py"))


# ---- the API reference generator (docs/_ext/mxlite_apigen.py) ----------------------------------
def _apigen(check_rst=False):
    """A fresh copy of the generator; ``check_rst`` needs docutils (the [docs] extra)."""
    if check_rst:
        pytest.importorskip("docutils")
    path = os.path.join(ROOT, "docs", "_ext", "mxlite_apigen.py")
    spec = importlib.util.spec_from_file_location("mxlite_apigen_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.CHECK_RST = check_rst
    return module


def test_api_reference_covers_every_registered_operator():
    gen = _apigen()
    assert gen.covered_names() == set(REGISTRY)
    pages = gen.pages()
    text = "\n".join(pages.values())
    for name in REGISTRY:
        assert gen.front_end_function(name) is not None, f"no mx.nd function for {name}"
        public = gen.public_name(name)
        assert public in text, f"{public} ({name}) is missing from the generated pages"
        assert f".. _{gen.labels()[name]}:" in text
    # every page but the overview is in the overview's toctree
    index = pages["index.rst"]
    for page in pages:
        if page != "index.rst":
            assert f"   {page[:-4]}\n" in index


def test_api_reference_shows_signature_parameters_gradient_and_devices():
    gen = _apigen()
    page = gen.pages()[gen.page_name(gen.family_of(REGISTRY["sum"])) + ".rst"]
    section = page.split("\nmx.nd.sum\n", 1)[1].split("\nmx.nd.", 1)[0]
    assert "mx.nd.sum(data, axis=None, keepdims=False" in section
    assert "``mx.nd.sum_axis``" in section                     # the alias
    assert ":Differentiable: yes" in section
    assert ":Devices: ``cpu``" in section
    assert "``keepdims``" in section and "``False``" in section
    assert REGISTRY["sum"].doc.strip().splitlines()[0] in section
    random_page = gen.pages()[gen.page_name(gen.family_of(REGISTRY["_random_uniform"])) + ".rst"]
    assert "mx.nd.random.uniform" in random_page
    assert "no (declared non-differentiable)" in random_page


def test_api_reference_shows_malformed_docstrings_verbatim():
    gen = _apigen(check_rst=True)
    assert gen.rst_problem("plain ``text`` with :class:`roles`") is None
    assert gen.rst_problem("sum of |x|") is not None          # an undefined substitution
    block = gen.docstring_block("sum of |x|\n\n>>> 1 + 1\n2", "example")
    assert block.startswith("::\n\n   sum of |x|")
    assert "example" in gen.MALFORMED
