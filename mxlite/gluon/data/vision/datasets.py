"""The vision datasets of MXNet 1.9.1's ``gluon.data.vision``: MNIST, FashionMNIST, CIFAR10,
CIFAR100 (read from their standard binary files in ``root``, downloaded from the Gluon
repository when missing), ImageRecordDataset and ImageFolderDataset.

Every file is parsed as bytes (the idx-ubyte format of MNIST, the fixed-size records of
CIFAR's ``-bin`` batches); nothing is unpickled. The sizes a header declares are checked
against the bytes that are there, so a corrupt or hostile file is an MXNetError, never an
allocation it asked for. Without a network a missing file is an MXNetError naming the files
expected in ``root``.
"""
import gzip
import os
import shutil
import struct
import tarfile
import warnings

import numpy as np

from .... import ndarray as nd
from .... import recordio
from ....base import MXNetError, data_dir
from ... import utils
from ..dataset import Dataset, RecordFileDataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset"]

# (file name, SHA-1) of the files MXNet 1.9.1 downloads, by dataset and split
_MNIST_FILES = {
    "train": (("train-images-idx3-ubyte.gz", "6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d"),
              ("train-labels-idx1-ubyte.gz", "2a80914081dc54586dbdf242f9805a6b8d2a15fc")),
    "test": (("t10k-images-idx3-ubyte.gz", "c3a25af1f52dad7f726cce8cacb138654b760d48"),
             ("t10k-labels-idx1-ubyte.gz", "763e7fa3757d93b0cdec073cef058b2004252c17"))}
_FASHION_MNIST_FILES = {
    "train": (("train-images-idx3-ubyte.gz", "0cf37b0d40ed5169c6b3aba31069a9770ac9043d"),
              ("train-labels-idx1-ubyte.gz", "236021d52f1e40852b06a4c3008d8de8aef1e40b")),
    "test": (("t10k-images-idx3-ubyte.gz", "626ed6a7c06dd17c0eec72fa3be1740f146a2863"),
             ("t10k-labels-idx1-ubyte.gz", "17f9ab60e7257a1620f4ad76bbbaf857c3920701"))}
_CIFAR10_FILES = {
    "archive": ("cifar-10-binary.tar.gz", "fab780a1e191a7eda0f345501ccd62d20f7ed891"),
    "train": (("data_batch_1.bin", "aadd24acce27caa71bf4b10992e9e7b2d74c2540"),
              ("data_batch_2.bin", "c0ba65cce70568cd57b4e03e9ac8d2a5367c1795"),
              ("data_batch_3.bin", "1dd00a74ab1d17a6e7d73e185b69dbf31242f295"),
              ("data_batch_4.bin", "aab85764eb3584312d3c7f65fd2fd016e36a258e"),
              ("data_batch_5.bin", "26e2849e66a845b7f1e4614ae70f4889ae604628")),
    "test": (("test_batch.bin", "67eb016db431130d61cd03c7ad570b013799c88c"),)}
_CIFAR100_FILES = {
    "archive": ("cifar-100-binary.tar.gz", "a0bb982c76b83111308126cc779a992fa506b90b"),
    "train": (("train.bin", "e207cd2e05b73b1393c74c7f5e7bea451d63e08e"),),
    "test": (("test.bin", "8fb6623e830365ff53cf14adec797474f5478006"),)}

_IDX_IMAGES, _IDX_LABELS = 2051, 2049          # magic numbers of idx3-ubyte / idx1-ubyte
_MNIST_SIDE = 28
_CIFAR_SIDE = 32
_CIFAR_PIXELS = 3 * _CIFAR_SIDE * _CIFAR_SIDE


def _default_root(name):
    return os.path.join(data_dir(), "datasets", name)


def _fetch(what, root, namespace, name, sha1):
    """The path of ``name`` in ``root``, downloaded from the Gluon repository when it is
    missing or its SHA-1 is not ``sha1``; an MXNetError naming the file when it cannot be."""
    try:
        return utils.download(utils._get_repo_file_url(f"gluon/dataset/{namespace}", name),
                              path=root, sha1_hash=sha1)
    except MXNetError as err:
        raise MXNetError(f"{what}: {os.path.join(root, name)!r} (SHA-1 {sha1}) is missing or "
                         f"has other content, and downloading it failed; put the file there "
                         f"or set MXNET_GLUON_REPO to a reachable copy ({err})") from None


class _DownloadedDataset(Dataset):
    """Arrays of images and labels read once from files in ``root`` (MXNet's base class of
    the downloaded datasets): ``_data`` an NDArray, ``_label`` a NumPy int32 array."""

    def __init__(self, root, transform):
        self._transform = transform
        self._root = os.path.expanduser(root)
        os.makedirs(self._root, exist_ok=True)
        self._data, self._label = self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError


# ---- MNIST ----------------------------------------------------------------------------------
def _read_gzip(what, path, head, body_size):
    """The ``head``-byte header of the gzip file ``path`` and its body, read in chunks up to
    ``body_size(header) + 1`` bytes: a header never makes the reader allocate more than the
    file holds, and a body longer than declared is caught without reading all of it."""
    try:
        with gzip.open(path, "rb") as f:
            header = f.read(head)
            if len(header) < head:
                raise MXNetError(f"{what}: {path!r} holds {len(header)} bytes, less than "
                                 f"its {head}-byte idx header")
            limit, body = body_size(header) + 1, bytearray()
            while len(body) < limit:
                chunk = f.read(min(1 << 20, limit - len(body)))
                if not chunk:
                    break
                body += chunk
            return header, bytes(body)
    except (OSError, EOFError, gzip.BadGzipFile) as err:
        raise MXNetError(f"{what}: cannot read the gzip file {path!r}: {err}") from None


def _idx_payload(what, path, magic, dims):
    """``(count, body bytes)`` of the gzip idx-ubyte file ``path``, checked: its magic number
    is ``magic``, its header's ``len(dims)`` sizes are ``dims`` (None: any), and the body
    holds exactly the bytes they declare."""
    fmt = f">{1 + len(dims)}I"

    def declared(header):
        found_magic, *sizes = struct.unpack(fmt, header)
        expected = [s if d is None else d for s, d in zip(sizes, dims)]
        if found_magic != magic or sizes != expected:
            raise MXNetError(f"{what}: {path!r} is not an idx file of magic {magic} and "
                             f"sizes {tuple('N' if d is None else d for d in dims)}: its "
                             f"header says magic {found_magic}, sizes {tuple(sizes)}")
        return int(np.prod(sizes))

    header, body = _read_gzip(what, path, struct.calcsize(fmt), declared)
    size = declared(header)
    if len(body) != size:
        raise MXNetError(f"{what}: {path!r}'s header says {size} bytes of data, the file "
                         f"holds {'more' if len(body) > size else len(body)}")
    return struct.unpack(fmt, header)[1], body


def read_mnist(what, image_path, label_path):
    """``(images, labels)`` of an idx3-ubyte image file and its idx1-ubyte label file (gzip):
    uint8 (N, 28, 28, 1) and int32 (N,)."""
    n_labels, labels = _idx_payload(what, label_path, _IDX_LABELS, (None,))
    n_images, images = _idx_payload(what, image_path, _IDX_IMAGES,
                                    (None, _MNIST_SIDE, _MNIST_SIDE))
    if n_images != n_labels:
        raise MXNetError(f"{what}: {image_path!r} holds {n_images} images, {label_path!r} "
                         f"{n_labels} labels")
    images = np.frombuffer(images, np.uint8).reshape(n_images, _MNIST_SIDE, _MNIST_SIDE, 1)
    return images, np.frombuffer(labels, np.uint8).astype(np.int32)


class MNIST(_DownloadedDataset):
    """The MNIST handwritten digits (http://yann.lecun.com/exdb/mnist): samples are
    ``(image, label)``, the image a uint8 NDArray of shape (28, 28, 1), the label an int32.

    ``root`` holds the gzip idx files (``train-images-idx3-ubyte.gz``,
    ``train-labels-idx1-ubyte.gz``, ``t10k-...`` for ``train=False``); missing ones are
    downloaded. ``transform(data, label)`` is applied to each sample.
    """
    _files = _MNIST_FILES
    _namespace = "mnist"

    def __init__(self, root=_default_root("mnist"), train=True, transform=None):
        self._train = train
        super().__init__(root, transform)

    def _get_data(self):
        what = type(self).__name__
        (images, image_sha1), (labels, label_sha1) = \
            self._files["train" if self._train else "test"]
        image_path = _fetch(what, self._root, self._namespace, images, image_sha1)
        label_path = _fetch(what, self._root, self._namespace, labels, label_sha1)
        data, label = read_mnist(what, image_path, label_path)
        return nd.array(data, dtype=data.dtype), label


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST articles (https://github.com/zalandoresearch/fashion-mnist), in
    MNIST's files and shapes (see ``MNIST``)."""
    _files = _FASHION_MNIST_FILES
    _namespace = "fashion-mnist"

    def __init__(self, root=_default_root("fashion-mnist"), train=True, transform=None):
        super().__init__(root, train, transform)


# ---- CIFAR ----------------------------------------------------------------------------------
def read_cifar(what, path, label_bytes, label_index):
    """``(images, labels)`` of a CIFAR binary batch file: records of ``label_bytes`` label
    bytes then 3 x 32 x 32 pixel bytes (channel planes); images uint8 (N, 32, 32, 3), labels
    int32 (N,) from the label byte ``label_index``."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as err:
        raise MXNetError(f"{what}: cannot read {path!r}: {err}") from None
    record = label_bytes + _CIFAR_PIXELS
    if not raw or len(raw) % record:
        raise MXNetError(f"{what}: {path!r} holds {len(raw)} bytes, not a whole positive "
                         f"number of {record}-byte records")
    rows = np.frombuffer(raw, np.uint8).reshape(-1, record)
    images = rows[:, label_bytes:].reshape(-1, 3, _CIFAR_SIDE, _CIFAR_SIDE)
    return images.transpose(0, 2, 3, 1), rows[:, label_index].astype(np.int32)


def _extract(what, archive, root, names):
    """Write the members of the tar ``archive`` whose base names are ``names`` into ``root``.
    Only regular files are read, each by its base name: no member's path, link or device
    reaches the file system."""
    wanted = set(names)
    try:
        with tarfile.open(archive) as tar:
            for member in tar:
                name = os.path.basename(member.name)
                if member.isfile() and name in wanted:
                    with tar.extractfile(member) as src, \
                            open(os.path.join(root, name), "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
                    wanted.discard(name)
    except (tarfile.TarError, OSError, EOFError) as err:
        raise MXNetError(f"{what}: cannot read the archive {archive!r}: {err}") from None
    if wanted:
        raise MXNetError(f"{what}: the archive {archive!r} lacks {sorted(wanted)}")


class CIFAR10(_DownloadedDataset):
    """CIFAR-10 (https://www.cs.toronto.edu/~kriz/cifar.html): samples are ``(image,
    label)``, the image a uint8 NDArray of shape (32, 32, 3), the label an int32.

    ``root`` holds the binary batches (``data_batch_1.bin`` ... ``data_batch_5.bin``,
    ``test_batch.bin``: the "binary version", never the pickled Python one); when any is
    missing or differs from MXNet's, ``cifar-10-binary.tar.gz`` is downloaded and the batches
    are taken from it.
    """
    _files = _CIFAR10_FILES
    _namespace = "cifar10"
    _label_bytes = 1

    def __init__(self, root=_default_root("cifar10"), train=True, transform=None):
        self._train = train
        self._label_index = 0
        super().__init__(root, transform)

    def _get_data(self):
        what = type(self).__name__
        every = self._files["train"] + self._files["test"]
        if any(not os.path.exists(os.path.join(self._root, name))
               or not utils.check_sha1(os.path.join(self._root, name), sha1)
               for name, sha1 in every):
            archive = _fetch(what, self._root, self._namespace, *self._files["archive"])
            _extract(what, archive, self._root, [name for name, _ in every])
        parts = [read_cifar(what, os.path.join(self._root, name), self._label_bytes,
                            self._label_index)
                 for name, _ in self._files["train" if self._train else "test"]]
        data = np.concatenate([p[0] for p in parts])
        return nd.array(data, dtype=data.dtype), np.concatenate([p[1] for p in parts])


class CIFAR100(CIFAR10):
    """CIFAR-100: as ``CIFAR10`` with ``train.bin``/``test.bin`` from
    ``cifar-100-binary.tar.gz``; each record carries a coarse (20 super-classes) and a fine
    (100 classes) label, and ``fine_label`` chooses which one a sample has."""
    _files = _CIFAR100_FILES
    _namespace = "cifar100"
    _label_bytes = 2

    def __init__(self, root=_default_root("cifar100"), fine_label=False, train=True,
                 transform=None):
        self._train = train
        self._label_index = int(bool(fine_label))
        _DownloadedDataset.__init__(self, root, transform)


# ---- image files ----------------------------------------------------------------------------
def _check_flag(what, flag):
    if flag not in (0, 1):
        raise MXNetError(f"{what}: flag must be 0 (grayscale) or 1 (colour), got {flag!r}")


class ImageRecordDataset(RecordFileDataset):
    """The images of a RecordIO file ``filename`` (with its index ``<name>.idx`` beside it, as
    ``im2rec`` writes them): samples are ``(image, label)``, the image decoded to a uint8
    (H, W, C) NDArray in RGB (C = 1 for ``flag=0``), the label the record header's (a float,
    or a float32 array for multi-label records). Decoding needs Pillow
    (``pip install 'mxlite[image]'``)."""

    def __init__(self, filename, flag=1, transform=None):
        _check_flag("ImageRecordDataset", flag)
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, img = recordio.unpack(super().__getitem__(idx))
        buf = nd.array(np.frombuffer(img, np.uint8), dtype="uint8")
        data = nd._internal._cvimdecode(buf, flag=self._flag)
        if self._transform is not None:
            return self._transform(data, header.label)
        return data, header.label


class ImageFolderDataset(Dataset):
    """The images in the class folders of ``root`` (``root/car/0001.jpg``,
    ``root/bus/023.png``, ...): samples are ``(image, label)``, the image a uint8 (H, W, C)
    RGB NDArray (C = 1 for ``flag=0``), the label the index of its folder in ``synsets`` (the
    folder names, sorted). ``items`` lists the ``(path, label)`` pairs; files other than
    .jpg/.jpeg/.png and entries of ``root`` that are not folders are skipped with a warning.
    Decoding needs Pillow (``pip install 'mxlite[image]'``)."""

    def __init__(self, root, flag=1, transform=None):
        _check_flag("ImageFolderDataset", flag)
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        self._list_images(self._root)

    def _list_images(self, root):
        if not os.path.isdir(root):
            raise MXNetError(f"ImageFolderDataset: root {root!r} is not a folder")
        self.synsets, self.items = [], []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. Only support "
                                  f"{', '.join(self._exts)}", stacklevel=3)
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        filename, label = self.items[idx]
        img = nd._internal._cvimread(filename=filename, flag=self._flag)
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)
