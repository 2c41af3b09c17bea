"""``einsum``: Einstein summation over registered operators, so it is differentiable.

The subscripts are parsed into one label list per operand (``...`` becomes one label per
broadcast axis, aligned from the right; the implicit output is the broadcast axes then the
labels used once, in alphabetical order). Then:

1. each operand's repeated labels become a diagonal (the registered ``diag`` operator) and
   labels that no other operand and not the output name are summed out;
2. operands are contracted two at a time, left to right or, with ``optimize``, in the order
   of NumPy's ``einsum_path`` (computed from the shapes only). One contraction of A and B
   is a ``batch_dot``: labels of both that are still needed form the batch, labels of both
   that are not are contracted, the others are kept (``transpose`` and ``reshape`` arrange
   the axes; length-1 axes broadcast to their label's size first);
3. the last operand is summed and transposed into the output order.

Operands are promoted to one dtype first (``_dtypes.result_type``); integers stay integers.
Einsum needs the operands' shapes: it takes arrays, and Symbols while a hybridized block is
traced on arrays (when their shapes are known).
"""
import string

import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import result_type

__all__ = ["einsum"]

_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _error(msg):
    return op_error("einsum", msg)


def _sublist_text(sublist):
    """The subscripts text of an interleaved ``einsum(a, [0, 1], b, [1, 2], [0, 2])``
    sublist (ints 0-51 name letters, ``Ellipsis`` is ``...``)."""
    out = []
    for s in sublist:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, (int, _onp.integer)) and 0 <= int(s) < len(_LETTERS):
            out.append(_LETTERS[int(s)])
        else:
            raise _error(f"subscript {s!r} in a sublist is not an int in [0, 52) or Ellipsis")
    return "".join(out)


def _split_arguments(args):
    """``(subscripts text, operands)`` of either calling form."""
    if not args:
        raise _error("takes subscripts and at least one operand")
    if isinstance(args[0], str):
        return args[0], list(args[1:])
    n = len(args) // 2
    operands = list(args[0:2 * n:2])
    text = ",".join(_sublist_text(s) for s in args[1:2 * n:2])
    if len(args) % 2:
        text += "->" + _sublist_text(args[-1])
    return text, operands


def _parse_term(term, ndim, operand, n_ellipsis):
    """Labels of one input term: letters as themselves, broadcast axes as ints (the
    rightmost is -1)."""
    if term.count("...") > 1 or ("." in term.replace("...", "")):
        raise _error(f"subscripts {term!r} of operand {operand}: '...' must be written whole "
                     "and at most once")
    for ch in term.replace("...", ""):
        if ch not in _LETTERS:
            raise _error(f"subscripts {term!r} of operand {operand}: {ch!r} is not a letter")
    if "..." not in term:
        if len(term) != ndim:
            raise _error(f"operand {operand} has {ndim} axes but subscripts {term!r} name "
                         f"{len(term)}")
        return list(term), 0
    head, tail = term.split("...")
    extra = ndim - len(head) - len(tail)
    if extra < 0:
        raise _error(f"operand {operand} has {ndim} axes, fewer than the {len(head + tail)} "
                     f"labels of {term!r}")
    return list(head) + list(range(-extra, 0)) + list(tail), extra


def _parse(text, shapes):
    """``(input label lists, output label list)``."""
    text = text.replace(" ", "")
    if "->" in text:
        inputs, output = text.split("->", 1)
        if "->" in output:
            raise _error(f"subscripts {text!r} hold '->' more than once")
    else:
        inputs, output = text, None
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise _error(f"subscripts {text!r} name {len(terms)} operands, {len(shapes)} given")
    labels, n_ellipsis = [], 0
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        lab, extra = _parse_term(term, len(shape), i, n_ellipsis)
        labels.append(lab)
        n_ellipsis = max(n_ellipsis, extra)
    broadcast = list(range(-n_ellipsis, 0))
    if output is None:
        counts = {}
        for lab in labels:
            for c in lab:
                if isinstance(c, str):
                    counts[c] = counts.get(c, 0) + 1
        return labels, broadcast + sorted(c for c, n in counts.items() if n == 1)
    used = {c for lab in labels for c in lab}
    for ch in output.replace("...", ""):
        if ch not in _LETTERS:
            raise _error(f"output subscripts {output!r}: {ch!r} is not a letter")
        if ch not in used:
            raise _error(f"output subscript {ch!r} appears in no input")
        if output.replace("...", "").count(ch) > 1:
            raise _error(f"output subscript {ch!r} appears more than once")
    if "..." in output:
        if output.count("...") > 1:
            raise _error(f"output subscripts {output!r} hold '...' more than once")
        head, tail = output.split("...")
        return labels, list(head) + broadcast + list(tail)
    if n_ellipsis:
        raise _error("the operands have broadcast ('...') axes but the output names no '...'")
    return labels, list(output)


def _label_sizes(labels, shapes):
    """Each label's size (1 broadcasts against any size), or MXNetError."""
    sizes = {}
    for i, (lab, shape) in enumerate(zip(labels, shapes)):
        for c, d in zip(lab, shape):
            known = sizes.get(c, 1)
            if d != 1 and known != 1 and d != known:
                name = repr(c) if isinstance(c, str) else "'...'"
                raise _error(f"size of label {name} for operand {i} ({d}) does not match "
                             f"previous terms ({known})")
            if d != 1:
                sizes[c] = d
            else:
                sizes.setdefault(c, 1)
    return sizes


def _diagonals(x, lab):
    """``x`` with each repeated label reduced to its diagonal (appended last)."""
    while True:
        repeated = next((c for c in lab if lab.count(c) > 1), None)
        if repeated is None:
            return x, lab
        p = lab.index(repeated)
        q = lab.index(repeated, p + 1)
        shape = _shape(x)
        if shape[p] != shape[q]:
            raise _error(f"the axes of repeated label {repeated!r} have sizes {shape[p]} "
                         f"and {shape[q]}")
        x = _front.call("diag", [x], k=0, axis1=p, axis2=q)
        lab = [c for i, c in enumerate(lab) if i not in (p, q)] + [repeated]


def _sum_out(x, lab, keep):
    """``x`` summed over its labels not in ``keep``."""
    axes = tuple(i for i, c in enumerate(lab) if c not in keep)
    if not axes:
        return x, lab
    from ._reductions import sum as np_sum
    x = np_sum(x, axis=axes, dtype=x.dtype)
    return x, [c for c in lab if c in keep]


def _arrange(x, lab, order, sizes):
    """``x`` transposed to the labels ``order`` and broadcast to their sizes."""
    from ._manipulation import broadcast_to, transpose
    perm = tuple(lab.index(c) for c in order)
    if perm != tuple(range(len(perm))):
        x = transpose(x, perm)
    full = tuple(sizes[c] for c in order)
    if _shape(x) != full:
        x = broadcast_to(x, full)
    return x


def _size(sizes, labels):
    n = 1
    for c in labels:
        n *= sizes[c]
    return n


def _contract(a, la, b, lb, keep, sizes):
    """The contraction of ``a`` (labels ``la``) with ``b`` (``lb``), keeping ``keep``."""
    from ._manipulation import reshape
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    a_free = [c for c in la if c not in lb]
    b_free = [c for c in lb if c not in la]
    a = _arrange(a, la, batch + a_free + summed, sizes)
    b = _arrange(b, lb, batch + summed + b_free, sizes)
    nb, m, k, n = (_size(sizes, s) for s in (batch, a_free, summed, b_free))
    if 0 in (nb, m, k, n):
        return _contract_empty(a, b, batch, a_free, summed, b_free)
    if batch:
        y = _front.call("batch_dot", [reshape(a, (nb, m, k)), reshape(b, (nb, k, n))])
    else:
        y = _front.call("dot", [reshape(a, (m, k)), reshape(b, (k, n))])
    labels = batch + a_free + b_free
    return reshape(y, tuple(sizes[c] for c in labels)), labels


def _contract_empty(a, b, batch, a_free, summed, b_free):
    """The contraction where some size is 0, by broadcasting and summing (no reshape, so
    no size has to be written down): ``a`` is arranged as batch + a_free + summed, ``b`` as
    batch + summed + b_free."""
    from ._reductions import sum as np_sum
    for _ in b_free:
        a = _front.call("expand_dims", [a], axis=len(batch) + len(a_free) + len(summed))
    for _ in a_free:
        b = _front.call("expand_dims", [b], axis=len(batch))
    y = _front.call("broadcast_mul", [a, b])
    if summed:
        start = len(batch) + len(a_free)
        y = np_sum(y, axis=tuple(range(start, start + len(summed))), dtype=_front.dtype_of(y))
    return y, batch + a_free + b_free


def _path(optimize, labels, output, shapes, dtype):
    """The contraction steps: pairs of positions in the current operand list (the result
    goes last), NumPy's ``einsum_path`` order when ``optimize``."""
    explicit = isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path"
    if not (isinstance(optimize, (bool, _onp.bool_)) or optimize in ("greedy", "optimal") or
            explicit):
        raise _error(f"optimize={optimize!r} is not one of False, True, 'greedy', 'optimal' "
                     "or an einsum_path list")
    n = len(labels)
    if n < 2:
        return []
    if not optimize:
        return [(0, 1)] + [(0, n - 2 - i) for i in range(n - 2)]
    if explicit:
        return [tuple(step) for step in optimize[1:]]
    names = {}
    for c in [c for lab in labels for c in lab] + list(output):
        names.setdefault(c, _LETTERS[len(names)])
    expr = ",".join("".join(names[c] for c in lab) for lab in labels) + "->" + \
        "".join(names[c] for c in output)
    dummies = [_onp.broadcast_to(_onp.zeros((), dtype), s) for s in shapes]
    strategy = "greedy" if optimize is True else optimize
    try:
        path = _onp.einsum_path(expr, *dummies, optimize=strategy)[0]
    except (ValueError, TypeError, KeyError) as e:
        raise _error(f"optimize={optimize!r}: {e}") from None
    return [tuple(step) for step in path[1:]]


def _shape(x):
    """The shape of an array, or of a Symbol while a Gluon block is traced."""
    shape = _front.shape_of(x)
    if shape is None or any(d < 0 for d in shape):
        raise _error("needs the operands' shapes: it takes arrays, or Symbols inside a "
                     "hybridized block traced on arrays")
    return tuple(shape)


def _operands(operands):
    """The operands as arrays (or traced Symbols) of one promoted dtype, on the first
    operand's device."""
    from .multiarray import asarray
    items = [x if isinstance(x, NDArray) or _front.is_symbolic([x]) else asarray(x)
             for x in operands]
    if not items:
        raise _error("takes at least one operand")
    dtypes = [_front.dtype_of(x) for x in items]
    if any(d is None for d in dtypes):
        raise _error("needs the operands' dtypes: it takes arrays, or Symbols inside a "
                     "hybridized block traced on arrays")
    dt = dtypes[0]
    for d in dtypes[1:]:
        dt = result_type(dt, d)
    ctx = next((x._ctx for x in items if isinstance(x, NDArray)), None)
    out = []
    for x, d in zip(items, dtypes):
        if d != dt:
            x = _front.call("cast", [x], dtype=dt)
        if isinstance(x, NDArray) and x._ctx != ctx:
            x = x.as_in_context(ctx)
        out.append(x)
    return out, dt


def einsum(*operands, out=None, optimize=False, **kwargs):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` is ``a @ b``; repeated labels in
    one operand take diagonals (``'ii'`` is the trace), labels missing from the output are
    summed, ``...`` broadcasts. Also the interleaved form ``einsum(a, [0, 1], b, [1, 2],
    [0, 2])``. ``optimize`` (False, True, 'greedy', 'optimal' or an ``einsum_path`` list)
    orders the pairwise contractions. Differentiable (module docstring).

    >>> a = mx.np.array([[1., 2.], [3., 4.]])
    >>> mx.np.einsum('ij,jk->ik', a, a)
    array([[ 7., 10.],
           [15., 22.]])
    >>> mx.np.einsum('ii', a)
    array(5.)
    """
    for key in kwargs:
        if key not in ("dtype", "order", "casting"):
            raise TypeError(f"einsum() got an unexpected keyword argument {key!r}")
        if kwargs[key] not in (None, "K", "safe"):
            raise NotImplementedError(f"einsum: {key}={kwargs[key]!r} is not implemented")
    text, operands = _split_arguments(operands)
    arrays, dt = _operands(operands)
    shapes = [_shape(x) for x in arrays]
    labels, output = _parse(text, shapes)
    sizes = _label_sizes(labels, shapes)
    keep_out = set(output)
    items = []
    for i, x in enumerate(arrays):
        x, lab = _diagonals(x, list(labels[i]))
        others = {c for j, other in enumerate(labels) if j != i for c in other}
        items.append(_sum_out(x, lab, keep_out | others))
    for step in _path(optimize, [lab for _, lab in items], output,
                      [_shape(x) for x, _ in items], dt):
        chosen = [items[i] for i in step]
        items = [it for i, it in enumerate(items) if i not in step]
        rest = keep_out | {c for _, lab in items for c in lab}
        x, lab = chosen[0]
        for j, (y, ly) in enumerate(chosen[1:], 2):
            later = {c for _, l2 in chosen[j:] for c in l2}
            x, lab = _contract(x, lab, y, ly, rest | later, sizes)
        items.append((x, lab))
    x, lab = items[0]
    x, lab = _sum_out(x, lab, keep_out)
    y = _arrange(x, lab, output, sizes)
    if y is arrays[0] or y is operands[0]:
        y = _front.call("_copy", [y])
    return y if out is None else _front.call("_copy", [y], out=out)
