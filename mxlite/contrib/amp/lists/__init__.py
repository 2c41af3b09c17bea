"""MXNet 1.9.1's operator lists for automatic mixed precision, one module per low-precision
dtype (``symbol_fp16``, ``symbol_bf16``), and ``for_dtype``: the lists of one dtype under
common names."""
from collections import namedtuple

import numpy as np

from . import symbol_bf16, symbol_fp16

__all__ = ["symbol_fp16", "symbol_bf16", "OpLists", "for_dtype"]

OpLists = namedtuple("OpLists", [
    "lp16",                 # computed in the low-precision dtype
    "lp16_fp32",            # computed in whichever dtype they are given
    "fp32",                 # computed in float32
    "conditional_fp32",     # (op, parameter, values): float32 for those parameter values
    "widest",               # inputs cast to the widest dtype among them
    "loss_output",          # loss outputs whose grad_scale follows the loss scale
    "lp16_use_fp32_params",  # {op: input names kept float32}; None for float16
])


def for_dtype(dtype):
    """The ``OpLists`` of low-precision ``dtype`` (numpy float16 or ml_dtypes bfloat16)."""
    if np.dtype(dtype) == np.float16:
        m = symbol_fp16
        return OpLists(m.FP16_FUNCS, m.FP16_FP32_FUNCS, m.FP32_FUNCS, m.CONDITIONAL_FP32_FUNCS,
                       m.WIDEST_TYPE_CASTS, m.LOSS_OUTPUT_FUNCTIONS, None)
    m = symbol_bf16
    return OpLists(m.BF16_FUNCS, m.BF16_FP32_FUNCS, m.FP32_FUNCS, m.CONDITIONAL_FP32_FUNCS,
                   m.WIDEST_TYPE_CASTS, m.LOSS_OUTPUT_FUNCTIONS, m.BF16_USE_FP32_PARAMS)
