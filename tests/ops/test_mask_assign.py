"""``x[mask] = value`` with a mask shaped like ``x`` is a masked fill: no data read, so it traces."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same


def _fill_below_row_threshold(x, threshold):
    x = x.clone()
    x[x < threshold[:, [-1]]] = -float("inf")
    return x


def test_matches_numpy_for_scalars_and_zero_dim_values():
    rng = np.random.default_rng(0)
    values = rng.standard_normal((3, 5)).astype(np.float32)
    x = dl.tensor(values)
    x[x > 0] = 2
    expected = values.copy()
    expected[expected > 0] = 2
    np.testing.assert_array_equal(x.numpy(), expected)
    x[x == 2] = dl.tensor(7.5, dtype=dl.float64)  # a 0-d value of another dtype is cast
    expected[expected == 2] = 7.5
    np.testing.assert_array_equal(x.numpy(), expected)


def test_partial_masks_still_take_the_indexing_path():
    x = dl.zeros(2, 3)
    x[dl.tensor([True, False])] = dl.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]
    with pytest.raises(IndexError, match="does not match the shape of the indexed tensor"):
        x[dl.tensor([True, False, True])] = 1.0


def test_compiles_into_one_graph(backend):
    x = dl.randn(4, 6)
    threshold = dl.topk(x, 2).values
    assert_same(_fill_below_row_threshold, x, threshold, backend=backend, fullgraph=True)
    assert dl.stats().graph_count == 1 and dl.stats().cache_hits == 1
