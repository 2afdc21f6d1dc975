"""dl.nn layers against NumPy oracles: forward values, init, reproducibility, repr, errors."""
import math

import numpy as np
import pytest

import dynamo_lite as dl
from benchmarks import numpy_reference as ref
from dynamo_lite import nn


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def t(array):
    return dl.from_numpy(np.ascontiguousarray(array))


def params(module):
    return {name: p.numpy() for name, p in module.state_dict().items()}


# -- Linear --------------------------------------------------------------------------
def test_linear_forward_and_init():
    dl.manual_seed(0)
    fc = nn.Linear(20, 30)
    assert fc.weight.shape == (30, 20) and fc.bias.shape == (30,)
    assert fc.weight.dtype == dl.float32
    bound = 1 / math.sqrt(20)
    for p in (fc.weight, fc.bias):
        values = p.detach().numpy()
        assert np.all(np.abs(values) <= bound) and values.std() > bound / 4
    x = randn(7, 20)
    np.testing.assert_allclose(fc(t(x)).detach().numpy(), ref.linear(x, **_wb(fc)), rtol=1e-5, atol=1e-6)


def _wb(module):
    p = params(module)
    return {"weight": p["weight"], "bias": p.get("bias")}


def test_linear_is_reproducible_under_manual_seed():
    dl.manual_seed(123)
    a = nn.Linear(8, 4)
    dl.manual_seed(123)
    b = nn.Linear(8, 4)
    c = nn.Linear(8, 4)
    np.testing.assert_array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    assert not np.array_equal(b.weight.detach().numpy(), c.weight.detach().numpy())


def test_linear_no_bias_dtype_and_repr():
    fc = nn.Linear(3, 2, bias=False, dtype=dl.float64)
    assert fc.bias is None and [n for n, _ in fc.named_parameters()] == ["weight"]
    assert fc.weight.dtype == dl.float64
    x = np.random.default_rng(0).standard_normal((4, 3))
    np.testing.assert_allclose(fc(dl.from_numpy(x)).detach().numpy(), x @ fc.weight.detach().numpy().T, rtol=1e-12)
    assert repr(fc) == "Linear(in_features=3, out_features=2, bias=False)"


def test_identity_and_flatten():
    x = dl.randn(2, 3, 4, 5)
    assert nn.Identity(3, foo=1)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    np.testing.assert_array_equal(nn.Flatten()(x).numpy(), x.numpy().reshape(2, 60))
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"


# -- Conv2d --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(kernel_size=3),
        dict(kernel_size=3, padding=1, stride=2),
        dict(kernel_size=(2, 3), padding=(1, 0), dilation=2),
        dict(kernel_size=3, groups=2, bias=False),
        dict(kernel_size=3, padding="same"),
    ],
)
@pytest.mark.parametrize("channels_last", [False, True])
def test_conv2d_layer(kwargs, channels_last):
    dl.manual_seed(0)
    conv = nn.Conv2d(4, 6, **kwargs)
    x = randn(2, 4, 9, 8)
    xt = t(x)
    if channels_last:
        conv.to(memory_format=dl.channels_last)
        xt = xt.contiguous(memory_format=dl.channels_last)
    p = params(conv)
    padding = conv.padding if conv.padding != "same" else (1, 1)
    expected = ref.conv2d(x, p["weight"], p.get("bias"), conv.stride, padding, conv.dilation, conv.groups)
    np.testing.assert_allclose(conv(xt).detach().numpy(), expected, rtol=1e-4, atol=1e-4)


def test_conv2d_init_bounds_and_repr():
    dl.manual_seed(1)
    conv = nn.Conv2d(3, 8, 5, stride=2, padding=1, groups=1)
    fan_in = 3 * 25
    assert conv.weight.shape == (8, 3, 5, 5)
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / math.sqrt(fan_in)
    assert np.abs(conv.bias.detach().numpy()).max() <= 1 / math.sqrt(fan_in)
    assert repr(conv) == "Conv2d(3, 8, kernel_size=(5, 5), stride=(2, 2), padding=(1, 1))"
    assert repr(nn.Conv2d(4, 4, 3, groups=2, bias=False, dilation=2)) == (
        "Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), dilation=(2, 2), groups=2, bias=False)"
    )


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (dict(in_channels=3, out_channels=4, kernel_size=3, groups=2), ValueError, "in_channels must be divisible"),
        (dict(in_channels=4, out_channels=3, kernel_size=3, groups=2), ValueError, "out_channels must be divisible"),
        (dict(in_channels=4, out_channels=4, kernel_size=3, groups=0), ValueError, "positive integer"),
        (dict(in_channels=4, out_channels=4, kernel_size=3, padding="full"), ValueError, "Invalid padding"),
        (dict(in_channels=4, out_channels=4, kernel_size=3, stride=2, padding="same"), ValueError, "strided"),
        (dict(in_channels=4, out_channels=4, kernel_size=3, padding_mode="mirror"), ValueError, "padding_mode"),
    ],
)
def test_conv2d_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        nn.Conv2d(**kwargs)


# -- pooling -------------------------------------------------------------------------
@pytest.mark.parametrize("channels_last", [False, True])
def test_max_pool2d_layer(channels_last):
    x = randn(2, 3, 8, 7)
    xt = t(x)
    if channels_last:
        xt = xt.contiguous(memory_format=dl.channels_last)
    pool = nn.MaxPool2d(3, stride=2, padding=1)
    out = pool(xt)
    np.testing.assert_array_equal(out.numpy(), ref.max_pool2d(x, 3, 2, 1))
    assert out.is_contiguous(memory_format=dl.channels_last) == channels_last
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"


def test_avg_pool2d_layer():
    x = randn(1, 2, 6, 6)
    np.testing.assert_allclose(nn.AvgPool2d(2)(t(x)).numpy(), ref.avg_pool2d(x, 2), rtol=1e-6)


# -- LayerNorm, Embedding, Dropout ---------------------------------------------------
def test_layer_norm_layer():
    ln = nn.LayerNorm(6)
    assert ln.weight.tolist() == [1.0] * 6 and ln.bias.tolist() == [0.0] * 6
    with dl.no_grad():
        ln.weight.copy_(t(randn(6, seed=1)))
        ln.bias.copy_(t(randn(6, seed=2)))
    x = randn(3, 4, 6) * 2 + 5
    p = params(ln)
    np.testing.assert_allclose(ln(t(x)).detach().numpy(), ref.layer_norm(x, (6,), p["weight"], p["bias"]), rtol=1e-4,
                               atol=1e-5)
    plain = nn.LayerNorm((4, 6), elementwise_affine=False)
    assert list(plain.parameters()) == []
    np.testing.assert_allclose(plain(t(x)).numpy(), ref.layer_norm(x, (4, 6)), rtol=1e-4, atol=1e-5)
    assert repr(ln) == "LayerNorm((6,), eps=1e-05, elementwise_affine=True)"


def test_embedding_layer():
    dl.manual_seed(0)
    emb = nn.Embedding(10, 3, padding_idx=2)
    w = emb.weight.detach().numpy()
    assert np.all(w[2] == 0) and w.std() > 0.5
    idx = np.array([[1, 2, 4], [9, 0, 2]], dtype=np.int64)
    np.testing.assert_array_equal(emb(t(idx)).detach().numpy(), w[idx])
    assert repr(emb) == "Embedding(10, 3, padding_idx=2)"
    pre = nn.Embedding.from_pretrained(dl.eye(3))
    assert pre.weight.requires_grad is False
    np.testing.assert_array_equal(pre(dl.tensor([2, 0])).numpy(), np.eye(3)[[2, 0]])


def test_dropout_layer_train_and_eval():
    drop = nn.Dropout(0.5)
    x = dl.ones(1000)
    out = drop(x).numpy()
    assert set(np.unique(out).tolist()) <= {0.0, 2.0} and 0.4 < (out == 0).mean() < 0.6
    drop.eval()
    assert drop(x) is x
    assert repr(drop) == "Dropout(p=0.5, inplace=False)"
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)


# -- activations ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "layer,oracle",
    [
        (nn.ReLU(), ref.relu),
        (nn.GELU(), ref.gelu),
        (nn.GELU(approximate="tanh"), lambda x: ref.gelu(x, "tanh")),
        (nn.SiLU(), ref.silu),
        (nn.Tanh(), np.tanh),
        (nn.Sigmoid(), ref.sigmoid),
        (nn.Softmax(dim=-1), lambda x: ref.softmax(x, -1)),
        (nn.Softmax(dim=0), lambda x: ref.softmax(x, 0)),
        (nn.LogSoftmax(dim=1), lambda x: ref.log_softmax(x, 1)),
    ],
    ids=lambda v: repr(v) if isinstance(v, nn.Module) else "",
)
def test_activation_layers(layer, oracle):
    x = randn(5, 7) * 3
    np.testing.assert_allclose(layer(t(x)).numpy(), oracle(x), rtol=1e-5, atol=1e-6)


def test_activation_reprs():
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.GELU(approximate="tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"


def test_relu_inplace_layer():
    x = t(randn(10))
    expected = ref.relu(x.numpy().copy())
    assert nn.ReLU(inplace=True)(x) is x
    np.testing.assert_array_equal(x.numpy(), expected)


# -- containers in use ---------------------------------------------------------------
def test_sequential_cnn_matches_numpy_in_both_layouts():
    dl.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 5))
    x = randn(2, 3, 8, 8)
    p = params(net)
    h = ref.max_pool2d(ref.relu(ref.conv2d(x, p["0.weight"], p["0.bias"], padding=1)), 2)
    expected = ref.linear(h.reshape(2, -1), p["4.weight"], p["4.bias"])
    np.testing.assert_allclose(net(t(x)).detach().numpy(), expected, rtol=1e-4, atol=1e-5)
    net.to(memory_format=dl.channels_last)
    out = net(t(x).contiguous(memory_format=dl.channels_last))
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-4, atol=1e-5)
