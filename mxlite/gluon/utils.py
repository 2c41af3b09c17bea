"""Gluon utilities: splitting a batch across devices, clipping gradients by their global
norm, and downloading files checked by their SHA-1 (MXNet 1.x's gluon.utils)."""
import hashlib
import math
import os
import shutil
import ssl
import urllib.error
import urllib.request
import uuid
import warnings

from .. import ndarray as nd
from ..base import MXNetError

__all__ = ["split_data", "split_and_load", "clip_global_norm", "part_bounds", "check_sha1",
           "download"]

_DEFAULT_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def part_bounds(size, num_parts):
    """``(start, stop)`` of ``num_parts`` contiguous parts of ``range(size)``, in order, whose
    lengths differ by at most one: the first ``size % num_parts`` parts take the extra item
    (MXNet's rule for both ``split_data`` and ``Dataset.shard``: 9 into 4 is 3, 2, 2, 2)."""
    step, extra = divmod(size, num_parts)
    bounds, start = [], 0
    for i in range(num_parts):
        stop = start + step + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """``data`` cut into ``num_slice`` slices along ``batch_axis``. With ``even_split`` the
    batch must divide evenly; otherwise the first slices take one extra sample each."""
    size = data.shape[batch_axis]
    if num_slice <= 0:
        raise MXNetError(f"split_data: num_slice must be positive, got {num_slice}")
    if even_split and size % num_slice:
        raise MXNetError(f"split_data: data with shape {data.shape} cannot be split evenly "
                         f"into {num_slice} slices along axis {batch_axis}; use a batch size "
                         "that is a multiple of the number of devices or even_split=False")
    if size < num_slice:
        raise MXNetError(f"split_data: {size} samples along axis {batch_axis} are too few "
                         f"for {num_slice} slices")
    if num_slice == 1:
        return [data]
    return [nd.slice_axis(data, axis=batch_axis, begin=b, end=e)
            for b, e in part_bounds(size, num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """``data`` (an NDArray or NumPy array) split along ``batch_axis`` into one slice per
    context of ``ctx_list``, each slice loaded onto its context."""
    if not isinstance(data, nd.NDArray):
        data = nd.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that the 2-norm of all of them together is at most
    ``max_norm``; returns that norm before scaling (a float with ``check_isfinite``, which
    also warns when it is not finite; an NDArray without, so nothing waits for it)."""
    if not arrays:
        raise MXNetError("clip_global_norm: no arrays given")
    ctx = arrays[0].context
    total = sum(nd.sum(nd.square(a.astype("float32"))).as_in_context(ctx) for a in arrays)
    total_norm = nd.sqrt(total)
    if check_isfinite:
        value = float(total_norm.asscalar())
        if not math.isfinite(value):
            import warnings
            warnings.warn(UserWarning("nan or inf is detected. Clipping results will be "
                                      "undefined."), stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = nd.minimum(scale, nd.ones((1,), ctx=ctx, dtype="float32"))
    for a in arrays:
        a *= scale.as_in_context(a.context).astype(a.dtype)
    return value if check_isfinite else total_norm


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of the file ``filename`` is ``sha1_hash`` (hexadecimal digits; MXNet
    compared only as many leading digits as ``sha1_hash`` has, and so does this)."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha1.update(chunk)
    digest = sha1.hexdigest()
    return digest[:len(sha1_hash)] == sha1_hash.lower() if sha1_hash else False


def _target(url, path):
    """The file ``download`` writes: ``path`` itself, or the URL's last part in the folder
    ``path`` (default: the current folder)."""
    name = url.split("/")[-1]
    if path is not None:
        path = os.path.expanduser(path)
        if not os.path.isdir(path):
            return path
    if not name:
        raise MXNetError(f"download: cannot name a file after the URL {url!r} (it ends in "
                         "'/'); give path")
    return name if path is None else os.path.join(path, name)


def _fetch_to(url, fname, verify_ssl):
    """Copy ``url`` to ``fname`` through a temporary file beside it, so that an interrupted
    transfer never leaves a partial file a later call would take for a finished one."""
    context = None if verify_ssl else ssl._create_unverified_context()  # noqa: SLF001
    partial = f"{fname}.{uuid.uuid4()}"
    try:
        with urllib.request.urlopen(url, timeout=60, context=context) as response, \
                open(partial, "wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
        os.replace(partial, fname)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download ``url`` to ``path`` (a file, or a folder that receives the URL's last part;
    default the current folder) and return the file's name.

    An existing file is kept unless ``overwrite`` or, when ``sha1_hash`` is given, its SHA-1
    differs. Any URL scheme of ``urllib`` works (``file://`` included). ``retries`` further
    attempts follow a failure; the last raises MXNetError naming the URL and the file. A
    downloaded file whose SHA-1 is not ``sha1_hash`` raises MXNetError (MXNet raised a
    ``UserWarning`` as an exception and kept the file; mxlite removes it, so that the next
    call does not find a file it would have to check again).
    """
    fname = _target(url, path)
    if not isinstance(retries, int) or retries < 0:
        raise MXNetError(f"download: retries must be an int >= 0, got {retries!r}")
    if not (overwrite or not os.path.exists(fname)
            or (sha1_hash and not check_sha1(fname, sha1_hash))):
        return fname
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). Adding "
                      "certificate verification is strongly advised.", stacklevel=2)
    os.makedirs(os.path.dirname(os.path.abspath(fname)), exist_ok=True)
    for attempt in range(retries + 1):
        try:
            _fetch_to(url, fname, verify_ssl)
            break
        except (urllib.error.URLError, OSError, ValueError) as err:
            if attempt == retries:
                raise MXNetError(f"download: could not fetch {url!r} to {fname!r} after "
                                 f"{retries + 1} attempts: {err}") from None
    if sha1_hash and not check_sha1(fname, sha1_hash):
        os.remove(fname)
        raise MXNetError(f"download: the file {fname!r} from {url!r} does not have the SHA-1 "
                         f"{sha1_hash}; the repository or the connection gave other content")
    return fname


def _get_repo_url():
    """The base URL of the Gluon dataset and model repository (``MXNET_GLUON_REPO``, read each
    call, ending in '/')."""
    repo = os.environ.get("MXNET_GLUON_REPO", _DEFAULT_REPO)
    return repo if repo.endswith("/") else repo + "/"


def _get_repo_file_url(namespace, filename):
    """The URL of ``filename`` under ``namespace`` in the Gluon repository."""
    return f"{_get_repo_url()}{namespace}/{filename}"
