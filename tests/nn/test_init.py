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
