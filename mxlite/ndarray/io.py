"""``mx.nd.save`` / ``mx.nd.load``: MXNet 1.x's binary NDArray-list format (``.params`` files).

The layout (MXNet's ``src/ndarray/ndarray.cc``, ``NDArray::Save``/``Load``), all integers
little-endian::

    uint64 0x112 (kMXAPINDArrayListMagic), uint64 0 (reserved)
    uint64 n, then n arrays:
        uint32 magic     0xF993fac9 (V2) | 0xF993faca (V3, NumPy shape semantics)
                         | 0xF993fac8 (V1) | anything else: a legacy file, the magic is ndim
        int32  stype     0 dense, 1 row_sparse, 2 csr                             [V2, V3]
        sparse: int32 ndim, int64 dims[ndim]: the storage shape (the stored values:
                (nnz,) for csr, (rows stored,) + shape[1:] for row_sparse)
        int32  ndim, int64 dims[ndim]        (legacy: uint32 dims[ndim], ndim = the magic)
        int32  dev_type (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared), int32 dev_id
        int32  type_flag (0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, 5 int8,
                          6 int64, 7 bool)
        sparse: per aux array (csr: indptr, indices; row_sparse: indices): int32 type_flag,
                int32 ndim, int64 dims[ndim]
        the elements, C order, little-endian (sparse: the stored values, then each aux array)
    uint64 k, then k keys: uint64 length, bytes (k is 0 for a list, n for a dict)

``save`` writes what MXNet 1.9.1 writes: V2 records, except that a file holding a 0-d or
zero-size array is written with V3 records throughout (MXNet's legacy V2 reads ndim 0 as
"no array" and a 0 dimension as "unknown", so MXNet itself cannot re-load such V2 records;
it loads the V3 file under ``mx.util.np_shape(True)``). ``load`` reads V1, V2, V3 and legacy
records; a V2 record with ndim 0 followed by data, which MXNet 1.9.1 writes for a 0-d
array but cannot load back, loads here as the 0-d array it holds.

Every length, count and shape in a file is checked against the bytes that remain before
anything is allocated, so a truncated or corrupt file raises MXNetError naming the file
and the problem rather than crashing or allocating a huge buffer. A sparse array passes
the full format check (``check_format``) as it loads: its indices are in range and sorted.
"""
import io
import os
import struct

import numpy as np

from ..base import TYPE_FLAGS, UNSUPPORTED_TYPE_FLAGS, MXNetError
from ..context import Context, num_gpus
from ..device import namespace_for
from .ndarray import NDArray

__all__ = ["save", "load", "load_frombuffer"]

LIST_MAGIC = 0x112
V1_MAGIC, V2_MAGIC, V3_MAGIC = 0xF993FAC8, 0xF993FAC9, 0xF993FACA

# mshadow type flags <-> dtypes mxlite holds
_FLAG_TO_DTYPE = {flag: name for name, flag in TYPE_FLAGS.items()}
_DTYPE_TO_FLAG = {np.dtype(v): k for k, v in _FLAG_TO_DTYPE.items()}
_UNSUPPORTED_FLAGS = UNSUPPORTED_TYPE_FLAGS
_STYPES = {1: "row_sparse", 2: "csr"}
_STYPE_CODES = {v: k for k, v in _STYPES.items()}

# MXNet's DeviceType numbers
_DEV_TYPE = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}


# ---- save -----------------------------------------------------------------------------------
def _records(data):
    """``(arrays, keys)`` from what ``save`` accepts, or MXNetError."""
    if isinstance(data, NDArray):
        return [data], []
    if isinstance(data, dict):
        keys, arrays = [], []
        for k, v in data.items():
            if not isinstance(k, str):
                raise MXNetError(f"save: dict keys must be str, got {k!r} of type "
                                 f"{type(k).__name__}")
            if not isinstance(v, NDArray):
                raise MXNetError(f"save: value for key {k!r} must be an NDArray, got "
                                 f"{type(v).__name__}")
            keys.append(k)
            arrays.append(v)
        return arrays, keys
    if isinstance(data, (list, tuple)):
        for i, v in enumerate(data):
            if not isinstance(v, NDArray):
                raise MXNetError(f"save: item {i} must be an NDArray, got {type(v).__name__}")
        return list(data), []
    raise MXNetError("save: data needs to either be an NDArray, a dict of str->NDArray or a "
                     f"list of NDArrays, got {type(data).__name__}")


def _encode(arrays, keys, np_shape=None):
    """The file's bytes as a list of chunks (the arrays' data as views, not copies); V3
    records when ``np_shape`` (None: only when some array is 0-d or zero-size)."""
    if np_shape is None:
        np_shape = any(a.ndim == 0 or 0 in a.shape for a in arrays)
    magic = V3_MAGIC if np_shape else V2_MAGIC
    out = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]
    for a in arrays:
        ctx = a.context
        if a._data is None:
            out += _sparse_record(a, magic)
            continue
        host = np.ascontiguousarray(namespace_for(a.context).to_host(a._data))  # no copy on CPU
        dt = host.dtype
        out.append(struct.pack(f"<Iii{a.ndim}q", magic, 0, a.ndim, *a.shape))
        out.append(struct.pack("<iii", _DEV_TYPE.get(ctx.device_type, 1), ctx.device_id,
                               _DTYPE_TO_FLAG[dt]))
        out.append(_little(host))
    out.append(struct.pack("<Q", len(keys)))
    for k in keys:
        b = k.encode("utf-8")
        out.append(struct.pack("<Q", len(b)))
        out.append(b)
    return out


def _little(host):
    return memoryview(np.ascontiguousarray(host).astype(host.dtype.newbyteorder("<"),
                                                        copy=False).reshape(-1).view(np.uint8))


def _shape_bytes(shape):
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _sparse_record(a, magic):
    """The chunks of sparse NDArray ``a``'s record (MXNet's layout, module docstring)."""
    from .sparse import _host_value
    sp, ctx = _host_value(a), a.context        # (the parts of a GPU array: host copies)
    out = [struct.pack("<Ii", magic, _STYPE_CODES[sp.stype]), _shape_bytes(sp.data.shape),
           _shape_bytes(sp.shape),
           struct.pack("<iii", _DEV_TYPE.get(ctx.device_type, 1), ctx.device_id,
                       _DTYPE_TO_FLAG[sp.data.dtype])]
    for aux in sp.aux:
        out += [struct.pack("<i", _DTYPE_TO_FLAG[aux.dtype]), _shape_bytes(aux.shape)]
    return out + [_little(sp.data)] + [_little(aux) for aux in sp.aux]


def _dumps(data):
    """The bytes ``save`` writes for ``data`` (mxlite's optimizer states files use them)."""
    return b"".join(_encode(*_records(data)))


def save(fname, data):
    """Save ``data`` (an NDArray, a list of NDArrays or a dict str->NDArray) to ``fname``
    in MXNet 1.x's binary format; ``mx.nd.load`` (mxlite's or MXNet's) reads it back.

    Keys of a dict keep their order. MXNet's ``save_checkpoint`` ``.params`` files are such
    dicts, keyed ``arg:<name>`` and ``aux:<name>``.
    """
    write(fname, *_records(data))


def write(fname, arrays, keys, np_shape=None):
    """Write ``arrays`` (with ``keys``, or [] for a list) to ``fname`` (``_encode``'s
    records); MXNetError when the file cannot be written."""
    chunks = _encode(arrays, keys, np_shape)
    try:
        with open(fname, "wb") as f:
            for c in chunks:
                f.write(c)
    except OSError as e:
        raise MXNetError(f"save: cannot write {os.fsdecode(fname)!r}: {e.strerror}") from None


# ---- load -----------------------------------------------------------------------------------
class _Reader:
    """Bounds-checked little-endian reads from the binary file ``f`` of ``size`` bytes;
    errors name ``source``. Array data is read straight into the new array."""

    __slots__ = ("f", "size", "pos", "source")

    def __init__(self, f, size, source):
        self.f, self.size, self.pos, self.source = f, size, 0, source

    def fail(self, what):
        return MXNetError(f"load: {self.source} is not a valid NDArray file: {what} "
                          f"(at byte {self.pos} of {self.size})")

    @property
    def remaining(self):
        return self.size - self.pos

    def check(self, n, what):
        if n < 0 or n > self.remaining:
            raise self.fail(f"truncated: {what} needs {n} bytes, {self.remaining} remain")

    def read(self, n, what):
        self.check(n, what)
        b = self.f.read(n)
        if len(b) != n:                             # the file shrank while being read
            raise self.fail(f"truncated: {what} needs {n} bytes, got {len(b)}")
        self.pos += n
        return b

    def read_into(self, arr, what):
        n = arr.nbytes
        self.check(n, what)
        if n and self.f.readinto(arr.reshape(-1).view(np.uint8)) != n:
            raise self.fail(f"truncated: {what} needs {n} bytes")
        self.pos += n

    def unpack(self, fmt, what):
        return struct.unpack(fmt, self.read(struct.calcsize(fmt), what))

    def count(self, what, min_item_bytes):
        """A uint64 element count, checked against what the remaining bytes can hold."""
        (n,) = self.unpack("<Q", what)
        if n * min_item_bytes > self.remaining:
            raise self.fail(f"{what} {n} exceeds what the remaining {self.remaining} bytes "
                            "can hold")
        return n


def _read_shape(r, magic):
    if magic in (V1_MAGIC, V2_MAGIC, V3_MAGIC):
        (ndim,) = r.unpack("<i", "ndim")
        if ndim == -1 and magic == V3_MAGIC:
            raise r.fail("an array of unknown shape (ndim -1, a 'none' NDArray)")
        if ndim < 0 or ndim * 8 > r.remaining:
            raise r.fail(f"bad ndim {ndim}")
        return r.unpack(f"<{ndim}q", "shape")
    ndim = magic                                   # legacy record: the magic is ndim
    if ndim * 4 > r.remaining:
        raise r.fail(f"bad array magic or legacy ndim 0x{magic:08x}")
    return r.unpack(f"<{ndim}I", "shape")


def _read_array(r):
    (magic,) = r.unpack("<I", "array magic")
    if magic in (V2_MAGIC, V3_MAGIC):
        (stype,) = r.unpack("<i", "storage type")
        if stype in _STYPES:
            return _read_sparse(r, magic, _STYPES[stype])
        if stype != 0:
            raise r.fail(f"unknown storage type {stype}")
    shape = _read_shape(r, magic)
    if any(d < 0 for d in shape):
        raise r.fail(f"an array of unknown shape {shape} (a 'none' NDArray)")
    if not shape and magic not in (V2_MAGIC, V3_MAGIC):
        # V1/legacy: ndim 0 is MXNet's "no array" record (nothing follows it)
        raise r.fail("an empty ('none') NDArray record; mxlite has no such array")
    dev_type, dev_id, flag = r.unpack("<iii", "context and type flag")
    if flag not in _FLAG_TO_DTYPE:
        name = _UNSUPPORTED_FLAGS.get(flag)
        raise r.fail(f"dtype {name} is not supported by mxlite" if name
                     else f"unknown type flag {flag}")
    dt = np.dtype(_FLAG_TO_DTYPE[flag])
    size = 1
    for d in shape:
        size *= d
    what = f"the data of a {dt.name} array of shape {shape}"
    r.check(size * dt.itemsize, what)               # before allocating anything
    try:
        host = np.empty(shape, dtype=dt.newbyteorder("<"))
    except ValueError as e:                         # a zero-size shape too big, or ndim > 64
        raise r.fail(f"shape {shape} cannot be held: {e}") from None
    r.read_into(host, what)
    host = host.astype(dt, copy=False)              # native byte order (a no-op on x86/ARM)
    ctx = Context("gpu", dev_id) if dev_type == 2 and 0 <= dev_id < num_gpus() else Context("cpu", 0)
    return NDArray._wrap(namespace_for(ctx).from_host(host), ctx)


def _dtype_of(r, flag, what):
    if flag not in _FLAG_TO_DTYPE:
        name = _UNSUPPORTED_FLAGS.get(flag)
        raise r.fail(f"{what}: dtype {name} is not supported by mxlite" if name
                     else f"{what}: unknown type flag {flag}")
    return np.dtype(_FLAG_TO_DTYPE[flag])


def _read_block(r, shape, dt, what):
    """A host array of ``shape`` and ``dt`` read from ``r`` (its size checked first)."""
    if any(d < 0 for d in shape):
        raise r.fail(f"{what}: negative dimension in {shape}")
    size = 1
    for d in shape:
        size *= d
    r.check(size * dt.itemsize, what)
    host = np.empty(shape, dtype=dt.newbyteorder("<"))
    r.read_into(host, what)
    return host.astype(dt, copy=False)


def _read_sparse(r, magic, stype):
    """The rest of a csr or row_sparse record (after its storage type)."""
    from ..ops.sparse import formats
    from .sparse import wrap
    storage = _read_shape(r, magic)
    shape = _read_shape(r, magic)
    dev_type, dev_id, flag = r.unpack("<iii", "context and type flag")
    dt = _dtype_of(r, flag, "values")
    n_aux = 2 if stype == "csr" else 1
    aux_meta = []
    for i in range(n_aux):
        (aux_flag,) = r.unpack("<i", "aux type flag")
        aux_dt = _dtype_of(r, aux_flag, "indices")
        if aux_dt.kind not in "iu":
            raise r.fail(f"{stype} indices of dtype {aux_dt}")
        aux_meta.append((_read_shape(r, V2_MAGIC), aux_dt))
    data = _read_block(r, storage, dt, f"the stored values of a {stype} array")
    aux = [_read_block(r, s, d, f"the indices of a {stype} array").astype(formats.INDEX)
           for s, d in aux_meta]
    value = formats.CSR(data, aux[1], aux[0], shape) if stype == "csr" else \
        formats.RowSparse(data, aux[0], shape)
    try:
        formats.check_format(value, True, "load")
    except MXNetError as e:
        raise r.fail(str(e)) from None
    if dev_type == 2 and 0 <= dev_id < num_gpus():      # onto the saved GPU, as dense arrays
        from .sparse import _placed
        return _placed(value, Context("gpu", dev_id))
    return wrap(value, Context("cpu", 0))


def _decode(f, size, source):
    r = _Reader(f, size, source)
    header, _reserved = r.unpack("<QQ", "header")
    if header != LIST_MAGIC:
        raise r.fail(f"wrong magic 0x{header:x} (expected 0x{LIST_MAGIC:x})")
    n = r.count("array count", 12)
    arrays = [_read_array(r) for _ in range(n)]
    k = r.count("key count", 8)
    keys = []
    for _ in range(k):
        length = r.count("key length", 1)
        key = r.read(length, "key")
        try:
            keys.append(key.decode("utf-8"))
        except UnicodeDecodeError:
            raise r.fail("a key is not valid UTF-8") from None
    if k == 0:
        return arrays
    if k != n:
        raise r.fail(f"{k} keys for {n} arrays")
    return dict(zip(keys, arrays))


def load(fname):
    """Load a file written by ``mx.nd.save`` (mxlite's or MXNet's, e.g. a ``.params`` file).

    Returns a list of NDArrays, or a dict str->NDArray when the file was saved from a dict.
    Arrays load onto the CPU (onto the saved GPU when it is visible). A truncated, corrupt
    or non-NDArray file raises MXNetError naming the file and what is wrong.
    """
    if not isinstance(fname, (str, bytes, os.PathLike)):
        raise MXNetError(f"load: fname must be a path, got {type(fname).__name__}")
    try:
        with open(fname, "rb") as f:
            return _decode(f, os.fstat(f.fileno()).st_size, repr(os.fsdecode(fname)))
    except OSError as e:
        raise MXNetError(f"load: cannot read {os.fsdecode(fname)!r}: {e.strerror}") from None


def _byte_view(buf, what):
    """``buf`` (bytes-like) as a flat memoryview of bytes, or MXNetError naming ``what``."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise MXNetError(f"{what}: buf must be bytes, got {type(buf).__name__}")
    try:
        return memoryview(buf).cast("B")
    except TypeError:                               # a strided view: copy it flat
        return memoryview(bytes(buf))


def load_frombuffer(buf):
    """``load`` from the bytes of such a file (MXNet's ``mx.nd.load_frombuffer``)."""
    buf = _byte_view(buf, "load_frombuffer")
    return _decode(io.BytesIO(buf), len(buf), "the buffer")


def _loads(buf, source):
    """``load_frombuffer`` whose errors name ``source`` (a file already read)."""
    buf = _byte_view(buf, "load")
    return _decode(io.BytesIO(buf), len(buf), source)


def _load_record(buf, source):
    """The one array of ``buf``, an array record without the list header (MXNet's
    ``MXNDArraySaveRawBytes``, which its NDArray pickles hold); errors name ``source``."""
    buf = _byte_view(buf, "load")
    r = _Reader(io.BytesIO(buf), len(buf), source)
    array = _read_array(r)
    if r.remaining:
        raise r.fail(f"{r.remaining} bytes after the array")
    return array
