"""dl.nn: Module, Parameter, layers and the functional interface."""
from . import functional, init
from .modules import (
    GELU, AvgPool2d, Conv2d, Dropout, Embedding, Flatten, Identity, LayerNorm, Linear, LogSoftmax, MaxPool2d,
    ModuleDict, ModuleList, ReLU, Sequential, Sigmoid, SiLU, Softmax, Tanh,
)
from .module import Module
from .parameter import Buffer, Parameter  # noqa: F401  (dl.nn.Buffer)

__all__ = [
    "AvgPool2d", "Conv2d", "Dropout", "Embedding", "Flatten", "GELU", "Identity", "LayerNorm",
    "Linear", "LogSoftmax", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "Parameter", "Buffer", "ReLU",
    "Sequential", "Sigmoid", "SiLU", "Softmax", "Tanh", "functional", "init",
]

from .modules import *  # noqa: E402,F401,F403  (every layer, including the ported ones)
from . import modules as _modules  # noqa: E402

__all__ += [name for name in _modules.__all__ if name not in __all__]
from . import utils  # noqa: E402,F401  (dl.nn.utils.clip_grad_norm_ ...)
from .utils import parametrize, parametrizations  # noqa: E402,F401  (they import modules, which import utils)
from . import parallel  # noqa: E402,F401  (dl.nn.parallel.DistributedDataParallel, DataParallel)
