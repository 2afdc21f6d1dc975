"""conv2d and 2-D pooling against direct NumPy references, NCHW and channels_last."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.tensor.layout import channels_last_strides

from .oracle import assert_close, laid_out, make, seeds

image_layouts = st.sampled_from(["contiguous", "channels_last", "sliced", "transposed"])


def reference_conv2d(x, w, bias, stride, padding, dilation, groups):
    """Sum over kernel offsets of (patch x weight slice): independent of the im2col kernel."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g, i, j in itertools.product(range(groups), range(kh), range(kw)):
        top, left = i * dilation[0], j * dilation[1]
        patch = padded[:, g * cg:(g + 1) * cg, top:top + stride[0] * (oh - 1) + 1:stride[0],
                       left:left + stride[1] * (ow - 1) + 1:stride[1]]
        out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    if bias is not None:
        out += bias[:, None, None]
    return out


@st.composite
def conv_cases(draw):
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cg = draw(st.integers(1, 3))
    og = draw(st.integers(1, 3))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    eff = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    h = draw(st.integers(max(1, eff[0] - 2 * padding[0]), 7))
    w = draw(st.integers(max(1, eff[1] - 2 * padding[1]), 7))
    n = draw(st.integers(1, 2))
    return dict(x=(n, cg * groups, h, w), w=(og * groups, cg) + kernel, stride=stride, padding=padding,
                dilation=dilation, groups=groups)


@settings(max_examples=30, deadline=None)
@given(case=conv_cases(), x_layout=image_layouts, w_layout=st.sampled_from(["contiguous", "channels_last"]),
       with_bias=st.booleans(), dtype=st.sampled_from([np.float32, np.float64]), seed=seeds)
def test_conv2d_matches_reference(case, x_layout, w_layout, with_bias, dtype, seed):
    rng = np.random.default_rng(seed)
    x, a = make(rng, case["x"], dtype, x_layout)
    w, wa = make(rng, case["w"], dtype, w_layout)
    b, ba = make(rng, case["w"][:1], dtype, "contiguous")
    result = dl.conv2d(x, w, b if with_bias else None, case["stride"], case["padding"], case["dilation"], case["groups"])
    expected = reference_conv2d(a, wa, ba if with_bias else None, case["stride"], case["padding"], case["dilation"],
                                case["groups"])
    assert result.dtype.numpy == dtype
    assert_close(result, expected.astype(dtype), rtol=1e-4, atol=1e-4)
    wants_channels_last = x.suggest_memory_format() is dl.channels_last or w.suggest_memory_format() is dl.channels_last
    if wants_channels_last and result.shape[1] > 1 and result.shape[2] * result.shape[3] > 1:
        assert result.is_contiguous(memory_format=dl.channels_last)
    elif not wants_channels_last:
        assert result.is_contiguous()


def test_conv2d_unbatched_same_and_valid_padding():
    rng = np.random.default_rng(1)
    x, a = make(rng, (3, 7, 6), np.float32, "contiguous")
    w, wa = make(rng, (4, 3, 3, 3), np.float32, "contiguous")
    assert_close(dl.conv2d(x, w, padding=1), reference_conv2d(a[None], wa, None, (1, 1), (1, 1), (1, 1), 1)[0], rtol=1e-4)
    assert dl.conv2d(x, w, padding="valid").shape == (4, 5, 4)
    even, ea = make(rng, (2, 3, 4, 2), np.float32, "contiguous")  # even kernel: one extra pixel after
    same = dl.conv2d(x[None], even, padding="same")
    assert same.shape == (1, 2, 7, 6)
    padded = np.pad(a[None], ((0, 0), (0, 0), (1, 2), (0, 1)))
    assert_close(same, reference_conv2d(padded, ea, None, (1, 1), (0, 0), (1, 1), 1), rtol=1e-4, atol=1e-5)


def test_conv2d_infinite_bias_meets_the_opposite_infinity_silently(recwarn):
    """-inf * w + inf is NaN, as in torch, and no NumPy RuntimeWarning reaches the program."""
    x = dl.zeros(1, 1, 3, 3)
    x[0, 0, 1, 1] = float("-inf")
    out = dl.conv2d(x, dl.ones(2, 1, 1, 1), dl.tensor([float("inf"), 1.0]))
    assert out[0, 0].isnan().tolist() == [[False, False, False], [False, True, False], [False, False, False]]
    assert out[0, 1, 1, 1].item() == float("-inf")
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_conv2d_half_and_integer_inputs():
    rng = np.random.default_rng(2)
    x, a = make(rng, (1, 2, 5, 5), np.float16, "channels_last")
    w, wa = make(rng, (3, 2, 3, 3), np.float16, "contiguous")
    result = dl.conv2d(x, w)
    assert result.dtype is dl.float16 and result.is_contiguous(memory_format=dl.channels_last)
    assert_close(result, reference_conv2d(a, wa, None, (1, 1), (0, 0), (1, 1), 1).astype(np.float16), rtol=1e-2, atol=1e-2)
    xi, ai = make(rng, (1, 2, 4, 4), np.int64, "contiguous")
    wi, wai = make(rng, (1, 2, 2, 2), np.int64, "contiguous")
    assert_close(dl.conv2d(xi, wi), reference_conv2d(ai, wai, None, (1, 1), (0, 0), (1, 1), 1).astype(np.int64))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dl.conv2d(dl.ones(1, 4, 8, 8), dl.ones(4, 3, 3, 3)),
         r"Given groups=1, weight of size \[4, 3, 3, 3\], expected input\[1, 4, 8, 8\] to have 3 channels, but got 4"),
        (lambda: dl.conv2d(dl.ones(1, 4, 8, 8), dl.ones(3, 2, 3, 3), groups=2),
         "expected weight to be divisible by 2 at dimension 0"),
        (lambda: dl.conv2d(dl.ones(1, 1, 3, 8, 8), dl.ones(4, 3, 3, 3)),
         r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: \[1, 1, 3, 8, 8\]"),
        (lambda: dl.conv2d(dl.ones(1, 3, 2, 2), dl.ones(4, 3, 3, 3)),
         r"Calculated padded input size per channel: \(2 x 2\). Kernel size: \(3 x 3\)"),
        (lambda: dl.conv2d(dl.ones(1, 3, 8, 8), dl.ones(4, 3, 3, 3), dl.ones(5)),
         "expected bias to be 1-dimensional with 4 elements, but got bias of size"),
        (lambda: dl.conv2d(dl.ones(1, 3, 8, 8), dl.ones(4, 3, 3, 3, dtype=dl.float64)), "should be the same"),
        (lambda: dl.conv2d(dl.ones(1, 3, 8, 8), dl.ones(4, 3, 3, 3), padding="same", stride=2),
         "padding='same' is not supported for strided convolutions"),
        (lambda: dl.conv2d(dl.ones(1, 3, 8, 8), dl.ones(4, 3, 3, 3), padding="foo"), "Invalid padding string: 'foo'"),
        (lambda: dl.conv2d(dl.ones(1, 3, 8, 8), dl.ones(4, 3, 3, 3), padding=-1), "negative padding is not supported"),
        (lambda: dl.conv2d(dl.ones(1, 3, 8, 8), dl.ones(4, 3, 3, 3), stride=0), "non-positive stride is not supported"),
    ],
)
def test_conv2d_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


# -- pooling ---------------------------------------------------------------------------------
def _windows(size, out, kernel, stride, pad, dilation):
    for o in range(out):
        yield [o * stride - pad + i * dilation for i in range(kernel)]


def reference_pool(a, kernel, stride, padding, dilation, out_hw, mode, count_include_pad=True, divisor=None):
    n, c, h, w = a.shape
    out = np.zeros((n, c) + out_hw)
    index = np.zeros((n, c) + out_hw, np.int64)
    for oh, rows in enumerate(_windows(h, out_hw[0], kernel[0], stride[0], padding[0], dilation[0])):
        for ow, cols in enumerate(_windows(w, out_hw[1], kernel[1], stride[1], padding[1], dilation[1])):
            valid = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < w]
            vals = np.stack([a[:, :, r, q] for r, q in valid], -1).astype(np.float64)
            if mode == "max":
                pos = np.argmax(np.where(np.isnan(vals), np.inf, vals), -1)
                out[:, :, oh, ow] = np.take_along_axis(vals, pos[..., None], -1)[..., 0]
                flat = np.array([r * w + q for r, q in valid])
                index[:, :, oh, ow] = flat[pos]
            else:
                hend = min(rows[0] + kernel[0], h + padding[0])
                wend = min(cols[0] + kernel[1], w + padding[1])
                count = (hend - rows[0]) * (wend - cols[0]) if count_include_pad else len(valid)
                out[:, :, oh, ow] = vals.sum(-1) / (divisor or count)
    return out, index


@st.composite
def pool_cases(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(draw(st.integers(0, (d * (k - 1) + 1) // 2)) for k, d in zip(kernel, dilation))
    h = draw(st.integers(dilation[0] * (kernel[0] - 1) + 1, 8))
    w = draw(st.integers(dilation[1] * (kernel[1] - 1) + 1, 8))
    return dict(shape=(draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w), kernel=kernel, stride=stride,
                padding=padding, dilation=dilation, ceil_mode=draw(st.booleans()))


@settings(max_examples=30, deadline=None)
@given(case=pool_cases(), layout=image_layouts, seed=seeds)
def test_max_pool2d_matches_reference(case, layout, seed):
    rng = np.random.default_rng(seed)
    x, a = make(rng, case["shape"], np.float32, layout)
    args = (case["kernel"], case["stride"], case["padding"], case["dilation"], case["ceil_mode"])
    values, indices = dl.max_pool2d(x, *args, return_indices=True)
    assert dl.max_pool2d(x, *args).shape == values.shape
    expected, expected_index = reference_pool(a, case["kernel"], case["stride"], case["padding"], case["dilation"],
                                              tuple(values.shape[2:]), "max")
    assert_close(values, expected.astype(np.float32))
    assert_close(indices, expected_index)
    assert_close(dl.max_pool2d(x, *args), expected.astype(np.float32))
    if x.suggest_memory_format() is dl.channels_last:
        assert values.stride() == channels_last_strides(values.shape)


@settings(max_examples=30, deadline=None)
@given(case=pool_cases(), layout=image_layouts, include_pad=st.booleans(), divisor=st.sampled_from([None, 3]), seed=seeds)
def test_avg_pool2d_matches_reference(case, layout, include_pad, divisor, seed):
    rng = np.random.default_rng(seed)
    x, a = make(rng, case["shape"], np.float32, layout)
    padding = tuple(min(p, k // 2) for p, k in zip(case["padding"], case["kernel"]))  # no dilation here
    result = dl.avg_pool2d(x, case["kernel"], case["stride"], padding, case["ceil_mode"], include_pad, divisor)
    expected, _ = reference_pool(a, case["kernel"], case["stride"], padding, (1, 1), tuple(result.shape[2:]),
                                 "avg", include_pad, divisor)
    assert_close(result, expected.astype(np.float32))


def test_pooling_defaults_unbatched_and_nan():
    x = laid_out(np.arange(16, dtype=np.float32).reshape(1, 4, 4), "contiguous")
    assert dl.max_pool2d(x, 2).tolist() == [[[5.0, 7.0], [13.0, 15.0]]]
    assert dl.avg_pool2d(x, 2).tolist() == [[[2.5, 4.5], [10.5, 12.5]]]
    with_nan = dl.tensor([[[[1.0, float("nan")], [3.0, 4.0]]]])
    values, indices = dl.max_pool2d(with_nan, 2, return_indices=True)
    assert np.isnan(values.item()) and indices.item() == 1
    assert dl.max_pool2d(dl.arange(16).view(1, 1, 4, 4), 2).dtype is dl.int64


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dl.max_pool2d(dl.ones(1, 1, 4, 4), 3, padding=2),
         "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1"),
        (lambda: dl.max_pool2d(dl.ones(1, 1, 2, 2), 3), r"Given input size: \(1x2x2\). Calculated output size: \(1x0x0\)"),
        (lambda: dl.max_pool2d(dl.ones(5, 5), 2), "non-empty 3D or 4D"),
        (lambda: dl.avg_pool2d(dl.ones(1, 1, 4, 4), 3, padding=2), "pad should be at most half"),
        (lambda: dl.max_pool2d(dl.ones(1, 1, 4, 4), 2, stride=0), "stride should be greater than zero"),
    ],
)
def test_pooling_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()
