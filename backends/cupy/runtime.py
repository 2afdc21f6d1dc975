"""Running generated kernels with CuPy: launch configuration and the kernel cache."""
from __future__ import annotations

from typing import NamedTuple

from .kernel import ELEMENTWISE

# NVRTC options for every kernel (the offline check in the tests uses the same ones).
NVRTC_OPTIONS = ("--std=c++17",)


class Launch(NamedTuple):
    """How one kernel is launched: ``grid`` blocks of ``block`` threads with ``shared``
    bytes of shared memory; ``lanes`` threads per row (row kernels only, else None)."""

    grid: int
    block: int
    shared: int
    lanes: int | None = None


def row_lanes(rows: int, row_size: int, max_lanes: int, min_lanes: int) -> int:
    """Threads per row: 1 for many short rows, else a power of two covering the row (NOTE: [rows per block])."""
    if row_size <= 16 or (rows >= 8192 and row_size <= 512):
        return 1
    lanes = min_lanes
    while lanes < min(row_size, max_lanes):
        lanes *= 2
    return lanes


def launch_config(kernel, block: int = 256, max_grid: int = 65535 * 4, min_lanes: int = 32,
                  max_lanes: int | None = None) -> Launch:
    """The :class:`Launch` of ``kernel`` for the sizes it was generated for.

    Elementwise kernels use ``block`` threads per block and enough blocks to cover the
    work (capped: the loops are grid-stride). Row kernels put ``row_lanes`` threads on
    each row (one if the kernel sums ``in_order``) and as many rows in a block as fit
    in ``block`` threads (no more than there are rows).

    Example:
        >>> launch_config(SimpleNamespace(launch=ROWS, work=7, row_size=100, shared_itemsize=8, in_order=False))
        Launch(grid=4, block=256, shared=2048, lanes=128)
    """
    if kernel.launch == ELEMENTWISE:
        return Launch(max(1, min(-(-kernel.work // block), max_grid)), block, 0)
    lanes = 1 if kernel.in_order else row_lanes(kernel.work, kernel.row_size, max_lanes or block, min_lanes)
    rows_per_block = max(1, min(block // lanes, kernel.work))
    threads = lanes * rows_per_block
    grid = max(1, min(-(-kernel.work // rows_per_block), max_grid))
    return Launch(grid, threads, threads * kernel.shared_itemsize if lanes > 1 else 0, lanes)


def size_arguments(kernel, config: Launch) -> tuple:
    """The values of ``kernel``'s size parameters for a launch (NOTE: [sizes as kernel arguments])."""
    return kernel.size_args if config.lanes is None else (*kernel.size_args, config.lanes)


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
        config = launch_config(kernel)
        # RawKernel passes an ndarray argument as its data pointer: the window of each
        # tensor starts at its first element (storage offset included).
        arrays = tuple(t._array() for t in inputs) + tuple(t._array() for t in outputs)
        sizes = tuple(self.cupy.int64(v) for v in size_arguments(kernel, config))
        compiled((config.grid,), (config.block,), arrays + sizes, shared_mem=config.shared)

    def __len__(self) -> int:
        return len(self._cache)
