"""DataParallel: single-process data parallelism over devices; on CPU it runs the module unchanged."""
from __future__ import annotations

from ..module import Module


class DataParallel(Module):
    """Wraps ``module``; without CUDA devices (as in torch) ``forward`` runs the module unchanged.

    State dict keys get the ``module.`` prefix, as torch's do.

    Example:
        >>> model = dl.nn.parallel.DataParallel(dl.nn.Linear(4, 2))
        >>> model(dl.randn(3, 4)).shape
        dl.Size([3, 2])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
