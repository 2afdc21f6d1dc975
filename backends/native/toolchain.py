"""The system C compiler: find it, build a shared object into the disk cache, load it with ctypes.

The cache of built objects (a private folder, atomic entries checked against their content
hash before they are loaded) is ``disk_cache`` (NOTE: [native build cache]). Every failure
of a build (no compiler, a compiler error or timeout, an unusable cache folder, an OSError)
is a ``BuildError``: the graph stays on numpy with one logged line.

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
import signal
import subprocess
import threading

from . import disk_cache
from .build_errors import BuildError
from .disk_cache import cache_dir
from .isa import isa_flags
from .threads import THREADS

# No -ffast-math: NaN, infinity and signed zeros behave as in eager mode. -ffp-contract=off:
# no fused multiply-add, so a*b+c rounds twice like NumPy's two ufuncs. -fno-math-errno
# only drops the errno writes of libm calls (results are unchanged), which lets the
# vectorizer call glibc's vector math library (libmvec) for exp, tanh, ... (see c_ops.py).
# -fno-trapping-math: floating-point exceptions are never observed (no trap handlers, no flag
# reads), so selects such as a NaN-aware max may be if-converted and vectorized; values unchanged.
BASE_FLAGS = ("-O3", "-fopenmp", "-fPIC", "-shared", "-ffp-contract=off", "-fno-math-errno",
              "-fno-trapping-math", "-fwrapv", "-std=gnu11")
VECTOR_MATH_LIBS = ("-lmvec", "-lm")
SCALAR_MATH_LIBS = ("-lm",)
COMPILER_CANDIDATES = ("cc", "gcc", "clang")
# A compiler run longer than this (seconds) is stopped and the build fails.
BUILD_TIMEOUT_SECONDS = 300

_LOCK = threading.Lock()


@functools.lru_cache(maxsize=None)
def _compiler_for(cc_env: str | None, path: str | None) -> tuple:
    """(path, version line) of the compiler, or raises BuildError naming what was looked for."""
    names = [cc_env] if cc_env else list(COMPILER_CANDIDATES)
    for name in names:
        found = shutil.which(name, path=path)
        if found:
            try:
                out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise BuildError(f"C compiler {found} does not run: {exc}") from None
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


@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU model name (/proc/cpuinfo), else what the platform module says."""
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
        BuildError: no compiler, it failed (with its diagnostics) or timed out, or the cache
            folder cannot be used (NOTE: [native build cache]).
    """
    compiler, version = find_compiler()
    flags = isa_flags() + BASE_FLAGS  # NOTE: [native ISA switch]
    directory = disk_cache.private_directory()
    disk_cache.remove_dead_temporaries(directory)
    errors = []
    for libs in (VECTOR_MATH_LIBS, SCALAR_MATH_LIBS):
        text = source if libs is VECTOR_MATH_LIBS else "#define DL_NO_VECTOR_MATH 1\n" + source
        key = hashlib.sha256("\0".join((text, version, " ".join(flags + libs), cpu_model())).encode())
        key = key.hexdigest()[:32]
        path = disk_cache.verified_entry(directory, key)
        if path is None:
            try:
                path = disk_cache.publish(directory, key, _compile(compiler, text, directory, libs, flags))
            except BuildError as exc:
                errors.append(str(exc))
                continue
        try:
            with _LOCK:
                _sleeping_openmp_threads()
                library = ctypes.CDLL(path)
                THREADS.libraries_loaded = True  # NOTE: [kernels after fork]
                return library
        except OSError as exc:  # e.g. an older libmvec without a vector variant the code calls
            errors.append(f"loading {os.path.basename(path)} failed: {exc}")
    raise BuildError("; ".join(errors))


def _compile(compiler: str, source: str, directory: str, libs: tuple, flags: tuple) -> str:
    """Compile ``source`` to a temporary file in ``directory``; its path."""
    c_file = disk_cache.temporary_path(directory, ".c")
    tmp_so = c_file[:-2] + ".so"
    try:
        with open(c_file, "x") as f:
            f.write(source)
        _run_compiler([compiler, *flags, c_file, "-o", tmp_so, *libs], os.path.basename(compiler))
        return tmp_so
    except OSError as exc:
        _discard(tmp_so)
        raise BuildError(f"building in {directory} failed: {exc}") from None
    except BaseException:
        _discard(tmp_so)
        raise
    finally:
        _discard(c_file)


def _run_compiler(command: list, name: str) -> None:
    """Run the compiler in its own process group, killed whole (cc1, as, ld) past the timeout."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=BUILD_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise BuildError(f"{name} did not finish within {BUILD_TIMEOUT_SECONDS} s (stopped)") from None
    except BaseException:
        _kill_group(process)
        raise
    if process.returncode != 0:
        raise BuildError(f"{name} failed: {stderr.strip()[-2000:]}")


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    process.communicate()


def _discard(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
