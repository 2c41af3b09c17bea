"""Where the published weights of the model zoo live on disk, and their checksums.

MXNet downloaded ``<name>-<first 8 hex digits of the sha1>.params`` from its S3 bucket into
``$MXNET_HOME/models``. mxlite never goes to the network: put the file in ``root`` (fetch it
from the URL ``model_url(name)`` gives, unzip it) and ``get_model_file`` checks its sha1.
The checksums are MXNet 1.9.1's, so a file MXNet downloaded is accepted as it is.
"""
import hashlib
import os

from ... import base
from ...base import MXNetError

__all__ = ["get_model_file", "purge", "short_hash", "model_url"]

_MODEL_SHA1 = {
    "alexnet": "44335d1f0046b328243b32a26a4fbd62d9057b45",
    "densenet121": "f27dbf2dbd5ce9a80b102d89c7483342cd33cb31",
    "densenet161": "b6c8a95717e3e761bd88d145f4d0a214aaa515dc",
    "densenet169": "2603f878403c6aa5a71a124c4a3307143d6820e9",
    "densenet201": "1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb",
    "inceptionv3": "ed47ec45a937b656fcc94dabde85495bbef5ba1f",
    "mobilenet0.25": "9f83e440996887baf91a6aff1cccc1c903a64274",
    "mobilenet0.5": "8e9d539cc66aa5efa71c4b6af983b936ab8701c3",
    "mobilenet0.75": "529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2",
    "mobilenet1.0": "6b8c5106c730e8750bcd82ceb75220a3351157cd",
    "mobilenetv2_1.0": "36da4ff1867abccd32b29592d79fc753bca5a215",
    "mobilenetv2_0.75": "e2be7b72a79fe4a750d1dd415afedf01c3ea818d",
    "mobilenetv2_0.5": "aabd26cd335379fcb72ae6c8fac45a70eab11785",
    "mobilenetv2_0.25": "ae8f9392789b04822cbb1d98c27283fc5f8aa0a7",
    "resnet18_v1": "a0666292f0a30ff61f857b0b66efc0228eb6a54b",
    "resnet34_v1": "48216ba99a8b1005d75c0f3a0c422301a0473233",
    "resnet50_v1": "0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce",
    "resnet101_v1": "d988c13d6159779e907140a638c56f229634cb02",
    "resnet152_v1": "671c637a14387ab9e2654eafd0d493d86b1c8579",
    "resnet18_v2": "a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657",
    "resnet34_v2": "9d6b80bbc35169de6b6edecffdd6047c56fdd322",
    "resnet50_v2": "ecdde35339c1aadbec4f547857078e734a76fb49",
    "resnet101_v2": "18e93e4f48947e002547f50eabbcc9c83e516aa6",
    "resnet152_v2": "f2695542de38cf7e71ed58f02893d82bb409415e",
    "squeezenet1.0": "264ba4970a0cc87a4f15c96e25246a1307caf523",
    "squeezenet1.1": "33ba0f93753c83d86e1eb397f38a667eaf2e9376",
    "vgg11": "dd221b160977f36a53f464cb54648d227c707a05",
    "vgg11_bn": "ee79a8098a91fbe05b7a973fed2017a6117723a8",
    "vgg13": "6bc5de58a05a5e2e7f493e2d75a580d83efde38c",
    "vgg13_bn": "7d97a06c3c7a1aecc88b6e7385c2b373a249e95e",
    "vgg16": "e660d4569ccb679ec68f1fd3cce07a387252a90a",
    "vgg16_bn": "7f01cf050d357127a73826045c245041b0df7363",
    "vgg19": "ad2f660d101905472b83590b59708b71ea22b2e5",
    "vgg19_bn": "f360b758e856f1074a85abd5fd873ed1d98297c3",
}

_REPO_URL = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def default_root():
    """``$MXNET_HOME/models`` (``~/.mxnet/models`` without it), read at each call."""
    return os.path.join(base.data_dir(), "models")


def short_hash(name):
    """The first 8 hex digits of the sha1 of model ``name``'s published weights."""
    if name not in _MODEL_SHA1:
        raise MXNetError(f"model_store: no pretrained weights for model {name!r}; the "
                         f"published ones are {', '.join(sorted(_MODEL_SHA1))}")
    return _MODEL_SHA1[name][:8]


def file_name(name):
    """``<name>-<short hash>.params``: the file ``get_model_file`` looks for."""
    return f"{name}-{short_hash(name)}.params"


def model_url(name):
    """Where MXNet downloaded model ``name``'s weights from (a zip holding ``file_name``);
    ``MXNET_GLUON_REPO`` replaces the host, as in MXNet."""
    repo = os.environ.get("MXNET_GLUON_REPO", _REPO_URL)
    if not repo.endswith("/"):
        repo += "/"
    return f"{repo}gluon/models/{file_name(name)[:-len('.params')]}.zip"


def _sha1_of(path):
    """The sha1 hex digest of a file, read in 1 MiB pieces (weights run to 500 MB)."""
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


def get_model_file(name, root=None):
    """The path of model ``name``'s published weights in ``root`` (default
    ``$MXNET_HOME/models``), after checking the file's sha1 against MXNet's.

    mxlite does not download: a missing file, or one whose content differs, raises an
    MXNetError naming the file, the sha1 expected and the URL MXNet fetched it from.
    """
    path = os.path.join(os.path.expanduser(root or default_root()), file_name(name))
    expected = _MODEL_SHA1[name]
    where = f"download {model_url(name)} and unzip it into {os.path.dirname(path)}"
    if not os.path.isfile(path):
        raise MXNetError(f"get_model_file: pretrained weights of {name!r} not found: "
                         f"{path} (sha1 {expected}); mxlite does not download, {where}")
    actual = _sha1_of(path)
    if actual != expected:
        raise MXNetError(f"get_model_file: {path} has sha1 {actual}, but MXNet's weights of "
                         f"{name!r} have sha1 {expected}; {where}")
    return path


def load_pretrained(net, name, ctx, root):
    """Load model ``name``'s published weights into ``net`` on ``ctx``; returns ``net``."""
    net.load_parameters(get_model_file(name, root=root), ctx=ctx)
    return net


def purge(root=None):
    """Delete every ``.params`` file in ``root`` (default ``$MXNET_HOME/models``)."""
    root = os.path.expanduser(root or default_root())
    for entry in os.listdir(root):
        if entry.endswith(".params"):
            os.remove(os.path.join(root, entry))
