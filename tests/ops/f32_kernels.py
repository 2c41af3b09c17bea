"""Shared helpers of the float32 activation-kernel tests: run one kernel of
``mxlite._core.activation`` and measure its error in float32 ulps."""
import numpy as np

from mxlite._core import activation as kernels


def run_kernel(kind, x):
    """The activation ``kind`` (``ACT_IDS``) of the float32 array ``x``."""
    y = np.empty_like(x)
    kernels.activation(kernels.ACT_IDS[kind], x, y)
    return y


def ulp_error(got, want):
    """|got - want| in units of the float32 spacing at want (want in float64)."""
    spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / np.maximum(spacing, 2.0 ** -149)
