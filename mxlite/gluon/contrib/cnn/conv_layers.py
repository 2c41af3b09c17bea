"""Deformable convolution layers (MXNet 1.9.1's ``gluon.contrib.cnn``): a regular
convolution computes, at each output position, an offset for every kernel tap (and, for the
modulated version, a mask); ``contrib.DeformableConvolution`` /
``contrib.ModulatedDeformableConvolution`` then convolve the input sampled (bilinearly) at
the moved taps. Both convolutions are learned; the offsets start at zero (the default
``offset_*_initializer``), where the layer is a regular convolution.

Parameters, as MXNet's: ``offset_weight`` ``(offsets, in_channels / groups, kh, kw)`` and
``offset_bias`` ``(offsets,)`` with ``offsets = num_deformable_group * 2 * kh * kw`` (``3 *``
for the modulated layer: two coordinates and a mask per tap); ``deformable_conv_weight``
``(channels, in_channels / groups, kh, kw)`` and ``deformable_conv_bias`` ``(channels,)``.
``in_channels=0`` is inferred at the first forward. 2-D, 'NCHW' only (the operators').
"""
import numbers

from ....base import MXNetError
from ...block import HybridBlock
from ...nn import Activation
from ...nn.conv_layers import _tuple

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _positive(value, what, who):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise MXNetError(f"{who}: {what} must be a positive integer, got {value!r}")
    return int(value)


class _DeformableConv(HybridBlock):
    """What the two layers share; ``_channels_per_tap`` is 2 (y, x) or 3 (y, x, mask)."""

    _channels_per_tap = 2
    _op_name = ""

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True, op_name=None,
                 adj=None, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        who = type(self).__name__
        if layout != "NCHW":
            raise MXNetError(f"{who}: only the 'NCHW' layout is supported, got {layout!r}")
        if adj:
            raise MXNetError(f"{who}: adj (output padding) applies to transposed "
                             f"convolutions only, got {adj!r}")
        channels = _positive(channels, "channels", who)
        groups = _positive(groups, "groups", who)
        num_deformable_group = _positive(num_deformable_group, "num_deformable_group", who)
        kernel = _tuple(kernel_size, 2, "kernel_size", who)
        taps = kernel[0] * kernel[1]
        offsets = num_deformable_group * self._channels_per_tap * taps
        for what, n in (("channels", channels), ("in_channels", in_channels),
                        (f"the offset channels (num_deformable_group * "
                         f"{self._channels_per_tap} * kh * kw = {offsets})", offsets)):
            if n % groups:
                raise MXNetError(f"{who}: {what} must be divisible by groups={groups}, "
                                 f"got {n}")
        self._channels, self._in_channels = channels, in_channels
        self._offset_split = num_deformable_group * 2 * taps
        common = {"kernel": kernel, "stride": _tuple(strides, 2, "strides", who),
                  "dilate": _tuple(dilation, 2, "dilation", who),
                  "pad": _tuple(padding, 2, "padding", who), "num_group": groups,
                  "layout": layout}
        self._kwargs_offset = dict(common, num_filter=offsets, no_bias=not offset_use_bias)
        self._kwargs_deformable_conv = dict(common, num_filter=channels,
                                            num_deformable_group=num_deformable_group,
                                            no_bias=not use_bias)
        per_group = in_channels // groups
        with self.name_scope():
            self._make_params(
                ("offset", (offsets, per_group) + kernel, (offsets,), offset_use_bias,
                 offset_weight_initializer, offset_bias_initializer),
                ("deformable_conv", (channels, per_group) + kernel, (channels,), use_bias,
                 weight_initializer, bias_initializer))
            self.act = Activation(activation, prefix=activation + "_") \
                if activation else None

    def _make_params(self, offset, conv):
        """The offset convolution's and the deformable convolution's weight and bias (MXNet
        creates them in this order; the modulated layer reverses it)."""
        for name, wshape, bshape, use_bias, winit, binit in (offset, conv):
            setattr(self, name + "_weight", self.params.get(
                name + "_weight", shape=wshape, init=winit, allow_deferred_init=True))
            setattr(self, name + "_bias", self.params.get(
                name + "_bias", shape=bshape, init=binit, allow_deferred_init=True)
                if use_bias else None)

    def _offsets(self, F, x, offset_weight, offset_bias):
        """The offset convolution's output (N, offsets, Ho, Wo)."""
        args = (x, offset_weight) if offset_bias is None else (x, offset_weight, offset_bias)
        return F.Convolution(*args, **self._kwargs_offset)

    def _deform(self, F, x, weight, bias, **inputs):
        op = getattr(F.contrib, self._op_name)
        if bias is not None:
            inputs["bias"] = bias
        out = op(data=x, weight=weight, name="fwd", **inputs, **self._kwargs_deformable_conv)
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        k = self._kwargs_deformable_conv
        s = f"{type(self).__name__}({{mapping}}, kernel_size={k['kernel']}, stride={k['stride']}"
        if k["pad"] != (0, 0):
            s += f", padding={k['pad']}"
        if k["dilate"] != (1, 1):
            s += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.deformable_conv_bias is None:
            s += ", bias=False"
        if self.act is not None:
            s += f", {self.act}"
        shape = self.deformable_conv_weight.shape
        return s.format(mapping=f"{shape[1] or None} -> {shape[0]}") + ")"


class DeformableConvolution(_DeformableConv):
    """2-D deformable convolution (Dai et al., 2017): ``channels`` filters of
    ``kernel_size`` whose taps move by offsets that a regular convolution of the input
    computes. ``strides``, ``padding``, ``dilation``, ``groups``, ``num_deformable_group``
    (channel groups sharing one offset map), ``use_bias``, ``in_channels``, ``activation``,
    the initializers and ``offset_use_bias`` as MXNet's; ``layout`` 'NCHW' only.

    >>> layer = mx.gluon.contrib.cnn.DeformableConvolution(4, kernel_size=3, padding=1)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((2, 3, 5, 5))).shape
    (2, 4, 5, 5)
    """

    _op_name = "DeformableConvolution"

    def _alias(self):
        return "deformable_conv"

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        """The offsets, then the deformable convolution and the activation."""
        offset = self._offsets(F, x, offset_weight, offset_bias)
        return self._deform(F, x, deformable_conv_weight, deformable_conv_bias, offset=offset)


class ModulatedDeformableConvolution(_DeformableConv):
    """2-D modulated deformable convolution (DCNv2, Zhu et al., 2019): as
    DeformableConvolution, and each moved tap is also scaled by a mask, ``2 *
    sigmoid(.)`` of the offset convolution's last ``num_deformable_group * kh * kw``
    channels (so 1 where those are zero, as they start).

    >>> layer = mx.gluon.contrib.cnn.ModulatedDeformableConvolution(4, kernel_size=3)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((2, 3, 5, 5))).shape
    (2, 4, 3, 3)
    """

    _channels_per_tap = 3
    _op_name = "ModulatedDeformableConvolution"

    def _make_params(self, offset, conv):
        super()._make_params(conv, offset)

    def _alias(self):
        return "modulated_deformable_conv"

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        """The offsets and mask, then the modulated deformable convolution."""
        offset = self._offsets(F, x, offset_weight, offset_bias)
        moves = F.slice_axis(offset, axis=1, begin=0, end=self._offset_split)
        mask = F.sigmoid(F.slice_axis(offset, axis=1, begin=self._offset_split, end=None)) * 2
        return self._deform(F, x, deformable_conv_weight, deformable_conv_bias, offset=moves,
                            mask=mask)
