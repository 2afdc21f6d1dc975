"""Which vector instructions native kernels are compiled for: the CPU's own, or AVX2 with AVX-512 switched off.

NOTE: [native ISA switch] Kernels are built with ``-march=native``: on a CPU with AVX-512
the compiler defines ``__AVX512F__`` and the hand-written 16-lane loops (vector_loop.py,
vector_math.py, conv_direct.py's register budget) are compiled in; elsewhere the same
kernels use their scalar/auto-vectorized loops. ``DYNAMO_LITE_NATIVE_ISA=avx2`` adds
``-mno-avx512f`` (which turns off every AVX-512 extension), so an AVX-512 machine builds and
runs exactly what an AVX2-only CPU gets: CI runs the native tests both ways. The flags are
part of the build cache's key, so the two builds never share a shared object.
"""
from __future__ import annotations

import os

ENV = "DYNAMO_LITE_NATIVE_ISA"
#: Per accepted value of ``DYNAMO_LITE_NATIVE_ISA``, the flags added to ``-march=native``.
ISA_FLAGS = {"native": (), "avx2": ("-mno-avx512f",)}


def isa_flags() -> tuple:
    """The compiler flags that choose the kernels' instruction set, read from the environment at each build.

    Raises:
        ValueError: ``DYNAMO_LITE_NATIVE_ISA`` names no known instruction set.

    Example:
        >>> os.environ.pop(ENV, None); isa_flags()
        ('-march=native',)
    """
    choice = os.environ.get(ENV, "native").strip().lower() or "native"
    if choice not in ISA_FLAGS:
        raise ValueError(f"{ENV}={choice!r}: expected one of {', '.join(ISA_FLAGS)}")
    return ("-march=native",) + ISA_FLAGS[choice]
