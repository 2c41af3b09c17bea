"""Vision datasets and image transforms (MXNet 1.x's ``gluon.data.vision``)."""
from . import transforms
from .datasets import (CIFAR10, CIFAR100, MNIST, FashionMNIST, ImageFolderDataset,
                       ImageRecordDataset)

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset", "transforms"]
