"""Fetchers: turn one sampler step (indices) into one batch, in the main process or in a worker."""
from __future__ import annotations


class MapFetcher:
    """Reads ``dataset[i]`` for each index of a batch (or the one index) and collates.

    Example:
        >>> MapFetcher(dataset, auto_collation=True, collate_fn=default_collate).fetch([0, 1])
    """

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool = False):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, indices):
        if self.auto_collation:
            return self.collate_fn([self.dataset[i] for i in indices])
        return self.collate_fn(self.dataset[indices])


class IterableFetcher:
    """Draws the next sample (or the next ``len(indices)`` samples) from an iterable dataset.

    Raises StopIteration when the stream is exhausted (or only a partial batch is left and
    ``drop_last`` is set).
    """

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool = False):
        self.iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, indices):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        batch = []
        for _ in indices:
            try:
                batch.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not batch or (self.ended and self.drop_last):
            raise StopIteration
        return self.collate_fn(batch)


def make_fetcher(dataset, iterable: bool, auto_collation: bool, collate_fn, drop_last: bool):
    kind = IterableFetcher if iterable else MapFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
