"""``mx.nd.contrib.foreach``, ``while_loop`` and ``cond``: MXNet's control-flow front ends,
run imperatively. Each step is ordinary recorded operators, so ``autograd`` differentiates
through a loop or a branch to any order.

Inputs and outputs may be an NDArray or nested lists/tuples of NDArrays; outputs come back
in the structure the user function returned.
"""
from ..base import MXNetError
from .._nested import flatten, regroup as _regroup
from .ndarray import NDArray

__all__ = ["foreach", "while_loop", "cond"]


def _flatten(value, what):
    return flatten(value, what, NDArray)


def _stack(parts, what, pad_to=None):
    """``parts`` (one NDArray per step) stacked on a new axis 0; ``pad_to`` steps with zero
    rows after them (while_loop's unused iterations)."""
    from . import concat, expand_dims, zeros
    first = parts[0]
    for step, p in enumerate(parts):
        if p.shape != first.shape or p.dtype != first.dtype:
            raise MXNetError(f"{what}: step {step} gave shape {p.shape} ({p.dtype}), step 0 "
                             f"gave {first.shape} ({first.dtype}); every step must give one "
                             "shape and dtype")
    rows = [expand_dims(p, axis=0) for p in parts]
    if pad_to is not None and pad_to > len(parts):
        rows.append(zeros((pad_to - len(parts),) + first.shape, ctx=first.context,
                          dtype=first.dtype))
    return rows[0] if len(rows) == 1 else concat(*rows, dim=0)


def foreach(body, data, init_states):
    """Run ``body`` over axis 0 of ``data``: for each ``i``,
    ``out_i, states = body(data[i], states)`` (with a list of arrays, ``[d[i] for d in
    data]``), starting from ``init_states``.

    Returns ``(outputs, states)``: each output stacked over the steps (axis 0), in the
    structure ``body`` returned, and the final states. Every array of ``data`` must have the
    same length; a loop of 0 steps returns ``([], init_states)``.

    >>> step = lambda x, s: (x + s[0], [s[0] * 2])
    >>> outs, states = mx.nd.contrib.foreach(step, mx.nd.array([[1.0], [2.0]]), [mx.nd.ones(1)])
    >>> outs.asnumpy().ravel().tolist(), states[0].asnumpy().tolist()
    ([2.0, 4.0], [4.0])
    """
    flat_data, _ = _flatten(data, "foreach: data")
    _flatten(init_states, "foreach: init_states")
    if not flat_data or any(d.ndim == 0 for d in flat_data):
        raise MXNetError("foreach: data must hold at least one array of at least one "
                         "dimension (the loop runs over axis 0)")
    steps = flat_data[0].shape[0]
    lengths = {d.shape[0] for d in flat_data}
    if len(lengths) != 1:
        raise MXNetError(f"foreach: every data array must have the same length on axis 0, "
                         f"got {sorted(lengths)}")
    single = isinstance(data, NDArray)
    states, per_step, structure = init_states, [], None
    for i in range(steps):
        item = data[i] if single else [d[i] for d in data]
        outs, states = body(item, states)
        flat, structure = _flatten(outs, "foreach: body's outputs")
        if per_step and len(flat) != len(per_step[0]):
            raise MXNetError(f"foreach: body gave {len(flat)} outputs at step {i}, "
                             f"{len(per_step[0])} at step 0")
        per_step.append(flat)
    if not per_step:
        return [], states
    stacked = [_stack(list(parts), "foreach") for parts in zip(*per_step)]
    return _regroup(stacked, structure), states


def _as_bool(value, what):
    if isinstance(value, NDArray):
        if value.size != 1:
            raise MXNetError(f"{what} must be a scalar (one element), got shape {value.shape}")
        value = value.asscalar()
    return bool(value)


def while_loop(cond, func, loop_vars, max_iterations=None):
    """Run ``step_output, loop_vars = func(*loop_vars)`` while ``cond(*loop_vars)`` is true,
    at most ``max_iterations`` times.

    Returns ``(outputs, loop_vars)``: each step output stacked over the steps on axis 0 and
    padded to ``max_iterations`` rows (the rows after the last step are zeros: MXNet left
    them undefined), and the final loop variables (an NDArray when ``loop_vars`` was one).
    ``func`` may return ``None`` or ``[]`` as its step output; it must return as many loop
    variables as it got. When ``cond`` is false at once the outputs are ``[]``.

    >>> cond = lambda i, s: i <= 5
    >>> func = lambda i, s: ([i + s], [i + 1, s + i])
    >>> outs, (i, s) = mx.nd.contrib.while_loop(
    ...     cond, func, [mx.nd.array([0]), mx.nd.array([1])], max_iterations=10)
    >>> outs[0].shape, outs[0][:6].asnumpy().ravel().tolist(), float(s.asscalar())
    ((10, 1), [1.0, 2.0, 4.0, 7.0, 11.0, 16.0], 16.0)
    """
    if max_iterations is None:
        raise MXNetError("while_loop: max_iterations must be given")
    max_iterations = int(max_iterations.asscalar() if isinstance(max_iterations, NDArray)
                         else max_iterations)
    if max_iterations < 0:
        raise MXNetError(f"while_loop: max_iterations must be >= 0, got {max_iterations}")
    single = isinstance(loop_vars, NDArray)
    loop_vars = [loop_vars] if single else list(loop_vars)
    if not loop_vars:
        raise MXNetError("while_loop: loop_vars must hold at least one array")
    _flatten(loop_vars, "while_loop: loop_vars")
    per_step, structure = [], None
    while (len(per_step) < max_iterations
           and _as_bool(cond(*loop_vars), "while_loop: the value of cond")):
        step_output, new_vars = func(*loop_vars)
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars or [])
        if len(new_vars) != len(loop_vars):
            raise MXNetError(f"while_loop: func returned {len(new_vars)} loop variables for "
                             f"{len(loop_vars)}")
        flat, structure = _flatten(step_output if step_output is not None else [],
                                   "while_loop: func's step output")
        if per_step and len(flat) != len(per_step[0]):
            raise MXNetError(f"while_loop: func gave {len(flat)} step outputs at step "
                             f"{len(per_step)}, {len(per_step[0])} at step 0")
        per_step.append(flat)
        loop_vars = new_vars
    stacked = [_stack(list(parts), "while_loop", pad_to=max_iterations)
               for parts in zip(*per_step)]
    outputs = _regroup(stacked, structure) if per_step else []
    return outputs, (loop_vars[0] if single else loop_vars)


def cond(pred, then_func, else_func):
    """``then_func()`` if the one-element ``pred`` is non-zero, else ``else_func()``.

    >>> x = mx.nd.array([3.0])
    >>> float(mx.nd.contrib.cond(x > 2, lambda: x * 2, lambda: x - 2).asscalar())
    6.0
    """
    return then_func() if _as_bool(pred, "cond: pred") else else_func()
