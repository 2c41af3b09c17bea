"""Operators whose one compute function serves CPU and GPU (``mxlite.ops.common.kernels``):
the GPU's kernel functions registered in ``DEVICE_KERNELS`` stand in for a ``mxlite._core``
module's functions, so they must take the same arguments; the operators that share the
CPU plan have no GPU copy of it; and a kernel function launches on its array's device.

None of this needs a GPU (the values on the emulated GPU are checked by the operator tests).
"""
import importlib
import inspect
import types

import pytest

import mxlite  # noqa: F401  (registers every operator and its GPU compute functions)
from mxlite.cuda import runtime
from mxlite.ops.common import DEVICE_KERNELS
from mxlite.ops.registry import get_op

SHARED_PLAN = ("Convolution", "Deconvolution", "_conv_weight_grad", "Pooling",
               "_pool_max_scatter", "_pool_max_gather", "_pool_backward", "UpSampling",
               "BatchNorm", "LayerNorm", "InstanceNorm", "L2Normalization")


def _arguments(fn):
    """(kind, default) of each parameter: the shared compute functions pass them by
    position, so the positions and defaults must agree."""
    return [(p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("key", sorted(DEVICE_KERNELS), ids="-".join)
def test_device_kernels_take_the_arguments_of_the_cpu_functions(key):
    device, module_name = key
    cpu = importlib.import_module(module_name)
    functions = vars(DEVICE_KERNELS[key])
    assert functions, f"{device} registered no functions for {module_name}"
    for name, fn in functions.items():
        assert hasattr(cpu, name), f"{device} kernel {name} stands for no {module_name}.{name}"
        assert _arguments(fn) == _arguments(getattr(cpu, name)), (
            f"{device} {name}{inspect.signature(fn)} does not take the arguments of "
            f"{module_name}.{name}{inspect.signature(getattr(cpu, name))}")


@pytest.mark.parametrize("name", SHARED_PLAN)
def test_layers_run_the_cpu_compute_function_on_gpu(name):
    op = get_op(name)
    assert op.compute["gpu"] is op.compute["cpu"]


def test_conv_and_norm_kernels_cover_what_the_shared_plans_call():
    assert {"im2col", "col2im", "fnl_to_nfl", "nfl_to_fnl", "add_bias", "add_into",
            "pool"} <= set(vars(DEVICE_KERNELS[("gpu", "mxlite._core.conv")]))
    assert {"moments", "channel_moments", "rnorm", "finish", "ema", "apply"} <= set(
        vars(DEVICE_KERNELS[("gpu", "mxlite._core.norm")]))


class _Namespaces:
    """A stand-in for the GPU namespace: ``on_device(i)`` gives a named per-device one."""

    def on_device(self, device_id):
        return f"namespace of GPU {device_id}"


def test_kernel_functions_launch_on_the_device_of_their_array(monkeypatch):
    base = _Namespaces()
    monkeypatch.setattr(runtime, "namespace", lambda: base)
    on_gpu_2 = types.SimpleNamespace(device=types.SimpleNamespace(id=2))
    assert runtime.namespace_of(on_gpu_2) == "namespace of GPU 2"
    # an array without a device id (NumPy under the emulator: one device) -> the namespace
    assert runtime.namespace_of(types.SimpleNamespace(device="cpu")) is base
    assert runtime.namespace_of(object()) is base
