"""MXNet 1.9.1's image decoding front ends in ``mx.nd``: ``imdecode`` (over ``_imdecode``)
and ``_internal._cvimdecode``, whose output shape depends on the bytes of its input array (no
shape inference sees them), so it decodes on the host and returns a new NDArray on the
buffer's context. The decoding is ``mxlite/ops/image_io.py`` (Pillow, optional)."""
from ..base import MXNetError
from ..device import run_context
from ..ops.image_io import buffer_bytes, header
from ..ops.registry import REGISTRY
from .ndarray import NDArray, _call, empty

__all__ = ["imdecode", "cvimdecode"]


def cvimdecode(buf, flag=1, to_rgb=True, *, out=None, name=None):
    """``mx.nd._internal._cvimdecode``: decode the encoded image in the 1-D uint8 NDArray
    ``buf`` into an (H, W, C) uint8 NDArray on ``buf``'s context (see the ``_cvimdecode``
    record). The shape comes from the image header; the operator's compute function on
    ``buf``'s device writes the pixels (no tape: it is not differentiable)."""
    op = cvimdecode.op
    attrs = op.parse_attrs({"flag": flag, "to_rgb": to_rgb})
    if not isinstance(buf, NDArray):
        raise MXNetError(f"_cvimdecode: buf must be a 1-D uint8 NDArray, got "
                         f"{type(buf).__name__}")
    rctx = run_context(buf.context)
    data = buffer_bytes("_cvimdecode", rctx.xp, buf._data)
    if attrs.flag not in (0, 1):
        raise MXNetError(f"_cvimdecode: flag must be 0 (grayscale) or 1 (colour), got {flag}")
    shape = header("_cvimdecode", data, attrs.flag)
    if out is None:
        out = empty(shape, ctx=buf.context, dtype="uint8")
    elif not isinstance(out, NDArray) or out.context != buf.context:
        raise MXNetError("_cvimdecode: out must be an NDArray on buf's context")
    op.compute[rctx.kernels](rctx, [buf._data], [out._data], attrs)
    return out


cvimdecode.op = REGISTRY["_cvimdecode"]
cvimdecode.__name__ = cvimdecode.__qualname__ = "_cvimdecode"     # its name in _internal
cvimdecode.__doc__ = cvimdecode.op.doc.strip() + "\n\n" + cvimdecode.__doc__


def imdecode(str_img, clip_rect=(0, 0, 0, 0), out=None, index=0, channels=3, mean=None):
    """Decode the image bytes ``str_img`` into a (channels, H, W) float32 NDArray in OpenCV's
    BGR order (DEPRECATED in MXNet: use mx.image). ``clip_rect`` (x0, y0, x1, y1) crops it
    (all zero: the whole image); ``mean`` (an NDArray of the output's shape) is subtracted;
    ``out`` receives it, as its ``index``-th item when 4-D. MXNet 1.9.1's own imdecode
    failed on every call (an unknown output shape); this one works as its docstring says."""
    if len(tuple(clip_rect)) != 4:
        raise MXNetError(f"imdecode: clip_rect must be (x0, y0, x1, y1), got {clip_rect!r}")
    x0, y0, x1, y1 = (int(v) for v in clip_rect)
    img = _call(REGISTRY["_imdecode"], index=index, x0=x0, y0=y0, x1=x1, y1=y1, c=channels,
                size=len(str_img), str_img=bytes(str_img))
    if mean is not None:
        if tuple(mean.shape) != tuple(img.shape):
            raise MXNetError(f"imdecode: mean has shape {tuple(mean.shape)}, the decoded "
                             f"image {tuple(img.shape)}")
        img = img - mean.astype(img.dtype)
    if out is None:
        return img
    target = out if out.ndim == 3 else None
    if out.ndim == 4:
        if not 0 <= index < out.shape[0]:
            raise MXNetError(f"imdecode: index {index} is outside out's batch of "
                             f"{out.shape[0]}")
        target = out[index]
    if target is None or tuple(target.shape) != tuple(img.shape):
        raise MXNetError(f"imdecode: out {tuple(out.shape)} does not hold an image of shape "
                         f"{tuple(img.shape)} (3-D, or 4-D with the image at index)")
    target[:] = img.astype(out.dtype)
    return out
