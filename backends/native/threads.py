"""The thread counts of native kernels and NumPy's BLAS: ``dl.set_num_threads`` / ``dl.get_num_threads``.

NOTE: [thread counts] ``set_num_threads(n)`` gives the kernels and the BLAS ``n``
threads. The two may start apart (``OPENBLAS_NUM_THREADS=1`` pins the BLAS while the
kernels default to the CPU count), so ``get_num_threads`` returns a ``ThreadCount``: an
int (the kernels' count) that also carries the BLAS's count at that moment. Setting it
back restores both, so ``set_num_threads(get_num_threads())`` changes nothing and code
that saves the count and restores it later puts everything back as it was.

NOTE: [kernels after fork] GNU OpenMP's thread pool does not survive ``fork()``: a child
that starts a parallel region after its parent started the pool waits forever for threads
that were not copied. Once this process has loaded a kernel library, every process forked
from it runs kernels on one thread (an OpenMP region of one thread never touches the pool),
so ``fork`` stays safe for DataLoader workers and the user's own pools.
``set_num_threads`` in such a child keeps one thread and says why.
"""
from __future__ import annotations

import logging
import os

from ..numpy import _usable_cpus
from .blas_threads import blas_threads, set_blas_threads


log = logging.getLogger("dynamo_lite")


class ThreadSetting:
    """The thread count C kernels run with (``value``, read by every kernel call).

    Attributes:
        libraries_loaded: a kernel library (and so OpenMP) is loaded in this process.
        forked: this process was forked after that: kernels stay on one thread
            (NOTE: [kernels after fork]).
    """

    def __init__(self):
        env = os.environ.get("OMP_NUM_THREADS", "")
        self.value = int(env) if env.isdigit() and int(env) > 0 else _usable_cpus()
        self.libraries_loaded = False
        self.forked = False

    def after_fork_in_child(self) -> None:
        if self.libraries_loaded:
            self.forked = True
            self.value = 1


class ThreadCount(int):
    """The kernels' thread count, remembering NumPy's BLAS count read with it (``blas``; None
    where the BLAS has no known entry point)."""

    blas: int | None

    def __new__(cls, kernels: int, blas: int | None = None):
        count = super().__new__(cls, kernels)
        count.blas = blas
        return count


THREADS = ThreadSetting()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=THREADS.after_fork_in_child)


def set_num_threads(n: int) -> None:
    """Set the threads native kernels and NumPy's BLAS (matmul, linear) use.

    A count read with ``get_num_threads`` restores the BLAS count read with it (NOTE:
    [thread counts]).

    Example:
        >>> previous = dl.get_num_threads()
        >>> dl.set_num_threads(1)
        >>> dl.set_num_threads(previous)
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"set_num_threads expects a positive int, got {n!r}")
    blas = n.blas if isinstance(n, ThreadCount) else int(n)
    if THREADS.forked and n > 1:
        log.warning("set_num_threads(%d): native kernels stay on one thread in a process forked after they were "
                    "loaded (OpenMP's thread pool does not survive fork)", n)
        n = 1
    THREADS.value = int(n)
    if blas is not None:
        set_blas_threads(blas)


def get_num_threads() -> ThreadCount:
    """Threads native kernels use (default: ``OMP_NUM_THREADS``, else the usable CPUs).

    Example:
        >>> dl.get_num_threads() >= 1
        True
    """
    return ThreadCount(THREADS.value, blas_threads())
