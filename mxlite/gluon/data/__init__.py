"""Gluon data loading: datasets, samplers and ``DataLoader`` (MXNet 1.x's gluon.data)."""
from .dataset import ArrayDataset, Dataset, SimpleDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .dataloader import DataLoader, default_batchify_fn
from . import vision

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "Sampler", "SequentialSampler",
           "RandomSampler", "BatchSampler", "DataLoader", "default_batchify_fn", "vision"]
