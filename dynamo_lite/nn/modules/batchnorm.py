"""Batch and instance normalization layers with running statistics: BatchNorm1d/2d/3d, InstanceNorm1d/2d."""
from __future__ import annotations

from ...ops.core import api as ops
from ...tensor.dtype import int64
from .. import functional as F
from .. import init
from ..module import Module
from .normalization import add_affine


__all__ = ["BatchNorm3d"]


class _NormBase(Module):
    """Per-channel affine parameters and (optionally) running mean/variance buffers."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        add_affine(self, (num_features,), affine, affine, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", ops.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ops.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", ops.tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def _average_factor(self) -> float:
        """The momentum of this step; ``momentum=None`` means a cumulative average (reads the count)."""
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                return 1.0 / float(self.num_batches_tracked)
        return 0.0 if self.momentum is None else self.momentum

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = self._average_factor()
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep_running else None,
                            self.running_var if keep_running else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) inputs, per channel.

    Training normalizes by the batch's statistics and updates ``running_mean`` /
    ``running_var`` with ``momentum``; eval mode normalizes by the running ones.

    Example:
        >>> bn = dl.nn.BatchNorm1d(4)
        >>> bn(dl.randn(8, 4)).shape
        dl.Size([8, 4])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) inputs, per channel (see BatchNorm1d).

    Example:
        >>> bn = dl.nn.BatchNorm2d(3).eval()
        >>> bn(dl.randn(2, 3, 4, 4)).shape
        dl.Size([2, 3, 4, 4])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        batched_rank = self._batched_rank
        if input.dim() not in (batched_rank - 1, batched_rank):
            raise ValueError(f"expected {batched_rank - 1}D or {batched_rank}D input (got {input.dim()}D input)")
        unbatched = input.dim() == batched_rank - 1
        if unbatched:
            input = input.unsqueeze(0)
        momentum = 0.1 if self.momentum is None else self.momentum
        output = F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                                 self.training or not self.track_running_stats, momentum, self.eps)
        return output.squeeze(0) if unbatched else output


class InstanceNorm1d(_InstanceNorm):
    """Normalize each (sample, channel) sequence of (N, C, L) by its own statistics.

    Example:
        >>> dl.nn.InstanceNorm1d(3)(dl.randn(2, 3, 5)).shape
        dl.Size([2, 3, 5])
    """

    _batched_rank = 3


class InstanceNorm2d(_InstanceNorm):
    """Normalize each (sample, channel) plane of (N, C, H, W) by its own statistics.

    ``affine`` and ``track_running_stats`` default to False, as in torch.

    Example:
        >>> dl.nn.InstanceNorm2d(3, affine=True)(dl.randn(2, 3, 4, 4)).shape
        dl.Size([2, 3, 4, 4])
    """

    _batched_rank = 4


class BatchNorm3d(_BatchNorm):
    """Batch normalization over ``(N, C, D, H, W)`` inputs, per channel (see BatchNorm1d).

    Example:
        >>> dl.nn.BatchNorm3d(3)(dl.randn(2, 3, 2, 2, 2)).shape
        dl.Size([2, 3, 2, 2, 2])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")
