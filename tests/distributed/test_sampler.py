"""DistributedSampler's indices against torch's arithmetic.

The shuffle=False fixture below was derived by hand from torch's documented algorithm
(torch/utils/data/distributed.py): ``num_samples = ceil(len / replicas)``, or with
``drop_last`` and a remainder ``ceil((len - replicas) / replicas)``; ``total = num_samples *
replicas``; the list ``range(len)`` is padded by repeating its start (or cut to ``total``
with ``drop_last``) and rank r takes ``indices[r:total:replicas]``. For shuffle=False that
arithmetic is deterministic, so these are exactly torch's indices.
"""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from dynamo_lite.utils.data import DataLoader, DistributedSampler

# (len, replicas, drop_last) -> each rank's indices
TORCH_SHUFFLE_FALSE = {
    # num_samples = ceil(10/3) = 4, total 12: 0..9 then 0, 1
    (10, 3, False): [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]],
    # ceil((10-3)/3) = 3, total 9: 0..8
    (10, 3, True): [[0, 3, 6], [1, 4, 7], [2, 5, 8]],
    # ceil(2/3) = 1, total 3: 0, 1 then 0
    (2, 3, False): [[0], [1], [0]],
    # padding 3 > len 1: the list repeated, [0, 0, 0, 0]
    (1, 4, False): [[0], [0], [0], [0]],
    # ceil((7-2)/2) = 3, total 6: 0..5
    (7, 2, True): [[0, 2, 4], [1, 3, 5]],
    # 7 does not divide: ceil(7/2) = 4, total 8: 0..6 then 0
    (7, 2, False): [[0, 2, 4, 6], [1, 3, 5, 0]],
    # 8 divides by 4 either way: 2 each
    (8, 4, True): [[0, 4], [1, 5], [2, 6], [3, 7]],
    (8, 4, False): [[0, 4], [1, 5], [2, 6], [3, 7]],
}


@pytest.mark.parametrize("case", list(TORCH_SHUFFLE_FALSE), ids=str)
def test_shuffle_false_matches_torch(case):
    length, replicas, drop_last = case
    for rank, expected in enumerate(TORCH_SHUFFLE_FALSE[case]):
        sampler = DistributedSampler(range(length), num_replicas=replicas, rank=rank, shuffle=False,
                                     drop_last=drop_last)
        assert list(sampler) == expected
        assert len(sampler) == len(expected) == sampler.num_samples


def test_shuffle_is_a_seeded_permutation_shared_by_the_ranks():
    def ranks(epoch, seed=5):
        samplers = [DistributedSampler(range(11), num_replicas=3, rank=r, seed=seed) for r in range(3)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]

    generator = dl.Generator()
    generator.manual_seed(5 + 2)
    permutation = dl.randperm(11, generator=generator).tolist()
    padded = permutation + permutation[:1]
    assert ranks(2) == [padded[r::3] for r in range(3)]
    assert ranks(2) == ranks(2)
    assert ranks(2) != ranks(3)
    assert {i for part in ranks(0) for i in part} == set(range(11))


def test_invalid_rank():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(4), num_replicas=3, rank=3)


def test_with_a_multiprocess_dataloader():
    dataset = dl.utils.data.TensorDataset(dl.arange(9))
    sampler = DistributedSampler(dataset, num_replicas=2, rank=1, shuffle=False)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler, num_workers=2)
    assert [i for (batch,) in loader for i in batch.tolist()] == [1, 3, 5, 7, 0]
