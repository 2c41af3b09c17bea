"""Key-value stores for data-parallel training: ``mx.kv.create('local' | 'device' |
'dist_sync' | 'dist_device_sync')`` (MXNet 1.x's ``mx.kv`` / ``mx.kvstore``)."""
