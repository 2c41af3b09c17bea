"""Predefined image-classification networks and their published weights (MXNet 1.x's
``mx.gluon.model_zoo``): ``vision.get_model(name)`` builds one, ``pretrained=True`` loads
MXNet's ``.params`` file for it from a local folder (see ``model_store``)."""
from . import model_store, vision
from .vision import get_model

__all__ = ["model_store", "vision", "get_model"]
