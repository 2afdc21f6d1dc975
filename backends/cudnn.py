"""dl.backends.cudnn: torch's cuDNN switches, kept as plain settable flags for ported code.

dynamo_lite does not call cuDNN (convolutions run through its own kernels, deterministic
ones), so the flags are recorded but change nothing.

Example:
    >>> dl.backends.cudnn.benchmark = True    # accepted; no effect on dynamo_lite's kernels
"""
from __future__ import annotations

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: dynamo_lite does not use cuDNN."""
    return False


def version():
    """None: no cuDNN library is loaded (as torch answers without one)."""
    return None
