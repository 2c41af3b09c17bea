"""``gluon.contrib.nn``: containers that run every child on one input, ``Identity``, the
pixel shuffles (sub-pixel upsampling) and ``SyncBatchNorm``."""
from ...base import MXNetError
from ... import ndarray as nd
from ..block import Block, HybridBlock
from ..nn import BatchNorm, HybridSequential, Sequential

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "SyncBatchNorm",
           "PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D"]


class Concurrent(Sequential):
    """Runs every child on the same input and concatenates their outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        from ... import nd
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """``Concurrent`` that hybridizes: every child on the same input, outputs concatenated
    along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input: the pass-through branch of a concurrent container."""

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """An embedding whose weight is a row_sparse Parameter: each forward pulls from the
    Trainer's kvstore only the rows its indices look up (``row_sparse_data``), and the
    weight gradient is row_sparse, so a step over a large table costs the rows a batch uses.
    Make a ``Trainer`` with its parameters before the first forward. Not hybridizable (a
    compiled graph has no row pulls); ``gluon.nn.Embedding(sparse_grad=True)`` keeps a dense
    weight and hybridizes.

    >>> emb = mx.gluon.contrib.nn.SparseEmbedding(5, 2, weight_initializer=mx.init.One())
    >>> emb.initialize()
    >>> trainer = mx.gluon.Trainer(emb.collect_params(), 'sgd')
    >>> emb(mx.nd.array([4, 0])).asnumpy().tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      stype="row_sparse", grad_stype="row_sparse")

    def forward(self, x):
        """The lookup, in the rows pulled for ``x``."""
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class SyncBatchNorm(BatchNorm):
    """Batch normalisation whose training statistics are taken over every rank of a
    data-parallel job (the ``contrib.SyncBatchNorm`` operator; in one process it is
    ``BatchNorm``). ``num_devices`` is accepted for MXNet's signature: the ranks are the
    processes of the job."""

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats,
                         beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        self._kwargs.pop("axis")              # the operator normalises axis 1
        self._num_devices = num_devices

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        """The normalization over the job's batch."""
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var,
                                       name="fwd", key=self.prefix, **self._kwargs)


class _PixelShuffle(HybridBlock):
    """``(N, C * prod(f), *space) -> (N, C, *(space * f))``: each group of ``prod(f)``
    channels becomes an ``f``-block of pixels (sub-pixel upsampling; torch's pixel_shuffle
    in 2-D)."""

    def __init__(self, factor, dims):
        super().__init__()
        factor = (factor,) * dims if isinstance(factor, int) else tuple(factor)
        if len(factor) != dims or any(int(f) < 1 for f in factor):
            raise MXNetError(f"{type(self).__name__}: factor must be a positive int or "
                             f"{dims} positive ints, got {factor}")
        self._factors = tuple(int(f) for f in factor)

    def hybrid_forward(self, F, x):
        f = self._factors
        d = len(f)
        # (N, C*f1*..*fd, s1..sd) -> (N, C, f1..fd, s1..sd): split the channel axis
        x = F.reshape(x, shape=(0, -4, -1, _product(f)) + (0,) * d)
        for i in range(d - 1):               # split f1*..*fd one factor at a time
            x = F.reshape(x, shape=(0,) * (2 + i) + (-4, f[i], -1) + (0,) * d)
        # interleave: (N, C, s1, f1, s2, f2, ...)
        order = (0, 1) + tuple(a for i in range(d) for a in (2 + d + i, 2 + i))
        x = F.transpose(x, axes=order)
        return F.reshape(x, shape=(0, 0) + (-3,) * d)

    def __repr__(self):
        f = self._factors
        return f"{type(self).__name__}({f if len(f) > 1 else f[0]})"


def _product(values):
    out = 1
    for v in values:
        out *= v
    return out


class PixelShuffle1D(_PixelShuffle):
    """``(N, C * f, W) -> (N, C, W * f)``."""

    def __init__(self, factor):
        super().__init__(factor, 1)


class PixelShuffle2D(_PixelShuffle):
    """``(N, C * f1 * f2, H, W) -> (N, C, H * f1, W * f2)``."""

    def __init__(self, factor):
        super().__init__(factor, 2)


class PixelShuffle3D(_PixelShuffle):
    """``(N, C * f1 * f2 * f3, D, H, W) -> (N, C, D * f1, H * f2, W * f3)``."""

    def __init__(self, factor):
        super().__init__(factor, 3)
