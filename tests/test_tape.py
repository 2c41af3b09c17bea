"""Everything that makes a value is on the tape, and in-place writes never corrupt a gradient.

Every indexing form, every in-place write form and every public ``NDArray`` method is
checked by finite differences (``check_grads``) or against a NumPy-computed gradient; a public
method with no row here fails ``test_every_public_method_is_covered`` by itself. Writes that
would invalidate a value the tape saved raise ``MXNetError`` (torch's rule), never a wrong
gradient.
"""
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import MXNetError, autograd
from mxlite.ndarray import NDArray
from mxlite.ops.registry import REGISTRY
from mxlite.test_utils import check_grads


def _x(shape, seed=0):
    rng = np.random.default_rng(seed)
    return mx.nd.array(rng.uniform(0.5, 1.5, size=shape), dtype="float64")


def _var(values):
    x = mx.nd.array(values, dtype="float64")
    x.attach_grad()
    return x


def _grad_of(f, values):
    """x.grad after ``f(x).backward()`` recorded from x = ``values``."""
    x = _var(values)
    with autograd.record():
        z = f(x)
    z.backward()
    return x.grad.asnumpy()


# ---- the cases named in the issue ------------------------------------------------------------
def test_slices_copies_and_writes_from_the_issue():
    np.testing.assert_array_equal(_grad_of(lambda x: (x[1:] * 5).sum(), [1, 2, 3]), [0, 5, 5])
    np.testing.assert_array_equal(_grad_of(lambda x: (x.copy() * 5).sum(), [1, 2, 3]), [5, 5, 5])

    def setitem(x):
        y = x * 2
        y[0] = 100
        return (y * x).sum()
    np.testing.assert_array_equal(_grad_of(setitem, [1, 2, 3]), [100, 8, 12])

    def plus_after_use(x):
        y = x * 1
        z = (y * y).sum()
        y += 10
        return z
    with pytest.raises(MXNetError, match=r"broadcast_mul.*modified in place"):
        _grad_of(plus_after_use, [1, 2, 3])


# ---- indexing forms --------------------------------------------------------------------------
_IDX = mx.nd.array([3, 0, 3, 1])         # float32 by default: integral values are accepted
GET_FORMS = {
    "first-axis slice": lambda x: x[1:],
    "stepped slice": lambda x: x[::2],
    "negative step": lambda x: x[::-1, 1:4:2],
    "int": lambda x: x[2],
    "negative int": lambda x: x[-1],
    "column": lambda x: x[:, 1],
    "int pair": lambda x: x[1, 2],
    "all ints": lambda x: x[1, 2, 0],
    "ellipsis": lambda x: x[..., 1],
    "newaxis": lambda x: x[None, 1:3, :, None],
    "tuple of slices": lambda x: x[1:3, ::-2, 1:],
    "NDArray index": lambda x: x[_IDX],
    "list index": lambda x: x[[0, 0, 2]],
    "NDArray index on an inner axis": lambda x: x[:, _IDX],
    "two index arrays": lambda x: x[np.array([0, 3, 0]), :, np.array([1, 1, 0])],
    "boolean mask": lambda x: x[np.array([True, False, True, True])],
    "iteration": lambda x: mx.nd.stack(*[row * k for k, row in enumerate(x)]),
}


@pytest.mark.parametrize("form", sorted(GET_FORMS))
def test_every_indexing_form_is_differentiable(form):
    get = GET_FORMS[form]
    check_grads(lambda x: get(x) * get(x), [_x((4, 5, 3))], order=2, name=form)


def test_indexing_results_follow_mxnet_shapes_and_views():
    x = mx.nd.array(np.arange(6.0))
    assert x[2].shape == (1,) and x[-1].asnumpy().tolist() == [5.0]
    x[2][:] = 40            # x[i] on 1-d is a view that writes through
    assert x.asnumpy()[2] == 40
    m = mx.nd.array(np.arange(12.0).reshape(3, 4))
    assert m[1, 2].shape == (1,) and m[1, 2].asscalar() == 6
    m[1][0] = -1            # a first-axis view
    assert m.asnumpy()[1, 0] == -1
    col = m[:, 1]           # any other key copies
    col[:] = 0
    assert m.asnumpy()[0, 1] == 1


# ---- in-place write forms --------------------------------------------------------------------
def _copyto(y, w):
    target = y * 0
    (y * w).copyto(target)
    return target


def _out(y, w):
    mx.nd.broadcast_add(y, w, out=y)
    return y


def _view_write(y, w):
    v = y[1:3]
    v[:] = w * 2                # through a view: y sees it, and so does its gradient
    return y


def _reshape_view_write(y, w):
    y.reshape((-1,))[2:5] = w[:3] - 1
    return y


def _setitem(key, value):
    def write(y, w):
        y[key] = value(w)
        return y
    return write


WRITE_FORMS = {
    "+=": lambda y, w: y.__iadd__(w),
    "-=": lambda y, w: y.__isub__(w.exp()),
    "*=": lambda y, w: y.__imul__(w),
    "/=": lambda y, w: y.__itruediv__(w + 2),
    "**=": lambda y, w: y.__ipow__(2),
    "%= (scalar)": lambda y, w: y.__imod__(7.5),
    "scalar +=": lambda y, w: y.__iadd__(3),
    "out=": _out,
    "copyto": _copyto,
    "setitem int": _setitem(0, lambda w: w[1]),
    "setitem scalar": _setitem(1, lambda w: 5.0),
    "setitem slice broadcast": _setitem(slice(1, 3), lambda w: w[0]),
    "setitem numpy": _setitem((slice(None), 0), lambda w: np.ones(4)),
    "setitem advanced": _setitem(np.array([3, 0]), lambda w: w * w),
    "setitem column": _setitem((slice(None), 2), lambda w: w),
    "write through a view": _view_write,
    "write through a reshape view": _reshape_view_write,
}


@pytest.mark.parametrize("form", sorted(WRITE_FORMS))
def test_every_in_place_write_form_is_recorded(form):
    write = WRITE_FORMS[form]

    def f(x, w):
        y = x * 1.5             # a recorded array (writes into variables are refused)
        y = write(y, w)
        return y * x

    check_grads(f, [_x((4, 4)), _x((4,), seed=1)], order=2, name=form)


def test_casts_are_recorded_in_both_directions():
    # float32 round trips: exact for these values, so the gradients are exact too
    g = _grad_of(lambda x: (x.astype("float32").astype("float64") * 3).sum(), [1.0, 2.0])
    np.testing.assert_array_equal(g, [3.0, 3.0])
    w = _var([0.5, 0.25])

    with autograd.record():
        y = mx.nd.zeros((3,), dtype="float32")
        y[1:] = w * 4           # a float64 value written into float32: a recorded cast
        z = (y * mx.nd.array([1, 2, 3])).sum()
    z.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [8.0, 12.0])
    pinned = mx.Context("cpu_pinned")
    g = _grad_of(lambda x: (x.as_in_context(pinned) * x.copyto(pinned)).sum(), [1.0, 2.0])
    np.testing.assert_array_equal(g, [2.0, 4.0])


def test_write_refreshes_views_taken_before_it():
    def f(x):
        y = x * 2
        v = y[0:2]              # taken before the write: it must see the new value
        y[0] = 100
        return (v * x[0:2]).sum()
    np.testing.assert_array_equal(_grad_of(f, [1, 2, 3]), [100, 8, 0])


# ---- writes that would corrupt a saved value --------------------------------------------------
def _saved_then(write):
    x = _var([1.0, 2.0, 3.0])
    with autograd.record():
        y = x * 1
        z = (y * y).sum()       # broadcast_mul saves y
        write(y)
    return z


CORRUPTING = {
    "+=": lambda y: y.__iadd__(1),
    "*=": lambda y: y.__imul__(2),
    "setitem": lambda y: y.__setitem__(0, 7),
    "out=": lambda y: mx.nd.exp(y, out=y),
    "copyto": lambda y: mx.nd.ones((3,), dtype="float64").copyto(y),
    "view write": lambda y: y[1:].__setitem__(slice(None), 0),
    "reshape view write": lambda y: y.reshape((3, 1)).__setitem__(0, 0),
}


@pytest.mark.parametrize("form", sorted(CORRUPTING))
def test_backward_refuses_a_saved_value_written_afterwards(form):
    z = _saved_then(CORRUPTING[form])
    with pytest.raises(MXNetError, match=r"'broadcast_mul' needs its input 'lhs' \(shape \(3,\)"):
        z.backward()


def test_writes_outside_record_are_caught_too():
    x = _var([1.0, 2.0])
    with autograd.record():
        z = (x * x).sum()
    x -= 0.1 * x.grad           # an optimizer-style update of the variable
    with pytest.raises(MXNetError, match="modified in place"):
        z.backward()
    with autograd.record():
        z = (x * x).sum()       # recomputed after the update: fine
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy())


def test_stale_history_is_refused_not_used():
    x = _var([1.0, 2.0])
    with autograd.record():
        y = x * 2
        with autograd.pause():
            y[0] = 0            # not recorded: y's history no longer describes y
        with pytest.raises(MXNetError, match="no longer describes its value"):
            y * x
        d = y.detach()
        with pytest.raises(MXNetError, match="detach"):
            d[1] = x[0]         # a recorded value into a detached alias


def test_writes_into_variables_are_refused_under_record():
    x = _var([1.0, 2.0, 3.0])
    for write in (lambda: x.__iadd__(1), lambda: x.__setitem__(0, 1.0),
                  lambda: x[1:].__setitem__(slice(None), 0), lambda: mx.nd.exp(x, out=x)):
        with autograd.record(), pytest.raises(MXNetError, match="variable"):
            write()
    np.testing.assert_array_equal(x.asnumpy(), [1, 2, 3])      # refused before writing
    with autograd.pause():
        x[0] = 5                # allowed: not recorded
    assert x.asnumpy()[0] == 5


def test_recorded_value_at_repeated_indices_is_refused():
    w = _var([1.0, 2.0])
    y = mx.nd.zeros((3,), dtype="float64")
    with autograd.record(), pytest.raises(MXNetError, match="repeats"):
        y[np.array([0, 0])] = w


def test_versions_count_every_in_place_write():
    x = mx.nd.zeros((2, 3))
    view, alias = x[1:], x.detach()
    steps = [lambda: x.__iadd__(1), lambda: x.__setitem__(0, 2), lambda: view.__imul__(2),
             lambda: mx.nd.exp(x, out=x), lambda: mx.nd.ones((2, 3)).copyto(x),
             lambda: alias.__isub__(1)]
    for i, step in enumerate(steps, 1):
        step()
        assert x.version == view.version == alias.version == i
    assert mx.nd.zeros((2,)).version == 0 and x.copy().version == 0


# ---- per-thread recording ---------------------------------------------------------------------
def test_recording_and_training_are_per_thread():
    seen = {}

    def other():
        seen["recording"], seen["training"] = autograd.is_recording(), autograd.is_training()
        a = _var([1.0])
        b = a * 2
        seen["taped"] = b._node is not None

    x = _var([1.0])
    with autograd.record():
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert autograd.is_recording() and autograd.is_training()
        y = x * 3
    y.backward()
    assert seen == {"recording": False, "training": False, "taped": False}
    assert x.grad.asnumpy().tolist() == [3.0]


# ---- every public NDArray method --------------------------------------------------------------
# Hand-written methods (not generated from an operator): each is checked by finite
# differences on a (3, 4) float64 input, or exempt with the reason.
METHODS = {
    "astype": lambda x: x.astype("float64", copy=True) * x.astype("float64", copy=False),
    "copy": lambda x: x.copy() * x,
    "tostype": lambda x: x.tostype("default") * x,
    "split_v2": lambda x: x.split_v2(2, axis=1)[0] * x.split_v2((1, 3), axis=1)[1],
    "copyto": lambda x: x.copyto(mx.cpu()) * x,
    "as_in_context": lambda x: x.as_in_context(mx.cpu()) * x,
    "reshape": lambda x: x.reshape((4, 3)) * x.reshape(4, -1),
    "T": lambda x: x.T * x.T,
    "flatten": lambda x: x.flatten() * x.flatten(inplace=True),
    "expand_dims": lambda x: x.expand_dims(1) * x.expand_dims(1, inplace=True),
    "squeeze": lambda x: (x.reshape(3, 1, 4).squeeze()
                          * x.reshape(3, 1, 4).squeeze(1, inplace=True)),
    "__getitem__": lambda x: x[1:, ::2] * x[1:, ::2],
    # the same buffer as an mx.np array and back (recorded identities)
    "as_np_ndarray": lambda x: (x.as_np_ndarray() * 2).as_nd_ndarray() * x,
    "as_nd_ndarray": lambda x: x.as_nd_ndarray() * x.as_np_ndarray().as_nd_ndarray(),
    "__setitem__": lambda x: WRITE_FORMS["setitem slice broadcast"](x * 1, x[0]) * x,
    "__iter__": lambda x: mx.nd.stack(*[r * r for r in x]),
    "__neg__": lambda x: -x * x,
    "__pos__": lambda x: +x * x,
    "__abs__": lambda x: abs(x) * x,
    **{f"__{op}__": (lambda op: lambda x: getattr(x, f"__{op}__")(x + 0.5) * x)(op)
       for op in ("add", "sub", "mul", "truediv", "div", "mod", "pow")},
    **{f"__r{op}__": (lambda op: lambda x: getattr(x, f"__r{op}__")(1.5) * x)(op)
       for op in ("add", "sub", "mul", "truediv", "div", "mod", "pow")},
    **{f"__i{op}__": (lambda op: lambda x: getattr(x * 1, f"__i{op}__")(x + 0.5) * x)(op)
       for op in ("add", "sub", "mul", "truediv", "div", "mod", "pow")},
}
EXEMPT = {
    "asnumpy": "returns NumPy data (leaves mxlite)",
    "to_dlpack_for_read": "returns a DLPack capsule (leaves mxlite)",
    "to_dlpack_for_write": "returns a DLPack capsule (leaves mxlite)",
    "asscalar": "returns a NumPy scalar",
    "attach_grad": "marks a variable", "backward": "runs the tape", "grad": "the gradient buffer",
    "detach": "cuts the graph by definition (tested below)",
    "wait_to_read": "synchronisation", "wait_to_write": "synchronisation",
    "shape": "metadata", "dtype": "metadata", "size": "metadata", "ndim": "metadata",
    "context": "metadata", "ctx": "metadata", "stype": "metadata", "version": "metadata",
    "writable": "metadata",
    "all_finite": "returns a Python bool", "has_nan": "returns a Python bool",
    "has_inf": "returns a Python bool",
    "isfinite": "a non-differentiable test (0/1)", "isinf": "a non-differentiable test (0/1)",
    "isnan": "a non-differentiable test (0/1)",
}
_DUNDERS = {"__getitem__", "__setitem__", "__iter__", "__neg__", "__pos__", "__abs__"} | {
    f"__{p}{op}__" for p in ("", "r", "i")
    for op in ("add", "sub", "mul", "truediv", "div", "mod", "pow")}


def _public_methods():
    return sorted(n for n in dir(NDArray) if not n.startswith("_") or n in _DUNDERS)


def _generated(name):
    fn = getattr(NDArray, name)
    return getattr(fn, "op", None) is not None and REGISTRY.get(fn.op.name) is fn.op


def test_every_public_method_is_covered():
    missing = [n for n in _public_methods()
               if n not in METHODS and n not in EXEMPT and not _generated(n)]
    assert not missing, f"public NDArray methods with no tape check and no exemption: {missing}"


def test_generated_methods_are_their_operators():
    # a generated method runs its registered op through invoke (recorded like mx.nd.X),
    # and the op's gradient is checked to order 3 by tests/test_gradients.py
    x = _var(np.arange(1.0, 5.0))
    with autograd.record():
        y = x.exp().sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp(np.arange(1.0, 5.0)))
    assert sum(map(_generated, _public_methods())) > 50


@pytest.mark.parametrize("name", sorted(METHODS))
def test_hand_written_method_gradient(name):
    check_grads(METHODS[name], [_x((3, 4))], order=2, name=name)


def test_detach_gives_no_gradient():
    np.testing.assert_array_equal(_grad_of(lambda x: (x.detach() * x).sum(), [1.0, 2.0]),
                                  [1.0, 2.0])


# ---- random differential tests against NumPy ------------------------------------------------
def _mx_shape(np_result):
    """MXNet 1.x: a key that indexes every axis with an integer gives shape (1,)."""
    return np_result.reshape(1) if np_result.ndim == 0 else np_result


@st.composite
def _array_and_key(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    if draw(st.booleans()):
        key = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    else:
        key = draw(hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(
            min_dims=1, max_dims=2, max_side=4)))
    return shape, key


@settings(max_examples=120)
@given(_array_and_key(), st.integers(0, 2**31))
def test_getitem_gradient_is_the_numpy_scatter(shape_key, seed):
    shape, key = shape_key
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    x = _var(data)
    with autograd.record():
        y = x[key]
    expected = _mx_shape(np.asarray(data[key]))
    np.testing.assert_array_equal(y.asnumpy(), expected)
    head = rng.standard_normal(y.shape)
    y.backward(mx.nd.array(head, dtype="float64"))
    scatter = np.zeros(shape)
    np.add.at(scatter, key, head.reshape(np.shape(data[key])))
    np.testing.assert_allclose(x.grad.asnumpy(), scatter, rtol=1e-12, atol=1e-12)


@settings(max_examples=120)
@given(_array_and_key(), st.integers(0, 2**31), st.booleans())
def test_setitem_gradient_matches_numpy(shape_key, seed, broadcast):
    shape, key = shape_key
    region = np.shape(np.zeros(shape)[key])
    if not isinstance(key, tuple) or any(isinstance(k, np.ndarray) for k in key):
        flat = np.zeros(shape, np.int64)
        np.add.at(flat, key, 1)
        if flat.max(initial=0) > 1:
            return              # repeated indices: refused (tested above)
    rng = np.random.default_rng(seed)
    vshape = region[1:] if broadcast and region else region
    x, v = _var(rng.standard_normal(shape)), _var(rng.standard_normal(vshape))
    with autograd.record():
        y = x * 2
        y[key] = v * 3
    expected = 2 * x.asnumpy()
    expected[key] = 3 * v.asnumpy()
    np.testing.assert_allclose(y.asnumpy(), expected)
    head = rng.standard_normal(shape)
    autograd.backward([y], [mx.nd.array(head, dtype="float64")])
    gx = 2 * head
    gx[key] = 0
    gv = 3 * np.broadcast_to(head[key], region)
    gv = gv.sum(axis=0) if vshape != region else gv
    np.testing.assert_allclose(x.grad.asnumpy(), gx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v.grad.asnumpy(), np.reshape(gv, vshape), rtol=1e-12, atol=1e-12)


@settings(max_examples=60)
@given(st.lists(st.sampled_from(sorted(WRITE_FORMS)), min_size=1, max_size=3),
       st.integers(0, 2**31))
def test_sequences_of_writes_match_finite_differences(forms, seed):
    def f(x, w):
        y = x * 1.5
        for form in forms:
            y = WRITE_FORMS[form](y, w)
        return y * x
    check_grads(f, [_x((4, 4), seed % 97), _x((4,), seed % 89 + 1)], order=1, seed=seed % 7,
                rtol=1e-4, name="+".join(forms))


# ---- random programs of views, writes and reads ------------------------------------------------
_STEPS = ("view", "reshape view", "write y", "write view", "add into view", "read view",
          "read y", "setitem y advanced", "copyto view")


def _run_program(steps, x, w):
    """Interpret ``steps`` on y = 1.5 x: views are taken, written and read in any order; the
    loss sums every read (weighted by x, so second uses of stale values would show)."""
    y = x * 1.5
    views, reads = [], []
    for k, step in enumerate(steps):
        v = views[k % len(views)] if views else None
        if step == "view":
            views.append(y[1 + k % 2:])
        elif step == "reshape view":
            views.append(y.reshape((-1,)))
        elif step == "write y":
            y[k % 3] = w[k % 4] * (k + 1)
        elif step == "setitem y advanced":
            y[np.array([2, 0])] = w * w
        elif step == "write view" and v is not None:
            v[0] = w[(k + 1) % 4] - k
        elif step == "add into view" and v is not None:
            v += w[k % 4]
        elif step == "copyto view" and v is not None:
            (v * w[0]).copyto(v)
        elif step == "read view" and v is not None:
            reads.append((v * v).sum())
        elif step == "read y":
            reads.append((y * x).sum())
    loss = (y * y).sum()
    for r in reads:
        loss = loss + r
    return loss


@settings(max_examples=80)
@given(st.lists(st.sampled_from(_STEPS), min_size=1, max_size=8))
def test_random_programs_of_views_and_writes(steps):
    """Either the gradient matches finite differences, or a stale/saved value is refused with
    an MXNetError: never a silently wrong gradient."""
    x, w = _x((3, 4)), _x((4,), seed=1)
    try:
        check_grads(lambda x, w: _run_program(steps, x, w), [x, w], order=1, rtol=1e-4,
                    name=" -> ".join(steps))
    except MXNetError as e:
        assert "modified in place" in str(e) or "no longer describes" in str(e), e


def test_gradients_from_outputs_keep_the_output_not_the_input():
    # exp's gradient is built from its output y = exp(x): the tape keeps y, so writing into
    # the input afterwards is harmless and writing into y is refused
    x = _var([0.5, 1.0])
    with autograd.record():
        h = x * 1
        y = mx.nd.exp(h)
        z = y.sum()
        h += 100            # h is not needed by exp's gradient
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp([0.5, 1.0]))
    with autograd.record():
        y = mx.nd.exp(x)
        z = y.sum()
        y += 1
    with pytest.raises(MXNetError, match="'exp' needs its output 0"):
        z.backward()
