"""``mx.recordio``: MXNet 1.9.1's RecordIO files, read and written in pure Python.

The format is dmlc-core's, byte for byte, so files move both ways between mxlite and MXNet
(``tests/fixtures/make_recordio_fixture.py`` checks it against MXNet 1.9.1). A file is a
sequence of parts; each part is

    uint32 magic 0xced7230a | uint32 (cflag << 29 | length) | length bytes | zero padding to 4

all little-endian. A record whose bytes hold the magic word at a 4-byte-aligned offset is cut
there into several parts (cflag 1 = first, 2 = middle, 3 = last; 0 = a whole record) and the
magic word itself is dropped, so that a reader that lost its place can find the next record
by scanning for the magic word; reading joins the parts and puts the magic words back.

``MXIndexedRecordIO`` adds a text index of ``key<TAB>byte offset`` lines for random access.
Records are untrusted input: a bad magic word, a truncated part or a broken part sequence is
an MXNetError naming the file and the offset, never a crash or an unbounded allocation.
"""
import numbers
import os
import struct
import threading
from collections import namedtuple

import numpy as np

from .base import MXNetError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img"]

MAGIC = 0xced7230a
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_LENGTH_BITS = 29
MAX_RECORD = 1 << _LENGTH_BITS        # dmlc's limit on one part (and on a written record)
_WHOLE, _FIRST, _MIDDLE, _LAST = 0, 1, 2, 3


def _aligned(n):
    return (n + 3) & ~3


def _split_at_magic(buf):
    """The parts ``buf`` is written as: cut at every 4-byte-aligned magic word (dropped)."""
    parts, start = [], 0
    for i in range(0, len(buf) - len(buf) % 4, 4):
        if buf[i:i + 4] == _MAGIC_BYTES:
            parts.append(buf[start:i])
            start = i + 4
    parts.append(buf[start:])
    return parts


def _flags(count):
    if count == 1:
        return [_WHOLE]
    return [_FIRST] + [_MIDDLE] * (count - 2) + [_LAST]


def encode_record(buf):
    """The bytes of one record ``buf`` as it is written to a RecordIO file."""
    if len(buf) >= MAX_RECORD:
        raise MXNetError(f"MXRecordIO.write: a record holds fewer than 2**29 bytes, got "
                         f"{len(buf)}")
    parts = _split_at_magic(bytes(buf))
    out = []
    for flag, part in zip(_flags(len(parts)), parts):
        out.append(_MAGIC_BYTES + struct.pack("<I", (flag << _LENGTH_BITS) | len(part)))
        out.append(part)
    # only the last part can be unaligned: every cut is at a multiple of 4
    out.append(b"\0" * (_aligned(len(buf)) - len(buf)))
    return b"".join(out)


class MXRecordIO:
    """Reads (``flag='r'``) or writes (``flag='w'``) the records of the RecordIO file ``uri``
    in order.

    A writer truncates the file. A reader pickles as MXNet's (for data-loader workers): the
    copy reopens the file at its first record if the original was open. Unlike MXNet,
    pickling leaves the original open, and an open writer cannot be pickled (MXNet closed
    it, and the copy reopened the file with 'w', truncating what was written). Reading or
    writing from another process than the one that opened the file is an error (forked
    workers reopen with ``reset()``).
    """

    def __init__(self, uri, flag):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid = None
        self.is_open = False
        self.handle = None
        # one record at a time: threads (DataLoader workers) share the file position, and a
        # seek or read between another thread's seek and read would return the wrong record
        self._lock = threading.RLock()
        self.open()

    def open(self):
        """Opens the file: ``'w'`` truncates it, ``'r'`` reads from the first record."""
        if self.flag not in ("r", "w"):
            raise MXNetError(f"MXRecordIO: flag must be 'r' or 'w', got {self.flag!r}")
        self.writable = self.flag == "w"
        try:
            self.handle = open(self.uri, "wb" if self.writable else "rb")
        except OSError as err:
            raise MXNetError(f"MXRecordIO: cannot open {self.uri!r} with flag "
                             f"{self.flag!r}: {err}") from None
        self.pid = os.getpid()
        self.is_open = True

    def __del__(self):
        self.close()

    def __getstate__(self):
        if self.is_open and self.writable:
            raise MXNetError(f"MXRecordIO: cannot pickle {self.uri!r} while it is open for "
                             "writing (the copy would truncate it); close() it first")
        state = dict(self.__dict__)
        del state["handle"], state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self._lock = threading.RLock()
        is_open = state["is_open"]
        self.is_open = False
        self.handle = None
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """A file object is not shared across processes: reopen (``allow_reset``) or refuse."""
        if self.pid != os.getpid():
            if allow_reset:
                self.reset()
            else:
                raise MXNetError(f"MXRecordIO: {self.uri!r} was opened by process {self.pid} "
                                 f"and cannot be used from process {os.getpid()}; call "
                                 "reset() in the new process")

    def _check_open(self, method, writable):
        if not getattr(self, "is_open", False):
            raise MXNetError(f"MXRecordIO.{method}: {self.uri!r} is closed")
        if self.writable != writable:
            raise MXNetError(f"MXRecordIO.{method}: {self.uri!r} is opened with flag "
                             f"{self.flag!r}")

    def close(self):
        """Closes the file (a no-op when it is closed)."""
        if not getattr(self, "is_open", False):
            return
        self.handle.close()
        self.is_open = False
        self.pid = None

    def reset(self):
        """Goes back to the first record (reader) or truncates the file (writer)."""
        self.close()
        self.open()

    def write(self, buf):
        """Appends the bytes ``buf`` as one record."""
        self._check_open("write", True)
        self._check_pid(allow_reset=False)
        if not isinstance(buf, (bytes, bytearray, memoryview)):
            raise MXNetError(f"MXRecordIO.write: a record is bytes, got {type(buf).__name__}")
        with self._lock:
            self.handle.write(encode_record(bytes(buf)))

    def read(self):
        """The next record as bytes, or None at the end of the file (safe across threads:
        each call reads one whole record)."""
        self._check_open("read", False)
        self._check_pid(allow_reset=False)
        with self._lock:
            return _read_record(self.handle, self.uri)


def _read_exact(handle, count, uri, what):
    start = handle.tell()
    data = handle.read(count)
    if len(data) != count:
        raise MXNetError(f"MXRecordIO.read: {uri!r} is truncated: {what} at byte {start} "
                         f"needs {count} bytes, {len(data)} left")
    return data


def _part_header(handle, uri, first, what):
    """``(offset, flag, length)`` of the part header at ``handle``'s position, checked (the
    magic, and a flag that starts a record when ``first``, continues one otherwise); None at
    the end of the file between records. ``what`` names the caller in errors."""
    offset = handle.tell()
    head = handle.read(8)
    if not head and first:
        return None
    if len(head) != 8:
        raise MXNetError(f"{what}: {uri!r} is truncated: a part header at byte "
                         f"{offset} needs 8 bytes, {len(head)} left")
    magic, word = struct.unpack("<II", head)
    if magic != MAGIC:
        raise MXNetError(f"{what}: {uri!r} is not a RecordIO file or is corrupt: magic "
                         f"{magic:#010x} at byte {offset}, expected {MAGIC:#010x}")
    flag, length = word >> _LENGTH_BITS, word & (MAX_RECORD - 1)
    if flag > _LAST or (flag in (_WHOLE, _FIRST)) != first:
        raise MXNetError(f"{what}: {uri!r} is corrupt: part flag {flag} at byte {offset} "
                         f"does not continue the record")
    return offset, flag, length


def _read_record(handle, uri):
    """Reads one record (joining its parts) from ``handle``; None at the end of the file."""
    pieces, first = [], True
    while True:
        header = _part_header(handle, uri, first, "MXRecordIO.read")
        if header is None:
            return None
        _, flag, length = header
        # the length is at most 2**29 and checked against what the file holds by _read_exact
        pieces.append(_read_exact(handle, _aligned(length), uri, "a record")[:length])
        if flag in (_WHOLE, _LAST):
            return _MAGIC_BYTES.join(pieces)
        first = False


def scan_offsets(uri):
    """The byte offset of every record of the RecordIO file ``uri``, read from the part
    headers alone (the records' bytes are skipped, not read)."""
    offsets = []
    with open(os.fspath(uri), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        first = True
        while True:
            header = _part_header(handle, uri, first, "MXRecordIO")
            if header is None:
                return offsets
            offset, flag, length = header
            if offset + 8 + _aligned(length) > size:
                raise MXNetError(f"MXRecordIO: {uri!r} is truncated: the part at byte "
                                 f"{offset} needs {_aligned(length)} bytes")
            if first:
                offsets.append(offset)
            handle.seek(_aligned(length), os.SEEK_CUR)
            first = flag in (_WHOLE, _LAST)


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file with an index file ``idx_path`` (``key<TAB>offset`` lines) for reading
    records by key (``read_idx``) and writing them with one (``write_idx``).

    ``keys`` lists the keys in file order, ``idx`` maps each to its byte offset;
    ``key_type`` converts the keys read from the index (``int`` by default).
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = os.fspath(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        try:
            self.fidx = open(self.idx_path, self.flag)
        except OSError as err:
            super().close()
            raise MXNetError(f"MXIndexedRecordIO: cannot open the index {self.idx_path!r} "
                             f"with flag {self.flag!r}: {err}") from None
        if not self.writable:
            self._read_index()

    def _read_index(self):
        for number, line in enumerate(self.fidx, 1):
            fields = line.strip().split("\t")
            if fields == [""]:
                continue
            try:
                key, offset = self.key_type(fields[0]), int(fields[1])
            except (ValueError, IndexError, TypeError):
                raise MXNetError(f"MXIndexedRecordIO: line {number} of the index "
                                 f"{self.idx_path!r} is not 'key<TAB>offset': "
                                 f"{line.rstrip()!r}") from None
            self.idx[key] = offset
            self.keys.append(key)

    def close(self):
        """Closes the record file and the index."""
        if not getattr(self, "is_open", False):
            return
        super().close()
        self.fidx.close()

    def __getstate__(self):
        state = super().__getstate__()
        state["fidx"] = None
        return state

    def seek(self, idx):
        """Moves the reader to the record of key ``idx``."""
        self._check_open("seek", False)
        self._check_pid(allow_reset=True)
        if idx not in self.idx:
            raise MXNetError(f"MXIndexedRecordIO.read_idx: key {idx!r} is not in the index "
                             f"{self.idx_path!r}")
        self.handle.seek(self.idx[idx])

    def tell(self):
        """The byte offset the next record will be written at."""
        self._check_open("tell", True)
        return self.handle.tell()

    def read_idx(self, idx):
        """The record of key ``idx`` (the seek and the read together: safe across threads)."""
        with self._lock:
            self.seek(idx)
            return self.read()

    def write_idx(self, idx, buf):
        """Appends ``buf`` as the record of key ``idx`` and indexes it."""
        key = self.key_type(idx)
        with self._lock:
            offset = self.tell()
            self.write(buf)
            self.fidx.write(f"{key}\t{offset}\n")
            self.idx[key] = offset
            self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """The header of an image record: ``flag`` (the number of float32 labels
that follow the header, 0 for a single label kept in ``label``), ``label`` (a number or an
array of float32), ``id`` and ``id2`` (the record's id, low and high 64 bits)."""

_IR_FORMAT = "<IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """The record of ``header`` (an IRHeader or a 4-tuple) followed by the bytes ``s``.

    A scalar label is kept in the header (``flag`` 0); an array label is written as float32
    after the header, ``flag`` its length.
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32).ravel()
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    try:
        head = struct.pack(_IR_FORMAT, *header)
    except struct.error as err:
        raise MXNetError(f"recordio.pack: bad header {tuple(header)}: {err}") from None
    return head + bytes(s)


def unpack(s):
    """``(IRHeader, payload bytes)`` of the record ``s`` (a label array is float32)."""
    if len(s) < _IR_SIZE:
        raise MXNetError(f"recordio.unpack: a record starts with a {_IR_SIZE}-byte header, "
                         f"got {len(s)} bytes")
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if 4 * header.flag > len(s):
            raise MXNetError(f"recordio.unpack: the header says {header.flag} float32 labels, "
                             f"the record holds {len(s)} bytes after the header")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s, iscolor=-1):
    """``(IRHeader, image)``: the record's encoded image decoded to a uint8 NumPy array in
    OpenCV's order, as MXNet (cv2.imdecode) gave it: (H, W, 3) BGR for ``iscolor`` 1, (H, W)
    gray for 0; -1 (the default) keeps a gray image gray and a colour one BGR.
    Needs Pillow (``pip install 'mxlite[image]'``)."""
    from .ops import image_io
    header, img = unpack(s)
    op = "recordio.unpack_img"
    if iscolor == -1:
        iscolor = 0 if _is_gray(op, img) else 1
    pixels = image_io.decode(op, img, flag=1 if iscolor else 0, to_rgb=False)
    return header, (pixels[:, :, 0] if iscolor == 0 else pixels)


def _is_gray(op, data):
    from .ops import image_io
    return image_io._open(op, data).mode in ("L", "1", "I", "I;16", "F")


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """The record of ``header`` and the image ``img`` (uint8 (H, W) gray or (H, W, 3) BGR, as
    OpenCV) encoded as JPEG (``quality`` 1-100) or PNG (``quality`` is the compression level
    0-9). Needs Pillow (``pip install 'mxlite[image]'``)."""
    return pack(header, encode_image(img, quality, img_fmt))


def encode_image(img, quality=95, img_fmt=".jpg"):
    """The JPEG or PNG bytes of the uint8 BGR or gray image ``img`` (NumPy or NDArray)."""
    op = "recordio.pack_img"
    try:
        from PIL import Image
    except ImportError:
        raise MXNetError(f"{op}: encoding images needs the optional package Pillow "
                         "(pip install 'mxlite[image]')") from None
    fmt = img_fmt.upper().lstrip(".")
    if fmt not in ("JPG", "JPEG", "PNG"):
        raise MXNetError(f"{op}: img_fmt must be '.jpg', '.jpeg' or '.png', got {img_fmt!r}")
    arr = img.asnumpy() if hasattr(img, "asnumpy") else np.asarray(img)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.dtype != np.uint8 or not (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] == 3)):
        raise MXNetError(f"{op}: the image must be uint8 (H, W) or (H, W, 3), got {arr.dtype} "
                         f"{arr.shape}")
    if arr.ndim == 3:
        arr = arr[:, :, ::-1]                     # OpenCV's BGR to Pillow's RGB
    import io
    out = io.BytesIO()
    pil = Image.fromarray(np.ascontiguousarray(arr))
    if fmt == "PNG":
        pil.save(out, format="PNG", compress_level=int(min(max(quality, 0), 9)))
    else:
        pil.save(out, format="JPEG", quality=int(min(max(quality, 1), 100)))
    return out.getvalue()
