"""Allreduce of GPU arrays (CuPy) between the processes of an MPI job: NCCL through
``cupy.cuda.nccl`` when CuPy has it, else through host memory and MPI.

This path runs only for NDArrays on ``gpu`` contexts (CuPy arrays in ``NDArray._data``);
it is written against CuPy's documented NCCL binding and has not been run on a GPU yet.
"""
import numpy as np

__all__ = ["GpuReducer"]


def _nccl():
    try:
        from cupy.cuda import nccl
    except Exception:                           # noqa: BLE001 (no CuPy, or CuPy without NCCL)
        return None
    return nccl if getattr(nccl, "available", True) else None


class GpuReducer:
    """Sums GPU buffers over the ranks of ``world``: one NCCL communicator per device,
    made on first use from a unique id that rank 0 broadcasts over MPI."""

    def __init__(self, world):
        self.world = world
        self.nccl = _nccl()
        self._comms = {}

    def _comm(self, device_id):
        comm = self._comms.get(device_id)
        if comm is None:
            import cupy
            uid = self.nccl.get_unique_id() if self.world.rank == 0 else None
            uid = self.world.bcast_object(uid)
            with cupy.cuda.Device(device_id):
                comm = self.nccl.NcclCommunicator(self.world.size, uid, self.world.rank)
            self._comms[device_id] = comm
        return comm

    def _nccl_type(self, dtype):
        n = self.nccl
        table = {np.dtype("float16"): n.NCCL_FLOAT16, np.dtype("float32"): n.NCCL_FLOAT32,
                 np.dtype("float64"): n.NCCL_FLOAT64, np.dtype("int8"): n.NCCL_INT8,
                 np.dtype("uint8"): n.NCCL_UINT8, np.dtype("int32"): n.NCCL_INT32,
                 np.dtype("int64"): n.NCCL_INT64, np.dtype("bool"): n.NCCL_UINT8}
        # bool bytes are 0 or 1: their maximum is the logical or
        op = n.NCCL_MAX if dtype == np.bool_ else n.NCCL_SUM
        return table[np.dtype(dtype)], op

    def allreduce(self, ctx, xp, send, recv):
        """``recv = sum over ranks of send`` (``send`` None: in place) for flat CuPy arrays
        on device ``ctx``."""
        if self.nccl is None:
            host = np.array(xp.to_host(recv if send is None else send), copy=True)
            self.world.allreduce(None, host)
            xp.copyto(recv, xp.from_host(host))
            return
        import cupy
        kind, op = self._nccl_type(recv.dtype)
        stream = xp.stream(ctx)
        stream_ptr = stream.ptr if stream is not None else cupy.cuda.get_current_stream().ptr
        src = recv if send is None else send
        with cupy.cuda.Device(ctx.device_id):
            self._comm(ctx.device_id).allReduce(src.data.ptr, recv.data.ptr, recv.size, kind,
                                                op, stream_ptr)
