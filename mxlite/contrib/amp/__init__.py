"""Automatic mixed precision (MXNet's ``mx.contrib.amp``): ``init`` makes the listed
``mx.nd``/``mx.sym`` operators run in float16 or bfloat16 (or float32), ``init_trainer`` and
``scale_loss`` add dynamic loss scaling to a Gluon ``Trainer``, and ``convert_symbol``,
``convert_model``, ``convert_hybrid_block`` and ``convert_bucketing_module`` rewrite a
float32 graph with the same lists. ``lists`` holds MXNet 1.9.1's operator lists;
``DynamicLossScaler`` is the loss scaler. docs/guide/amp.rst walks through them.

As in MXNet, ``from mxlite.contrib.amp import amp`` gives the same functions.
"""
from . import amp, lists  # noqa: F401
from .amp import (convert_bucketing_module, convert_hybrid_block, convert_model,
                  convert_symbol, init, init_trainer, list_conditional_fp32_ops,
                  list_fp32_ops, list_loss_output_functions, list_lp16_fp32_ops,
                  list_lp16_ops, list_lp16_use_fp32_params, list_widest_type_cast, scale_loss,
                  unscale)
from .loss_scaler import DynamicLossScaler

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "convert_bucketing_module", "convert_symbol",
           "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops", "list_conditional_fp32_ops",
           "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params",
           "DynamicLossScaler", "amp", "lists"]
