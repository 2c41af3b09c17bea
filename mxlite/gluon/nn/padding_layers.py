"""Padding layers (MXNet 1.9.1's ``gluon.nn.ReflectionPad2D``) over the ``Pad``
operator."""
import numbers

from ...base import MXNetError
from ..block import HybridBlock

__all__ = ["ReflectionPad2D"]


def _pad_width(padding, who):
    """MXNet's ``padding``: one int for all four borders of H and W, or the operator's
    8-entry ``pad_width`` (before/after for N, C, H, W; N and C must be 0)."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        padding = (0, 0, 0, 0) + (int(padding),) * 4
    else:
        try:
            padding = tuple(padding)
        except TypeError:
            raise MXNetError(f"{who}: padding must be an int or a tuple of 8 ints, got "
                             f"{padding!r}") from None
    if len(padding) != 8 or not all(isinstance(p, numbers.Integral) and
                                    not isinstance(p, bool) for p in padding):
        raise MXNetError(f"{who}: padding must be an int or a tuple of 8 ints (before/after "
                         f"for N, C, H, W), got {padding!r}")
    if any(p < 0 for p in padding):
        raise MXNetError(f"{who}: padding must not be negative, got {padding!r}")
    return tuple(int(p) for p in padding)


class ReflectionPad2D(HybridBlock):
    """Pads the H and W axes of ``(N, C, H, W)`` data by reflection about the border,
    without repeating the border value (``numpy.pad(mode='reflect')``). ``padding`` is one
    int (every border of H and W) or the 8 entries of ``Pad``'s ``pad_width``. Each width
    must be smaller than its axis (the operator checks it).

    >>> layer = mx.gluon.nn.ReflectionPad2D(1)
    >>> y = layer(mx.nd.array([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]]))
    >>> y.shape, y[0, 0, 1].asnumpy().tolist()
    ((1, 1, 4, 5), [2.0, 1.0, 2.0, 3.0, 2.0])
    """

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        self._padding = _pad_width(padding, type(self).__name__)

    def hybrid_forward(self, F, x):
        """The reflection padding."""
        return F.pad(x, mode="reflect", pad_width=self._padding, name="fwd")

    def __repr__(self):
        return f"{type(self).__name__}(padding={self._padding})"
