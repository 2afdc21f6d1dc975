"""DataLoader: batches from a dataset through a sampler and a collate function, in this process or in workers."""
from __future__ import annotations

import itertools

from ...ops.core.api import empty
from ...tensor.dtype import int64
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .fetch import make_fetcher
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .worker_pool import MultiProcessIterator, resolve_context


class DataLoader:
    """Iterate over ``dataset`` in batches, loading them in this process or in worker processes.

    With ``num_workers > 0`` the batches are loaded by that many processes (see
    NOTE: [DataLoader start method]) and arrive in the sampler's order, equal to the
    batches of ``num_workers=0``; tensors come back through shared memory without a copy.
    Each worker seeds ``dl``'s default generator, ``random`` and NumPy's legacy global
    generator with ``base_seed + worker_id``, ``base_seed`` being drawn from ``generator``
    (or the default generator) when an iterator starts.

    Args:
        dataset: a map-style Dataset (``__getitem__``/``__len__``) or an IterableDataset.
        batch_size, shuffle, sampler, batch_sampler, drop_last: how indices are drawn and grouped.
        num_workers: worker processes (0: load in this process).
        collate_fn: merges a list of samples (default: ``default_collate``).
        timeout: seconds to wait for a worker's batch before RuntimeError (0: forever).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker after seeding.
        multiprocessing_context: a start method name or a ``multiprocessing`` context.
        generator: draws the shuffle order and the workers' base seed.
        prefetch_factor: batches loaded ahead per worker (default 2 with workers).
        persistent_workers: keep the workers between epochs.
        in_order: deliver batches in sampler order (else as they are ready).

    Example:
        >>> loader = dl.utils.data.DataLoader(ds, batch_size=32, shuffle=True, num_workers=2,
        ...                                   generator=dl.Generator().manual_seed(0))
        >>> for x, y in loader: ...
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None:
            if num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={num_workers}")
            resolve_context(multiprocessing_context)  # reject a bad one now, as torch does
        self.dataset = dataset
        self.num_workers = num_workers
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory = pin_memory
        self.in_order = in_order
        self._iterator = None
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle or None), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value is not None:
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, "
                                     f"but got {name}={value}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self._auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)
        self.collate_fn = collate_fn or (default_collate if self._auto_collation else default_convert)

    @property
    def _index_sampler(self):
        """What one fetch of a map-style dataset reads: a batch of indices or one index."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def _index_batches(self):
        """One item per fetch: indices (map-style) or tokens (IterableDataset: a batch's worth of None)."""
        if self._iterable:
            return itertools.repeat([None] * self.batch_size if self._auto_collation else None)
        return iter(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return self._single_process()
        if not self.persistent_workers:
            return MultiProcessIterator(self)
        if self._iterator is None:
            self._iterator = MultiProcessIterator(self)
            return self._iterator
        return self._iterator.reset(self)

    def _draw_base_seed(self) -> int:
        """Every new iterator draws one number from ``generator`` first (the workers' base seed), as
        torch does also without workers: shuffled orders then agree for any ``num_workers``."""
        return int(empty((), dtype=int64).random_(generator=self.generator).item())

    def _single_process(self):
        self._draw_base_seed()
        return self._load_in_process()

    def _load_in_process(self):
        fetcher = make_fetcher(self.dataset, self._iterable, self._auto_collation, self.collate_fn, self.drop_last)
        for indices in self._index_batches():
            if not self._iterable:
                yield fetcher.fetch(indices)
                continue
            try:
                batch = fetcher.fetch(indices)
            except StopIteration:
                return
            yield batch

    def __len__(self) -> int:
        if self._iterable:
            count = len(self.dataset)
            if self.batch_size is None:
                return count
            return count // self.batch_size if self.drop_last else -(-count // self.batch_size)
        return len(self._index_sampler)
