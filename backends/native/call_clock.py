"""The clock the tier choice times a native graph's candidates with (NOTE: [measuring clock] in tiered.py)."""
from __future__ import annotations

import time

from .blas_threads import blas_threads
from .threads import THREADS


def measuring_clock():
    """Thread CPU time while the kernels and NumPy's BLAS run on the calling thread alone, else wall time.

    Example:
        >>> measuring_clock() in (time.thread_time, time.perf_counter)
        True
    """
    if THREADS.value == 1 and blas_threads() == 1:
        return time.thread_time
    return time.perf_counter
