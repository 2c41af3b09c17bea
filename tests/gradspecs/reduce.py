"""Gradient specs: reductions and sum_to."""
from . import Spec

X = (2, 3, 4)
POS = (0.5, 1.5)

SPECS = {
    "sum": Spec([X], lambda nd, x: nd.sum(x * x, axis=(0, 2))),
    "mean": Spec([X], lambda nd, x: nd.mean(x * x, axis=1, keepdims=True)),
    "nansum": Spec([X], lambda nd, x: nd.nansum(x * x, axis=2, exclude=True)),
    "prod": Spec([X], lambda nd, x: nd.prod(x, axis=1), [POS]),
    "nanprod": Spec([X], lambda nd, x: nd.nanprod(x * x, axis=(1, 2)), [POS]),
    # random samples: ties (the kink of max/min) have probability zero
    "max": Spec([X], lambda nd, x: nd.max(x * x, axis=1)),
    "min": Spec([X], lambda nd, x: nd.min(x * x, axis=-1, keepdims=True)),
    "norm": Spec([X], lambda nd, x: nd.norm(x, axis=(0, 1)) * nd.norm(x, ord=1, axis=2).sum(),
                 [POS]),
    "sum_to": Spec([X], lambda nd, x: nd.sum_to(x * x, shape=(3, 1))),
}
