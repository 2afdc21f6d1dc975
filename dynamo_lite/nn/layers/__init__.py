"""The layer modules of dl.nn, grouped by kind."""
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout
from .flatten import Flatten
from .linear import Identity, Linear
from .normalization import LayerNorm
from .pooling import AvgPool2d, MaxPool2d
from .sparse import Embedding

__all__ = [
    "AvgPool2d", "Conv2d", "Dropout", "Embedding", "Flatten", "GELU", "Identity", "LayerNorm",
    "Linear", "LogSoftmax", "MaxPool2d", "ModuleDict", "ModuleList", "ReLU", "Sequential",
    "Sigmoid", "SiLU", "Softmax", "Tanh",
]
