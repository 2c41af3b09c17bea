"""The operators ONNX cannot express because they are not functions of their inputs: the
optimizer updates that write their state inputs in place, ``reset_arrays``, and ``Custom``
(a Python callback)."""
from ..table import not_expressible

not_expressible(
    "an optimizer update: it writes its state inputs (momentum, moments, float32 master "
    "weights) in place, which an ONNX graph, a function of its inputs, cannot do; ONNX's "
    "training operators (ai.onnx.preview.training) are outside the default domain",
    "sgd_mom_update", "nag_mom_update", "mp_sgd_update", "mp_sgd_mom_update",
    "mp_nag_mom_update", "adam_update", "_adamw_update", "_mp_adamw_update", "ftml_update",
    "ftrl_update", "rmsprop_update", "rmspropalex_update", "signum_update",
    "lamb_update_phase1", "mp_lamb_update_phase1", "mp_lamb_update_phase2",
    "_contrib_group_adagrad_update", "_sparse_adagrad_update", "multi_sgd_update", "multi_sgd_mom_update",
    "multi_mp_sgd_update", "multi_mp_sgd_mom_update", "preloaded_multi_sgd_update",
    "preloaded_multi_sgd_mom_update", "preloaded_multi_mp_sgd_update",
    "preloaded_multi_mp_sgd_mom_update", "_multi_adamw_update", "_multi_mp_adamw_update",
    "_multi_lamb_update", "_multi_mp_lamb_update")
not_expressible(
    "it sets its inputs to zero in place and has no output: an ONNX graph cannot write "
    "its inputs", "reset_arrays")
not_expressible(
    "a Python callback (mx.operator.CustomOp): its computation is Python code, which an "
    "ONNX graph cannot hold", "Custom", "_backward_Custom")
