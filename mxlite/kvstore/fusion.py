"""Tensor fusion: small tensors of one call share one allreduce (Horovod's idea).

Each allreduce pays a latency of microseconds whatever its size, so a model with a hundred
small parameters would spend more time waiting than moving bytes. Tensors of at most
``threshold`` bytes are copied into a flat buffer per device and dtype (at most ``bucket``
bytes each), reduced together and copied back; larger tensors go to MPI as they are.
"""
__all__ = ["Fusion"]


class Fusion:
    """Plans buckets and keeps one reusable flat buffer per (device, dtype)."""

    def __init__(self):
        self._buffers = {}

    @staticmethod
    def plan(pairs, threshold, bucket):
        """``(buckets, singles)`` for ``pairs`` of flat ``(send, recv)`` device arrays (send
        None: in place): ``buckets`` lists groups of pairs with one dtype and device whose
        sizes add up to at most ``bucket`` bytes, in call order; ``singles`` the pairs
        reduced alone."""
        open_, buckets, singles = {}, [], []
        for ctx, send, recv in pairs:
            if recv.nbytes > threshold:
                singles.append((ctx, send, recv))
                continue
            key = (ctx, recv.dtype)
            group = open_.get(key)
            if group is None or group[0] + recv.nbytes > bucket:
                group = open_[key] = [0, []]
                buckets.append(group[1])
            group[0] += recv.nbytes
            group[1].append((ctx, send, recv))
        return buckets, singles

    def buffer(self, ctx, xp, dtype, size):
        """A flat buffer of at least ``size`` elements (reused across calls)."""
        key = (ctx, dtype)
        buf = self._buffers.get(key)
        if buf is None or buf.size < size:
            buf = self._buffers[key] = xp.empty((size,), dtype)
        return buf[:size]

    def run(self, group, xp, allreduce):
        """Pack ``group`` (pairs of one device and dtype), ``allreduce(ctx, None, buf)`` it in
        place, and unpack the sums into each ``recv``."""
        ctx, dtype = group[0][0], group[0][2].dtype
        buf = self.buffer(ctx, xp, dtype, sum(recv.size for _, _, recv in group))
        offset = 0
        for _, send, recv in group:
            xp.copyto(buf[offset:offset + recv.size], recv if send is None else send)
            offset += recv.size
        allreduce(ctx, None, buf)
        offset = 0
        for _, _, recv in group:
            xp.copyto(recv, buf[offset:offset + recv.size])
            offset += recv.size
