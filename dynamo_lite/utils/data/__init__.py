"""Data loading: datasets, samplers, default_collate and the DataLoader."""
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .worker import get_worker_info
from .sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
    "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "default_collate", "default_convert", "get_worker_info", "random_split",
]
from . import distributed  # noqa: E402  (dl.utils.data.distributed.DistributedSampler)
from .distributed import DistributedSampler  # noqa: E402
__all__ += ["DistributedSampler"]
