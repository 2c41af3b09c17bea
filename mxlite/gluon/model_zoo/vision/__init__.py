"""The model zoo's image classifiers (MXNet 1.x's ``mx.gluon.model_zoo.vision``): AlexNet,
DenseNet, Inception v3, MobileNet v1/v2, ResNet v1/v2, SqueezeNet and VGG, with MXNet's
parameter names so that MXNet's published weights load (``pretrained=True``).

The pretrained models expect RGB images of at least 224x224 (299x299 for Inception v3)
scaled to [0, 1] and normalised with mean (0.485, 0.456, 0.406) and standard deviation
(0.229, 0.224, 0.225).
"""
from ....base import MXNetError
# the modules first: the star imports then rebind alexnet, ... to the functions
from . import alexnet as _alexnet, densenet as _densenet, inception as _inception, \
    mobilenet as _mobilenet, resnet as _resnet, squeezenet as _squeezenet, vgg as _vgg
from .alexnet import *        # noqa: F401,F403
from .densenet import *       # noqa: F401,F403
from .inception import *      # noqa: F401,F403
from .mobilenet import *      # noqa: F401,F403
from .resnet import *         # noqa: F401,F403
from .squeezenet import *     # noqa: F401,F403
from .vgg import *            # noqa: F401,F403

_MODELS = {
    "alexnet": alexnet,
    "densenet121": densenet121, "densenet161": densenet161,
    "densenet169": densenet169, "densenet201": densenet201,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0, "mobilenet0.75": mobilenet0_75,
    "mobilenet0.5": mobilenet0_5, "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0, "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5, "mobilenetv2_0.25": mobilenet_v2_0_25,
    "resnet18_v1": resnet18_v1, "resnet34_v1": resnet34_v1, "resnet50_v1": resnet50_v1,
    "resnet101_v1": resnet101_v1, "resnet152_v1": resnet152_v1,
    "resnet18_v2": resnet18_v2, "resnet34_v2": resnet34_v2, "resnet50_v2": resnet50_v2,
    "resnet101_v2": resnet101_v2, "resnet152_v2": resnet152_v2,
    "squeezenet1.0": squeezenet1_0, "squeezenet1.1": squeezenet1_1,
    "vgg11": vgg11, "vgg13": vgg13, "vgg16": vgg16, "vgg19": vgg19,
    "vgg11_bn": vgg11_bn, "vgg13_bn": vgg13_bn, "vgg16_bn": vgg16_bn, "vgg19_bn": vgg19_bn,
}


def get_model(name, **kwargs):
    """The model called ``name`` (case-insensitive: ``'resnet18_v1'``, ``'mobilenetv2_0.5'``,
    ``'squeezenet1.1'``, ...), built with ``kwargs``: ``pretrained`` (load MXNet's published
    weights), ``ctx``, ``root`` (where the weights are, default ``$MXNET_HOME/models``),
    ``classes`` and the architecture's own options.

    MXNet raised a ValueError for an unknown name; mxlite raises MXNetError (a ValueError
    too) listing the names it knows.
    """
    if not isinstance(name, str):
        raise MXNetError(f"get_model: name must be a str, got {type(name).__name__}")
    key = name.lower()
    if key not in _MODELS:
        raise MXNetError(f"get_model: model {name!r} is not supported; the models are "
                         f"{', '.join(sorted(_MODELS))}")
    return _MODELS[key](**kwargs)


__all__ = (_alexnet.__all__ + _densenet.__all__ + _inception.__all__ + _mobilenet.__all__
           + _resnet.__all__ + _squeezenet.__all__ + _vgg.__all__ + ["get_model"])
