"""dl.utils.data: datasets, samplers, default_collate and the in-process DataLoader."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.utils import data


def seeded(seed: int):
    generator = dl.Generator()
    generator.manual_seed(seed)
    return generator


def test_tensor_dataset_loader_batches_in_order_with_remainder():
    x, y = dl.arange(10 * 3, dtype=dl.float32).reshape(10, 3), dl.arange(10)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[2][0].tolist() == x[8:].tolist()
    assert len(data.DataLoader(data.TensorDataset(x, y), batch_size=4, drop_last=True)) == 2


def test_shuffle_is_a_permutation_reproducible_with_the_generator():
    ds = data.TensorDataset(dl.arange(20))

    def order(seed):
        return [i for (batch,) in data.DataLoader(ds, batch_size=3, shuffle=True, generator=seeded(seed))
                for i in batch.tolist()]

    assert sorted(order(0)) == list(range(20))
    assert order(0) == order(0) and order(0) != order(1)


def test_default_collate_structures():
    Point = collections.namedtuple("Point", "x y")
    batch = [{"a": (1, 2.5), "b": np.ones(2, dtype=np.float32), "p": Point(1, "s"), "t": dl.ones(2)}] * 3
    out = data.default_collate(batch)
    assert out["a"][0].dtype == dl.int64 and out["a"][1].dtype == dl.float64
    assert out["b"].shape == (3, 2) and out["t"].shape == (3, 2)
    assert isinstance(out["p"], Point) and out["p"].y == ["s", "s", "s"]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        data.default_collate([[1, 2], [1]])


def test_samplers():
    assert list(data.BatchSampler(data.SequentialSampler(range(5)), 2, drop_last=False)) == [[0, 1], [2, 3], [4]]
    draws = list(data.RandomSampler(range(4), replacement=True, num_samples=50, generator=seeded(0)))
    assert len(draws) == 50 and set(draws) <= {0, 1, 2, 3}
    longer = list(data.RandomSampler(range(4), num_samples=10, generator=seeded(0)))
    assert sorted(longer[:4]) == [0, 1, 2, 3] and len(longer) == 10
    weighted = list(data.WeightedRandomSampler([0.0, 1.0, 0.0], 5, generator=seeded(0)))
    assert weighted == [1] * 5
    assert sorted(data.SubsetRandomSampler([3, 7, 9], generator=seeded(0))) == [3, 7, 9]
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        data.RandomSampler(range(3), num_samples=0)


def test_subset_concat_random_split():
    ds = data.TensorDataset(dl.arange(10))
    first, second = data.random_split(ds, [0.7, 0.3], generator=seeded(0))
    assert len(first) == 7 and len(second) == 3
    assert sorted(first.indices + second.indices) == list(range(10))
    both = ds + data.Subset(ds, [1, 2])
    assert len(both) == 12 and both[11][0].item() == 2 and both[-1][0].item() == 2
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        data.random_split(ds, [3, 3])


def test_iterable_dataset_and_loader_argument_errors():
    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in data.DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    ds = data.TensorDataset(dl.arange(4))
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        data.DataLoader(ds, sampler=data.SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        data.DataLoader(ds, batch_size=2, batch_sampler=[[0, 1]])
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        data.DataLoader(Stream(), shuffle=True)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with multi-process loading"):
        data.DataLoader(ds, multiprocessing_context="spawn")
    with pytest.raises(ValueError, match="valid start method"):
        data.DataLoader(ds, num_workers=2, multiprocessing_context="no-such-method")
    assert [b[0].item() for b in data.DataLoader(ds, batch_size=None)] == [0, 1, 2, 3]
