"""Downloads and the datasets MXNet's tests fetched (MNIST, CIFAR-10), and ``DummyIter``.

Downloads use the standard library (``urllib``), any URL scheme it supports (``file://``
included). Failures raise MXNetError naming the URL, never a bare socket error.
"""
import bz2
import gzip
import logging
import os
import shutil
import struct
import urllib.error
import urllib.request
import zipfile

import numpy as np

from ..base import MXNetError

_MXNET_DATA = "http://data.mxnet.io/"
_IO_LATER = "mx.io (the data iterators) is not in mxlite yet; it comes with issue 23"


def _make_dir(dirname):
    if dirname and not os.path.isdir(dirname):
        logging.info("create directory %s", dirname)
        os.makedirs(dirname, exist_ok=True)


def _fetch(url, fname):
    """Copy ``url`` to ``fname`` through a temporary file, so a failed transfer leaves no
    partial file that a later call would take for a finished one."""
    partial = fname + ".part"
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
        os.replace(partial, fname)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Download ``url`` to ``fname`` (default: the URL's last path part) in ``dirname``;
    return the file name. An existing file is kept unless ``overwrite``. Up to ``retries``
    further attempts follow a failure; the last one raises MXNetError."""
    if not isinstance(retries, int) or retries < 0:
        raise MXNetError(f"download: retries must be an int >= 0, got {retries!r}")
    fname = fname or url.split("/")[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    _make_dir(dirname)
    if not overwrite and os.path.exists(fname):
        logging.info("%s exists, skipping download", fname)
        return fname
    for attempt in range(retries + 1):
        try:
            _fetch(url, fname)
            break
        except (urllib.error.URLError, OSError, ValueError) as e:
            if attempt == retries:
                raise MXNetError(f"download: could not fetch {url!r} to {fname!r} after "
                                 f"{retries + 1} attempts: {e}") from e
            logging.warning("download of %s failed (%s), %d attempts left", url, e,
                            retries - attempt)
    logging.info("downloaded %s into %s successfully", url, fname)
    return fname


def download_model(model_name, dst_dir="./", meta_info=None):
    """Download a model's ``-symbol.json`` and ``-0000.params`` into ``dst_dir``; return
    ``(prefix, 0)`` for ``mx.model.load_checkpoint``. ``meta_info`` maps a model name to
    ``{'symbol': url, 'params': url}`` (default: MXNet's model zoo on data.mxnet.io)."""
    meta_info = meta_info or {
        name: {"symbol": f"{_MXNET_DATA}models/imagenet/{path}-symbol.json",
               "params": f"{_MXNET_DATA}models/imagenet/{path}-0000.params"}
        for name, path in (("imagenet1k-inception-bn", "inception-bn/Inception-BN"),
                           ("imagenet1k-resnet-18", "resnet/18-layers/resnet-18"),
                           ("imagenet1k-resnet-152", "resnet/152-layers/resnet-152"),
                           ("imagenet1k-resnext-50", "resnext/50-layers/resnext-50"),
                           ("imagenet11k-resnet-152", "resnet/152-layers/resnet-152"))}
    if model_name not in meta_info:
        raise MXNetError(f"download_model: unknown model {model_name!r}; known: "
                         f"{sorted(meta_info)}")
    meta = meta_info[model_name]
    prefix = os.path.join(dst_dir, model_name)
    download(meta["symbol"], prefix + "-symbol.json")
    download(meta["params"], prefix + "-0000.params")
    return prefix, 0


def _read_idx(label_file, image_file):
    """MNIST's IDX files: int8 labels and float32 images in [0, 1] of shape (n, 1, 28, 28)."""
    with gzip.open(label_file) as f:
        struct.unpack(">II", f.read(8))
        label = np.frombuffer(f.read(), dtype=np.int8)
    with gzip.open(image_file, "rb") as f:
        _, _, rows, cols = struct.unpack(">IIII", f.read(16))
        image = np.frombuffer(f.read(), dtype=np.uint8).reshape(len(label), 1, rows, cols)
    return label, image.astype(np.float32) / 255


def get_mnist():
    """MNIST as ``{'train_data', 'train_label', 'test_data', 'test_label'}`` NumPy arrays,
    downloaded to the current directory."""
    path = _MXNET_DATA + "data/mnist/"
    train = _read_idx(download(path + "train-labels-idx1-ubyte.gz"),
                      download(path + "train-images-idx3-ubyte.gz"))
    test = _read_idx(download(path + "t10k-labels-idx1-ubyte.gz"),
                     download(path + "t10k-images-idx3-ubyte.gz"))
    return {"train_data": train[1], "train_label": train[0],
            "test_data": test[1], "test_label": test[0]}


def get_mnist_pkl():
    """Download MNIST as ``data/mnist.pkl.gz``."""
    if not os.path.exists("data/mnist.pkl.gz"):
        download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def _unzip_once(url, wanted):
    """Download and extract the zip at ``url`` into ``data/`` unless ``wanted`` all exist."""
    if all(os.path.exists(os.path.join("data", w)) for w in wanted):
        return
    with zipfile.ZipFile(download(url, dirname="data")) as zf:
        zf.extractall("data")


def get_mnist_ubyte():
    """Download and extract MNIST's raw IDX files into ``data/``."""
    _unzip_once(_MXNET_DATA + "mxnet/data/mnist.zip",
                ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"])


def get_cifar10():
    """Download and extract CIFAR-10 (RecordIO files) into ``data/cifar/``."""
    _unzip_once(_MXNET_DATA + "mxnet/data/cifar10.zip",
                ["cifar/train.rec", "cifar/test.rec", "cifar/train.lst", "cifar/test.lst"])


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """MNIST training and validation ``MNISTIter`` iterators: MXNetError until mx.io exists."""
    raise MXNetError("get_mnist_iterator: " + _IO_LATER)


def get_zip_data(data_dir, url, data_origin_name):
    """Download the zip at ``url`` as ``data_origin_name`` and extract it into ``data_dir``."""
    _make_dir(data_dir)
    path = download(url, data_origin_name, data_dir)
    with zipfile.ZipFile(path) as zf:
        zf.extractall(data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Download the bz2 file at ``url`` and decompress it to ``data_dir/data_name`` (once)."""
    _make_dir(data_dir)
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    path = download(url, data_origin_name, data_dir)
    with bz2.BZ2File(path, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    os.remove(path)


def get_im2rec_path(home_env="MXNET_HOME"):
    """The path of ``tools/im2rec.py`` under ``$MXNET_HOME``: MXNetError when absent
    (mxlite ships no im2rec tool)."""
    home = os.environ.get(home_env)
    for candidate in ([os.path.join(home, "tools", "im2rec.py")] if home else []):
        if os.path.isfile(candidate):
            return candidate
    raise MXNetError(f"get_im2rec_path: no tools/im2rec.py under ${home_env}={home!r}; "
                     "mxlite does not ship MXNet's im2rec tool")


class DummyIter:
    """An iterator that returns the first batch of ``real_iter`` forever (speed tests).

    It copies ``provide_data``, ``provide_label`` and ``batch_size`` from ``real_iter``.
    """

    def __init__(self, real_iter):
        self.real_iter = real_iter
        self.provide_data = getattr(real_iter, "provide_data", None)
        self.provide_label = getattr(real_iter, "provide_label", None)
        self.batch_size = getattr(real_iter, "batch_size", None)
        self.the_batch = next(iter(real_iter))

    def __iter__(self):
        return self

    def __next__(self):
        return self.the_batch

    def next(self):
        """The first batch of the real iterator (never StopIteration)."""
        return self.the_batch

    def reset(self):
        """Nothing to reset: the same batch comes every time."""
