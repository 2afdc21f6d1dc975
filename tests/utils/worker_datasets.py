"""Datasets and hooks for the DataLoader worker tests (module level, so spawn/forkserver can pickle them)."""
from __future__ import annotations

import os
import time

import dynamo_lite as dl
from dynamo_lite.utils import data


class Rows(data.Dataset):
    """Sample i: a float row and i; plus a random draw from the worker's default generator."""

    def __init__(self, n: int = 40, draw: bool = False):
        self.values = dl.arange(n * 3, dtype=dl.float32).reshape(n, 3)
        self.draw = draw

    def __len__(self) -> int:
        return self.values.shape[0]

    def __getitem__(self, index):
        row = self.values[index]
        return (row + dl.rand(3)) if self.draw else row, index


class WhoAmI(data.Dataset):
    """Sample i: (i, pid, worker id, num_workers, seed, initialised-by-worker_init_fn)."""

    def __len__(self) -> int:
        return 12

    def __getitem__(self, index):
        info = data.get_worker_info()
        return index, os.getpid(), info.id, info.num_workers, info.seed, os.environ.get("DL_TEST_INIT", "")


def mark_initialised(worker_id: int) -> None:
    os.environ["DL_TEST_INIT"] = f"init {worker_id}"


class Failing(data.Dataset):
    """Raises ``error`` at index ``bad``; exits the process without a word at ``die``."""

    def __init__(self, error=None, bad: int = 5, die=None, sleep: float = 0.0):
        self.error, self.bad, self.die, self.sleep = error, bad, die, sleep

    def __len__(self) -> int:
        return 16

    def __getitem__(self, index):
        if self.sleep:
            time.sleep(self.sleep)
        if index == self.die:
            os._exit(3)
        if index == self.bad and self.error is not None:
            raise self.error
        return index


class Shards(data.IterableDataset):
    """0..n-1 split into contiguous shards, one per worker (torch's documented sharding recipe)."""

    def __init__(self, n: int):
        self.n = n

    def __iter__(self):
        info = data.get_worker_info()
        if info is None:
            return iter(range(self.n))
        per_worker = -(-self.n // info.num_workers)
        start = info.id * per_worker
        return iter(range(start, min(start + per_worker, self.n)))

    def __len__(self) -> int:
        return self.n


class NonLeaf(data.Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, index):
        with dl.enable_grad():  # whatever mode the process forked in
            return dl.ones(2, requires_grad=True) * 2
