"""torch's legacy tensor API: ``dl.Tensor(...)``, the typed tensor classes, ``Tensor.layout``
and ``Size`` arithmetic. Expected values follow torch's documented behaviour (torch.Tensor
is the default-dtype legacy constructor; ``torch.FloatTensor`` etc. construct CPU tensors of
their dtype and ``isinstance`` checks dtype and device; slicing, ``Size + tuple`` and
``Size * n`` give a Size while ``tuple + Size`` is a tuple)."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same


def test_tensor_from_data_uses_the_default_dtype():
    t = dl.Tensor([[1, 2], [3, 4]])
    assert t.dtype is dl.float32 and t.shape == (2, 2)
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    dl.set_default_dtype(dl.float64)
    try:
        assert dl.Tensor([1]).dtype is dl.float64
    finally:
        dl.set_default_dtype(dl.float32)


def test_tensor_from_sizes():
    t = dl.Tensor(2, 3)
    assert t.shape == (2, 3) and t.dtype is dl.float32 and t.is_contiguous()
    assert dl.Tensor(dl.Size([4])).shape == (4,)
    assert dl.Tensor().shape == (0,)
    with pytest.raises(RuntimeError):
        dl.Tensor(-1)


def test_tensor_from_a_tensor_aliases_it():
    source = dl.zeros(3)
    alias = dl.Tensor(source)
    alias[0] = 7
    assert source.tolist() == [7.0, 0.0, 0.0]
    with pytest.raises(TypeError):
        dl.Tensor(dl.arange(3))  # int64 into the float constructor


def test_tensor_from_a_python_float_raises():
    with pytest.raises(TypeError, match="data must be a sequence"):
        dl.Tensor(2.5)


def test_tensor_copies_numpy_data():
    array = np.arange(3.0)
    t = dl.Tensor(array)
    array[0] = 9
    assert t.tolist() == [0.0, 1.0, 2.0] and t.dtype is dl.float32


@pytest.mark.parametrize("cls, dtype", [(dl.FloatTensor, dl.float32), (dl.DoubleTensor, dl.float64),
                                        (dl.LongTensor, dl.int64), (dl.IntTensor, dl.int32),
                                        (dl.ByteTensor, dl.uint8), (dl.BoolTensor, dl.bool)])
def test_typed_tensors_construct_and_check_instances(cls, dtype):
    made = cls([1, 0])
    assert made.dtype is dtype and isinstance(made, cls) and isinstance(made, dl.Tensor)
    assert cls(2, 2).shape == (2, 2) and cls(2, 2).dtype is dtype
    other = dl.ones(2, dtype=dl.float16)
    assert not isinstance(other, cls)
    assert not isinstance([1, 0], cls)


def test_typed_tensor_isinstance_in_compiled_code(backend):
    def f(x):
        if isinstance(x, dl.LongTensor):
            return x * 2
        if isinstance(x, dl.FloatTensor):
            return x + 1
        return x

    assert_same(f, dl.arange(3), backend=backend)
    assert_same(f, dl.ones(3), backend=backend)


def test_layout_is_strided():
    assert dl.ones(2).layout is dl.strided
    assert dl.ones(2, 3).t().layout is dl.strided
    assert repr(dl.strided) == "dl.strided"


def test_size_arithmetic_keeps_the_type():
    s = dl.Size([8, 8])
    assert type(s + s) is dl.Size and s + s == (8, 8, 8, 8)
    assert type(s + (2,)) is dl.Size
    assert type((2,) + s) is tuple
    assert type(s[1:]) is dl.Size and s[1:] == (8,)
    assert type(s[0]) is int
    assert type(s * 2) is dl.Size and type(2 * s) is dl.Size
    assert str(s) == repr(s) == "dl.Size([8, 8])"
    with pytest.raises(TypeError):
        s + [1]


def test_size_arithmetic_in_compiled_code(backend):
    def f(x):
        s = x.shape
        return x.reshape(s[1:] + s[:1]), s + (1,), s[1:]

    assert_same(f, dl.ones(2, 3), backend=backend)
