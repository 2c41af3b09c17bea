"""Pure shape arithmetic shared by operators and NDArray methods (no kernels here)."""
import os

import numpy as np

from ..base import op_error

__all__ = ["same_input_shapes", "broadcast_shapes", "normalize_axis", "normalize_axes", "infer_reshape",
           "infer_npx_reshape", "size_of",
           "check_shape", "check_alloc", "shape_entries", "memory_limit"]

MAX_SIZE = 2 ** 62   # keeps size * itemsize inside int64
MAX_BYTES = 2 ** 63 - 1


def size_of(shape):
    """Number of elements of ``shape``."""
    n = 1
    for d in shape:
        n *= d
    return n


def shape_entries(op, shape, arg="shape"):
    """``shape`` as a tuple of Python ints; MXNetError unless every entry is an integer.

    An int is taken as a 1-d shape. Entries may be Python or NumPy integers or floats with an
    integral value (``2.0``); strings, bools, fractions, None and nested sequences are refused.
    """
    if type(shape) is tuple and all(type(d) is int for d in shape):
        return shape            # the common case, already canonical
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        return (int(shape),)
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise op_error(op, f"{arg} must be a tuple of integers, got {shape!r}")
    out = []
    for d in shape:
        if isinstance(d, (bool, np.bool_)):
            bad = True
        elif isinstance(d, (int, np.integer)):
            bad = False
        elif isinstance(d, (float, np.floating)) and float(d).is_integer():
            d, bad = int(d), False
        else:
            bad = True
        if bad:
            raise op_error(op, f"{arg} must be a tuple of integers, got {tuple(shape)!r} "
                           f"(entry {d!r} is not an integer)")
        out.append(int(d))
    return tuple(out)


def same_input_shapes(op, shapes):
    """The one shape every input of ``op`` has; an MXNetError naming the first input that
    differs (or that there is no input)."""
    if not shapes:
        raise op_error(op, "needs at least one input")
    first = tuple(shapes[0])
    for i, s in enumerate(shapes):
        if tuple(s) != first:
            raise op_error(op, f"all inputs must have the same shape; input 0 has shape "
                           f"{first} and input {i} has shape {tuple(s)}")
    return first


def check_shape(op, shape, arg="shape"):
    """Reject non-integer entries, negative dimensions and sizes that overflow int64; return
    ``shape`` as a tuple of ints."""
    shape = shape_entries(op, shape, arg)
    for d in shape:
        if d < 0:
            raise op_error(op, f"{arg} {shape} has a negative dimension")
    if size_of(shape) > MAX_SIZE:
        raise op_error(op, f"{arg} {shape} has more elements than int64 indexing allows")
    return shape


_memory_limit = None


def memory_limit():
    """Bytes this machine can ever hold at once: physical memory plus swap (read once)."""
    global _memory_limit
    if _memory_limit is None:
        total = 0
        try:
            with open("/proc/meminfo") as f:
                for line in f:
                    key, _, rest = line.partition(":")
                    if key in ("MemTotal", "SwapTotal"):
                        total += int(rest.split()[0]) * 1024
        except (OSError, ValueError, IndexError):
            total = 0
        if total <= 0:
            try:
                total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            except (ValueError, OSError, AttributeError):
                total = MAX_BYTES
        _memory_limit = min(total, MAX_BYTES) if total > 0 else MAX_BYTES
    return _memory_limit


def check_alloc(op, shape, dtype, arg="output shape"):
    """Check that an output of ``shape`` and ``dtype`` can be allocated at all: its byte count
    must fit in int64 and in this machine's memory plus swap (a larger array can never be
    written in full: NumPy would raise MemoryError, or the process would be killed while
    filling it). Returns ``shape``."""
    shape = check_shape(op, shape, arg)
    nbytes = size_of(shape) * np.dtype(dtype).itemsize
    limit = memory_limit()
    if nbytes > limit:
        raise op_error(op, f"{arg} {shape} of {np.dtype(dtype)} needs {nbytes} bytes, more than "
                       f"this machine's memory and swap ({limit} bytes)")
    return shape


def broadcast_shapes(op, a, b):
    """NumPy broadcasting of two shapes; MXNetError naming both when they don't broadcast."""
    if a == b:
        return a
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise op_error(op, f"shapes {a} and {b} cannot be broadcast together")
    return tuple(out)


def infer_npx_reshape(op, src, newshape, reverse=False):
    """``npx.reshape``'s codes (not legacy reshape's): an entry >= 0 is that size; -1 is
    inferred from the size; -2 copies one input dimension; -3 drops an input dimension of
    size 1; -4 copies all remaining input dimensions; -5 multiplies two consecutive input
    dimensions; -6 splits one input dimension into the two entries that follow (one of them
    may be -1). Every entry but -4, -5 and -6's pair consumes one input dimension; one -1
    in all. ``reverse=True`` reads both shapes right to left."""
    given = src = tuple(src)
    codes = shape_entries(op, newshape, "newshape")
    if reverse:
        src, codes = src[::-1], codes[::-1]
    if codes.count(-1) > 1:
        raise op_error(op, f"newshape {newshape} has more than one -1")
    out, unknown, i, j = [], None, 0, 0

    def take(n, code):
        if i + n > len(src):
            raise op_error(op, f"code {code} in newshape {newshape} has no input dimension "
                           f"left in {given}")
        return src[i:i + n]
    while j < len(codes):
        c = codes[j]
        if c >= 0 or c == -2:
            out.append(c if c >= 0 else take(1, c)[0])
            i += 1
        elif c == -1:
            unknown = len(out)
            out.append(1)
            i += 1
        elif c == -3:
            if take(1, c)[0] != 1:
                raise op_error(op, f"code -3 in newshape {newshape} drops only a dimension "
                               f"of size 1, got {src[i]}")
            i += 1
        elif c == -4:
            out.extend(src[i:])
            i = len(src)
        elif c == -5:
            a, b = take(2, c)
            out.append(a * b)
            i += 2
        elif c == -6:
            if j + 2 >= len(codes):
                raise op_error(op, f"code -6 in newshape {newshape} needs the two sizes "
                               "that follow it")
            d = take(1, c)[0]
            pair = [codes[j + 1], codes[j + 2]]
            if min(pair) < -1 or pair == [-1, -1]:
                raise op_error(op, f"code -6 in newshape {newshape}: bad split {tuple(pair)}")
            if -1 in pair:
                k = pair.index(-1)
                other = pair[1 - k]
                pair[k] = d // other if other > 0 and d % other == 0 else -1
            if -1 in pair or pair[0] * pair[1] != d:
                raise op_error(op, f"code -6 in newshape {newshape} cannot split {d} into "
                               f"({codes[j + 1]}, {codes[j + 2]})")
            out += pair
            i += 1
            j += 2
        else:
            raise op_error(op, f"invalid value {c} in newshape {newshape} (codes go down "
                           "to -6)")
        j += 1
    return _resolved(op, out, unknown, given, newshape, reverse)


def _resolved(op, out, unknown, src, target, reverse):
    """The reshape result ``out`` (a list) with its one inferred entry ``unknown`` (an index
    or None) filled from the size of ``src``, checked, in the caller's order (``reverse``:
    built right to left). MXNetError naming ``op`` when the sizes cannot match."""
    total = size_of(src)
    if unknown is not None:
        known = size_of(out)
        if known == 0 or total % known:
            raise op_error(op, f"cannot reshape an array of shape {tuple(src)} into {target}")
        out[unknown] = total // known
    if size_of(out) != total:
        raise op_error(op, f"cannot reshape an array of shape {tuple(src)} (size {total}) "
                       f"into {target} (size {size_of(out)})")
    return tuple(out[::-1]) if reverse else tuple(out)


def normalize_axis(op, axis, ndim, arg="axis"):
    """Map a possibly negative ``axis`` into ``[0, ndim)``; MXNetError if out of range."""
    if not -ndim <= axis < ndim:
        raise op_error(op, f"{arg}={axis} is out of range for an array of {ndim} dimension(s)")
    return axis + ndim if axis < 0 else axis


def normalize_axes(op, axes, ndim, arg="axis"):
    """Normalize a tuple of axes (None means all); reject repeats."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, int):
        axes = (axes,)
    out = tuple(normalize_axis(op, a, ndim, arg) for a in axes)
    if len(set(out)) != len(out):
        raise op_error(op, f"{arg}={axes} repeats an axis")
    return out


def infer_reshape(op, src, target, reverse=False):
    """MXNet reshape codes: 0 copy a dim, -1 infer, -2 copy the rest, -3 merge two, -4 split one.

    ``reverse=True`` applies the codes right to left, as MXNet does.
    """
    src, target = tuple(src), shape_entries(op, target)
    if reverse:
        src, target = src[::-1], _reverse_codes(target)
    out, i, j, infer_at = [], 0, 0, None
    while j < len(target):
        t = target[j]
        if t > 0:
            out.append(t)
            i += 1
        elif t == 0:
            if i >= len(src):
                raise op_error(op, f"code 0 in shape {target} has no dimension to copy from {src}")
            out.append(src[i])
            i += 1
        elif t == -1:
            if infer_at is not None:
                raise op_error(op, f"shape {target} has more than one -1")
            infer_at = len(out)
            out.append(1)
            i += 1
        elif t == -2:
            out.extend(src[i:])
            i = len(src)
        elif t == -3:
            if i + 1 >= len(src):
                raise op_error(op, f"code -3 in shape {target} needs two dimensions of {src}")
            out.append(src[i] * src[i + 1])
            i += 2
        elif t == -4:
            if j + 2 >= len(target) or i >= len(src):
                raise op_error(op, f"code -4 in shape {target} needs two following values")
            d1, d2 = target[j + 1], target[j + 2]
            if d1 == -1 and d2 == -1 or d1 < -1 or d2 < -1:
                raise op_error(op, f"code -4 in shape {target}: bad split ({d1}, {d2})")
            if d1 == -1:
                d1 = src[i] // d2 if d2 else 0
            if d2 == -1:
                d2 = src[i] // d1 if d1 else 0
            if d1 * d2 != src[i]:
                raise op_error(op, f"code -4 cannot split {src[i]} into ({d1}, {d2})")
            out += [d1, d2]
            i += 1
            j += 2
        else:
            raise op_error(op, f"invalid value {t} in shape {target}")
        j += 1
    return _resolved(op, out, infer_at, src, target, reverse)


def infer_target_shape(op, src, target, keep_highest=False):
    """MXNet's pre-1.0 reshape: ``target_shape`` with at most one 0, the dimension inferred
    from the rest (a plain 0 here, not the ``shape`` code that copies a dimension);
    ``keep_highest=True`` replaces ``target_shape[0]`` by the input's first dimension.

    MXNet 1.9.1 leaves two or more 0s in place (only an empty input then matches), divides
    without checking the remainder, and divides by zero when ``keep_highest`` keeps a first
    dimension of 0; here a size that does not match, or that cannot be divided, is an error
    naming both shapes."""
    src, target = tuple(src), tuple(int(t) for t in target)
    if any(t < 0 for t in target):
        raise op_error(op, f"target_shape={target} holds a negative size; only one 0 (the "
                       "dimension to infer) is special")
    out = list(target)
    if keep_highest:
        if not out or not src:
            raise op_error(op, f"keep_highest=True needs a target_shape and an input with at "
                           f"least one axis, got target_shape={target} for input {src}")
        out[0] = src[0]
    zeros = [i for i in range(1 if keep_highest else 0, len(out)) if out[i] == 0]
    total = size_of(src)
    if len(zeros) == 1:
        known = size_of(out[:zeros[0]] + out[zeros[0] + 1:])
        if known == 0 or total % known:
            raise op_error(op, f"cannot infer the 0 of target_shape={target} (keep_highest="
                           f"{keep_highest}) for an input of shape {src} (size {total})")
        out[zeros[0]] = total // known
    if size_of(out) != total:
        raise op_error(op, f"cannot reshape array of shape {src} (size {total}) into "
                       f"target_shape={target} (keep_highest={keep_highest}): shape "
                       f"{tuple(out)} has size {size_of(out)}")
    return tuple(out)


def _reverse_codes(target):
    """Read reshape codes right to left, keeping each ``-4 a b`` group's operands after it."""
    groups, k = [], 0
    while k < len(target):
        width = 3 if target[k] == -4 else 1
        groups.append(tuple(target[k:k + width]))
        k += width
    out = []
    for g in reversed(groups):
        out.extend(g if g[0] != -4 else (-4, g[2], g[1]))
    return tuple(out)
