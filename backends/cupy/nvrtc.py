"""Offline compilation of generated kernels to cubin, without a GPU (NVRTC, or nvcc if present).

NVRTC compiles for any architecture without a device. CuPy's binding
(``cupy_backends.cuda.libs.nvrtc``) needs ``libnvrtc``; the ``nvidia-cuda-nvrtc-cu12``
wheel (part of the ``cuda`` extra) installs it under ``site-packages/nvidia/cuda_nvrtc/lib``,
where it is preloaded from if the binding cannot find it by itself.

Example:
    >>> cubin = compile_cubin(kernel.source, kernel.name)
    >>> cubin[:4]
    b'\\x7fELF'
"""
from __future__ import annotations

import ctypes
import glob
import importlib
import os
import shutil
import subprocess
import tempfile

from .runtime import NVRTC_OPTIONS

DEFAULT_ARCH = "sm_90"


class NvrtcUnavailable(RuntimeError):
    """NVRTC cannot be loaded here; the message says why and what to install."""


class KernelCompileError(RuntimeError):
    """A generated kernel did not compile; the message holds the compiler's log."""


def _preload_wheel_library() -> str | None:
    """Load libnvrtc from the nvidia-cuda-nvrtc wheel with RTLD_GLOBAL; returns its path."""
    try:
        package = importlib.import_module("nvidia.cuda_nvrtc")
    except ImportError:
        return None
    for folder in getattr(package, "__path__", []):
        for path in sorted(glob.glob(os.path.join(folder, "lib", "libnvrtc.so*"))):
            if ".alt." in path or "builtins" in path:
                continue
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            return path
    return None


def load_nvrtc():
    """CuPy's NVRTC binding, ready to use.

    Raises:
        NvrtcUnavailable: CuPy or libnvrtc is missing (the message names the packages).
    """
    try:
        from cupy_backends.cuda.libs import nvrtc
    except ImportError as exc:
        raise NvrtcUnavailable(
            f"CuPy's NVRTC binding is not importable ({exc}); install the 'cuda' extra: "
            "python3 -m pip install -e '.[cuda]' (cupy-cuda12x and nvidia-cuda-nvrtc-cu12)"
        ) from None
    try:
        nvrtc.getVersion()
        return nvrtc
    except Exception as first:  # the binding raises its own error types when the library is missing
        path = _preload_wheel_library()
        try:
            nvrtc.getVersion()
            return nvrtc
        except Exception:
            where = f"preloaded {path}" if path else "no nvidia-cuda-nvrtc-cu12 wheel found"
            raise NvrtcUnavailable(
                f"libnvrtc could not be loaded ({first}; {where}); install nvidia-cuda-nvrtc-cu12 "
                "matching CuPy's CUDA major version"
            ) from None


def nvrtc_version() -> tuple:
    return tuple(load_nvrtc().getVersion())


def compile_cubin(source: str, name: str = "kernel", arch: str = DEFAULT_ARCH, options=NVRTC_OPTIONS) -> bytes:
    """Compile one kernel source to a cubin with NVRTC (what CuPy does on a GPU, minus the launch).

    Raises:
        KernelCompileError: the source did not compile; the message has NVRTC's log.
    """
    nvrtc = load_nvrtc()
    program = nvrtc.createProgram(source, f"{name}.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(program, [f"-arch={arch}", *options])
        except Exception as exc:
            raise KernelCompileError(f"{name}: {exc}\n{nvrtc.getProgramLog(program)}") from None
        return bytes(nvrtc.getCUBIN(program))
    finally:
        nvrtc.destroyProgram(program)


def nvcc_path() -> str | None:
    return shutil.which("nvcc")


def compile_cubin_nvcc(source: str, name: str = "kernel", arch: str = DEFAULT_ARCH, options=NVRTC_OPTIONS) -> bytes:
    """Compile with the CUDA toolkit's ``nvcc`` instead (when one is installed)."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise FileNotFoundError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory() as folder:
        src, out = os.path.join(folder, f"{name}.cu"), os.path.join(folder, f"{name}.cubin")
        with open(src, "w") as handle:
            handle.write(source)
        result = subprocess.run([nvcc, "-cubin", f"-arch={arch}", *options, "-o", out, src],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise KernelCompileError(f"{name}: nvcc failed\n{result.stderr[-4000:]}")
        with open(out, "rb") as handle:
            return handle.read()
