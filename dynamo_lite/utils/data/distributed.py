"""DistributedSampler: each process of a data-parallel job reads its own share of a dataset."""
from __future__ import annotations

import math

from ...distributed import state
from ...ops.core.api import randperm
from ...tensor.generator import Generator
from .sampler import Sampler


class DistributedSampler(Sampler):
    """The indices rank ``rank`` of ``num_replicas`` processes reads, in torch's arithmetic.

    Every rank gets ``num_samples`` indices: ``ceil(len / num_replicas)``, the dataset padded by
    wrapping its start; with ``drop_last`` the tail that does not divide evenly is dropped
    instead (``ceil((len - num_replicas) / num_replicas)``). The (shuffled with a generator
    seeded ``seed + epoch``, when ``shuffle``) index list is dealt out rank-strided:
    ``indices[rank::num_replicas]``. Call ``set_epoch`` before each epoch for a new order.

    Args:
        dataset: a sized dataset.
        num_replicas, rank: default: the default process group's size and this process's rank.
        shuffle: permute the indices each epoch (the same permutation on every rank).
        seed: the shuffle's base seed (the same on every rank).
        drop_last: drop the tail instead of padding.

    Example:
        >>> sampler = DistributedSampler(range(10), num_replicas=3, rank=0, shuffle=False)
        >>> list(sampler)
        [0, 3, 6, 9]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False):
        if num_replicas is None:
            num_replicas = state.get_world_size()
        if rank is None:
            rank = state.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            generator = Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = randperm(len(self.dataset), generator=generator).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise RuntimeError(f"DistributedSampler built {len(indices)} indices, expected {self.total_size}")
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose shuffle the next iteration uses (``seed + epoch``)."""
        self.epoch = epoch
