"""Running generated kernels with CuPy: launch configuration and the kernel cache."""
from __future__ import annotations

from .kernel import ELEMENTWISE

# NVRTC options for every kernel (the offline check in the tests uses the same ones).
NVRTC_OPTIONS = ("--std=c++17",)


def launch_config(kernel, block: int = 256, max_grid: int = 65535 * 4, min_block: int = 32) -> tuple:
    """``(grid, block, shared_bytes)`` for ``kernel``.

    Elementwise kernels use ``block`` threads per block and enough blocks to cover the
    work (capped: the loops are grid-stride). Row kernels get one block per row with a
    power-of-two block no larger than the row needs.
    """
    if kernel.launch == ELEMENTWISE:
        return max(1, min(-(-kernel.work // block), max_grid)), block, 0
    threads = min_block
    while threads < min(kernel.row_size, block):
        threads *= 2
    return max(1, min(kernel.work, max_grid)), threads, threads * kernel.shared_itemsize


class CupyRuntime:
    """Compiles kernels with CuPy (NVRTC) and launches them on the current stream.

    Kernels are cached by their source, so graphs that generate the same kernel share
    one compiled module (and CuPy keeps its own on-disk cache across processes).
    """

    name = "cupy"

    def __init__(self, cupy_module):
        self.cupy = cupy_module
        self._cache: dict = {}

    def prepare(self, kernels) -> None:
        for kernel in kernels:
            self.load(kernel)

    def load(self, kernel):
        compiled = self._cache.get(kernel.source)
        if compiled is None:
            compiled = self._cache[kernel.source] = self.cupy.RawKernel(
                kernel.source, kernel.name, options=NVRTC_OPTIONS
            )
        return compiled

    def launch(self, compiled, kernel, inputs, outputs) -> None:
        grid, block, shared = launch_config(kernel)
        # RawKernel passes an ndarray argument as its data pointer: the window of each
        # tensor starts at its first element (storage offset included).
        arrays = tuple(t._array() for t in inputs) + tuple(t._array() for t in outputs)
        sizes = tuple(self.cupy.int64(v) for v in kernel.size_args)  # NOTE: [sizes as kernel arguments]
        compiled((grid,), (block,), arrays + sizes, shared_mem=shared)

    def __len__(self) -> int:
        return len(self._cache)
