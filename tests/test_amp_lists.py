"""mxlite.contrib.amp.lists: MXNet 1.9.1's operator lists, kept to registered operators."""
import numpy as np
import pytest

import mxlite as mx  # noqa: F401  (registers every operator)
from mxlite import MXNetError
from mxlite.contrib import amp
from mxlite.contrib.amp.lists import for_dtype, symbol_bf16, symbol_fp16
from mxlite.ops.registry import REGISTRY

ml_dtypes = pytest.importorskip("ml_dtypes")
TARGETS = ["float16", "bfloat16"]


def _all_names(lists):
    names = list(lists.lp16) + list(lists.lp16_fp32) + list(lists.fp32) + list(lists.widest)
    names += [c[0] for c in lists.conditional_fp32] + list(lists.loss_output)
    names += list(lists.lp16_use_fp32_params or ())
    return names


@pytest.mark.parametrize("target", TARGETS)
def test_every_listed_name_is_a_registered_operator(target):
    missing = [n for n in _all_names(for_dtype(np.dtype(target))) if n not in REGISTRY]
    assert not missing


@pytest.mark.parametrize("target", TARGETS)
def test_parameters_named_in_the_lists_exist(target):
    lists = for_dtype(np.dtype(target))
    for op, param, values in lists.conditional_fp32:
        assert param in {p.name for p in REGISTRY[op].params}, (op, param)
        assert values and all(isinstance(v, str) for v in values)
    for op, inputs in (lists.lp16_use_fp32_params or {}).items():
        assert set(inputs) - {""} <= set(REGISTRY[op].inputs), (op, inputs)


@pytest.mark.parametrize("target", TARGETS)
def test_target_fp32_and_conditional_lists_are_disjoint(target):
    """MXNet's converter refused an op in two of these lists; the defaults must pass it."""
    lists = for_dtype(np.dtype(target))
    canon = lambda names: {REGISTRY[n].name for n in names}      # noqa: E731
    low, high = canon(lists.lp16), canon(lists.fp32)
    cond = canon(c[0] for c in lists.conditional_fp32)
    assert not (low & high) and not (low & cond) and not (high & cond)


def test_the_low_precision_lists_are_mxnets():
    # facts of MXNet 1.9.1's lists/symbol_fp16.py and symbol_bf16.py
    assert symbol_fp16.FP16_FUNCS == ["Convolution", "Deconvolution", "FullyConnected", "RNN"]
    assert symbol_bf16.BF16_FUNCS == ["Convolution", "FullyConnected"]
    assert ("Activation", "act_type", ["softrelu"]) in symbol_fp16.CONDITIONAL_FP32_FUNCS
    for name in ("softmax", "log_softmax", "LayerNorm", "norm", "SoftmaxOutput"):
        assert name in symbol_fp16.FP32_FUNCS
    assert "BatchNorm" in symbol_fp16.FP16_FP32_FUNCS
    assert "BatchNorm" in symbol_bf16.BF16_FP32_FUNCS
    assert symbol_bf16.BF16_USE_FP32_PARAMS == {
        "BatchNorm": ["", "gamma", "beta", "moving_mean", "moving_var"]}
    assert "elemwise_add" in symbol_fp16.WIDEST_TYPE_CASTS
    assert symbol_fp16.LOSS_OUTPUT_FUNCTIONS == [
        "SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
        "MAERegressionOutput"]


def test_list_functions():
    assert amp.list_lp16_ops("float16") == symbol_fp16.FP16_FUNCS
    assert amp.list_lp16_ops("bfloat16") == symbol_bf16.BF16_FUNCS
    assert amp.list_fp32_ops(ml_dtypes.bfloat16) == symbol_bf16.FP32_FUNCS
    assert amp.list_lp16_fp32_ops(np.float16) == symbol_fp16.FP16_FP32_FUNCS
    assert amp.list_widest_type_cast("float16") == symbol_fp16.WIDEST_TYPE_CASTS
    assert amp.list_conditional_fp32_ops("bfloat16") == symbol_bf16.CONDITIONAL_FP32_FUNCS
    assert amp.list_loss_output_functions("float16") == symbol_fp16.LOSS_OUTPUT_FUNCTIONS
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_use_fp32_params("bfloat16") == symbol_bf16.BF16_USE_FP32_PARAMS
    # the lists returned are copies: changing one changes nothing
    amp.list_lp16_ops("float16").append("relu")
    assert "relu" not in symbol_fp16.FP16_FUNCS
    for bad in ("float32", "int8", "nonsense"):
        with pytest.raises(MXNetError, match="list_lp16_ops.*float16.*bfloat16"):
            amp.list_lp16_ops(bad)
