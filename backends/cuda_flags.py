"""dl.backends.cuda: torch's CUDA math switches (``matmul.allow_tf32`` ...), as plain settable flags.

dynamo_lite's CUDA matmuls run in full float32 through cuBLAS, so the flags are recorded
but change nothing.

Example:
    >>> dl.backends.cuda.matmul.allow_tf32 = True   # accepted for ported code
"""
from __future__ import annotations


class MatmulFlags:
    """The ``dl.backends.cuda.matmul`` switches, with torch's defaults."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = MatmulFlags()


def is_built() -> bool:
    """True: dynamo_lite can run CUDA tensors (through CuPy) when a device is present."""
    return True
