"""max_pool2d_with_indices and its backward op: torch's index choice (ties, NaN, padding) and an exact scatter."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
import dynamo_lite.nn.functional as F

from .oracle import laid_out, seeds
from .test_conv import image_layouts, pool_cases

NAN, INF = float("nan"), float("inf")
GRID = [[[[NAN, 1.0, NAN, 2.0], [3.0, NAN, 5.0, 5.0], [-INF, -INF, 1.0, 1.0], [-INF, -INF, 1.0, 1.0]]]]


def torch_rule_pool(a, kernel, stride, padding, dilation, out_hw):
    """Direct loops with torch's CPU rule: a pixel replaces the choice when ``val > max or isnan(val)``."""
    n, c, h, w = a.shape
    values = np.empty((n, c) + out_hw, a.dtype)
    index = np.empty((n, c) + out_hw, np.int64)
    for p in np.ndindex(n, c):
        for oh in range(out_hw[0]):
            for ow in range(out_hw[1]):
                best, at = -np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).min, None
                for i in range(kernel[0]):
                    for j in range(kernel[1]):
                        r = oh * stride[0] - padding[0] + i * dilation[0]
                        q = ow * stride[1] - padding[1] + j * dilation[1]
                        if not (0 <= r < h and 0 <= q < w):
                            continue
                        val = a[p][r, q]
                        if at is None or val > best or (a.dtype.kind == "f" and np.isnan(val)):
                            best, at = val, r * w + q
                values[p][oh, ow], index[p][oh, ow] = best, at
    return values, index


def test_torch_choices_on_ties_nan_and_padding():
    # expected indices printed by torch 2.13 (CPU) for the same calls
    x = dl.tensor(GRID)
    for layout in (dl.contiguous_format, dl.channels_last):
        _, indices = F.max_pool2d(x.contiguous(memory_format=layout), 2, return_indices=True)
        assert indices.tolist() == [[[[5, 2], [8, 10]]]]
    _, indices = F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True)
    assert indices.tolist() == [[[[0, 0, 2, 2, 3], [0, 5, 5, 2, 7], [4, 5, 5, 6, 7], [8, 8, 10, 10, 11],
                                  [12, 12, 14, 14, 15]]]]
    values, indices = F.max_pool2d(dl.full((1, 1, 3, 3), -INF), 3, stride=2, padding=1, return_indices=True)
    assert indices.tolist() == [[[[0, 1], [3, 4]]]]  # a window of -inf picks its first pixel, never padding
    assert values.tolist() == [[[[-INF, -INF], [-INF, -INF]]]]


@settings(max_examples=40, deadline=None)
@given(case=pool_cases(), layout=image_layouts, seed=seeds, dtype=st.sampled_from([np.float32, np.float64, np.int32]))
def test_indices_follow_torch_rule_with_ties_and_nan(case, layout, seed, dtype):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, case["shape"]).astype(dtype)  # few distinct values: many ties
    if a.dtype.kind == "f":
        a[rng.random(a.shape) < 0.15] = np.nan
        a[rng.random(a.shape) < 0.1] = -np.inf
    x = laid_out(a, layout)
    args = (case["kernel"], case["stride"], case["padding"], case["dilation"], case["ceil_mode"])
    values, indices = F.max_pool2d(x, *args, return_indices=True)
    expected, expected_index = torch_rule_pool(a, case["kernel"], case["stride"], case["padding"], case["dilation"],
                                               tuple(values.shape[2:]))
    np.testing.assert_array_equal(values.numpy(), expected)
    np.testing.assert_array_equal(indices.numpy(), expected_index)
    np.testing.assert_array_equal(F.max_pool2d(x, *args).numpy(), expected)


def scatter_reference(grad, indices, input_shape):
    """zeros + grad added at the indices in output order (the sequential scatter-add the backward equals)."""
    planes = int(np.prod(input_shape[:-2]))
    out = np.zeros((planes, input_shape[-2] * input_shape[-1]), grad.dtype)
    g, idx = grad.reshape(planes, -1), indices.reshape(planes, -1)
    for p in range(planes):
        for k in range(idx.shape[1]):
            out[p, idx[p, k]] += g[p, k]
    return out.reshape(input_shape)


@settings(max_examples=40, deadline=None)
@given(case=pool_cases(), layout=image_layouts, seed=seeds, unbatched=st.booleans())
def test_backward_equals_sequential_scatter_add(case, layout, seed, unbatched):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(case["shape"]).astype(np.float32)
    x = laid_out(a[0] if unbatched else a, layout)
    geometry = (case["kernel"], case["stride"], case["padding"], case["dilation"], case["ceil_mode"])
    _, indices = dl.ops.max_pool2d_with_indices(x, *geometry)
    g = rng.standard_normal(tuple(indices.shape)).astype(np.float32)
    g[rng.random(g.shape) < 0.2] = -0.0  # signed zeros: 0 + (-0.0) is +0.0
    grad = laid_out(g, layout if not unbatched else "contiguous")
    result = dl.ops.max_pool2d_with_indices_backward(grad, x, *geometry, indices).numpy()
    expected = scatter_reference(g, indices.numpy(), tuple(x.shape))
    np.testing.assert_array_equal(result, expected)
    assert not np.signbit(result[result == 0]).any()
    from_input = dl.ops.max_pool2d_backward(grad, x, *geometry).numpy()  # max_pool2d's: finds the maxima again
    assert from_input.tobytes() == result.tobytes()


def test_gradient_through_max_pool2d_goes_to_the_first_max():
    x = dl.tensor(GRID[0][0][:2]).reshape(1, 1, 2, 4).requires_grad_()
    y = F.max_pool2d(x.nan_to_num(0.0), 2)
    y.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]]]]
