"""What a DataLoader worker process runs: seeding, worker_init_fn, fetching, sending batches back.

Also ``get_worker_info()`` (None in the main process) and ``ExceptionWrapper``, which carries
a worker's exception and traceback to the main process and raises it there.
"""
from __future__ import annotations

import multiprocessing
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ...tensor.generator import manual_seed
from .fetch import make_fetcher
from .shared_memory import SharedFileAllocator, leftovers_pattern, remove_leftovers

# How often a waiting worker checks that the main process is still alive (seconds).
PARENT_CHECK_INTERVAL = 1.0

# This process's WorkerInfo: set once when a worker process starts (None in the main process).
_worker_info = None


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: id, num_workers, seed and dataset (read-only).

    Example:
        >>> info = dl.utils.data.get_worker_info()
        >>> info.id, info.num_workers, info.seed     # e.g. (1, 2, base_seed + 1)
    """

    __slots__ = ("id", "num_workers", "seed", "dataset", "_allocator")

    def __init__(self, **fields):
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key, value):
        raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, dataset={self.dataset!r})"


def get_worker_info():
    """This worker's WorkerInfo inside a DataLoader worker process, None in the main process.

    An IterableDataset uses it to give each worker its own share of the stream.

    Example:
        >>> class Range(dl.utils.data.IterableDataset):
        ...     def __iter__(self):
        ...         info = dl.utils.data.get_worker_info()
        ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
        ...         return iter(range(start, 10, step))
    """
    return _worker_info


class _KeyErrorMessage(str):
    """A KeyError shows its argument with repr(); this keeps the worker's traceback readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception raised in a worker, with its formatted traceback, re-raised in the main process."""

    def __init__(self, exc_info, where: str):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the worker's exception type with "Caught X in DataLoader worker process N" and its traceback."""
        message = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            message = _KeyErrorMessage(message)
        try:
            exception = self.exc_type(message)
        except Exception:  # an exception type that cannot be built from one message
            raise RuntimeError(message) from None
        raise exception


class IterationEnd:
    """A worker's IterableDataset is exhausted."""

    def __init__(self, worker_id: int):
        self.worker_id = worker_id


@dataclass
class WorkerSpec:
    """Everything a worker needs (pickled to it when the start method is spawn/forkserver)."""

    worker_id: int
    num_workers: int
    dataset: object
    iterable: bool
    auto_collation: bool
    collate_fn: object
    drop_last: bool
    base_seed: int
    worker_init_fn: object
    file_prefix: str


def _seed(base_seed: int, worker_id: int) -> int:
    """Seed Python's, NumPy's legacy and dynamo_lite's default generators for this worker."""
    seed = base_seed + worker_id  # as torch: each worker's dl seed is base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _encode(allocator: SharedFileAllocator, data, worker_id: int) -> bytes:
    """Pickle here (not in the queue's feeder thread, where a failure would be lost)."""
    try:
        return allocator.dumps(data)
    except Exception:
        return allocator.dumps(ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}"))


def worker_loop(spec: WorkerSpec, index_queue, result_queue, done_event) -> None:
    """Serve (task id, indices) messages until None arrives, the loader is done or the parent dies."""
    global _worker_info
    orphaned = False
    try:
        where = f"in DataLoader worker process {spec.worker_id}"
        seed = _seed(spec.base_seed, spec.worker_id)
        allocator = SharedFileAllocator(f"{spec.file_prefix}w{spec.worker_id}_")
        _worker_info = WorkerInfo(id=spec.worker_id, num_workers=spec.num_workers, seed=seed, dataset=spec.dataset,
                                  _allocator=allocator)
        # The process that made the loader (under forkserver it is not our OS parent).
        parent = multiprocessing.parent_process()
        init_error = fetcher = None
        try:
            if spec.worker_init_fn is not None:
                spec.worker_init_fn(spec.worker_id)
            fetcher = make_fetcher(spec.dataset, spec.iterable, spec.auto_collation, spec.collate_fn, spec.drop_last)
        except Exception:
            init_error = ExceptionWrapper(sys.exc_info(), where)
        while not done_event.is_set():
            try:
                message = index_queue.get(timeout=PARENT_CHECK_INTERVAL)
            except queue.Empty:
                if parent is not None and not parent.is_alive():
                    orphaned = True  # the main process died without shutting us down
                    break
                continue
            if message is None:
                break
            if message == "reset":  # a persistent worker's next epoch: the stream starts over
                fetcher = make_fetcher(spec.dataset, spec.iterable, spec.auto_collation, spec.collate_fn,
                                       spec.drop_last)
                continue
            task_id, indices = message
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(indices)
                except StopIteration:
                    data = IterationEnd(spec.worker_id)
                except Exception:
                    data = ExceptionWrapper(sys.exc_info(), where)
            result_queue.put((task_id, _encode(allocator, data, spec.worker_id)))
            del data  # the main process owns the batch's memory now
    except KeyboardInterrupt:
        pass  # the main process gets the interrupt too and shuts the workers down
    if orphaned:
        # Nobody will map the batches this worker sent: remove their shared-memory files.
        remove_leftovers(leftovers_pattern(f"{spec.file_prefix}w{spec.worker_id}_"))
    if done_event.is_set() or orphaned:
        result_queue.cancel_join_thread()  # nobody reads the rest: do not block exit on a full pipe
    result_queue.close()

