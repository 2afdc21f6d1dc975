"""NumPy's BLAS thread count through the BLAS's own entry point (no threadpoolctl dependency).

NumPy wheels bundle OpenBLAS under prefixed names (``scipy_openblas_set_num_threads64_``),
other builds export ``openblas_set_num_threads`` or MKL's ``MKL_Set_Num_Threads``. The
library is found among the shared objects this process has mapped (``/proc/self/maps``,
Linux); elsewhere, or for an unknown BLAS, setting the count does nothing and
``set_blas_threads`` says so by returning False.
"""
from __future__ import annotations

import ctypes
import functools

from .blas import blas_libraries

SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
           "openblas_set_num_threads", "MKL_Set_Num_Threads")
GETTERS = {"scipy_openblas_set_num_threads64_": "scipy_openblas_get_num_threads64_",
           "scipy_openblas_set_num_threads": "scipy_openblas_get_num_threads",
           "openblas_set_num_threads64_": "openblas_get_num_threads64_",
           "openblas_set_num_threads": "openblas_get_num_threads", "MKL_Set_Num_Threads": "MKL_Get_Max_Threads"}


@functools.lru_cache(maxsize=1)
def _blas_entry_points() -> tuple:
    """(setter, getter) of NumPy's BLAS thread count, each None where not found."""
    for library in blas_libraries():
        for name in SETTERS:
            setter = getattr(library, name, None)
            if setter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter = getattr(library, GETTERS[name], None)
                if getter is not None:
                    getter.argtypes, getter.restype = [], ctypes.c_int
                return setter, getter
    return None, None


def set_blas_threads(n: int) -> bool:
    """Ask NumPy's BLAS to use ``n`` threads; False if its entry point was not found."""
    setter = _blas_entry_points()[0]
    if setter is None:
        return False
    setter(n)
    return True


def blas_threads() -> int | None:
    """The threads NumPy's BLAS uses now, or None if its entry point was not found."""
    getter = _blas_entry_points()[1]
    return None if getter is None else int(getter())
