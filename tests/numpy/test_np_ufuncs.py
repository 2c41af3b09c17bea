"""mx.np's element-wise functions against NumPy itself: values, broadcasting, numbers on
either side, and the documented promotion table of ``mxlite.numpy._dtypes`` (written out
here independently: equal dtypes keep theirs; an integer or boolean operand meeting a
floating one gives that float; otherwise NumPy's ``result_type`` (its int16, which mxlite
does not store, as int32); a Python float with an
integer/boolean array gives the default float32)."""
import numpy as onp
import pytest
from np_checks import finite_difference
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import autograd
from mxlite import np

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]
NUMERIC = DTYPES[1:]
FLOATS = ["float16", "float32", "float64"]


def table_dtype(a, b):
    """The promotion table (module docstring)."""
    a, b = onp.dtype(a), onp.dtype(b)
    if a == b:
        return a
    if a.kind == "f" and b.kind != "f":
        return a
    if b.kind == "f" and a.kind != "f":
        return b
    r = onp.result_type(a, b)
    return onp.dtype("int32") if r == onp.int16 else r


def scalar_dtype(dt, value):
    dt = onp.dtype(dt)
    if isinstance(value, bool):
        return dt
    if isinstance(value, int):
        return onp.dtype("int64") if dt.kind == "b" else dt
    return dt if dt.kind == "f" else onp.dtype("float32")


def tol(dt):
    return {"float16": 2e-2, "float32": 1e-5, "float64": 1e-12}.get(onp.dtype(dt).name, 0)


def close(got, want, dt):
    got = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
    want = onp.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    r = tol(dt)
    if r == 0:
        onp.testing.assert_array_equal(got, want)
    else:
        onp.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=r,
                                    atol=r, equal_nan=True)


def small(dt):
    """Small values, so integer arithmetic neither overflows nor divides by zero badly."""
    if onp.dtype(dt).kind == "b":
        return st.booleans()
    if onp.dtype(dt).kind == "u":
        return st.integers(1, 9)
    if onp.dtype(dt).kind == "i":
        return st.integers(-9, 9).filter(lambda v: v != 0)
    return st.floats(-4, 4, width=16).filter(lambda v: abs(v) > 0.1)


shapes2 = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0,
                                            max_side=3)

ARITH = {"add": onp.add, "subtract": onp.subtract, "multiply": onp.multiply,
         "maximum": onp.maximum, "minimum": onp.minimum}
COMPARE = {"equal": onp.equal, "not_equal": onp.not_equal, "greater": onp.greater,
           "greater_equal": onp.greater_equal, "less": onp.less, "less_equal": onp.less_equal,
           "logical_and": onp.logical_and, "logical_or": onp.logical_or,
           "logical_xor": onp.logical_xor}


@st.composite
def operand_pair(draw, dtypes=NUMERIC):
    s = draw(shapes2)
    d1, d2 = draw(st.sampled_from(dtypes)), draw(st.sampled_from(dtypes))
    a = draw(hnp.arrays(d1, s.input_shapes[0], elements=small(d1)))
    b = draw(hnp.arrays(d2, s.input_shapes[1], elements=small(d2)))
    return a, b


def ref(fn, a, b, dt):
    """NumPy's result of ``fn`` on operands cast to ``dt`` (NumPy computing in ``dt``)."""
    with onp.errstate(all="ignore"):
        return fn(onp.asarray(a).astype(dt), onp.asarray(b).astype(dt))


@settings(max_examples=60)
@given(operand_pair(), st.sampled_from(sorted(ARITH)))
def test_binary_arithmetic(pair, name):
    a, b = pair
    dt = table_dtype(a.dtype, b.dtype)
    y = getattr(np, name)(np.array(a, dtype=a.dtype), np.array(b, dtype=b.dtype))
    assert isinstance(y, np.ndarray)
    assert y.dtype == dt
    close(y, ref(ARITH[name], a, b, dt), dt)


@settings(max_examples=40)
@given(operand_pair(DTYPES), st.sampled_from(sorted(COMPARE)))
def test_binary_comparison_gives_bool(pair, name):
    a, b = pair
    y = getattr(np, name)(np.array(a, dtype=a.dtype), np.array(b, dtype=b.dtype))
    assert y.dtype == onp.bool_
    onp.testing.assert_array_equal(y.asnumpy(), COMPARE[name](a, b))


@settings(max_examples=40)
@given(operand_pair())
def test_true_divide(pair):
    a, b = pair
    dt = table_dtype(a.dtype, b.dtype)
    if dt.kind != "f":
        dt = onp.dtype("float32")
    y = np.array(a, dtype=a.dtype) / np.array(b, dtype=b.dtype)
    assert y.dtype == dt
    close(y, ref(onp.true_divide, a, b, dt), dt)


@settings(max_examples=40)
@given(operand_pair(), st.sampled_from(["mod", "floor_divide", "power"]))
def test_mod_floor_divide_power(pair, name):
    a, b = pair
    dt = table_dtype(a.dtype, b.dtype)
    if name == "power":
        b = onp.abs(b) % 4          # non-negative small exponents (integer power)
        a = onp.clip(a, -4, 4).astype(a.dtype)
    y = getattr(np, name)(np.array(a, dtype=a.dtype), np.array(b, dtype=b.dtype))
    assert y.dtype == dt
    want = ref(getattr(onp, name), a, b, dt)
    if dt == onp.float16:       # computed in float32 then rounded: compare loosely
        want = ref(getattr(onp, name), a, b, onp.float32)
    close(y, want, dt)


@settings(max_examples=60)
@given(st.data(), st.sampled_from(sorted(ARITH) + ["true_divide", "power"] + sorted(COMPARE)),
       st.sampled_from(NUMERIC), st.sampled_from([2, 3, 1.5, -2.5, True]),
       st.booleans())
def test_binary_with_python_number(data, name, dtype, value, number_left):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    a = data.draw(hnp.arrays(dtype, shape, elements=small(dtype)))
    if name == "power":
        a = onp.abs(a)
        if number_left:
            a = a % 4
    x = np.array(a, dtype=a.dtype)
    y = getattr(np, name)(value, x) if number_left else getattr(np, name)(x, value)
    if name in COMPARE:
        dt = onp.dtype(bool)
    else:
        dt = scalar_dtype(a.dtype, value)
        if name == "true_divide" and dt.kind != "f":
            dt = onp.dtype("float32")
    assert y.dtype == dt, (name, dtype, value, y.dtype)
    fn = COMPARE.get(name) or ARITH.get(name) or getattr(onp, name)
    ops = (onp.asarray(value), a) if number_left else (a, onp.asarray(value))
    with onp.errstate(all="ignore"):
        want = fn(*[o.astype(dt if name not in COMPARE else "float64") for o in ops])
    close(y, want, dt if name not in COMPARE else "bool")


def test_operators_are_the_functions():
    a = onp.array([[1.5, -2.0, 3.0]], dtype="float32")
    b = onp.array([[2.0], [-1.0]], dtype="float32")
    x, y = np.array(a), np.array(b)
    for got, want in [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b),
                      (x ** 2, a ** 2), (2 ** x, 2 ** a), (x % y, onp.mod(a, b)),
                      (x // y, a // b), (3 - x, 3 - a), (1 / x, 1 / a), (-x, -a),
                      (abs(x), abs(a)), (x > y, a > b), (x <= 1.5, a <= 1.5),
                      (x @ x.T, a @ a.T)]:
        assert isinstance(got, np.ndarray)
        close(got, want, want.dtype)


def test_inplace_operators_keep_the_buffer():
    x = np.array([1, 2, 3], dtype="int32")
    view = x[1:]
    x += 2
    x *= 3
    assert x.dtype == onp.int32
    onp.testing.assert_array_equal(x.asnumpy(), [9, 12, 15])
    onp.testing.assert_array_equal(view.asnumpy(), [12, 15])
    f = np.array([1.0, 2.0])
    f /= 4
    onp.testing.assert_allclose(f.asnumpy(), [0.25, 0.5])


def test_bool_arrays():
    a = onp.array([True, False, True])
    b = onp.array([True, True, False])
    x, y = np.array(a), np.array(b)
    for name in ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or",
                 "equal"]:
        got = getattr(np, name)(x, y)
        want = getattr(onp, name)(a, b)
        assert got.dtype == want.dtype, name
        onp.testing.assert_array_equal(got.asnumpy(), want)
    assert (x + True).dtype == onp.bool_
    assert (x + 1).dtype == onp.int64
    onp.testing.assert_array_equal((x + 1).asnumpy(), a + 1)


UNARY_FLOAT = ["sqrt", "cbrt", "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
               "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
               "degrees", "radians", "deg2rad", "rad2deg"]
UNARY_SAME = ["negative", "absolute", "sign", "square", "ceil", "floor", "trunc", "rint"]


def _domain(name, a):
    """Values inside ``name``'s domain (away from its edges)."""
    if name in ("sqrt", "log", "log2", "log10"):
        return onp.abs(a) + 0.5
    if name == "log1p":
        return onp.abs(a)
    if name in ("arcsin", "arccos", "arctanh"):
        return onp.clip(a, -0.9, 0.9)
    if name == "arccosh":
        return onp.abs(a) + 1.1
    if name == "tan":
        return onp.clip(a, -1.2, 1.2)
    if name in ("exp", "expm1", "sinh", "cosh"):
        return onp.clip(a, -5, 5)
    return a


@settings(max_examples=80)
@given(st.data(), st.sampled_from(UNARY_FLOAT + UNARY_SAME + ["arccosh", "arctanh"]),
       st.sampled_from(NUMERIC))
def test_unary(data, name, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    a = data.draw(hnp.arrays(dtype, shape, elements=small(dtype)))
    a = _domain(name, a).astype(dtype)
    if onp.dtype(dtype).kind == "u" and name == "negative":
        return
    if onp.dtype(dtype).kind in "iu" and name in ("arcsin", "arccos", "arctanh"):
        a = onp.zeros_like(a)
    y = getattr(np, name)(np.array(a, dtype=a.dtype))
    if name in UNARY_SAME:
        dt = onp.dtype(dtype)
    else:
        dt = onp.dtype(dtype) if onp.dtype(dtype).kind == "f" else onp.dtype("float32")
    assert y.dtype == dt, (name, dtype, y.dtype)
    with onp.errstate(all="ignore"):
        want = getattr(onp, name)(a.astype("float64")).astype(dt)
    close(y, want, dt if dt != onp.float16 else "float16")


@pytest.mark.parametrize("dtype", DTYPES)
def test_predicates(dtype):
    a = onp.array([[0, 1, 2], [3, 0, 1]]).astype(dtype)
    if onp.dtype(dtype).kind == "f":
        a = onp.array([[0, onp.nan, onp.inf], [-onp.inf, -1.5, 2]], dtype=dtype)
    x = np.array(a, dtype=dtype)
    for name in ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not"]:
        y = getattr(np, name)(x)
        assert y.dtype == onp.bool_
        onp.testing.assert_array_equal(y.asnumpy(), getattr(onp, name)(a), err_msg=name)


def test_numbers_and_lists_as_operands():
    assert np.add(2, 3) == 5
    y = np.add([1, 2], np.array([0.5, 0.5]))
    close(y, [1.5, 2.5], "float32")
    y = np.multiply(np.array([1, 2], dtype="int32"), [3, 4])
    onp.testing.assert_array_equal(y.asnumpy(), [3, 8])
    x = np.array([1.0, 4.0])
    close(np.sqrt(x), [1, 2], "float32")
    assert isinstance(np.sqrt(4.0), float)


def test_out_argument():
    x = np.array([1.0, 2.0, 3.0])
    out = np.zeros(3)
    r = np.add(x, 1, out=out)
    assert r is out
    close(out, [2, 3, 4], "float32")
    o2 = np.zeros(3, dtype="bool")
    np.greater(x, 1.5, out=o2)
    onp.testing.assert_array_equal(o2.asnumpy(), [False, True, True])
    with pytest.raises(TypeError):              # a boolean result into a float out
        np.isnan(x, out=np.zeros(3))
    np.exp(x, out=out)
    close(out, onp.exp([1, 2, 3]), "float32")


def test_broadcast_mismatch_is_an_error():
    with pytest.raises(mx.base.MXNetError):
        np.add(np.ones((2, 3)), np.ones((4,)))


def _fd_grad(f, x, eps=1e-6):
    return finite_difference(lambda v: f(v).sum(), x, eps)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "power",
                                  "maximum", "hypot"])
def test_binary_gradients_broadcast(name, rng):
    a = rng.uniform(0.5, 2, (2, 3))
    b = rng.uniform(0.5, 2, (3,))
    x, y = np.array(a, dtype="float64"), np.array(b, dtype="float64")
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        z = getattr(np, name)(x, y)
    z.backward()
    fn = getattr(onp, name)
    onp.testing.assert_allclose(x.grad.asnumpy(), _fd_grad(lambda v: fn(v, b), a), rtol=1e-5)
    onp.testing.assert_allclose(y.grad.asnumpy(), _fd_grad(lambda v: fn(a, v), b), rtol=1e-5)


@pytest.mark.parametrize("name", ["exp", "log", "sin", "tanh", "sqrt", "arctan", "square",
                                  "cbrt", "log1p"])
def test_unary_gradients(name, rng):
    a = rng.uniform(0.5, 2, (2, 3))
    x = np.array(a, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = getattr(np, name)(x)
    y.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), _fd_grad(getattr(onp, name), a), rtol=1e-5)


def test_mixed_dtype_gradient_flows_in_each_dtype():
    x = np.array([1.0, 2.0], dtype="float16")
    y = np.array([3.0, 4.0], dtype="float32")
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        z = x * y
    z.backward()
    assert z.dtype == onp.float32
    assert x.grad.dtype == onp.float16
    close(x.grad, [3, 4], "float16")
    close(y.grad, [1, 2], "float32")


def test_dtype_and_out_casting():
    x = np.array([1, 2, 3], dtype="int32")
    with pytest.raises(NotImplementedError):          # dtype=: MXNet's rule
        np.add(x, 1, dtype="float64")
    with pytest.raises(TypeError):
        np.sin(x, dtype="no-such-type")
    with pytest.raises(NotImplementedError):
        np.sin(x, where=False)
    out = np.zeros(3)                       # float32: int32 results cast into it
    np.add(x, 1, out=out)
    close(out, [2, 3, 4], "float32")
    with pytest.raises(TypeError):         # float into int is not 'same_kind'
        np.add(x, 1.5, out=np.zeros(3, dtype="int32"))
    with pytest.raises(TypeError):
        x += 1.5
    with pytest.raises(mx.base.MXNetError):
        np.add(x, 1, out=np.zeros(4))


def test_integer_edge_cases_follow_numpy():
    with pytest.raises(mx.base.MXNetError):
        np.array([1], dtype="int8") + 300          # would wrap silently
    onp.testing.assert_array_equal((np.array([0], dtype="uint8") - 1).asnumpy(), [255])
    with pytest.raises(mx.base.MXNetError):
        np.array([2], dtype="int32") ** -1
    with pytest.raises(mx.base.MXNetError):
        np.power(np.array([2], dtype="int32"), np.array([-1], dtype="int32"))
    a = onp.array([7, -7, 0], dtype="int32")
    b = onp.array([0, 2, 0], dtype="int32")
    with onp.errstate(all="ignore"):
        want_fd, want_mod = a // b, a % b
    onp.testing.assert_array_equal((np.array(a, dtype="int32") // np.array(b, dtype="int32"))
                                   .asnumpy(), want_fd)
    onp.testing.assert_array_equal((np.array(a, dtype="int32") % np.array(b, dtype="int32"))
                                   .asnumpy(), want_mod)
    big = onp.array([2 ** 53 + 1, -(2 ** 60) - 3], dtype="int64")     # beyond float64
    onp.testing.assert_array_equal((np.array(big, dtype="int64") // 3).asnumpy(), big // 3)
    got = np.array(big, dtype="int64") // np.array([-2, 7], dtype="int64")
    onp.testing.assert_array_equal(got.asnumpy(), big // onp.array([-2, 7]))
    r = np.reciprocal(np.array([2, 1, -1], dtype="int32"))
    assert r.dtype == onp.int32
    onp.testing.assert_array_equal(r.asnumpy(), onp.reciprocal(onp.array([2, 1, -1], "int32")))


@pytest.mark.parametrize("name", ["absolute", "ceil", "floor", "trunc", "fix", "square",
                                  "negative", "sign"])
def test_unary_of_booleans(name):
    a = onp.array([True, False])
    try:
        want = getattr(onp, name)(a)
    except TypeError:
        with pytest.raises(mx.base.MXNetError):
            getattr(np, name)(np.array(a))
        return
    got = getattr(np, name)(np.array(a))
    assert got.dtype == want.dtype
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_rint_rounds_halves_to_even():
    a = onp.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.7, onp.nan, onp.inf, 16777216.0],
                  dtype="float32")
    got = np.rint(np.array(a)).asnumpy()
    onp.testing.assert_array_equal(got, onp.rint(a))
    assert onp.signbit(got[2])                    # -0.5 -> -0.0
    onp.testing.assert_array_equal(np.rint(np.array([3, -4], dtype="int32")).asnumpy(),
                                   [3, -4])


@pytest.mark.parametrize("name", ["fmax", "fmin", "maximum", "minimum"])
def test_nan_handling_of_max_min(name):
    a = onp.array([1.0, onp.nan, onp.nan, 3.0], dtype="float32")
    b = onp.array([onp.nan, 2.0, onp.nan, 0.5], dtype="float32")
    got = getattr(np, name)(np.array(a), np.array(b))
    onp.testing.assert_array_equal(got.asnumpy(), getattr(onp, name)(a, b))
    got = getattr(np, name)(np.array(a), 2.0)
    onp.testing.assert_array_equal(got.asnumpy(), getattr(onp, name)(a, onp.float32(2.0)))


def test_bitwise_operators_of_booleans():
    a, b = onp.array([True, True, False]), onp.array([True, False, False])
    x, y = np.array(a), np.array(b)
    for got, want in [(x & y, a & b), (x | y, a | b), (x ^ y, a ^ b), (~x, ~a)]:
        assert got.dtype == onp.bool_
        onp.testing.assert_array_equal(got.asnumpy(), want)
    i = np.array([1, 2], dtype="int32")
    if not hasattr(np, "bitwise_and"):            # never a silent logical result
        with pytest.raises(mx.base.MXNetError):
            i & i
    else:
        onp.testing.assert_array_equal((i & np.array([3, 3], dtype="int32")).asnumpy(),
                                       [1, 2])
