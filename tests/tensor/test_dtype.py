"""Type promotion: promote_types and result_type against torch's documented results."""
import pytest

import dynamo_lite as dl
from dynamo_lite.tensor.dtype import promote_types, result_type
from dynamo_lite.tensor.meta import TensorMeta


def dim(dtype):
    """A dimensioned operand (shape (1,))."""
    return TensorMeta((1,), dtype)


def zerodim(dtype):
    return TensorMeta((), dtype)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (dl.float16, dl.int64, dl.float16),  # category wins outright, no widening
        (dl.uint8, dl.int8, dl.int16),
        (dl.uint8, dl.int64, dl.int64),
        (dl.bool, dl.uint8, dl.uint8),
        (dl.bool, dl.int32, dl.int32),
        (dl.int32, dl.int64, dl.int64),
        (dl.float32, dl.float64, dl.float64),
        (dl.int64, dl.float32, dl.float32),
        (dl.float16, dl.float32, dl.float32),
        (dl.int8, dl.int16, dl.int16),
        (dl.bool, dl.bool, dl.bool),
    ],
)
def test_promote_types(a, b, expected):
    assert promote_types(a, b) is expected
    assert promote_types(b, a) is expected


@pytest.mark.parametrize(
    "operands, expected",
    [
        # the examples of torch's type promotion documentation
        ((5, 5), dl.int64),
        ((dim(dl.int32), 5), dl.int32),
        ((dim(dl.int32), zerodim(dl.int64)), dl.int32),
        ((dim(dl.int64), dim(dl.int32)), dl.int64),
        ((dim(dl.bool), dim(dl.int64)), dl.int64),
        ((dim(dl.bool), dim(dl.uint8)), dl.uint8),
        ((dim(dl.float32), dim(dl.float64)), dl.float64),
        ((dim(dl.bool), dim(dl.int32)), dl.int32),
        ((dim(dl.int64), dim(dl.float32)), dl.float32),
        ((dim(dl.int32), 2.5), dl.float32),  # a Python float counts as the default dtype
        ((dim(dl.uint8), dl.tensor(1)), dl.uint8),  # torch.result_type docstring example
        # zero-dim tensors matter only when of a higher category than dimensioned ones
        ((dim(dl.int32), zerodim(dl.float64)), dl.float64),
        ((dim(dl.float32), zerodim(dl.float64)), dl.float32),
        ((dim(dl.float16), zerodim(dl.float64)), dl.float16),
        ((dim(dl.int8), zerodim(dl.uint8)), dl.int8),
        ((dim(dl.bool), zerodim(dl.int32)), dl.int32),
        ((dim(dl.float16), 2.5), dl.float16),
        ((dim(dl.bool), 3), dl.int64),
        ((dim(dl.bool), True), dl.bool),
        ((dim(dl.uint8), 300), dl.uint8),
        ((zerodim(dl.int32), 2.5), dl.float32),
        ((zerodim(dl.float16), 2.5), dl.float16),
        ((zerodim(dl.int64), zerodim(dl.int8)), dl.int64),
        ((dim(dl.int32), zerodim(dl.float16), 2.5), dl.float16),
        ((2.5, True), dl.float32),
        ((True, False), dl.bool),
    ],
)
def test_result_type(operands, expected):
    assert result_type(*operands) is expected


def test_result_type_follows_default_dtype():
    old = dl.get_default_dtype()
    dl.set_default_dtype(dl.float64)
    try:
        assert result_type(dim(dl.int32), 2.5) is dl.float64
        assert result_type(dim(dl.float32), 2.5) is dl.float32
    finally:
        dl.set_default_dtype(old)
    with pytest.raises(TypeError, match="only floating-point types"):
        dl.set_default_dtype(dl.int32)
