"""Key-value stores for data-parallel training: ``mx.kv.create('local' | 'device' |
'dist_sync' | 'dist_device_sync')`` (MXNet 1.x's ``mx.kv`` / ``mx.kvstore``).

``local`` and ``device`` sum the copies of a value pushed in one process; the ``dist``
stores sum over the processes of an MPI job with an allreduce (``pip install
mxlite[dist]``; see ``mxlite.kvstore.dist``). MPI is loaded only when a dist store is
created.
"""
from .base import KVStoreBase, create
from .local import KVStoreLocal

__all__ = ["create", "KVStoreBase", "KVStoreLocal", "KVStore"]

KVStore = KVStoreLocal      # MXNet's name for the built-in store class
