"""``gluon.contrib.data``: MXNet 1.x's contributed data helpers -- ``IntervalSampler``.
(MXNet's ``text`` datasets, WikiText-2/103, which download their corpora, are not here.)"""
from . import sampler
from .sampler import *              # noqa: F401,F403

__all__ = sampler.__all__
