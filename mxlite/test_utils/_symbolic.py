"""Checks of symbols through bound executors (MXNet's ``check_symbolic_*`` family)."""
import json
import time
import traceback

import numpy as np

from .. import ndarray as nd
from ..base import MXNetError
from ..ndarray import NDArray, array
from ..symbol import Symbol, Variable
from ._compare import assert_almost_equal, default_numeric_eps, get_tolerance, get_tols
from ._context import default_context, default_dtype

_FLOATS = (np.float16, np.float32, np.float64)
_GRAD_REQS = ("write", "add", "null")


def _check_dtype(where, dtype, allow_asnumpy=True):
    if (allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy") or \
            (not isinstance(dtype, str) and np.dtype(dtype) in [np.dtype(t) for t in _FLOATS]):
        return
    raise MXNetError(f"{where}: dtype must be float16, float32 or float64"
                     f"{' or asnumpy' if allow_asnumpy else ''}, got {dtype!r}")


def _to_nd(value, ctx, dtype):
    """A NumPy value as an NDArray on ``ctx`` (of its own dtype for 'asnumpy'); NDArrays as is."""
    if isinstance(value, NDArray):
        return value
    value = np.asarray(value)
    return array(value, ctx=ctx, dtype=value.dtype if _is_asnumpy(dtype) else dtype)


def _stored(arr, stype):
    """``arr`` in storage ``stype`` (None or 'default': as it is): a gradient buffer of the
    storage type a test asks for."""
    return arr if stype in (None, "default") else arr.tostype(stype)


def _is_asnumpy(dtype):
    return isinstance(dtype, str) and dtype == "asnumpy"


def _by_name(where, what, names, values):
    """``values`` (a list in ``names`` order or a dict by name) as a dict; a dict must name
    exactly ``names``, a list must have one entry per name."""
    if isinstance(values, dict):
        if set(values) != set(names):
            raise MXNetError(f"{where}: the {what} names {sorted(values)} do not match the "
                             f"symbol's {sorted(names)}")
        return dict(values)
    if isinstance(values, (list, tuple)):
        if len(values) != len(names):
            raise MXNetError(f"{where}: {len(values)} {what} given for the symbol's "
                             f"{len(names)} {names}")
        return dict(zip(names, values))
    raise MXNetError(f"{where}: {what} must be a list or a dict, got {type(values).__name__}")


def _parse_location(sym, location, ctx, dtype=default_dtype(), where="check"):
    """The argument values as ``{name: NDArray}`` in ``sym.list_arguments()`` order."""
    values = _by_name(where, "location", sym.list_arguments(), location)
    return {k: _to_nd(values[k], ctx, dtype) for k in sym.list_arguments()}


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype(), where="check"):
    """The auxiliary states as ``{name: NDArray}``, or None when not given."""
    if aux_states is None:
        return None
    values = _by_name(where, "aux_states", sym.list_auxiliary_states(), aux_states)
    return {k: _to_nd(v, ctx, dtype) for k, v in values.items()}


def _grad_reqs(where, grad_req, names):
    """``grad_req`` (a str, a list in ``names`` order or a dict) as ``{name: req}``."""
    if isinstance(grad_req, str):
        reqs = {k: grad_req for k in names}
    elif isinstance(grad_req, (list, tuple)):
        reqs = _by_name(where, "grad_req", names, grad_req)
    elif isinstance(grad_req, dict):
        reqs = dict(grad_req)
    else:
        raise MXNetError(f"{where}: grad_req must be a str, list or dict, got {grad_req!r}")
    bad = {k: v for k, v in reqs.items() if v not in _GRAD_REQS}
    if bad:
        raise MXNetError(f"{where}: grad_req must be 'write', 'add' or 'null', got {bad}")
    return reqs


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Run ``sym`` once on NumPy ``inputs`` (by argument name); NumPy output(s) back."""
    ctx = ctx or default_context()
    exe = sym.bind(ctx, args={k: array(v, ctx=ctx) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [o.asnumpy() for o in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def _compare_grad(name, req, got, expected, initial, rtol, atol, labels, equal_nan=False):
    """Check one argument's gradient buffer after backward for its ``req``: 'write' holds
    ``expected``, 'add' holds ``initial + expected``, 'null' still holds ``initial``."""
    got = got.asnumpy() if isinstance(got, NDArray) else got
    if req == "write":
        assert_almost_equal(expected, got, rtol, atol, labels, equal_nan=equal_nan)
    elif req == "add":
        assert_almost_equal(expected, got - initial, rtol, atol, labels, equal_nan=equal_nan)
    else:
        assert_almost_equal(initial, got, rtol, atol, labels, equal_nan=equal_nan)


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Bind ``sym`` at ``location`` (arrays per ``sym.list_arguments()``, a list or a dict),
    run forward (inference mode) and compare the outputs with ``expected`` (a list in output
    order, possibly only the first outputs, or a dict by ``sym.list_outputs()`` name).

    Inputs are made in ``dtype`` (or their own dtype with ``dtype='asnumpy'``). Returns the
    outputs (NDArrays).
    """
    where = "check_symbolic_forward"
    _check_dtype(where, dtype)
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype, where)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype, where)
    names = sym.list_outputs()
    if isinstance(expected, dict):
        if set(expected) != set(names):
            raise MXNetError(f"{where}: the expected names {sorted(expected)} are not the "
                             f"symbol's outputs {names}")
        expected = [expected[k] for k in names]
    if len(expected) > len(names):
        raise MXNetError(f"{where}: {len(expected)} expected values for the symbol's "
                         f"{len(names)} outputs {names}")
    exe = sym.bind(ctx, args=location, aux_states=aux_states, grad_req="null")
    exe.forward(is_train=False)
    for name, want, got in zip(names, expected, exe.outputs):
        assert_almost_equal(want, got, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return exe.outputs


def _head_grads(where, out_grads, names, ctx, dtype):
    """``out_grads`` (None, a list in output order or a dict by name) as a list of NDArrays."""
    if out_grads is None:
        return None
    if isinstance(out_grads, dict):
        unknown = sorted(set(out_grads) - set(names))
        if unknown:
            raise MXNetError(f"{where}: out_grads names {unknown} are not outputs ({names})")
        out_grads = [out_grads[k] for k in names]
    if not isinstance(out_grads, (list, tuple)):
        raise MXNetError(f"{where}: out_grads must be None, a list or a dict, got "
                         f"{type(out_grads).__name__}")
    return [_to_nd(g, ctx, dtype) for g in out_grads]


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Bind ``sym``, run forward (training) and backward with head gradients ``out_grads``,
    and compare the argument gradients with ``expected`` (a list per argument or a dict).

    The gradient buffers start with random values, so each ``grad_req`` is checked for what
    it must do: 'write' overwrites them, 'add' adds to them, 'null' leaves them alone.
    Returns the gradient buffers ``{name: NDArray}``.
    """
    where = "check_symbolic_backward"
    _check_dtype(where, dtype)
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype, where)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype, where)
    if isinstance(expected, (list, tuple)):
        if len(expected) > len(sym.list_arguments()):
            raise MXNetError(f"{where}: {len(expected)} expected gradients for the symbol's "
                             f"{len(sym.list_arguments())} arguments {sym.list_arguments()}")
        expected = dict(zip(sym.list_arguments(), expected))
    unknown = sorted(set(expected) - set(sym.list_arguments()))
    if unknown:
        raise MXNetError(f"{where}: expected gradients for {unknown}, which are not arguments "
                         f"of the symbol ({sym.list_arguments()})")
    expected = {k: (v.asnumpy() if isinstance(v, NDArray) else np.asarray(v))
                for k, v in expected.items()}
    # dirty the buffers deterministically (sorted names), so a test's seed reproduces them
    initial = {k: np.random.normal(size=expected[k].shape) for k in sorted(expected)}
    grads = {k: _stored(array(v, ctx=ctx, dtype=expected[k].dtype if _is_asnumpy(dtype)
                              else dtype), (grad_stypes or {}).get(k))
             for k, v in initial.items()}
    reqs = _grad_reqs(where, grad_req, sym.list_arguments())
    exe = sym.bind(ctx, args=location, args_grad=grads, aux_states=aux_states,
                   grad_req={k: r for k, r in reqs.items() if k in grads})
    exe.forward(is_train=True)
    exe.backward(_head_grads(where, out_grads, sym.list_outputs(), ctx, dtype))
    for name in expected:
        _compare_grad(name, reqs.get(name, "null"), grads[name], expected[name],
                      initial[name].astype(grads[name].dtype), rtol, atol,
                      (f"EXPECTED_{name}", f"BACKWARD_{name}"), equal_nan)
    return grads


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype()):
    """Central differences of ``sum(executor.outputs[0])`` with respect to each floating
    argument in ``location`` (``{name: NumPy array}``): ``(f(x + eps/2) - f(x - eps/2)) / eps``
    per element, as ``dtype`` arrays (zeros for integer arguments). ``aux_states`` are
    restored before every forward, so layers that update them in training (BatchNorm) see
    the same state each time."""
    _check_dtype("numeric_grad", dtype, allow_asnumpy=False)
    # each value keeps its own dtype: integer inputs (indices) are not differentiated
    location = {k: np.array(v, order="C") for k, v in location.items()}

    def total():
        for key, val in (aux_states or {}).items():
            executor.aux_dict[key][()] = val
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy().astype(np.float64).sum()

    for k, v in location.items():
        executor.arg_dict[k][()] = v
    grads = {}
    for k, v in location.items():
        grads[k] = np.zeros(v.shape, dtype=dtype)
        if v.dtype.kind != "f":
            continue
        flat = v.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps / 2.0
            executor.arg_dict[k][()] = v
            plus = total()
            flat[i] = old - eps / 2.0
            executor.arg_dict[k][()] = v
            minus = total()
            flat[i] = old
            grads[k].reshape(-1)[i] = (plus - minus) / eps
        executor.arg_dict[k][()] = v
    return grads


def _grad_nodes(where, grad_nodes, names):
    """``grad_nodes`` (None: every argument; a list of names; a dict name -> req) as a dict."""
    if grad_nodes is None:
        return {k: "write" for k in names}
    if isinstance(grad_nodes, (list, tuple)):
        reqs = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        reqs = dict(grad_nodes)
    else:
        raise MXNetError(f"{where}: grad_nodes must be None, a list or a dict, got "
                         f"{grad_nodes!r}")
    unknown = sorted(set(reqs) - set(names))
    if unknown:
        raise MXNetError(f"{where}: grad_nodes {unknown} are not arguments of the symbol "
                         f"({names})")
    return _grad_reqs(where, reqs, names)


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Check ``sym``'s backward against finite differences at ``location``.

    The loss is ``sum(sym * P)`` for a random projection ``P`` (values in [0.1, 1.1), so no
    element's gradient is scaled to nothing). Each argument in ``grad_nodes`` (all by
    default; a dict gives each its grad_req) gets its executor gradient compared with
    ``numeric_grad``'s central differences (step ``numeric_eps``, by default
    ``default_numeric_eps()`` of the output dtype). Gradient buffers start random, so 'add'
    and 'null' are checked too. ``sym`` must have one output.
    """
    where = "check_numeric_gradient"
    _check_dtype(where, dtype, allow_asnumpy=False)
    ctx = ctx or default_context()
    if len(sym.list_outputs()) != 1:
        raise MXNetError(f"{where}: the symbol must have one output, it has "
                         f"{sym.list_outputs()}")
    location = _parse_location(sym, location, ctx, dtype, where)
    location_np = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype, where)
    aux_np = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    reqs = _grad_nodes(where, grad_nodes, sym.list_arguments())

    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    proj_name = "__random_proj"
    loss = sym * Variable(proj_name)
    args = dict(location)
    args[proj_name] = array(np.random.rand(*out_shapes[0]) + 0.1, ctx=ctx, dtype=dtype)
    initial = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in reqs}
    grads = {k: _stored(array(v, ctx=ctx, dtype=dtype), (grad_stype_dict or {}).get(k))
             for k, v in initial.items()}
    exe = loss.bind(ctx, args=args, args_grad=grads, grad_req=reqs, aux_states=aux_states)
    exe.forward(is_train=True)
    eps = get_tolerance(exe.outputs[0], numeric_eps, default_numeric_eps())
    if np.dtype(dtype) != np.float64 and eps < 1e-5:
        raise MXNetError(f"{where}: numeric_eps={eps} is too small for {np.dtype(dtype).name} "
                         "finite differences (use at least 1e-5, or dtype=np.float64)")
    # d(sum(sym * P)) = P * d(sym): the head gradient of the product is all ones
    exe.backward([nd.ones(exe.outputs[0].shape, ctx=ctx, dtype=exe.outputs[0].dtype)])
    numeric = numeric_grad(exe, {k: location_np[k] for k in location_np}, aux_np, eps=eps,
                           use_forward_train=use_forward_train, dtype=dtype)
    for name, req in reqs.items():
        _compare_grad(name, req, grads[name], numeric[name],
                      initial[name].astype(grads[name].dtype), rtol, atol,
                      (f"NUMERICAL_{name}", f"BACKWARD_{name}"))


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Seconds per run of ``sym``: forward + backward (``typ='whole'``) or forward only
    (``typ='forward'``), averaged over ``N`` runs after one warm-up. Without ``location``,
    shapes come from ``kwargs`` and values are random normal."""
    if typ not in ("whole", "forward"):
        raise MXNetError(f"check_speed: typ must be 'whole' or 'forward', got {typ!r}")
    ctx = ctx or default_context()
    grad_req = grad_req or "write"
    if location is None:
        exe = sym.simple_bind(ctx=ctx, grad_req=grad_req, **kwargs)
        location = {k: np.random.normal(size=a.shape) for k, a in exe.arg_dict.items()}
    elif isinstance(location, dict):
        exe = sym.simple_bind(ctx=ctx, grad_req=grad_req,
                              **{k: np.shape(v) for k, v in location.items()})
    else:
        raise MXNetError(f"check_speed: location must be None or a dict, got {location!r}")
    for name, value in location.items():
        exe.arg_dict[name][()] = np.asarray(value).astype(exe.arg_dict[name].dtype)

    def run():
        exe.forward(is_train=typ == "whole")
        if typ == "whole":
            exe.backward(out_grads=exe.outputs)
        nd.waitall()

    run()
    tic = time.time()
    for _ in range(N):
        run()
    return (time.time() - tic) / N


def _least_precise(dt1, dt2):
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


def _bind_all(syms, ctx_list, grad_req):
    output_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    exes = []
    for s, spec in zip(syms, ctx_list):
        if s.list_arguments() != arg_names or s.list_outputs() != output_names:
            raise MXNetError("check_consistency: the symbols differ in arguments or outputs")
        exes.append(s.simple_bind(grad_req=grad_req, **spec))
    return exes


def _fill_inputs(exes, arg_params, aux_params, scale, use_uniform, rand_type, grad_req):
    """Give every executor the same inputs (random where not given, in sorted name order so
    a seed reproduces them), zero auxiliary states, and zero gradients for 'add'."""
    for name in sorted(exes[0].arg_dict):
        if name not in arg_params:
            shape = exes[0].arg_dict[name].shape
            values = (np.random.uniform(-0.92 * scale, 0.92 * scale, size=shape)
                      if use_uniform else np.random.normal(size=shape, scale=scale))
            arg_params[name] = values.astype(rand_type)
    for name in exes[0].aux_dict:
        aux_params.setdefault(name, 0)
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            arr[()] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[()] = aux_params[name]
        if grad_req == "add":
            for arr in exe.grad_dict.values():
                if arr is not None:
                    arr[()] = 0


def _consistent(arr, gtarr, rtol, atol, equal_nan, raise_on_err, label):
    try:
        assert_almost_equal(arr, gtarr, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except AssertionError as e:
        print(label)
        traceback.print_exc()
        if raise_on_err:
            raise
        print(str(e))


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Check that ``sym`` (or one symbol per entry) gives the same outputs and gradients in
    each of ``ctx_list``'s settings (dicts of ``simple_bind`` keywords: ``ctx``, shapes,
    ``type_dict``). The most precise setting (or ``ground_truth``) is the reference;
    tolerances follow the less precise dtype. Returns the reference ``{name: NDArray}``.
    """
    if len(ctx_list) < 2:
        raise MXNetError("check_consistency: ctx_list needs at least two settings")
    syms = [sym] * len(ctx_list) if isinstance(sym, Symbol) else list(sym)
    if len(syms) != len(ctx_list):
        raise MXNetError(f"check_consistency: {len(syms)} symbols for {len(ctx_list)} settings")
    output_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    exes = _bind_all(syms, ctx_list, grad_req)
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    _fill_inputs(exes, arg_params, aux_params, scale, use_uniform, rand_type, grad_req)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exes]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))

    def reference():
        """The values compared against: ``ground_truth``, else the reference executor's
        current outputs and gradients (read after each pass: outputs are new arrays)."""
        if ground_truth is not None:
            return ground_truth
        ref = dict(exes[gt_idx].output_dict)
        if grad_req != "null":
            ref.update(exes[gt_idx].grad_dict)
        return ref

    for exe in exes:
        exe.forward(is_train=False)
    gt = reference()
    for i, exe in enumerate(exes):
        if i != gt_idx:
            for name, arr in zip(output_names, exe.outputs):
                _consistent(arr, gt[name], rtol, atol, equal_nan, raise_on_err,
                            f"Predict Err: ctx {i} vs ctx {gt_idx} at {name}")
    if grad_req == "null":
        return gt
    for exe in exes:
        exe.forward(is_train=True)
    # every executor backpropagates the first one's outputs, cast to the least precise dtype
    least = [o.dtype for o in exes[0].outputs]
    for exe in exes:
        least = [_least_precise(o.dtype, dt) for o, dt in zip(exe.outputs, least)]
    heads = [o.astype(dt).asnumpy() for o, dt in zip(exes[0].outputs, least)]
    for exe in exes:
        exe.backward([array(h, ctx=o.context, dtype=o.dtype) for h, o in zip(heads, exe.outputs)])
    gt = reference()
    for i, exe in enumerate(exes):
        if i != gt_idx:
            _check_train(exe, i, gt, gt_idx, dtypes, output_names + arg_names,
                         (rtol, atol, equal_nan, raise_on_err))
    return gt


def _check_train(exe, i, gt, gt_idx, dtypes, names, how):
    """Compare executor ``i``'s training outputs and gradients with the reference ``gt``;
    tolerances follow the less precise of each array's dtype and its setting's data dtype
    (a float32 gamma gradient of a float16 network is float16-accurate)."""
    rtol, atol, equal_nan, raise_on_err = how
    grads = exe.grad_dict
    values = list(exe.outputs) + [grads.get(n) for n in names[len(exe.outputs):]]
    for name, arr in zip(names, values):
        ref = gt.get(name)
        if ref is None or arr is None:
            if (ref is None) != (arr is None):
                raise AssertionError(f"check_consistency: {name} has a gradient in one "
                                     "setting only")
            continue
        rt, at = rtol, atol
        small = _least_precise(arr.dtype, dtypes[i])
        small_ref = _least_precise(ref.dtype, dtypes[gt_idx])
        if np.dtype(small) != np.dtype(arr.dtype) or np.dtype(small_ref) != np.dtype(ref.dtype):
            rt, at = get_tols(arr.astype(small), ref.astype(small_ref), rtol, atol)
        _consistent(arr, ref, rt, at, equal_nan, raise_on_err,
                    f"Train Err: ctx {i} vs ctx {gt_idx} at {name}")


def same_symbol_structure(sym1, sym2):
    """True when the two symbols' graphs have the same operators node by node."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return len(nodes1) == len(nodes2) and all(a["op"] == b["op"] for a, b in zip(nodes1, nodes2))
