"""dl.nn: Module, Parameter, layers and the functional interface."""
from . import functional, init
from .layers import (
    GELU, AvgPool2d, Conv2d, Dropout, Embedding, Flatten, Identity, LayerNorm, Linear, LogSoftmax,
    MaxPool2d, ModuleDict, ModuleList, ReLU, Sequential, Sigmoid, SiLU, Softmax, Tanh,
)
from .module import Module
from .parameter import Parameter

__all__ = [
    "AvgPool2d", "Conv2d", "Dropout", "Embedding", "Flatten", "GELU", "Identity", "LayerNorm",
    "Linear", "LogSoftmax", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "Parameter", "ReLU",
    "Sequential", "Sigmoid", "SiLU", "Softmax", "Tanh", "functional", "init",
]
