"""``dl.set_float32_matmul_precision`` / ``dl.get_float32_matmul_precision``: torch's setting, kept for ported code.

torch lets float32 matmuls use TensorFloat-32 (``"high"``) or bfloat16 passes (``"medium"``) on
hardware that has them. dynamo_lite's CPU kernels (NumPy's BLAS, the native gemm) and its CuPy
matmuls compute float32 products in float32 whatever the setting: ``"highest"`` is what they
do, and the other values are accepted and remembered, so code that sets and reads it runs.
"""
from __future__ import annotations

#: torch's accepted values.
PRECISIONS = ("highest", "high", "medium")


class MatmulPrecision:
    """The process's float32 matmul precision setting."""

    def __init__(self):
        self.value = "highest"


SETTING = MatmulPrecision()


def set_float32_matmul_precision(precision: str) -> None:
    """Set the float32 matmul precision: ``"highest"``, ``"high"`` or ``"medium"``.

    Raises:
        ValueError: any other value.

    Example:
        >>> dl.set_float32_matmul_precision("high")
        >>> dl.get_float32_matmul_precision()
        'high'
    """
    if precision not in PRECISIONS:
        raise ValueError(f"{precision!r} is not one of 'highest', 'high', or 'medium'")
    SETTING.value = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision last set (``"highest"`` by default)."""
    return SETTING.value
