"""``mx.base`` names, ``mx.util`` (environment, NumPy-semantics switches), ``mx.attribute`` and
``mx.name`` (MXNet's module names)."""
import importlib
import os
import threading

import numpy as np
import pytest

import mxlite as mx
from mxlite import base, util
from mxlite.base import MXNetError, NotImplementedForSymbol

VAR = "MXLITE_TEST_BASE_UTIL_VAR"


# ---- mx.base --------------------------------------------------------------------------------
def test_py_str_decodes_utf8_and_keeps_str():
    assert base.py_str("élan".encode("utf-8")) == "élan"
    assert base.py_str("abc") == "abc"


def test_as_list():
    items = [1, 2]
    assert base._as_list(items) is items
    pair = (1, 2)
    assert base._as_list(pair) is pair
    assert base._as_list(3) == [3]
    assert base._as_list(None) == [None]


@pytest.mark.parametrize("value, integer, numeric", [
    (3, True, True), (np.int64(3), True, True), (np.int8(3), True, True),
    (2.5, False, True), (np.float16(2.5), False, True), ("3", False, False)])
def test_number_type_tuples(value, integer, numeric):
    assert isinstance(value, base.integer_types) == integer
    assert isinstance(value, base.numeric_types) == numeric


def test_real_and_string_types():
    assert base.mx_real_t is np.float32
    assert isinstance("x", base.string_types) and not isinstance(b"x", base.string_types)


def test_data_dir_follows_mxnet_home(monkeypatch):
    monkeypatch.delenv("MXNET_HOME", raising=False)
    assert base.data_dir() == os.path.join(os.path.expanduser("~"), ".mxnet")
    monkeypatch.setenv("MXNET_HOME", "/tmp/somewhere")
    assert base.data_dir() == "/tmp/somewhere"


def test_not_implemented_for_symbol_is_an_mxnet_error_naming_the_call():
    err = NotImplementedForSymbol(bool, "bool", 1.5)
    assert isinstance(err, MXNetError)
    assert (err.function, err.alias) == ("bool", "bool")
    assert "bool" in str(err) and "float" in str(err) and "Symbol" in str(err)


def test_symbol_truth_value_raises_not_implemented_for_symbol():
    with pytest.raises(NotImplementedForSymbol, match="bool"):
        bool(mx.sym.var("x"))


# ---- environment ----------------------------------------------------------------------------
def test_getenv_setenv(monkeypatch):
    monkeypatch.delenv(VAR, raising=False)
    assert util.getenv(VAR) is None
    util.setenv(VAR, "42")
    assert os.environ[VAR] == "42" and util.getenv(VAR) == "42"
    util.setenv(VAR, None)
    assert VAR not in os.environ and util.getenv(VAR) is None
    util.setenv(VAR, None)                  # unsetting an unset variable is fine


@pytest.mark.parametrize("name, value", [("", "1"), ("A=B", "1"), (None, "1"), (VAR, 3)])
def test_bad_environment_arguments(name, value):
    with pytest.raises(MXNetError, match="setenv"):
        util.setenv(name, value)


# ---- NumPy shape semantics ------------------------------------------------------------------
@pytest.fixture
def np_shape_off():
    util.set_np_shape(False)
    yield
    util.set_np_shape(False)


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_np_shape_is_per_thread_unless_global(np_shape_off):
    assert not util.is_np_shape()
    assert util.set_np_shape(True) is False         # returns the previous state
    assert util.is_np_shape() and mx.is_np_shape()
    assert not _in_thread(util.is_np_shape)          # 1: this thread only
    assert util.set_np_shape(2) is True
    assert _in_thread(util.is_np_shape)              # 2: every thread
    util.set_np_shape(0)
    assert not util.is_np_shape() and not _in_thread(util.is_np_shape)


def test_np_shape_scope_restores(np_shape_off):
    with util.np_shape(True):
        assert util.is_np_shape()
        with util.np_shape(False):
            assert not util.is_np_shape()
        assert util.is_np_shape()
    assert not util.is_np_shape()
    with util.np_shape(None):                        # None leaves the state alone
        assert not util.is_np_shape()


def test_use_np_shape_on_functions_and_classes(np_shape_off):
    @util.use_np_shape
    def probe(x):
        """doc"""
        return x, util.is_np_shape()

    @util.use_np_shape
    class Probe:
        def method(self):
            return util.is_np_shape()

    assert probe(1) == (1, True) and probe.__doc__ == "doc"
    assert Probe().method() is True
    assert not util.is_np_shape()


@pytest.mark.parametrize("bad", [3, -1, "yes", None])
def test_set_np_shape_rejects_other_values(bad):
    with pytest.raises(MXNetError, match="set_np_shape"):
        util.set_np_shape(bad)


def test_np_shape_changes_no_array_shape(np_shape_off):
    # mxlite shapes are NumPy shapes in or out of the mode
    for active in (False, True):
        with util.np_shape(active):
            assert mx.nd.zeros((0, 3)).shape == (0, 3)
            assert mx.nd.ones(()).shape == ()


# ---- NumPy array semantics --------------------------------------------------------------------
def test_np_array_scope_nests_and_restores():
    assert mx.is_np_array() is False
    with mx.np_array(True):
        assert util.is_np_array()
        with mx.np_array(False):
            assert not util.is_np_array()
        assert util.is_np_array()
    assert not util.is_np_array()


def test_use_np_decorates_functions_and_classes(np_shape_off):
    @util.use_np
    def inside():
        return util.is_np_array(), util.is_np_shape()

    assert inside() == (True, True)
    assert (util.is_np_array(), util.is_np_shape()) == (False, False)

    @util.use_np_array
    class Thing:
        def state(self):
            return util.is_np_array()

    assert Thing().state() is True and not util.is_np_array()


def test_set_np_and_reset_np(np_shape_off):
    util.set_np()
    try:
        assert util.is_np_array() and util.is_np_shape()
        assert mx.np.array([1, 2]).dtype == np.float32
        util.set_np(dtype=True)
        assert mx.np.array([1, 2]).dtype == np.float64 and mx.npx.is_np_default_dtype()
    finally:
        util.reset_np()
    assert not util.is_np_shape() and not util.is_np_array()
    assert mx.np.array([1, 2]).dtype == np.float32
    with pytest.raises(MXNetError, match="shape=True"):
        util.set_np(shape=False, array=True)
    util.set_np(shape=True, array=False)
    assert util.is_np_shape() and not util.is_np_array()
    util.reset_np()
    assert not util.is_np_shape()


def test_set_module():
    @util.set_module("mxnet.somewhere")
    def f():
        pass
    assert f.__module__ == "mxnet.somewhere"


# ---- mx.attribute, mx.name ------------------------------------------------------------------
def test_attribute_and_name_modules():
    attribute = importlib.import_module("mxlite.attribute")
    name = importlib.import_module("mxlite.name")
    assert attribute.AttrScope is mx.sym.AttrScope is mx.AttrScope
    assert name.NameManager is mx.sym.NameManager and name.Prefix is mx.sym.Prefix
    assert mx.name is name and mx.attribute is attribute
    with name.Prefix("net_"):
        assert mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=2).name == "net_fullyconnected0"


@pytest.mark.parametrize("method", ["wait_to_read", "asnumpy", "asscalar", "as_in_context",
                                    "detach", "backward"])
def test_ndarray_only_methods_raise_not_implemented_for_symbol(method):
    with pytest.raises(NotImplementedForSymbol, match=f"Symbol.{method}"):
        getattr(mx.sym.var("x"), method)()


def test_test_utils_is_there_after_a_plain_import():
    """MXNet's scripts call mx.test_utils.X after `import mxnet as mx` alone; mxlite imports
    it on first use."""
    code = ("import sys, mxlite as mx; assert 'mxlite.test_utils' not in sys.modules; "
            "print(mx.test_utils.same(mx.nd.ones(2).asnumpy(), [1, 1]))")
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
