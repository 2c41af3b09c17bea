"""The channels-last rewrite of a hybridized CPU graph: chains of 2-D convolutions,
batch normalisations and element-wise ops run in NHWC, converted only at the chain's edges.

oneDNN's convolutions are as fast on NHWC data as on its blocked layouts, and mxlite runs
channels-last ``Convolution``, its data gradient and its weight gradient on them directly
(``conv.channels_first_compute``'s native path), while an NCHW convolution reorders its
input into the blocked layout and its output back on every call. Rewriting the graph keeps
the activations of a conv -> BatchNorm -> relu -> conv chain channels last, so only the
graph's edges are converted.

The rewrite is a graph of registered operators, so the gradient graph built from it (every
order) is too:

- an NCHW ``Convolution`` with a 2-D kernel becomes ``Convolution(layout='NHWC')`` of its
  data and its weight moved channels last (``transpose``; the weight variable keeps its
  ``(O, I, kH, kW)`` shape, and its gradient comes back through the transpose's gradient);
- ``BatchNorm`` / ``_contrib_BatchNormWithReLU`` over axis 1 of NHWC data take axis 3, and
  a 2-D or global ``Pooling`` of NHWC data pools it channels last (on oneDNN's nhwc
  pooling, its gradients too);
- an element-wise op (``OpDef.elementwise``: activations, the residual add) with an NHWC
  input stays NHWC where its other inputs are NHWC or 4-D NCHW data (moved channels last:
  a block's shortcut from a pooling);
- every other consumer of an NHWC value, and every graph output, reads it converted back
  to NCHW (one ``transpose`` per value, shared by its readers).

Values, variables and the graph's arguments keep their names, shapes and order. Applied
(``rewrite``) only where it pays: on the CPU with oneDNN in use, float32 arguments, at least
two such convolutions, images of at least ``MIN_PIXELS`` pixels a batch, and
``MXLITE_CHANNELS_LAST`` not ``0``.
"""
import os

import numpy as np

from ..ops import onednn
from ..ops.registry import Attrs, get_op
from .graph import SymNode, topo_order
from .symbol import Symbol

__all__ = ["rewrite", "wanted"]

_TO_LAST, _TO_FIRST = (0, 2, 3, 1), (0, 3, 1, 2)
_NORMS = ("BatchNorm", "_contrib_BatchNormWithReLU")


def _convertible_conv(node):
    return (node.op is not None and node.op.name == "Convolution"
            and len(node.attrs.kernel) == 2 and node.attrs.layout in (None, "NCHW"))


def _planar(node, ins, planes):
    """Whether ``node``'s first output is 4-D NCHW data: a 2-D convolution's or pooling's,
    or an element-wise op's or normalisation's over such data."""
    name = node.op.name
    if name in ("Convolution", "Pooling"):
        return len(node.attrs.kernel) == 2 and node.attrs.layout in (None, "NCHW")
    if name in _NORMS or node.op.elementwise:
        return bool(ins) and all(e in planes for e in ins[:1 if name in _NORMS else None])
    return False


# The least pixels (batch x height x width of the 4-D data) a graph needs for the rewrite
# to pay: the nhwc convolutions save the activations' reorders, but reorder their weights
# more slowly than the blocked ones (oneDNN's generic reorder), which a small batch of small
# images does not win back. Measured here (2 cores, AVX-512), channels-last step time over
# NCHW's: ResNet-18 training 8x224x224 (401k pixels) 0.96, ResNet-50 inference 32x224x224
# 0.93 and 1x224x224 (50k) 1.17, the ResNet-style CNN 32x32x32 (32k) 1.09.
MIN_PIXELS = 1 << 18


def wanted(symbol, ctx, dtypes, shapes):
    """Whether ``rewrite`` pays for ``symbol`` run on ``ctx`` with argument ``dtypes`` and
    ``shapes`` ({name: dtype / shape}): see the module docstring and ``MIN_PIXELS``."""
    if os.environ.get("MXLITE_CHANNELS_LAST", "1") == "0" or ctx.compute_device != "cpu":
        return False
    if not (onednn.available() and onednn.switched_on()):
        return False
    if any(np.dtype(d) != np.float32 for d in dtypes.values()):
        return False
    convs = [n for n in topo_order(symbol._outputs) if _convertible_conv(n)]
    weights = {n.inputs[1][0].name for n in convs if len(n.inputs) > 1}
    pixels = max((s[0] * s[2] * s[3] for name, s in shapes.items()
                  if len(s) == 4 and name not in weights), default=0)
    return len(convs) >= 2 and pixels >= MIN_PIXELS


class _Rewriter:
    """Builds the rewritten graph node by node, in the original creation order (so the
    executor's order, and with it every result, follows the original program's)."""

    def __init__(self):
        self.new = {}           # id(old node) -> new node
        self.last = set()       # the (new node, index) entries that hold NHWC data
        self.planes = set()     # entries known to hold 4-D NCHW data (a 2-D layer's output)
        self.moved = {}         # (id(new node), index, axes) -> transposed entry

    def entry(self, old_entry):
        node, i = old_entry
        return self.new[id(node)], i

    def transposed(self, entry, axes, tag):
        key = (id(entry[0]), entry[1], axes)
        hit = self.moved.get(key)
        if hit is None:
            op = get_op("transpose")
            node = SymNode(op, f"{entry[0].name}_{tag}", op.parse_attrs({"axes": axes}),
                           [entry])
            self.moved[key] = hit = (node, 0)
        return hit

    def first(self, entry):
        """``entry`` in NCHW (converted where it holds NHWC data)."""
        return self.transposed(entry, _TO_FIRST, "nchw") if entry in self.last else entry

    def add(self, node):
        if node.op is None:
            self.new[id(node)] = node
            return
        ins = [self.entry(e) for e in node.inputs]
        attrs, outs_last = node.attrs, False
        if _convertible_conv(node):
            data = ins[0] if ins[0] in self.last else self.transposed(ins[0], _TO_LAST, "nhwc")
            ins = [data, self.transposed(ins[1], _TO_LAST, "ohwi")] + ins[2:]
            attrs, outs_last = Attrs(attrs, layout="NHWC"), True
        elif (node.op.name == "Pooling" and ins[0] in self.last
              and attrs.layout in (None, "NCHW")
              and (len(attrs.kernel) == 2 or attrs.global_pool)):
            attrs, outs_last = Attrs(attrs, layout="NHWC"), True
        elif (node.op.name in _NORMS and ins[0] in self.last
              and attrs.axis in (1, -3)):
            ins = [ins[0]] + [self.first(e) for e in ins[1:]]
            attrs, outs_last = Attrs(attrs, axis=3), True
        elif (node.op.elementwise and any(e in self.last for e in ins)
              and all(e in self.last or e in self.planes for e in ins)):
            # NHWC with NHWC or other 4-D data (the residual add of a block whose shortcut
            # comes from a pooling): the NCHW inputs move channels last
            ins = [e if e in self.last else self.transposed(e, _TO_LAST, "nhwc")
                   for e in ins]
            outs_last = True
        else:
            ins = [self.first(e) for e in ins]
        new = SymNode(node.op, node.name, attrs, ins, node.user_attrs, node.given)
        self.new[id(node)] = new
        if outs_last:       # a BatchNorm's other outputs are per channel: as they were
            self.last.add((new, 0))
        elif _planar(node, ins, self.planes):
            self.planes.add((new, 0))


def rewrite(symbol):
    """``symbol`` with its convolution chains channels last (module docstring): a new Symbol
    with the same arguments, auxiliary states and outputs."""
    r = _Rewriter()
    for node in sorted(topo_order(symbol._outputs), key=lambda n: n.seq):
        r.add(node)
    return Symbol([r.first(r.entry(e)) for e in symbol._outputs])
