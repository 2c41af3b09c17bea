"""mxlite.ops.routing: every routed name is a registered op, and each route computes what
NumPy's operator of the same meaning computes (array-array, array-scalar, scalar-array)."""
import operator

import numpy as np
import pytest

import mxlite as mx
from mxlite.ops.registry import REGISTRY
from mxlite.ops.routing import ARITHMETIC, BINARY_FUNCTIONS, COMPARISONS

ROUTED = sorted({name for row in ARITHMETIC + COMPARISONS for name in row[1:]}
                | {name for ops in BINARY_FUNCTIONS.values() for name in ops})

A = np.array([[0.5, 1.5, 2.0], [3.0, 0.25, 1.0]], dtype=np.float32)
B = np.array([2.0, 0.5, 1.0], dtype=np.float32)
S = 1.5
NUMPY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
         "divide": np.divide, "modulo": np.mod, "power": np.power, "maximum": np.maximum,
         "minimum": np.minimum, "hypot": np.hypot, "equal": np.equal,
         "not_equal": np.not_equal, "greater": np.greater, "greater_equal": np.greater_equal,
         "lesser": np.less, "lesser_equal": np.less_equal, "logical_and": np.logical_and,
         "logical_or": np.logical_or, "logical_xor": np.logical_xor}


@pytest.mark.parametrize("name", ROUTED)
def test_routed_op_is_registered(name):
    assert name in REGISTRY


def _run(op_name, lhs, rhs=None, scalar=None):
    f = mx.nd._internal if op_name.startswith("_") else mx.nd
    fn = getattr(f, op_name)
    if scalar is None:
        return fn(mx.nd.array(lhs), mx.nd.array(rhs)).asnumpy()
    return fn(mx.nd.array(lhs), scalar=scalar).asnumpy()


@pytest.mark.parametrize("name", sorted(BINARY_FUNCTIONS))
def test_binary_function_table_matches_numpy(name):
    array_op, scalar_op, left_op = BINARY_FUNCTIONS[name]
    ref = NUMPY[name]
    np.testing.assert_allclose(_run(array_op, A, B), ref(A, B).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(_run(scalar_op, A, scalar=S), ref(A, np.float32(S)), rtol=1e-6)
    np.testing.assert_allclose(_run(left_op, A, scalar=S), ref(np.float32(S), A), rtol=1e-6)


@pytest.mark.parametrize("row", ARITHMETIC, ids=[r[0] for r in ARITHMETIC])
def test_arithmetic_rows_install_dunders(row):
    stem, array_op, scalar_op, reflected_op = row
    ref = getattr(operator, stem)
    x, y = mx.nd.array(A), mx.nd.array(B)
    np.testing.assert_allclose(getattr(x, f"__{stem}__")(y).asnumpy(), ref(A, B), rtol=1e-6)
    np.testing.assert_allclose(getattr(x, f"__r{stem}__")(S).asnumpy(),
                               ref(np.float32(S), A), rtol=1e-6)


@pytest.mark.parametrize("row", COMPARISONS, ids=[r[0] for r in COMPARISONS])
def test_comparison_rows_install_dunders(row):
    stem = row[0]
    ref = getattr(operator, stem)
    x = mx.nd.array(A)
    np.testing.assert_array_equal(getattr(x, f"__{stem}__")(S).asnumpy(),
                                  ref(A, np.float32(S)).astype(np.float32))


def test_binary_functions_of_two_numbers_give_a_number():
    # MXNet: nd.power(0.9, 3) is the Python number 0.9 ** 3 (its tests build bias
    # corrections that way), not an error
    assert mx.nd.power(0.9, 3) == 0.9 ** 3
    assert mx.nd.maximum(2, 5.5) == 5.5 and mx.nd.minimum(2, 5.5) == 2
    assert mx.nd.subtract(1, 0.25) == 0.75 and mx.nd.divide(1, 4) == 0.25
    assert mx.nd.greater(3, 2) == 1 and mx.nd.equal(3, 2) == 0
    assert not isinstance(mx.nd.add(1, 2), mx.nd.NDArray)
    with pytest.raises(TypeError, match="hypot: at least one operand"):
        mx.nd.hypot(3, 4)
