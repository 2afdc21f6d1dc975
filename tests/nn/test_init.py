"""dl.nn.init: in-place initialisers, bounds, statistics and reproducibility."""
import math

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.nn import init


def test_uniform_in_place_bounds_and_seed():
    t = dl.empty(100, 50)
    ptr = t.data_ptr()
    dl.manual_seed(7)
    assert init.uniform_(t, -0.5, 2.0) is t and t.data_ptr() == ptr
    values = t.numpy().copy()
    assert values.min() >= -0.5 and values.max() < 2.0
    assert abs(values.mean() - 0.75) < 0.05
    dl.manual_seed(7)
    np.testing.assert_array_equal(init.uniform_(dl.empty(100, 50), -0.5, 2.0).numpy(), values)


def test_normal_statistics_and_dtype():
    t = init.normal_(dl.empty(200, 100, dtype=dl.float64), mean=3.0, std=0.5)
    assert t.dtype == dl.float64
    assert abs(t.numpy().mean() - 3.0) < 0.02 and abs(t.numpy().std() - 0.5) < 0.02


def test_constant_zeros_ones():
    assert init.constant_(dl.empty(3), 2.5).tolist() == [2.5] * 3
    assert init.zeros_(dl.empty(2)).tolist() == [0.0, 0.0]
    assert init.ones_(dl.empty(2, dtype=dl.int64)).tolist() == [1, 1]


def test_fan_in_fan_out():
    assert init.calculate_fan_in_and_fan_out(dl.empty(8, 3, 5, 5)) == (75, 200)
    assert init.calculate_fan_in_and_fan_out(dl.empty(4, 6)) == (6, 4)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.calculate_fan_in_and_fan_out(dl.empty(4))


@pytest.mark.parametrize("a,mode,nonlinearity,fan", [
    (math.sqrt(5), "fan_in", "leaky_relu", 60),
    (0.0, "fan_out", "relu", 40),
    (0.0, "fan_in", "tanh", 60),
])
def test_kaiming_uniform_bound(a, mode, nonlinearity, fan):
    gains = {"leaky_relu": math.sqrt(2.0 / (1 + a * a)), "relu": math.sqrt(2.0), "tanh": 5.0 / 3}
    bound = gains[nonlinearity] * math.sqrt(3.0 / fan)
    t = init.kaiming_uniform_(dl.empty(40, 60), a=a, mode=mode, nonlinearity=nonlinearity)
    values = t.numpy()
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.9 * bound


def test_kaiming_errors():
    with pytest.raises(ValueError, match="Mode"):
        init.kaiming_uniform_(dl.empty(2, 2), mode="fan_avg")
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.kaiming_uniform_(dl.empty(2, 2), nonlinearity="swish")


# -- torch's other initialisers (gains, fans and messages as torch 2.13 gives them) ----------
def test_calculate_gain_table():
    assert init.calculate_gain("conv_transpose2d") == 1.0 and init.calculate_gain("selu") == 0.75
    assert init.calculate_gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01**2))
    assert init.calculate_gain("leaky_relu", 0) == math.sqrt(2.0)
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")
    with pytest.raises(ValueError, match=r"Mode foo not supported, please use one of \['fan_in', 'fan_out'\]"):
        init.kaiming_uniform_(dl.empty(3, 4), mode="foo")


def test_xavier_bounds_and_statistics():
    dl.manual_seed(0)
    t = init.xavier_uniform_(dl.empty(300, 200), gain=2.0)
    bound = 2.0 * math.sqrt(6.0 / 500)
    assert np.abs(t.numpy()).max() <= bound and np.abs(t.numpy()).max() > 0.99 * bound
    t = init.xavier_normal_(dl.empty(300, 200, dtype=dl.float64))
    assert abs(t.numpy().std() - math.sqrt(2.0 / 500)) < 0.002


def test_kaiming_normal_statistics_and_empty_tensors():
    dl.manual_seed(0)
    t = init.kaiming_normal_(dl.empty(400, 50, 3), mode="fan_out", nonlinearity="relu")
    assert abs(t.numpy().std() - math.sqrt(2.0 / 1200)) < 0.002
    assert init.kaiming_uniform_(dl.empty(0, 3)).shape == (0, 3)  # a no-op, as torch


def test_trunc_normal_stays_inside_and_matches_the_truncated_distribution():
    dl.manual_seed(0)
    t = init.trunc_normal_(dl.empty(200, 200, dtype=dl.float64), mean=1.0, std=2.0, a=0.0, b=3.0).numpy()
    assert t.min() >= 0.0 and t.max() <= 3.0
    # Mean of N(1, 4) truncated to [0, 3]: mu + sigma * (phi(alpha) - phi(beta)) / (Phi(beta) - Phi(alpha)).
    alpha, beta = -0.5, 1.0
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    expected = 1.0 + 2.0 * (phi(alpha) - phi(beta)) / (cdf(beta) - cdf(alpha))
    assert abs(t.mean() - expected) < 0.01


def test_orthogonal_and_eye():
    for shape in [(4, 6), (6, 4), (3, 2, 2)]:
        w = init.orthogonal_(dl.empty(*shape, dtype=dl.float64), gain=2.0).numpy().reshape(shape[0], -1)
        small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-12)
    assert init.eye_(dl.empty(2, 3)).tolist() == [[1, 0, 0], [0, 1, 0]]
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(dl.empty(3, 3, 3))
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(dl.empty(3))


def test_initialisers_are_reproducible_from_the_seed():
    for fn in (init.xavier_uniform_, init.xavier_normal_, init.kaiming_normal_, init.trunc_normal_, init.orthogonal_):
        dl.manual_seed(3)
        a = fn(dl.empty(5, 4)).tolist()
        dl.manual_seed(3)
        assert fn(dl.empty(5, 4)).tolist() == a
