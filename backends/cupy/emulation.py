"""Host emulation: run the generated CUDA kernels on the CPU, compiled by the host C++ compiler.

The machines this project is developed and tested on have no GPU, so the kernel
sources would otherwise only ever be compiled (NVRTC), never run. Here the *same*
source text (see NOTE: [one source, two compilers]) is compiled as C++20 with a shim
that defines the CUDA built-ins: ``threadIdx``/``blockIdx`` become thread-locals,
each block's threads are real threads meeting at ``__syncthreads`` on a barrier,
shared memory is one buffer per launch. A launch runs its blocks one after another;
a launch whose threads never synchronize (elementwise kernels, rows of one lane) runs
them one after another too, in the calling thread.
This checks indexing, broadcasting, strides, the per-op expressions, reductions and
the launch configuration against eager results on every machine; it says nothing
about speed. Used by the tests and by ``backend="cupy_emulated"`` (registered by the
tests, never chosen by ``"auto"``).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .c_types import ctype
from .kernel import SizeParam
from .runtime import launch_config, size_arguments

# The scheduler, compiled once into its own library: it runs a launch's blocks one
# after another, each with ``block`` real threads that meet at ``__syncthreads`` on a barrier.
RUNNER = r"""
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
struct dl_uint3 { unsigned x, y, z; };
extern "C" {
thread_local dl_uint3 dl_threadIdx, dl_blockIdx;
dl_uint3 dl_blockDim, dl_gridDim;
unsigned char* dl_shared_memory;
static std::barrier<>* dl_barrier;
void dl_syncthreads() {
  if (dl_barrier == nullptr) { std::fputs("dl_emulate: __syncthreads in a launch run without barriers\n", stderr); std::abort(); }
  dl_barrier->arrive_and_wait();
}
void dl_emulate(unsigned grid, unsigned block, unsigned long shared_bytes, void (*body)(void**), void** args,
                int synchronizes) {
  std::vector<unsigned char> memory(shared_bytes + 16);
  dl_shared_memory = memory.data();
  dl_gridDim = {grid, 1, 1};
  dl_blockDim = {block, 1, 1};
  dl_barrier = nullptr;
  if (!synchronizes) {  // independent threads: one after another, in this thread
    for (unsigned b = 0; b < grid; ++b) {
      dl_blockIdx = {b, 0, 0};
      for (unsigned t = 0; t < block; ++t) { dl_threadIdx = {t, 0, 0}; body(args); }
    }
    return;
  }
  std::barrier<> sync(block);
  dl_barrier = &sync;
  auto thread = [&](unsigned t) {
    dl_threadIdx = {t, 0, 0};
    for (unsigned b = 0; b < grid; ++b) {
      dl_blockIdx = {b, 0, 0};
      body(args);
      sync.arrive_and_wait();  // the next block reuses shared memory
    }
  };
  std::vector<std::thread> others;
  for (unsigned t = 1; t < block; ++t) others.emplace_back(thread, t);
  thread(0);
  for (auto& other : others) other.join();
  dl_barrier = nullptr;
}
}
"""

# What kernel sources see in front of them: the CUDA built-ins, mapped onto the runner.
SHIM = r"""
#include <math.h>
#include <string.h>
#define DL_HOST_EMULATION 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __align__(n) alignas(n)
struct dl_uint3 { unsigned x, y, z; };
extern "C" {
extern thread_local dl_uint3 dl_threadIdx, dl_blockIdx;
extern dl_uint3 dl_blockDim, dl_gridDim;
extern unsigned char* dl_shared_memory;
void dl_syncthreads();
void dl_emulate(unsigned grid, unsigned block, unsigned long shared_bytes, void (*body)(void**), void** args,
                int synchronizes);
}
#define threadIdx dl_threadIdx
#define blockIdx dl_blockIdx
#define blockDim dl_blockDim
#define gridDim dl_gridDim
#define __syncthreads dl_syncthreads
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline float dl_h2f(unsigned short h) { _Float16 v; memcpy(&v, &h, 2); return (float)v; }
static inline unsigned short dl_f2h(float f) { _Float16 v = (_Float16)f; unsigned short h; memcpy(&h, &v, 2); return h; }
#define DL_SHARED(T, name) T* name = reinterpret_cast<T*>(dl_shared_memory)
"""

# Small blocks and grids on purpose: several blocks per launch, several rows per block
# and several lanes per row exercise the grid-stride loops, the row loop's inactive
# threads and the shared-memory tree reduction (NOTE: [rows per block]).
EMULATED_LAUNCH = {"block": 8, "max_grid": 5, "min_lanes": 1, "max_lanes": 4}


def compiler() -> str | None:
    """The host C++ compiler (``$CXX``, else ``g++`` or ``clang++`` on PATH), or None."""
    for candidate in (os.environ.get("CXX"), "g++", "clang++"):
        if candidate and shutil.which(candidate):
            return candidate
    return None


def _wrapper(kernel) -> str:
    casts = ", ".join(_argument(p, i) for i, p in enumerate(kernel.params))
    return (
        f"static void body_{kernel.name}(void** p) {{ {kernel.name}({casts}); }}\n"
        f'extern "C" void emulate_{kernel.name}(void** p, unsigned grid, unsigned block, unsigned long shared, '
        f"int synchronizes) {{\n  dl_emulate(grid, block, shared, body_{kernel.name}, p, synchronizes);\n}}\n"
    )


def _argument(param, i: int) -> str:
    """Argument ``i`` from the pointer array: a tensor pointer, or a pointer to a size value."""
    if isinstance(param, SizeParam):
        return f"*(const long long*)p[{i}]"
    return f"({'' if param.is_output else 'const '}{ctype(param.dtype).storage}*)p[{i}]"


class HostEmulationRuntime:
    """Compiles kernels with the host C++ compiler and runs them on CPU tensors.

    Args:
        cache_dir: where compiled libraries are kept, keyed by a hash of their source.
    """

    name = "emulation"

    def __init__(self, cache_dir: str | None = None):
        self.cxx = compiler()
        if self.cxx is None:
            raise RuntimeError("host emulation of CUDA kernels needs a C++20 compiler (g++ or clang++)")
        self.cache_dir = Path(cache_dir or Path(tempfile.gettempdir()) / "dynamo_lite_emulation")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._functions: dict = {}
        runner = self._build(RUNNER, "runner", "c++20")  # std::barrier
        self._libraries: list = [ctypes.CDLL(str(runner), mode=ctypes.RTLD_GLOBAL)]

    def prepare(self, kernels) -> None:
        """Compile every kernel not yet loaded into one shared library (one compiler run)."""
        todo = {k.name: k for k in kernels if k.name not in self._functions}
        if not todo:
            return
        text = SHIM + "\n".join(k.source + _wrapper(k) for k in todo.values())
        loaded = ctypes.CDLL(str(self._build(text, "kernels", "c++17")))  # NVRTC's dialect
        self._libraries.append(loaded)
        for name in todo:
            function = getattr(loaded, f"emulate_{name}")
            function.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong,
                                 ctypes.c_int]
            function.restype = None
            self._functions[name] = function

    def _build(self, text: str, stem: str, std: str) -> Path:
        """The shared library for ``text``, compiled unless the cache has it."""
        digest = hashlib.sha1(f"{self.cxx}|{std}|{text}".encode()).hexdigest()[:16]
        library = self.cache_dir / f"{stem}_{digest}.so"
        if not library.exists():
            self._compile(text, library, std)
        return library

    def _compile(self, text: str, library: Path, std: str) -> None:
        source = library.with_suffix(f".{os.getpid()}.cpp")
        source.write_text(text)
        partial = library.with_suffix(f".{os.getpid()}.tmp")
        command = [self.cxx, f"-std={std}", "-O1", "-shared", "-fPIC", "-pthread", "-w", "-o", str(partial), str(source)]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"host compilation of generated kernels failed:\n{result.stderr[-4000:]}")
        os.replace(partial, library)  # atomic: concurrent test processes never see half a file
        source.unlink()

    def load(self, kernel):
        if kernel.name not in self._functions:
            self.prepare([kernel])
        return self._functions[kernel.name]

    def launch(self, function, kernel, inputs, outputs, config=None) -> None:
        """Run ``kernel``; ``config`` (a ``Launch``) overrides the emulation's own launch configuration."""
        config = config or launch_config(kernel, **EMULATED_LAUNCH)
        sizes = [ctypes.c_longlong(v) for v in size_arguments(kernel, config)]  # kept alive for the call
        pointers = [t.data_ptr() for t in (*inputs, *outputs)] + [ctypes.addressof(v) for v in sizes]
        # Only row kernels with several lanes per row meet at barriers (NOTE: [rows per block]);
        # the threads of any other launch are independent and run one after another.
        synchronizes = config.lanes is not None and config.lanes > 1
        function((ctypes.c_void_p * len(pointers))(*pointers), config.grid, config.block, config.shared, synchronizes)
