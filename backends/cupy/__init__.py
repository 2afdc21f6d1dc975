"""The ``cupy`` backend: fused CUDA kernels generated from the graph, run with CuPy.

Pipeline: ``lowering.lower`` partitions the graph (pointwise fusion groups, reductions,
softmax/layer_norm with fused prologues), the builders generate one CUDA C++ source per
kernel (``pointwise``, ``rows``, ``normalization``), and a runtime compiles and launches
them: ``CupyRuntime`` on a GPU, ``HostEmulationRuntime`` on the CPU for tests. Matmuls,
convolutions and views stay registry-op calls, which on CUDA tensors run CuPy/cuBLAS.

Example:
    >>> f = dl.compile(fn, backend="cupy")      # or "auto" with CUDA inputs
    >>> f(x.to("cuda"))
"""
from __future__ import annotations

from dynamo_lite.graph.shape_prop import ShapeProp
from dynamo_lite.tensor.device import cupy_module

from ..registry import InvalidBackend, register_backend
from ..report_notes import record_fused_groups
from .kernel import Kernel, parse_signature
from .lowering import Lowered, lower
from .runtime import CupyRuntime, launch_config
from .scan import compile_cupy_scan_bodies

__all__ = ["CupyBackend", "CupyRuntime", "Kernel", "Lowered", "cupy_backend", "launch_config", "lower",
           "parse_signature"]


class CupyBackend:
    """A backend ``(graph_module, example_inputs) -> callable`` over one kernel runtime.

    Args:
        make_runtime: builds the runtime on first use (CuPy by default; the tests pass
            the host emulation). The runtime, and so its kernel cache, is shared by
            every graph this backend compiles.
        device_type: the device type the inputs must be on.
    """

    def __init__(self, make_runtime=None, device_type: str = "cuda"):
        self.make_runtime = make_runtime or (lambda: CupyRuntime(cupy_module()))
        self.device_type = device_type
        self.runtime = None
        self.__name__ = "cupy" if device_type == "cuda" else "cupy_emulated"

    def __call__(self, gm, example_inputs):
        for value in example_inputs:
            device = getattr(value, "device", None)
            if device is not None and getattr(device, "type", None) != self.device_type:
                raise InvalidBackend(  # a RuntimeError the caller gets, never an eager fallback
                    f"backend {self.__name__!r} compiles graphs whose tensors are on {self.device_type}, "
                    f"but an input is on {device}; move inputs with .to('{self.device_type}') or use "
                    f"backend='auto'"
                )
        if self.runtime is None:
            self.runtime = self.make_runtime()
        if any(n.op != "output" and "val" not in n.meta for n in gm.graph.nodes):
            ShapeProp(gm).propagate(*example_inputs)
        compile_cupy_scan_bodies(gm, self)  # NOTE: [cupy scan bodies]
        lowered = lower(gm, self.runtime)
        record_fused_groups(gm, [kernel.nodes for kernel in lowered.kernels])
        return lowered.module(class_name=f"{gm.class_name}_{self.__name__}")


cupy_backend = register_backend("cupy", CupyBackend(), devices=("cuda",), priority=10, requires="cupy")
