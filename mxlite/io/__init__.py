"""``mx.io``: MXNet 1.9.1's data iterators (``NDArrayIter``, ``CSVIter``, ...) and the batch
protocol (``DataDesc``, ``DataBatch``, ``DataIter``)."""
from . import io, utils
from .io import DataBatch, DataDesc, DataIter, PrefetchingIter, ResizeIter
from .image_record import (ImageDetRecordIter, ImageRecordInt8Iter, ImageRecordIter,
                           ImageRecordIter_v1, ImageRecordUInt8Iter, ImageRecordUInt8Iter_v1)
from .native import CSVIter, LibSVMIter, MNISTIter, MXDataIter
from .ndarray_iter import NDArrayIter
from .utils import _getdata_by_idx, _has_instance, _init_data

__all__ = ["DataBatch", "DataDesc", "DataIter", "PrefetchingIter", "ResizeIter", "CSVIter",
           "ImageDetRecordIter", "ImageRecordInt8Iter", "ImageRecordIter", "ImageRecordIter_v1",
           "ImageRecordUInt8Iter", "ImageRecordUInt8Iter_v1", "LibSVMIter", "MNISTIter",
           "MXDataIter", "NDArrayIter"]
