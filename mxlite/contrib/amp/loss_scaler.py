"""Dynamic loss scaling for mixed-precision training (MXNet's ``amp`` loss scaler).

Small gradients underflow to zero in float16. Multiplying the loss by a large scale before
``backward`` multiplies every gradient by the same factor, so they survive; the gradients
are divided by the scale again before the update. A scale that is too large makes some
gradient overflow to inf or NaN: then the step is skipped and the scale shrinks. After
``scale_window`` steps in a row without overflow the scale grows again, so it keeps
tracking the largest value that still fits. Powers of two (the defaults) make scaling and
unscaling exact.

The overflow check is one ``mx.nd.contrib.all_finite`` call over all the gradients: a
single pass that stops at the first non-finite block. ``amp.init_trainer`` gives a Gluon
``Trainer`` one of these (MXNet's ``LossScaler``); it can also drive a hand-written loop:

>>> import mxlite as mx
>>> from mxlite.contrib import amp
>>> scaler = amp.DynamicLossScaler()
>>> w = mx.nd.array([1.0, 2.0])
>>> w.attach_grad()
>>> with mx.autograd.record():
...     loss = mx.nd.dot(w, w)
...     with amp.scale_loss(loss, scaler) as scaled:
...         scaled.backward()
>>> w.grad.asnumpy().tolist()          # scaled by 2**16
[131072.0, 262144.0]
>>> def sgd():
...     w[:] = w - 0.25 * w.grad
>>> scaler.step([w.grad], sgd)         # finite: unscale, update, count a good step
True
>>> w.grad.asnumpy().tolist(), w.asnumpy().tolist()
([2.0, 4.0], [0.5, 1.0])
"""
import math

from ... import autograd
from ... import ndarray as nd
from ...base import MXNetError

__all__ = ["DynamicLossScaler"]


def _number(name, value, low, high=math.inf, low_open=False):
    """``value`` as a float in [low, high] ((low, high] when ``low_open``); else MXNetError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise MXNetError(f"DynamicLossScaler: {name} must be a number, got {value!r}") from None
    if math.isnan(v) or v > high or v < low or (low_open and v == low):
        bounds = f"{'(' if low_open else '['}{low}, {high}]"
        raise MXNetError(f"DynamicLossScaler: {name} must be in {bounds}, got {value!r}")
    return v


class DynamicLossScaler:
    """Scale the loss, check the gradients, skip overflowing steps, adapt the scale.

    Parameters (MXNet's amp defaults):

    * ``init_scale``: the first loss scale (2**16).
    * ``scale_factor``: the scale is divided by it on overflow and multiplied by it to
      grow (2).
    * ``scale_window``: good steps in a row after which the scale grows (2000).
    * ``tolerance``: fraction of the steps since the last rescale that may overflow before
      the scale shrinks; 0 (default) shrinks on every overflow.
    * ``min_scale``, ``max_scale``: bounds of the scale (1 and 2**24, MXNet's maximum).

    Use ``scale(loss)`` (or ``scale_loss``) under ``autograd.record()``, call ``backward``,
    then ``step(grads, update)``: it checks the gradients with ``all_finite``; if they are
    finite it divides them by the scale (in place) and calls ``update()``; either way it
    updates the scale. ``has_overflow``, ``unscale`` and ``update_scale`` are the pieces.
    """

    def __init__(self, init_scale=2.0 ** 16, scale_factor=2.0, scale_window=2000,
                 tolerance=0.0, min_scale=1.0, max_scale=2.0 ** 24):
        self.min_scale = _number("min_scale", min_scale, 0.0, low_open=True)
        self.max_scale = _number("max_scale", max_scale, self.min_scale, 3.0e38)
        self.loss_scale = _number("init_scale", init_scale, self.min_scale, self.max_scale)
        self.scale_factor = _number("scale_factor", scale_factor, 1.0, low_open=True)
        self.tolerance = _number("tolerance", tolerance, 0.0, 1.0)
        if isinstance(scale_window, bool) or not isinstance(scale_window, int) \
                or scale_window < 1:
            raise MXNetError(f"DynamicLossScaler: scale_window must be an integer >= 1, got "
                             f"{scale_window!r}")
        self.scale_window = scale_window
        self.num_steps = 0                  # steps seen by update_scale
        self.num_skipped = 0                # of those, steps that overflowed
        self._good_in_a_row = 0             # steps without overflow since the last one/growth
        self._steps_since_rescale = 0
        self._overflows_since_rescale = 0

    def __repr__(self):
        return (f"DynamicLossScaler(loss_scale={self.loss_scale}, steps={self.num_steps}, "
                f"skipped={self.num_skipped})")

    # ---- the pieces --------------------------------------------------------------------------
    def scale(self, loss):
        """``loss * loss_scale`` (a list of losses gives a list); call under ``record()``."""
        if isinstance(loss, (list, tuple)):
            return [x * self.loss_scale for x in loss]
        return loss * self.loss_scale

    def has_overflow(self, grads):
        """True when some gradient holds an infinity or a NaN (``None`` entries are skipped)."""
        grads = [g for g in grads if g is not None]
        if not grads:
            return False
        with autograd.pause():
            flag = nd.contrib.all_finite(*grads)
        return float(flag.asscalar()) == 0.0

    def unscale(self, grads):
        """Divide every gradient by the loss scale, in place."""
        inverse = 1.0 / self.loss_scale
        with autograd.pause():
            for g in grads:
                if g is not None:
                    g *= inverse

    def update_scale(self, overflow):
        """Count one step: on overflow maybe shrink the scale; after ``scale_window`` good
        steps in a row grow it. Returns the new scale."""
        self.num_steps += 1
        self._steps_since_rescale += 1
        if overflow:
            self.num_skipped += 1
            self._good_in_a_row = 0
            self._overflows_since_rescale += 1
            if self._overflows_since_rescale >= self.tolerance * self._steps_since_rescale:
                self._rescale(max(self.loss_scale / self.scale_factor, self.min_scale))
        else:
            self._good_in_a_row += 1
            if self._good_in_a_row >= self.scale_window:
                self._good_in_a_row = 0
                self._rescale(min(self.loss_scale * self.scale_factor, self.max_scale))
        return self.loss_scale

    def _rescale(self, new_scale):
        self.loss_scale = new_scale
        self._steps_since_rescale = 0
        self._overflows_since_rescale = 0

    def check(self, params):
        """Count one step of a Gluon ``Trainer`` over the Parameters ``params``: True when
        one of their gradients overflowed (the Trainer then skips the update). The scale
        follows ``update_scale``. (MXNet's ``LossScaler.has_overflow(params)``.)"""
        grads = [g for p in params if p.grad_req != "null" and p._data is not None
                 for g in p.list_grad()]
        overflow = self.has_overflow(grads)
        self.update_scale(overflow)
        return overflow

    # ---- all together --------------------------------------------------------------------------
    def step(self, grads, update):
        """One optimizer step with loss scaling; returns True when ``update()`` ran.

        ``grads`` are the gradients of the *scaled* loss. When one of them overflowed the
        step is skipped (``update`` is not called, gradients are left as they are) and the
        scale shrinks; otherwise the gradients are unscaled in place and ``update()`` runs.
        """
        grads = list(grads)
        overflow = self.has_overflow(grads)
        if not overflow:
            self.unscale(grads)
            update()
        self.update_scale(overflow)
        return not overflow
