"""The iterators MXNet 1.9.1 implemented in C++ (``mx.io.CSVIter``, ``ImageRecordIter``),
here in Python on one base class, ``MXDataIter``, whose ``getdata()``/``getlabel()`` return
one NDArray each as MXNet's did.

``CSVIter`` streams its files a batch at a time (memory stays at one batch whatever the
file's size). Both follow MXNet's batch loader: with ``round_batch`` (the default) the last
batch is completed from the start of the data, ``pad`` says by how many examples, that
batch ends the epoch, and the next epoch starts after those examples; without it the last
batch is padded (with zeros, where MXNet left the previous batch's values) and the next
epoch starts at the beginning.
"""
import numpy as np

from ..base import MXNetError
from .io import DataBatch, DataDesc, DataIter

__all__ = ["MXDataIter", "CSVIter", "LibSVMIter", "MNISTIter"]


class MXDataIter(DataIter):
    """The base of the iterators that MXNet implemented in its C++ back end: a subclass
    defines ``_read_batch()`` (``(data, label, pad, index)`` as NumPy arrays, or None at the
    end of the epoch) and ``_restart()``. ``getdata()`` and ``getlabel()`` return one
    NDArray each; ``data_name`` / ``label_name`` name them in ``provide_data`` /
    ``provide_label``."""

    def __init__(self, batch_size, data_name="data", label_name="softmax_label"):
        super().__init__(batch_size)
        self.data_name = data_name
        self.label_name = label_name
        self._current = None

    def _read_batch(self):
        raise NotImplementedError(f"{type(self).__name__}._read_batch")

    def _restart(self):
        raise NotImplementedError(f"{type(self).__name__}._restart")

    def reset(self):
        self._current = None
        self._restart()

    def iter_next(self):
        self._current = self._read_batch()
        return self._current is not None

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                         index=self.getindex())

    def _field(self, i, what):
        if self._current is None:
            raise MXNetError(f"{type(self).__name__}.{what}: there is no current batch "
                             "(call next() first)")
        return self._current[i]

    def getdata(self):
        from .. import ndarray as nd
        data = self._field(0, "getdata")
        return nd.array(data, dtype=data.dtype)

    def getlabel(self):
        from .. import ndarray as nd
        label = self._field(1, "getlabel")
        return nd.array(label, dtype=label.dtype)

    def getpad(self):
        return self._field(2, "getpad")

    def getindex(self):
        return self._field(3, "getindex")


def _shape(name, value, what):
    try:
        shape = (value,) if isinstance(value, (int, np.integer)) else tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise MXNetError(f"{name}: {what} must be a shape, got {value!r}") from None
    if not shape or any(v <= 0 for v in shape):
        raise MXNetError(f"{name}: {what} must be a non-empty shape of positive sizes, got "
                         f"{value!r}")
    return shape


class _BatchLoader(MXDataIter):
    """MXNet's batch loader over a source of examples: a subclass defines
    ``_next_example()`` (``(data, label, index)`` NumPy arrays, or None at the end of the
    source) or ``_fill`` (a batch's slots at once), and ``_rewind_source()``, and sets
    ``_data_shape``, ``_label_dims``, ``dtype``.

    ``round_batch`` completes the last batch from the start of the source (``pad`` says by
    how many examples); that batch ends the epoch, and the next epoch goes on after the
    examples it reused, as MXNet's. Without it the last batch is padded with zeros.
    """

    def __init__(self, batch_size, round_batch, data_name, label_name, what):
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size <= 0:
            raise MXNetError(f"{what}: batch_size must be a positive int, got {batch_size!r}")
        super().__init__(int(batch_size), data_name, label_name)
        self.round_batch = bool(round_batch)
        self._what = what
        self._skip_rewind = False        # round_batch wrapped: the next epoch goes on from here
        self._epoch_over = False         # the wrapped batch ended the epoch

    @property
    def _label_size(self):
        return int(np.prod(self._label_dims))

    @property
    def _label_shape(self):
        """A batch's label shape: (batch,) for one label per example, as MXNet."""
        if self._label_dims == (1,):
            return (self.batch_size,)
        return (self.batch_size,) + self._label_dims

    @property
    def provide_data(self):
        return [DataDesc(self.data_name, (self.batch_size,) + self._data_shape, self.dtype)]

    @property
    def provide_label(self):
        return [DataDesc(self.label_name, self._label_shape, np.float32)]

    def _restart(self):
        self._epoch_over = False
        if self._skip_rewind:
            self._skip_rewind = False
        else:
            self._rewind_source()

    def _read_batch(self):
        if self._epoch_over:
            return None
        data = np.zeros((self.batch_size,) + self._data_shape, self.dtype)
        label = np.zeros((self.batch_size, self._label_size), np.float32)
        index = np.zeros(self.batch_size, np.uint64)
        top = self._fill(data, label, index, 0)
        if top == 0:
            return None
        pad = self.batch_size - top
        if pad and self.round_batch:
            self._rewind_source()
            if self._fill(data, label, index, top) != self.batch_size:
                raise MXNetError(f"{self._what}: batch_size {self.batch_size} exceeds twice "
                                 f"the number of examples (round_batch cannot fill a batch)")
            self._skip_rewind = self._epoch_over = True
        return data, label.reshape(self._label_shape), pad, index

    def _fill(self, data, label, index, top):
        """Reads examples into the batch from slot ``top``; the first slot left empty."""
        while top < self.batch_size:
            example = self._next_example()
            if example is None:
                break
            data[top], label[top], index[top] = example
            top += 1
        return top


class _FileBatchLoader(_BatchLoader):
    """A batch loader over files read row by row: ``_data`` and ``_labels`` (None when the
    labels come otherwise) are readers with ``rewind()`` and ``close()``; ``_example`` counts
    the examples read this pass."""

    _data = _labels = None

    def __del__(self):
        for rows in (self._data, self._labels):
            if rows is not None:
                rows.close()

    def _rewind_source(self):
        self._data.rewind()
        if self._labels is not None:
            self._labels.rewind()
        self._example = 0


class _CSVRows:
    """The rows of one CSV file of numbers, read lazily, each checked to hold ``size``
    values of ``dtype``."""

    def __init__(self, path, size, dtype, what):
        self.path, self.size, self.dtype, self.what = path, size, dtype, what
        try:
            self.file = open(path, "r")
        except OSError as err:
            raise MXNetError(f"CSVIter: cannot open {what} {path!r}: {err}") from None
        self.line = 0

    def rewind(self):
        self.file.seek(0)
        self.line = 0

    def next_row(self):
        """The next row as a 1-D array, or None at the end of the file."""
        while True:
            text = self.file.readline()
            if not text:
                return None
            self.line += 1
            if text.strip():
                break
        fields = text.strip().split(",")
        if len(fields) != self.size:
            raise MXNetError(f"CSVIter: line {self.line} of {self.what} {self.path!r} has "
                             f"{len(fields)} values, the shape needs {self.size}")
        try:
            return np.array(fields, dtype=self.dtype)
        except ValueError:
            raise MXNetError(f"CSVIter: line {self.line} of {self.what} {self.path!r} is not "
                             f"{len(fields)} numbers of type {np.dtype(self.dtype).name}: "
                             f"{text.strip()[:80]!r}") from None

    def close(self):
        self.file.close()


CSV_DTYPES = ("float32", "int32", "int64")


class CSVIter(_FileBatchLoader):
    """Batches of ``batch_size`` rows of the CSV file ``data_csv`` (each row ``data_shape``
    numbers), with the labels of ``label_csv`` (each row ``label_shape`` numbers; zeros when
    it is ``'NULL'``), as MXNet 1.9.1's ``mx.io.CSVIter``.

    ``dtype`` is ``'float32'`` (default), ``'int32'`` or ``'int64'`` (the data's type; labels
    are float32). A label of shape ``(1,)`` is batched as ``(batch_size,)``. ``round_batch``:
    see the module docstring. ``prefetch_buffer``, ``ctx``, ``data_name`` and ``label_name``
    are accepted as MXNet's.
    """

    def __init__(self, data_csv, data_shape, batch_size, label_csv="NULL", label_shape=(1,),
                 round_batch=True, dtype=None, data_name="data", label_name="softmax_label",
                 prefetch_buffer=4, ctx="gpu"):
        super().__init__(batch_size, round_batch, data_name, label_name, "CSVIter")
        dtype = "float32" if dtype is None else np.dtype(dtype).name
        if dtype not in CSV_DTYPES:
            raise MXNetError(f"CSVIter: dtype must be one of {CSV_DTYPES}, got {dtype!r}")
        self.dtype = np.dtype(dtype)
        self._data_shape = _shape("CSVIter", data_shape, "data_shape")
        label_shape = _shape("CSVIter", label_shape, "label_shape")
        self._label_dims = label_shape
        self._data = _CSVRows(data_csv, int(np.prod(self._data_shape)), self.dtype, "data_csv")
        self._labels = None
        if label_csv not in (None, "NULL"):
            self._labels = _CSVRows(label_csv, self._label_size, np.float32, "label_csv")
        self._example = 0                # the index of the next example read

    def _next_example(self):
        row = self._data.next_row()
        if row is None:
            return None
        if self._labels is None:
            label = np.zeros(self._label_size, np.float32)
        else:
            label = self._labels.next_row()
            if label is None:
                raise MXNetError(f"CSVIter: label_csv {self._labels.path!r} has fewer rows "
                                 f"({self._labels.line}) than data_csv {self._data.path!r}")
        index = self._example
        self._example += 1
        return row.reshape(self._data_shape), label, index


class _LibSVMLines:
    """The examples of LibSVM files (``label index:value ...`` per line, zero-based indices
    below ``dim``), read line by line; a file list and, with ``num_parts``, the byte range of
    part ``part_index`` (lines belong to the part where they start)."""

    def __init__(self, path, dim, num_parts, part_index, what):
        import os
        self.what, self.dim = what, dim
        paths = ([os.path.join(path, f) for f in sorted(os.listdir(path))]
                 if os.path.isdir(path) else [path])
        try:
            sizes = [os.path.getsize(p) for p in paths]
        except OSError as err:
            raise MXNetError(f"LibSVMIter: cannot read {what} {path!r}: {err}") from None
        total = sum(sizes)
        self.begin = total * part_index // num_parts
        self.end = total * (part_index + 1) // num_parts
        self.files = list(zip(paths, sizes))
        self.handle = None
        self.rewind()

    def rewind(self):
        self.close()
        self.file_no, self.base, self.line = -1, 0, 0
        self._open_next()

    def _open_next(self):
        """Open the next file holding bytes of the part; False past the part's end."""
        if self.handle is not None:
            self.base += self.files[self.file_no][1]
            self.handle.close()
            self.handle = None
        while self.file_no + 1 < len(self.files):
            self.file_no += 1
            path, size = self.files[self.file_no]
            if self.base + size <= self.begin:
                self.base += size
                continue
            if self.base >= self.end:
                return False
            self.handle = open(path, "rb")
            start = max(0, self.begin - self.base)
            if start:                        # a line that started before belongs to another part
                self.handle.seek(start - 1)
                self.handle.readline()
            return True
        return False

    def next_row(self):
        """(label value(s), indices, values) of the next non-empty line, or None."""
        while self.handle is not None:
            at = self.base + self.handle.tell()
            text = self.handle.readline() if at < self.end else b""
            if not text:
                if not self._open_next():
                    return None
                continue
            self.line += 1
            fields = text.split()
            if fields:
                return self._parse(fields, text)
        return None

    def _parse(self, fields, text):
        path = self.files[self.file_no][0]
        try:
            head = float(fields[0])
            pairs = [f.split(b":") for f in fields[1:]]
            idx = np.array([int(i) for i, _ in pairs], np.int64)
            val = np.array([float(v) for _, v in pairs], np.float32)
        except ValueError:
            raise MXNetError(f"LibSVMIter: line {self.line} of {self.what} {path!r} is not "
                             f"'label index:value ...': {text.strip()[:80]!r}") from None
        if idx.size and (idx.min() < 0 or idx.max() >= self.dim):
            raise MXNetError(f"LibSVMIter: line {self.line} of {self.what} {path!r} has an "
                             f"index outside [0, {self.dim}) (indices are zero-based)")
        if np.any(np.diff(idx) <= 0):
            raise MXNetError(f"LibSVMIter: line {self.line} of {self.what} {path!r}: the "
                             "indices of a line must be strictly increasing")
        return head, idx, val

    def close(self):
        if self.handle is not None:
            self.handle.close()
            self.handle = None


class LibSVMIter(_FileBatchLoader):
    """Batches of ``batch_size`` examples of the LibSVM file (or folder of files)
    ``data_libsvm`` as csr matrices of shape ``(batch_size,) + data_shape``, as MXNet
    1.9.1's ``mx.io.LibSVMIter``: each line is ``label index:value ...`` with zero-based,
    increasing indices below ``data_shape[0]``. The label is the line's first number (a
    dense ``(batch_size,)`` array), or, with ``label_libsvm``, that file's line as a csr
    row of ``label_shape``. Only ``round_batch=True`` (MXNet's rule): the last batch is
    completed from the start. ``num_parts``/``part_index`` read one byte range of the data
    (parts start and end at line boundaries). A malformed line or an index out of range is
    an MXNetError naming the file and line.
    """

    def __init__(self, data_libsvm, data_shape, batch_size, label_libsvm="NULL",
                 label_shape=(1,), num_parts=1, part_index=0, round_batch=True,
                 data_name="data", label_name="softmax_label", prefetch_buffer=4, ctx="gpu",
                 dtype=None):
        super().__init__(batch_size, round_batch, data_name, label_name, "LibSVMIter")
        if not self.round_batch:
            raise MXNetError("LibSVMIter: only round_batch=True is supported (MXNet's rule)")
        self._data_shape = _shape("LibSVMIter", data_shape, "data_shape")
        self._label_dims = _shape("LibSVMIter", label_shape, "label_shape")
        if len(self._data_shape) != 1 or len(self._label_dims) != 1:
            raise MXNetError(f"LibSVMIter: data_shape and label_shape must be 1-D, got "
                             f"{data_shape} and {label_shape}")
        if not (isinstance(num_parts, (int, np.integer)) and num_parts >= 1
                and 0 <= part_index < num_parts):
            raise MXNetError(f"LibSVMIter: part_index {part_index} must be in [0, "
                             f"{num_parts}) and num_parts >= 1")
        self.dtype = np.dtype(np.float32)
        self._data = _LibSVMLines(data_libsvm, self._data_shape[0], num_parts, part_index,
                                  "data_libsvm")
        self._labels = None
        if label_libsvm not in (None, "NULL"):
            self._labels = _LibSVMLines(label_libsvm, self._label_dims[0], num_parts,
                                        part_index, "label_libsvm")
        self._example = 0

    @property
    def provide_label(self):
        shape = (self.batch_size,) + (self._label_dims if self._labels is not None else ())
        return [DataDesc(self.label_name, shape, np.float32)]

    def _next_example(self):
        row = self._data.next_row()
        if row is None:
            return None
        label = row[0]
        if self._labels is not None:
            label = self._labels.next_row()
            if label is None:
                raise MXNetError("LibSVMIter: label_libsvm has fewer lines than data_libsvm")
        index = self._example
        self._example += 1
        return row, label, index

    def _read_batch(self):
        if self._epoch_over:
            return None
        examples = self._take(self.batch_size)
        if not examples:
            return None
        pad = self.batch_size - len(examples)
        if pad:
            self._rewind_source()
            more = self._take(pad)
            if len(more) != pad:
                raise MXNetError(f"LibSVMIter: batch_size {self.batch_size} exceeds twice "
                                 "the number of examples (round_batch cannot fill a batch)")
            examples += more
            self._skip_rewind = self._epoch_over = True
        data = _csr_rows([(e[0][1], e[0][2]) for e in examples], self._data_shape[0])
        if self._labels is None:
            label = np.array([e[0][0] for e in examples], np.float32)
        else:
            label = _csr_rows([(e[1][1], e[1][2]) for e in examples], self._label_dims[0])
        index = np.array([e[2] for e in examples], np.uint64)
        return data, label, pad, index

    def _take(self, n):
        out = []
        while len(out) < n:
            row = self._next_example()
            if row is None:
                break
            out.append(row)
        return out

    def getdata(self):
        return self._as_array(self._field(0, "getdata"))

    def getlabel(self):
        return self._as_array(self._field(1, "getlabel"))

    @staticmethod
    def _as_array(value):
        from .. import ndarray as nd
        if isinstance(value, tuple):
            return nd.sparse.csr_matrix(value[:3], shape=value[3])
        return nd.array(value, dtype=value.dtype)


def _csr_rows(rows, dim):
    """(data, indices, indptr, shape) of csr rows given as (indices, values) pairs."""
    counts = [len(i) for i, _ in rows]
    indptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate([i for i, _ in rows]) if rows else np.zeros(0, np.int64)
    data = np.concatenate([v for _, v in rows]) if rows else np.zeros(0, np.float32)
    return data, indices, indptr, (len(rows), dim)


class MNISTIter(MXDataIter):
    """MXNet's ``mx.io.MNISTIter`` is not implemented: constructing one is an MXNetError."""

    def __init__(self, *args, **kwargs):  # noqa: D107  (always raises)
        raise MXNetError("MNISTIter is not implemented in mxlite; use "
                         "mx.gluon.data.vision.MNIST or NDArrayIter over the decoded arrays")
