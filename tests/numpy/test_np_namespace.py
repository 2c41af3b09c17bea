"""``mx.np``, ``mx.np.linalg``, ``mx.np.random``, ``mx.npx`` and ``mx.npx.random`` have every
public name MXNet 1.9.1's have (tests/fixtures/mxnet_namespaces.json), except the few listed
here with the reason: modules MXNet's namespaces leaked from their own imports."""
import importlib
import json
import pathlib

import pytest

import mxlite  # noqa: F401

MXNET = json.loads((pathlib.Path(__file__).parent.parent / "fixtures" / "mxnet_namespaces.json")
                   .read_text())
LEAKED = {
    "mxnet.numpy": {"arrayprint", "function_base", "io", "stride_tricks", "utils"},
    "mxnet.numpy_extension": {"check_call", "classproperty", "ctypes", "threading", "warnings",
                              "with_metaclass"},
}
NAMESPACES = ("mxnet.numpy", "mxnet.numpy.linalg", "mxnet.numpy.random",
              "mxnet.numpy_extension", "mxnet.numpy_extension.random")


@pytest.mark.parametrize("name", NAMESPACES)
def test_every_mxnet_name_is_there(name):
    module = importlib.import_module(name.replace("mxnet", "mxlite", 1))
    missing = sorted(set(MXNET[name]) - LEAKED.get(name, set()) - set(dir(module)))
    assert not missing, f"{name}: MXNet 1.9.1's names missing in mxlite: {missing}"


def test_the_leaked_names_are_still_mxnets():
    for name, leaked in LEAKED.items():
        assert leaked <= set(MXNET[name])
