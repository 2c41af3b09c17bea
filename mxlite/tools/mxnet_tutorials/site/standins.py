"""Offline stand-ins the tutorial runner installs in each page's process before its first
block, the same on the MXNet side and on the mxlite side (this file imports only ``mxnet``,
NumPy and the standard library, so that either Python can load it).

- ``gluon.data.vision`` MNIST, FashionMNIST, CIFAR10 and CIFAR100 hold random uint8 images
  of the real shapes (28x28x1, 32x32x3) and random int32 labels of the real ranges (10
  classes; CIFAR100 100 fine or 20 coarse), ``TRAIN_LENGTH`` training and ``TEST_LENGTH``
  test samples, so that a page trains in seconds; ``mx.test_utils.get_mnist`` likewise.
- ``gluon.utils.download`` and ``mx.test_utils.download`` write a placeholder where the file
  would go and return its name as the real ones do: a random JPEG (PNG, ...) for an image
  URL, otherwise a text marker naming the URL, which any reader of the real file rejects,
  so the block that needs the file fails honestly.
- ``gluon.model_zoo.vision`` with ``pretrained=True`` builds the network untrained, with
  Xavier-initialised weights, and runs one forward pass so every weight has its shape, as
  loaded weights would.
- The network is off: ``urllib.request.urlopen``/``urlretrieve``, ``requests`` and any
  socket connection outside this machine raise ``ConnectionRefusedError`` saying so.
"""
import os
import socket
import urllib.request

import numpy as np

TRAIN_LENGTH, TEST_LENGTH = 1000, 200
OFFLINE = "the MXNet tutorial runner is offline: no network access (%s)"
IMAGE_FORMATS = {".jpg": "JPEG", ".jpeg": "JPEG", ".png": "PNG", ".gif": "GIF", ".bmp": "BMP"}
PLACEHOLDER_SIZE = (320, 240)          # width, height of a placeholder image
# (image shape, number of classes) of each dataset's samples
VISION_DATASETS = {"MNIST": ((28, 28, 1), 10), "FashionMNIST": ((28, 28, 1), 10),
                   "CIFAR10": ((32, 32, 3), 10), "CIFAR100": ((32, 32, 3), 100)}

_rng = np.random.RandomState(0)


def install(mx):
    """Install every stand-in into the imported ``mxnet`` package ``mx``."""
    _refuse_network()
    _datasets(mx)
    _downloads(mx)
    _pretrained(mx)


# -- the network ---------------------------------------------------------------------------

def _refuse(what):
    def refused(*args, **kwargs):
        raise ConnectionRefusedError(OFFLINE % what)
    return refused


def _refuse_network():
    urllib.request.urlopen = _refuse("urllib.request.urlopen")
    urllib.request.urlretrieve = _refuse("urllib.request.urlretrieve")
    try:
        import requests
        requests.Session.request = _refuse("requests")
    except ImportError:
        pass
    connect = socket.socket.connect

    def local_only(sock, address):
        # local sockets (DataLoader workers, a local kvstore) still work
        if sock.family in (socket.AF_INET, socket.AF_INET6) and \
                address[0] not in ("127.0.0.1", "::1", "localhost"):
            raise ConnectionRefusedError(OFFLINE % ("socket connection to %s" % (address,)))
        return connect(sock, address)
    socket.socket.connect = local_only


# -- datasets -------------------------------------------------------------------------------

def random_samples(shape, classes, length):
    """``length`` random uint8 images of ``shape`` and int32 labels in [0, classes)."""
    images = _rng.randint(0, 256, size=(length,) + shape).astype(np.uint8)
    labels = _rng.randint(0, classes, size=length).astype(np.int32)
    return images, labels


def _random_get_data(mx, shape, classes):
    def _get_data(self):
        # MXNet's _get_data sets the two attributes, mxlite's returns them: do both
        length = TRAIN_LENGTH if getattr(self, "_train", True) else TEST_LENGTH
        n = classes if getattr(self, "_fine_label", True) else 20
        images, labels = random_samples(shape, n, length)
        self._data, self._label = mx.nd.array(images, dtype=images.dtype), labels
        return self._data, self._label
    return _get_data


def _datasets(mx):
    vision = _attribute(mx, "gluon.data.vision")
    for name, (shape, classes) in VISION_DATASETS.items():
        dataset = getattr(vision, name, None)
        if dataset is not None:
            dataset._get_data = _random_get_data(mx, shape, classes)
    test_utils = _attribute(mx, "test_utils")
    if test_utils is not None and hasattr(test_utils, "get_mnist"):
        test_utils.get_mnist = get_mnist


def get_mnist(*args, **kwargs):
    """``mx.test_utils.get_mnist()``'s dictionary, of random images in [0, 1] (float32,
    N x 1 x 28 x 28) and int8 labels."""
    result = {}
    for part, length in (("train", TRAIN_LENGTH), ("test", TEST_LENGTH)):
        images, labels = random_samples((1, 28, 28), 10, length)
        result[part + "_data"] = images.astype(np.float32) / 255
        result[part + "_label"] = labels.astype(np.int8)
    return result


# -- downloads ------------------------------------------------------------------------------

def write_placeholder(url, fname):
    """Write the stand-in for ``url`` at ``fname``: a random image for an image URL (Pillow),
    else a text marker."""
    directory = os.path.dirname(os.path.abspath(fname))
    os.makedirs(directory, exist_ok=True)
    ext = os.path.splitext(url.split("?")[0])[1].lower()
    if ext in IMAGE_FORMATS:
        from PIL import Image
        width, height = PLACEHOLDER_SIZE
        pixels = _rng.randint(0, 256, size=(height, width, 3)).astype(np.uint8)
        Image.fromarray(pixels).save(fname, format=IMAGE_FORMATS[ext])
    else:
        with open(fname, "w") as f:
            f.write("placeholder written by the offline MXNet tutorial runner instead of "
                    "downloading %s\n" % url)
    return fname


def gluon_download(url, path=None, overwrite=False, sha1_hash=None, retries=5,
                   verify_ssl=True):
    """``gluon.utils.download``'s file naming, with a placeholder for the content."""
    name = url.split("?")[0].split("/")[-1]
    if path is None:
        fname = name
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, name) if os.path.isdir(path) else path
    if overwrite or not os.path.exists(fname):
        write_placeholder(url, fname)
    return fname


def test_utils_download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """``mx.test_utils.download``'s file naming, with a placeholder for the content."""
    fname = fname or url.split("?")[0].split("/")[-1]
    if dirname is not None:
        fname = os.path.join(dirname, fname)
    if overwrite or not os.path.exists(fname):
        write_placeholder(url, fname)
    return fname


def _downloads(mx):
    utils = _attribute(mx, "gluon.utils")
    if utils is not None:
        utils.download = gluon_download
    test_utils = _attribute(mx, "test_utils")
    if test_utils is not None:
        test_utils.download = test_utils_download


# -- pretrained models ----------------------------------------------------------------------

def _untrained(mx, build):
    def model(*args, **kwargs):
        if not kwargs.get("pretrained"):
            return build(*args, **kwargs)
        kwargs["pretrained"] = False
        net = build(*args, **kwargs)
        ctx = kwargs.get("ctx", mx.cpu())
        net.initialize(mx.init.Xavier(), ctx=ctx)
        side = 299 if "inception" in getattr(build, "__name__", "") + str(args) else 224
        net(mx.nd.zeros((1, 3, side, side), ctx=ctx if not isinstance(ctx, list) else ctx[0]))
        return net
    model.__name__ = getattr(build, "__name__", "model")
    model.__doc__ = getattr(build, "__doc__", None)
    return model


def _pretrained(mx):
    vision = _attribute(mx, "gluon.model_zoo.vision")
    if vision is None:
        return
    for name in dir(vision):
        value = getattr(vision, name)
        if callable(value) and not isinstance(value, type) and not name.startswith("_") \
                and name[0].islower():
            setattr(vision, name, _untrained(mx, value))


def _attribute(mx, dotted):
    """``mx.a.b`` (importing ``mxnet.a.b`` if needed), or None where it does not exist."""
    import importlib
    try:
        return importlib.import_module("mxnet." + dotted)
    except Exception:       # a module that fails to import fails the page's own import later
        value = mx
        for part in dotted.split("."):
            value = getattr(value, part, None)
        return value
