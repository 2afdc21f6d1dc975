"""dynamo_lite: a bytecode-rewriting frontend compiler for torch-like tensor programs."""
from .tensor.dtype import (
    bool_ as bool, dtype, float16, float32, float64, get_default_dtype, half, int8, int16,
    int32, int64, long, set_default_dtype, uint8, double, short,
)
from .tensor.device import device
from .tensor.layout import Size, channels_last, contiguous_format, preserve_format
from .tensor.meta import TensorMeta
from .tensor.tensor import Tensor
