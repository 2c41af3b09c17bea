"""Operators outside the graph's arithmetic: the sum over the ranks of a data-parallel job
(``_sync_sum``: the identity in the one process an ONNX graph runs in) and image decoding
(``_imdecode``'s image is an attribute, hence a constant; ``_cvimdecode`` decodes its input's
bytes, which ONNX cannot)."""
import numpy as np

from ..table import not_expressible, translates
from ...ops import image_io as _image_io
from ...ops import sync_norm as _sync_norm


@translates("_sync_sum", onnx_ops=["Identity"],
            notes="the identity, as in a single process (an ONNX graph runs in one); refused "
                  "while a multi-process job (dist_sync kvstore) is running, whose ranks it "
                  "would sum")
def _sync_sum(ctx, node, ins, outs):
    if _sync_norm._reducer is not None:
        raise ctx.unsupported(node, "the sum over the ranks of the running data-parallel "
                                    "job (an ONNX graph runs in one process)")
    # summed in float64 over one rank: the value itself, in its dtype
    ctx.node("Identity", ins[:1], outs)


@translates("_imdecode", onnx_ops=["Identity"],
            notes="the decoded crop is a constant of the graph (the encoded image is an "
                  "attribute), decoded at export by mxlite's decoder (Pillow)")
def _imdecode(ctx, node, ins, outs):
    c, y0, y1, x0, x1 = _image_io._imdecode_box(node.attrs)
    # OpenCV's channel order (BGR), as mxlite's _imdecode
    pixels = _image_io.decode("_imdecode", node.attrs.str_img, 0 if c == 1 else 1,
                              to_rgb=False)
    chw = np.ascontiguousarray(pixels[y0:y1, x0:x1].transpose(2, 0, 1))
    image = ctx.const(chw.astype(ctx.dtype((node, 0))), base="image")
    ctx.node("Identity", [image], outs)


not_expressible(
    "it decodes the encoded image bytes of its input buf (PNG, JPEG, BMP, ... through "
    "Pillow): ONNX's operators cannot express the decompression (inflate, Huffman decoding, "
    "an inverse DCT with the codec's rounding), and its one decoder, ImageDecoder (opset "
    "20), has no onnxruntime kernel and does not promise Pillow's pixels (a JPEG's values "
    "depend on the decoder's IDCT)", "_cvimdecode")


not_expressible(
    "mx.nd.sparse.retain's data is a row_sparse array, and a graph's sparse arguments run "
    "as dense copies; ONNX tensors are dense, and a graph that retains rows of a dense "
    "array is not an MXNet model", "_sparse_retain")
not_expressible(
    "it counts the values a csr matrix stores (its input must be csr storage, MXNet's rule); "
    "ONNX tensors are dense", "_contrib_getnnz")
not_expressible(
    "it raises an error when its boolean input holds a false element: ONNX has no operator "
    "that fails a run on a data-dependent condition", "_npx_constraint_check")
