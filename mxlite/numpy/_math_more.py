"""NumPy's element-wise and small-array math beyond the core ufuncs, gathered.

The functions live in modules with one job each: ``_binary_math`` (element-wise binary
functions), ``_unary_math`` (element-wise unary ones), ``_rounding``, ``_diagonals``,
``_array_compare`` (``isclose`` and the whole-array comparisons), ``_nan_reductions``
(the NaN-skipping reductions and NumPy's old reduction names), ``_unravel``
(``unravel_index``) and ``_einsum``, with the private helpers they share in
``_math_common``. This module names them all (``__all__``) for ``mx.np``.

Differentiable functions are compositions of registered operators (through the other
``mx.np`` functions), so autograd differentiates them to any order and, where no shape or
dtype is needed, they build graphs on Symbols:

* ``arctan2``, ``copysign``, ``ldexp``, ``heaviside``, ``float_power``, ``divmod``,
  ``modf``, ``frexp`` (the mantissa), ``nan_to_num``, ``around``/``round``/``round_``,
  ``trace``, ``diagonal``, ``diag``, ``diagflat``, ``einsum`` (``_einsum``), ``nanmax``,
  ``nanmin``, ``nancumsum``, ``real``, ``fmod``;
* integer and boolean functions without a registered operator (``gcd``, ``lcm``,
  ``bitwise_and``/``or``/``xor``, ``signbit``, ``spacing``, ``frexp``'s exponent) run
  NumPy's ufunc on the host inside one Custom operator (``_extra``); their gradients are
  zero;
* ``isclose``, ``nanargmax``/``nanargmin`` and ``unravel_index`` give booleans or indices;
  ``allclose``, ``array_equal`` and ``array_equiv`` give Python booleans (they read the
  data).

Binary functions take arrays or Python numbers in either place and broadcast; operands
are promoted with ``_dtypes.result_type`` (an integer meeting a float gives that float), and
functions that are only defined on floats compute integer data in the default float. Two
numbers give NumPy's result (a NumPy scalar). The ufunc keywords ``where``, ``casting``,
``order``, ``dtype`` and ``subok`` are accepted at their defaults only (another legal value
is ``NotImplementedError``, an illegal one ``TypeError``).
"""
from ._array_compare import allclose, array_equal, array_equiv, isclose
from ._binary_math import (arctan2, bitwise_and, bitwise_not, bitwise_or, bitwise_xor,
                           copysign, divmod, float_power, fmod, gcd, heaviside, invert, lcm,
                           ldexp)
from ._diagonals import diag, diagflat, diagonal, trace
from ._einsum import einsum
from ._nan_reductions import (alltrue, nanargmax, nanargmin, nancumprod, nancumsum, nanmax,
                              nanmin, product, sometrue)
from ._rounding import around, round, round_
from ._unary_math import frexp, modf, nan_to_num, real, signbit, spacing
from ._unravel import unravel_index

__all__ = ["arctan2", "copysign", "ldexp", "lcm", "gcd", "bitwise_and", "bitwise_or",
           "bitwise_xor", "invert", "bitwise_not", "heaviside", "float_power", "divmod",
           "modf", "frexp", "signbit", "spacing", "nan_to_num", "isclose", "allclose",
           "array_equal", "array_equiv", "around", "round", "round_", "trace", "diagonal",
           "diag", "diagflat", "einsum", "fmod", "real", "nancumsum", "nancumprod", "nanmax",
           "nanmin", "nanargmax", "nanargmin", "product", "alltrue", "sometrue",
           "unravel_index"]
