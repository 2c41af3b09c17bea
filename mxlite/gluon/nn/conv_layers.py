"""Convolution and pooling layers (MXNet 1.x ``mx.gluon.nn.conv_layers``): thin blocks
over the registered ``Convolution``, ``Deconvolution`` and ``Pooling`` operators."""
import numbers

from ... import symbol
from ...base import MXNetError
from ..block import HybridBlock
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D"]


def _tuple(value, n, what, who):
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    value = tuple(value)
    if len(value) != n:
        raise MXNetError(f"{who}: {what} must be a number or a list of {n} ints, got {value}")
    return value


def _check_layout(who, layout, allowed):
    if layout not in allowed:
        raise MXNetError(f"{who}: only {' and '.join(allowed)} layouts are supported, got "
                         f"{layout!r}")


def _infer_weight_shape(op_name, in_channels, layout, kwargs):
    """The weight and bias shapes the operator's own shape rule gives (0 for the input
    channels while ``in_channels`` is 0): inferred for one sample whose spatial size is one
    kernel window."""
    kernel, dilate = kwargs["kernel"], kwargs["dilate"]
    dshape = [0] * (len(kernel) + 2)
    spatial = iter((k - 1) * d + 1 for k, d in zip(kernel, dilate))
    for i, axis in enumerate(layout):
        dshape[i] = 1 if axis == "N" else (in_channels or kwargs["num_group"]) \
            if axis == "C" else next(spatial)
    data = symbol.var("data", shape=tuple(dshape))
    shapes = [tuple(s) for s in getattr(symbol, op_name)(data, **kwargs).infer_shape()[0]]
    if not in_channels:         # the axis of the input channels is not known yet
        axis = 0 if op_name == "Deconvolution" else layout.index("C")   # (O, C, k..) or (O, k.., C)
        shapes[1] = shapes[1][:axis] + (0,) + shapes[1][axis + 1:]
    return shapes


class _Conv(HybridBlock):
    """What the convolution layers share: weight ``(channels, in_channels / groups,
    *kernel)`` (``in_channels=0`` is inferred at the first forward), bias, activation."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", op_name="Convolution", adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        who = type(self).__name__
        n = len(kernel_size)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            self._op_name = op_name
            self._kwargs = {
                "kernel": kernel_size, "stride": _tuple(strides, n, "strides", who),
                "dilate": _tuple(dilation, n, "dilation", who),
                "pad": _tuple(padding, n, "padding", who), "num_filter": channels,
                "num_group": groups, "no_bias": not use_bias, "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj
            wshapes = _infer_weight_shape(op_name, in_channels, layout, self._kwargs)
            self.weight = self.params.get("weight", shape=wshapes[1], init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=wshapes[2], init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") \
                if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):
        """The convolution and the activation."""
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name="fwd", **self._kwargs)
        else:
            out = op(x, weight, bias, name="fwd", **self._kwargs)
        return self.act(out) if self.act is not None else out

    def _alias(self):
        return "conv"

    def __repr__(self):
        k = self._kwargs
        n = len(k["kernel"])
        s = f"{type(self).__name__}({{mapping}}, kernel_size={k['kernel']}, stride={k['stride']}"
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        if k.get("adj") and k["adj"] != (0,) * n:
            s += f", output_padding={k['adj']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        shape = self.weight.shape
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}") + ")"


def _conv_class(name, ndim, layouts, transpose):
    """A ``ConvND`` / ``ConvNDTranspose`` class (MXNet's signatures and defaults)."""
    default_layout = layouts[0]
    op_name = "Deconvolution" if transpose else "Convolution"

    def __init__(self, channels, kernel_size, strides=1, padding=0, *rest, **kwargs):
        names = (("output_padding",) if transpose else ()) + (
            "dilation", "groups", "layout", "activation", "use_bias", "weight_initializer",
            "bias_initializer", "in_channels")
        defaults = dict(output_padding=0, dilation=1, groups=1, layout=default_layout,
                        activation=None, use_bias=True, weight_initializer=None,
                        bias_initializer="zeros", in_channels=0)
        if len(rest) > len(names):
            raise MXNetError(f"{name}: too many positional arguments")
        opts = dict(defaults)
        opts.update(zip(names, rest))
        for k in list(kwargs):
            if k in defaults:
                opts[k] = kwargs.pop(k)
        _check_layout(name, opts["layout"], layouts)
        kernel_size = _tuple(kernel_size, ndim, "kernel_size", name)
        adj = _tuple(opts["output_padding"], ndim, "output_padding", name) if transpose else None
        _Conv.__init__(self, channels, kernel_size, strides, padding, opts["dilation"],
                       opts["groups"], opts["layout"], opts["in_channels"], opts["activation"],
                       opts["use_bias"], opts["weight_initializer"], opts["bias_initializer"],
                       op_name, adj, **kwargs)
        if transpose:
            self.outpad = adj

    kind = "transposed convolution (Deconvolution)" if transpose else "convolution"
    doc = (f"{ndim}-D {kind} layer over ``{default_layout}`` data: ``channels`` filters of "
           f"``kernel_size``; ``strides``, ``padding``, "
           f"{'``output_padding``, ' if transpose else ''}``dilation``, ``groups``, "
           "``layout``, ``activation``, ``use_bias``, ``weight_initializer``, "
           "``bias_initializer``, ``in_channels`` (0: inferred at the first forward) as "
           "MXNet's.")
    __init__.__doc__ = doc
    return type(name, (_Conv,), {"__init__": __init__, "__doc__": doc})


Conv1D = _conv_class("Conv1D", 1, ("NCW",), False)
Conv2D = _conv_class("Conv2D", 2, ("NCHW", "NHWC"), False)
Conv3D = _conv_class("Conv3D", 3, ("NCDHW", "NDHWC"), False)
Conv1DTranspose = _conv_class("Conv1DTranspose", 1, ("NCW",), True)
Conv2DTranspose = _conv_class("Conv2DTranspose", 2, ("NCHW", "NHWC"), True)
Conv3DTranspose = _conv_class("Conv3DTranspose", 3, ("NCDHW", "NDHWC"), True)


class _Pooling(HybridBlock):
    """What the pooling layers share (``Pooling`` with MXNet's parameters)."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        n = len(pool_size)
        if strides is None:
            strides = pool_size
        who = type(self).__name__
        self._kwargs = {
            "kernel": pool_size, "stride": _tuple(strides, n, "strides", who),
            "pad": _tuple(padding, n, "padding", who), "global_pool": global_pool,
            "pool_type": pool_type, "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        """The pooling."""
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return (f"{type(self).__name__}(size={k['kernel']}, stride={k['stride']}, "
                f"padding={k['pad']}, ceil_mode={k['pooling_convention'] == 'full'}, "
                f"global_pool={k['global_pool']}, pool_type={k['pool_type']}, "
                f"layout={k['layout']})")


def _pool_class(name, ndim, layouts, pool_type):
    """A ``MaxPoolND`` / ``AvgPoolND`` class."""
    avg = pool_type == "avg"

    def __init__(self, pool_size=2, strides=None, padding=0, layout=layouts[0],
                 ceil_mode=False, *rest, **kwargs):
        count_include_pad = kwargs.pop("count_include_pad", rest[0] if rest else True)
        _check_layout(name, layout, layouts)
        _Pooling.__init__(self, _tuple(pool_size, ndim, "pool_size", name), strides, padding,
                          ceil_mode, False, pool_type, layout,
                          count_include_pad if avg else None, **kwargs)

    doc = (f"{ndim}-D {'average' if avg else 'max'} pooling over ``{layouts[0]}`` data: "
           "``pool_size`` windows, ``strides`` (default: the pool size), ``padding``, "
           f"``layout``, ``ceil_mode``{', ``count_include_pad``' if avg else ''} as MXNet's.")
    __init__.__doc__ = doc
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc})


def _global_pool_class(name, ndim, layouts, pool_type):
    """A ``GlobalMaxPoolND`` / ``GlobalAvgPoolND`` class (output size 1 on each spatial
    axis)."""

    def __init__(self, layout=layouts[0], **kwargs):
        _check_layout(name, layout, layouts)
        _Pooling.__init__(self, (1,) * ndim, None, 0, True, True, pool_type, layout, **kwargs)

    doc = (f"Global {'average' if pool_type == 'avg' else 'max'} pooling over the "
           f"{ndim} spatial axes of ``{layouts[0]}`` data.")
    __init__.__doc__ = doc
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc})


_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
MaxPool1D, MaxPool2D, MaxPool3D = (_pool_class(f"MaxPool{n}D", n, _LAYOUTS[n], "max")
                                   for n in (1, 2, 3))
AvgPool1D, AvgPool2D, AvgPool3D = (_pool_class(f"AvgPool{n}D", n, _LAYOUTS[n], "avg")
                                   for n in (1, 2, 3))
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = (
    _global_pool_class(f"GlobalMaxPool{n}D", n, _LAYOUTS[n], "max") for n in (1, 2, 3))
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (
    _global_pool_class(f"GlobalAvgPool{n}D", n, _LAYOUTS[n], "avg") for n in (1, 2, 3))
