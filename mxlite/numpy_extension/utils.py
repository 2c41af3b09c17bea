"""``mx.npx.save`` / ``mx.npx.load``: np arrays in MXNet's binary NDArray file format.

A file holds a list of arrays or a dict str -> array, as ``mx.nd.save``'s
(``mxlite/ndarray/io.py``), written with NumPy-shape (V3) array records throughout, which
is what MXNet 1.9.1's ``npx.save`` writes: a 0-d array and zero-size dimensions keep their
meaning, and MXNet's ``npx.load`` reads the file back. ``load`` reads those files and every
other ``mx.nd.save`` file, returning np arrays.

MXNet allowed both only under ``npx.set_np()``; here they work in either mode (the records
do not depend on it).
"""
from ..base import MXNetError
from ..ndarray import io as _io
from ..numpy import _front

__all__ = ["save", "load"]


def save(file, arr):
    """Save ``arr`` (an array, a list of arrays or a dict str -> array) to the path
    ``file`` in MXNet's binary format with NumPy-shape records (0-d and zero-size arrays
    included); ``npx.load`` (mxlite's or MXNet 1.9.1's) reads it back.

    >>> import os, tempfile
    >>> from mxlite import np as mnp, npx
    >>> path = os.path.join(tempfile.mkdtemp(), 'arrays.params')
    >>> npx.save(path, {'w': mnp.array([[1.0, 2.0]]), 'step': mnp.array(3, dtype='int64')})
    >>> loaded = npx.load(path)
    >>> loaded['w'].tolist(), loaded['step'].item()
    ([[1.0, 2.0]], 3)
    """
    arrays, keys = _io._records(arr)
    for i, a in enumerate(arrays):
        if a.stype != "default":
            what = f"key {keys[i]!r}" if keys else f"item {i}"
            raise MXNetError(f"save: {what} is a {a.stype} array; np files hold dense arrays "
                             "(tostype('default') first)")
    _io.write(file, arrays, keys, np_shape=True)


def load(file):
    """The arrays of the file ``file`` (written by ``npx.save`` or ``mx.nd.save``, mxlite's
    or MXNet's) as np arrays: a list, or a dict str -> array when a dict was saved."""
    loaded = _io.load(file)
    if isinstance(loaded, dict):
        return {k: _front.as_np(v) for k, v in loaded.items()}
    return [_front.as_np(v) for v in loaded]
