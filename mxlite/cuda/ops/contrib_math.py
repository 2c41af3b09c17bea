"""GPU compute functions of ``mxlite/ops/contrib_math.py`` (div_sqrt_dim,
gradientmultiplier, round_ste, sign_ste, quadratic, allclose, arange_like, index_array,
index_copy, interleaved_matmul_selfatt_qk / _valatt, interleaved_matmul_encdec_qk /
_valatt, count_sketch, fft, ifft): their CPU compute functions use the device namespace
(``arange``, ``matmul``, ``strided_copy``, ``cast_into``, ``add_at``, ``to_host`` /
``from_host`` for index_copy's positions and count_sketch's buckets), the array methods
NumPy and CuPy share (arithmetic, comparisons, ``all``, integer-array assignment) and the
compute function the same device has for ``round``, ``sign``, ``cos`` and ``sin``, so they
run unchanged on the GPU."""
from . import device_generic

device_generic("_contrib_div_sqrt_dim", "_contrib_gradientmultiplier", "_contrib_round_ste",
               "_contrib_sign_ste", "_contrib_quadratic", "_contrib_allclose",
               "_contrib_arange_like", "_contrib_index_array", "_contrib_index_copy",
               "_contrib_interleaved_matmul_selfatt_qk",
               "_contrib_interleaved_matmul_selfatt_valatt",
               "_contrib_interleaved_matmul_encdec_qk",
               "_contrib_interleaved_matmul_encdec_valatt", "_contrib_count_sketch",
               "_contrib_fft", "_contrib_ifft")
