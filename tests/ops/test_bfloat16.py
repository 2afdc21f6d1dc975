"""bfloat16: stored as the upper half of a float32, computed in float32, rounded to nearest-even.

Expected values were recorded from PyTorch 2.13.0 (CPU wheel, private venv) by running
the same expressions on ``torch.bfloat16`` tensors and printing ``tolist()``.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl

VALUES = [1.0, 3.14159, -2.5, 1e-3, 1.00390625, 1.01171875, 3e38]


def test_rounding_and_arithmetic_match_torch():
    x = dl.tensor(VALUES).to(dl.bfloat16)
    assert x.dtype is dl.bfloat16 and x.element_size() == 2
    assert x.tolist() == [1.0, 3.140625, -2.5, 0.00099945068359375, 1.0, 1.015625, 3.00405527047391e+38]
    with np.errstate(over="ignore"):  # 3e38 * 3 overflows to inf, as in torch
        assert (x * 3).tolist() == [3.0, 9.4375, -7.5, 0.00299072265625, 3.0, 3.046875, float("inf")]
    assert x.sum().item() == 3.00405527047391e+38
    assert (x.float() + 1).bfloat16().tolist() == [2.0, 4.125, -1.5, 1.0, 2.0, 2.015625, 3.00405527047391e+38]
    assert (x[:4] @ x[:4]).item() == 17.125
    assert dl.tensor([1.00390625, 1.01171875, -1.00390625], dtype=dl.bfloat16).tolist() == [1.0, 1.015625, -1.0]
    nan = dl.tensor([float("nan")]).to(dl.bfloat16).float().item()
    assert nan != nan


def test_promotion_and_type_queries():
    b = dl.ones(2, dtype=dl.bfloat16)
    assert (b + dl.ones(2)).dtype is dl.float32 and (b + dl.ones(2, dtype=dl.float16)).dtype is dl.float32
    assert (b * 2.5).dtype is dl.bfloat16 and dl.promote_types(dl.bfloat16, dl.int64) is dl.bfloat16
    assert b.is_floating_point() and b.type() == "dynamo_lite.BFloat16Tensor"
    assert dl.finfo(dl.bfloat16).eps == 0.0078125 and dl.finfo(dl.bfloat16).bits == 16
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):  # torch 2.13
        b.numpy()


def test_in_place_ops_and_views_write_bfloat16_bits():
    x = dl.zeros(2, 3, dtype=dl.bfloat16)
    x[0].add_(1.00390625)  # rounds to 1.0
    x.t()[2].fill_(3.14159)
    assert x.tolist() == [[1.0, 1.0, 3.140625], [0.0, 0.0, 3.140625]]
    assert x.untyped_storage().nbytes() == 12


def _program(x, w):
    return (x @ w).relu().softmax(-1).sum(0) * 2


def test_compiled_bfloat16_equals_eager_and_runs_its_ops_eagerly(backend):
    x = dl.randn(4, 8).to(dl.bfloat16)
    w = dl.randn(8, 3).to(dl.bfloat16)
    expected = _program(x, w)
    compiled = dl.compile(_program, backend=backend)
    actual = compiled(x, w)
    assert actual.dtype is dl.bfloat16 and actual.tolist() == expected.tolist()
    assert dl.stats().frames_compiled == 1


def test_numpy_backend_hands_bfloat16_graphs_to_the_eager_kernels():
    from tests.backends.test_numpy_backend import run_both

    x = dl.randn(4, 8).to(dl.bfloat16)
    expected, actual, recording = run_both(lambda a: (a * 2 + 1).float(), x)
    assert recording.programs == []  # no generated program: the graph ran op by op
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
