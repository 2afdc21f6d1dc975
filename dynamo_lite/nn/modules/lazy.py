"""Lazy modules: LazyLinear, LazyConv1d/2d, LazyBatchNorm1d/2d infer their input size on the first call.

Until then their parameters are ``UninitializedParameter`` (and buffers ``UninitializedBuffer``):
placeholders without a shape. A forward pre-hook materializes them from the first input,
runs the concrete layer's initialization, removes itself and turns the module into the
concrete class (``LazyLinear`` becomes ``Linear``), so code that runs after a dry run (an
optimizer over ``parameters()``, ``dl.compile``) sees an ordinary layer.

Example:
    >>> layer = dl.nn.LazyLinear(3)
    >>> layer(dl.ones(2, 5)).shape, type(layer).__name__, layer.in_features
    (dl.Size([2, 3]), 'Linear', 5)
"""
from __future__ import annotations

from ...ops.core import api as ops
from ...tensor.dtype import int64
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter, UninitializedTensorMixin
from .batchnorm import BatchNorm1d, BatchNorm2d
from .conv import Conv1d, Conv2d
from .linear import Linear

def is_lazy(value) -> bool:
    return isinstance(value, UninitializedTensorMixin)


def _infer_parameters(module, args) -> None:
    """The forward pre-hook of a lazy module: materialize from ``args``, then become the concrete class."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """Shared by the lazy layers: the initializing hook, ``has_uninitialized_params``, loading a state_dict
    into placeholders (which materializes them with the loaded shapes)."""

    cls_to_become = None

    def _register_lazy_hook(self) -> None:
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(t) for t in list(self._parameters.values()) + list(self._buffers.values()))

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params():
            super().reset_parameters()

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        for table in (self._parameters, self._buffers):
            for name, value in table.items():
                if is_lazy(value) and prefix + name in state_dict:
                    value.materialize(tuple(state_dict[prefix + name].shape))
        return super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear layer whose ``in_features`` is the last dim of its first input.

    Example:
        >>> dl.nn.LazyLinear(4)(dl.ones(3, 7)).shape
        dl.Size([3, 4])
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__(0, 0, False, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._register_lazy_hook()

    def initialize_parameters(self, input, *args) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    """``in_channels`` read from dim 1 of the first input (dim 0 when it is unbatched)."""

    spatial_dims = 0

    def _lazy_init(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._register_lazy_hook()

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args) -> None:
        if not self.has_uninitialized_params():
            return
        unbatched = self.spatial_dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        self.in_channels = input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with no_grad():
            self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class LazyConv1d(_LazyConvMixin, Conv1d):
    """A Conv1d whose ``in_channels`` comes from the first input.

    Example:
        >>> dl.nn.LazyConv1d(4, 3)(dl.ones(2, 5, 8)).shape
        dl.Size([2, 4, 6])
    """

    cls_to_become = Conv1d
    spatial_dims = 1

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device=device,
                         dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvMixin, Conv2d):
    """A Conv2d whose ``in_channels`` comes from the first input.

    Example:
        >>> dl.nn.LazyConv2d(4, 3)(dl.ones(2, 5, 8, 8)).shape
        dl.Size([2, 4, 6, 6])
    """

    cls_to_become = Conv2d
    spatial_dims = 2

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device=device,
                         dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyNormMixin(LazyModuleMixin):
    """``num_features`` read from dim 1 of the first input."""

    def _lazy_init(self, affine: bool, track_running_stats: bool, device, dtype) -> None:
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = ops.tensor(0, dtype=int64, device=device)
        self._register_lazy_hook()

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                value = getattr(self, name)
                if value is not None:
                    value.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormMixin, BatchNorm1d):
    """A BatchNorm1d whose ``num_features`` comes from the first input.

    Example:
        >>> dl.nn.LazyBatchNorm1d()(dl.randn(4, 3)).shape
        dl.Size([4, 3])
    """

    cls_to_become = BatchNorm1d
    def __init__(self, eps: float = 1e-5, momentum=0.1, affine: bool = True, track_running_stats: bool = True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        self._lazy_init(affine, track_running_stats, device, dtype)


class LazyBatchNorm2d(_LazyNormMixin, BatchNorm2d):
    """A BatchNorm2d whose ``num_features`` comes from the first input.

    Example:
        >>> dl.nn.LazyBatchNorm2d()(dl.randn(2, 3, 4, 4)).shape
        dl.Size([2, 3, 4, 4])
    """

    cls_to_become = BatchNorm2d
    def __init__(self, eps: float = 1e-5, momentum=0.1, affine: bool = True, track_running_stats: bool = True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        self._lazy_init(affine, track_running_stats, device, dtype)
