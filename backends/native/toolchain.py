"""The system C compiler: find it, build a shared object into the disk cache, load it with ctypes.

NOTE: [native build cache] One C source becomes one shared object named by a hash of the
source, the compiler's version line, the flags and the CPU model (``-march=native``
code must not be reused on another CPU). Objects live in ``DYNAMO_LITE_CACHE_DIR`` or
else a per-user directory (``$XDG_CACHE_HOME/dynamo_lite/native``, ``~/.cache/...``),
so a second process loads without compiling. A build writes a temporary file in the
same directory and renames it into place: ``rename`` is atomic, so processes building
the same entry at once never see a partial file (the last rename wins, all are equal).

Loading uses ``ctypes`` (standard library, no new dependency; ``cffi`` would add one and
its faster calls matter little next to a kernel's work). ``ctypes.CDLL`` functions
release the GIL while they run, so OpenMP threads and other Python threads proceed.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading

# No -ffast-math: NaN, infinity and signed zeros behave as in eager mode. -ffp-contract=off:
# no fused multiply-add, so a*b+c rounds twice like NumPy's two ufuncs. -fno-math-errno
# only drops the errno writes of libm calls (results are unchanged), which lets the
# vectorizer call glibc's vector math library (libmvec) for exp, tanh, ... (see c_ops.py).
# -fno-trapping-math: floating-point exceptions are never observed (no trap handlers, no flag
# reads), so selects such as a NaN-aware max may be if-converted and vectorized; values unchanged.
BASE_FLAGS = ("-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-ffp-contract=off", "-fno-math-errno",
              "-fno-trapping-math", "-fwrapv", "-std=gnu11")
VECTOR_MATH_LIBS = ("-lmvec", "-lm")
SCALAR_MATH_LIBS = ("-lm",)
COMPILER_CANDIDATES = ("cc", "gcc", "clang")

_LOCK = threading.Lock()


class BuildError(RuntimeError):
    """No C compiler, or the compiler rejected a kernel (the message says which)."""


@functools.lru_cache(maxsize=None)
def _compiler_for(cc_env: str | None, path: str | None) -> tuple:
    """(path, version line) of the compiler, or raises BuildError naming what was looked for."""
    names = [cc_env] if cc_env else list(COMPILER_CANDIDATES)
    for name in names:
        found = shutil.which(name, path=path)
        if found:
            try:
                out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30)
            except OSError as exc:
                raise BuildError(f"C compiler {found} does not run: {exc}") from exc
            return found, (out.stdout.splitlines() or ["unknown"])[0]
    looked = f"CC={cc_env!r}" if cc_env else f"{', '.join(COMPILER_CANDIDATES)} on PATH"
    raise BuildError(f"no C compiler found (looked for {looked})")


def find_compiler() -> tuple:
    """``(path, version)`` of the C compiler: ``$CC``, else cc, gcc, clang on ``PATH``.

    Raises:
        BuildError: none found (the message names what was looked for).
    """
    return _compiler_for(os.environ.get("CC") or None, os.environ.get("PATH"))


def compiler_available() -> tuple:
    """``(True, version)`` or ``(False, reason)``: whether native kernels can be built here."""
    try:
        return True, find_compiler()[1]
    except BuildError as exc:
        return False, str(exc)


def cache_dir() -> str:
    """The directory of cached shared objects (``DYNAMO_LITE_CACHE_DIR`` overrides)."""
    root = os.environ.get("DYNAMO_LITE_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "dynamo_lite")
    return os.path.join(root, "native")


@functools.lru_cache(maxsize=1)
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _sleeping_openmp_threads() -> None:
    """Let idle OpenMP threads sleep rather than spin, unless the user chose (``OMP_WAIT_POLICY``).

    libgomp reads the policy once, when the first kernel library loads it. Spinning saves a
    few microseconds per parallel loop on an idle machine; on one busier than its cores a
    spinning thread waits for partners that are not running, and a 2-thread softmax of
    (1024, 1024) took 22 ms instead of 3.6 ms (docs/performance.md). Kernels only use
    threads from 256K elements on, where a wake-up is small against the work.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def build(source: str) -> ctypes.CDLL:
    """The loaded shared object of ``source``: from the disk cache, else compiled into it.

    Raises:
        BuildError: no compiler, or it failed (with its diagnostics).
    """
    compiler, version = find_compiler()
    errors = []
    for libs in (VECTOR_MATH_LIBS, SCALAR_MATH_LIBS):
        text = source if libs is VECTOR_MATH_LIBS else "#define DL_NO_VECTOR_MATH 1\n" + source
        key = hashlib.sha256("\0".join((text, version, " ".join(BASE_FLAGS + libs), _cpu_model())).encode())
        path = os.path.join(cache_dir(), f"k_{key.hexdigest()[:32]}.so")
        if not os.path.exists(path):
            try:
                _compile(compiler, text, path, libs)
            except BuildError as exc:
                errors.append(str(exc))
                continue
        try:
            with _LOCK:
                _sleeping_openmp_threads()
                return ctypes.CDLL(path)
        except OSError as exc:  # e.g. an older libmvec without a vector variant the code calls
            errors.append(f"loading {os.path.basename(path)} failed: {exc}")
    raise BuildError("; ".join(errors))


def _compile(compiler: str, source: str, path: str, libs: tuple) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, c_file = tempfile.mkstemp(suffix=".c", dir=directory)
    tmp_so = c_file[:-2] + ".so.tmp"
    try:
        with os.fdopen(fd, "w") as f:
            f.write(source)
        result = subprocess.run([compiler, *BASE_FLAGS, c_file, "-o", tmp_so, *libs],
                                capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            raise BuildError(f"{os.path.basename(compiler)} failed: {result.stderr.strip()[-2000:]}")
        os.replace(tmp_so, path)  # atomic: see NOTE: [native build cache]
    finally:
        for leftover in (c_file, tmp_so):
            if os.path.exists(leftover):
                os.unlink(leftover)
