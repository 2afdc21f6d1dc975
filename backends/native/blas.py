"""NumPy's own BLAS ``gemm`` entry points, for C kernels that run eager's matrix products themselves.

NOTE: [gemm from C] A kernel that calls the very ``cblas_?gemm`` NumPy's ``matmul``
calls, with the same arguments, gets eager's bits without the Python glue of a
``np.matmul`` call (its error-state context, reshapes, the out check). The entry point
is looked up here in the BLAS library NumPy has mapped into the process (wheels bundle
OpenBLAS under prefixed names such as ``scipy_cblas_sgemm64_``; the ``64_`` suffix
means 64-bit integer arguments) and its address travels in the kernel's argument
block, so the C source names no library and the build cache stays valid. Without such
a library (an unknown BLAS, not Linux), ``gemm_entry`` returns None and kernels keep
NumPy's product.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

# (symbol, C integer type of its sizes) by preference: NumPy wheels' prefixed names first.
GEMM_SYMBOLS = {
    np.dtype(np.float32): (("scipy_cblas_sgemm64_", "int64_t"), ("scipy_cblas_sgemm", "int"),
                           ("cblas_sgemm64_", "int64_t"), ("cblas_sgemm", "int")),
    np.dtype(np.float64): (("scipy_cblas_dgemm64_", "int64_t"), ("scipy_cblas_dgemm", "int"),
                           ("cblas_dgemm64_", "int64_t"), ("cblas_dgemm", "int")),
}
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS enum values


@functools.lru_cache(maxsize=1)
def blas_libraries() -> tuple:
    """The BLAS-like shared objects mapped into this process (NumPy's first), loaded with ctypes."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "blas" in line.lower() or "mkl" in line.lower()}
    except OSError:
        return ()
    libraries = []
    for path in sorted(paths, key=lambda p: ("numpy" not in p, p)):
        try:
            libraries.append(ctypes.CDLL(path))
        except OSError:
            continue
    return tuple(libraries)


@functools.lru_cache(maxsize=None)
def gemm_entry(dtype) -> tuple | None:
    """``(address, C int type)`` of NumPy's ``cblas_?gemm`` for ``dtype``, or None (see NOTE: [gemm from C])."""
    for library in blas_libraries():
        for symbol, int_type in GEMM_SYMBOLS.get(np.dtype(dtype), ()):
            function = getattr(library, symbol, None)
            if function is not None:
                return ctypes.cast(function, ctypes.c_void_p).value, int_type
    return None


def gemm_function(dtype):
    """NumPy's ``cblas_?gemm`` for ``dtype`` as a ctypes function (array arguments as addresses), or None."""
    entry = gemm_entry(dtype)
    if entry is None:
        return None
    size = ctypes.c_int64 if entry[1] == "int64_t" else ctypes.c_int
    scalar = ctypes.c_float if np.dtype(dtype) == np.float32 else ctypes.c_double
    address, enum = ctypes.c_void_p, ctypes.c_int
    prototype = ctypes.CFUNCTYPE(None, enum, enum, enum, size, size, size, scalar, address, size, address, size,
                                 scalar, address, size)
    return prototype(entry[0])


def gemm_typedef(name: str, ctype: str, int_type: str) -> str:
    """A C typedef ``name`` of a CBLAS gemm pointer over ``ctype`` with ``int_type`` sizes."""
    i = int_type
    return (f"typedef void (*{name})(int, int, int, {i}, {i}, {i}, {ctype}, const {ctype}*, {i}, const {ctype}*, "
            f"{i}, {ctype}, {ctype}*, {i});")
