"""``gluon.contrib.estimator``: a training loop driven by event handlers (MXNet 1.9.1's
``Estimator``, ``BatchProcessor`` and the handlers of ``event_handler``)."""
from . import batch_processor, estimator, event_handler
from .batch_processor import *  # noqa: F401,F403  (MXNet re-exported these names here)
from .estimator import *  # noqa: F401,F403
from .event_handler import *  # noqa: F401,F403

__all__ = (["batch_processor", "estimator", "event_handler"] + batch_processor.__all__
           + estimator.__all__ + event_handler.__all__)
