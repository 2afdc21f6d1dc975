"""Scan loops in C: a scan body's native kernels called once per step by one C loop, no Python per step.

NOTE: [native scan loops] The body (rewritten to take its step's slices, NOTE: [numpy scan
bodies]) is compiled by the native backend's pipeline with a lowering that records, per
chain of kernels (NOTE: [native calls]), which argument-block words hold the address of an
input or a fresh output, and whether any node of the body was left to Python (then the
loop cannot run in C and the body runs per step, compiled). A scan call runs step 0
through the generated function, with the carries copied into buffers of its own and each
sliced input passed as the view of its first step; the chain calls it makes (entry point,
argument block) are recorded. Every other step is the same calls with the same blocks,
except the words holding a sliced input's address, which move by that input's stride
along the sliced dim per step: the C loop rewrites those words, calls the entry points in
order, then copies each step output into its row of the stacked result and each new carry
into the carry buffer the next step reads (step outputs first: an output may be a carry
as it was read). Pool buffers and the fresh outputs of step 0 stay the step's memory.
The step-0 call and the loop run under the runner's lock, so no other call of the body's
function uses its pool set meanwhile.
"""
from __future__ import annotations

import ctypes
import functools
import threading

from dynamo_lite.graph.scan import is_scan
from dynamo_lite.ops.core import api as ops
from dynamo_lite.tensor.tensor import Tensor

from ..numpy import numpy_backend
from ..numpy.compiler import Specializations
from ..numpy.scan import NumpyScanRunner, unflip_sliced_inputs, without_step
from .calls import KernelCalls
from .lowering import MAX_UNIT_BYTES, NativeLowering
from .scan_kernels import KERNELS, emit_scan_node, scan_node_source
from .threads import THREADS
from .toolchain import BuildError, build

LOOP_SOURCE = r"""
#include <stdint.h>
#include <string.h>
typedef void (*dl_entry_t)(const int64_t*, int);
/* NOTE: [native scan loops]: per step, patch (block, word, address at step 0, bytes per step) words,
   call the entry points on their blocks, then copy (source, source bytes per step, target, target
   bytes per step, bytes) each output; step 0 was computed by the caller. */
void dl_scan_loop(int64_t steps, int64_t calls, const int64_t* entries, const int64_t* blocks,
                  int64_t patches, const int64_t* patch, int64_t copies, const int64_t* copy, int threads) {
  for (int64_t t = 0; t < steps; t++) {
    if (t > 0) {
      for (int64_t p = 0; p < patches; p++) {
        int64_t* block = (int64_t*)(intptr_t)blocks[patch[4 * p]];
        block[patch[4 * p + 1]] = patch[4 * p + 2] + t * patch[4 * p + 3];
      }
      for (int64_t c = 0; c < calls; c++)
        ((dl_entry_t)(intptr_t)entries[c])((const int64_t*)(intptr_t)blocks[c], threads);
    }
    for (int64_t k = 0; k < copies; k++) {
      const int64_t* q = copy + 5 * k;
      memmove((char*)(intptr_t)(q[2] + t * q[3]), (const char*)(intptr_t)(q[0] + t * q[1]), (size_t)q[4]);
    }
  }
}
"""


@functools.lru_cache(maxsize=1)
def _loop_function():
    function = build(LOOP_SOURCE).dl_scan_loop
    function.restype = None
    return function


class ChainRecorder:
    """Stands for a chain's entry point in the generated function: calls it, and logs the call
    (with its argument block) while a scan records its first step."""

    __slots__ = ("function", "address", "patches", "pure", "log")

    def __init__(self, function, patches: list, pure: bool, log: list):
        self.function, self.patches, self.pure, self.log = function, patches, pure, log
        self.address = ctypes.cast(function, ctypes.c_void_p).value

    def __call__(self, block, threads):
        if self.log and self.log[0][0] == threading.get_ident():  # the recording thread's calls only
            self.log[0][1].append((self, block))
        self.function(block, threads)


class RecordingCalls(KernelCalls):
    """KernelCalls that remember, per chain, the block words holding addresses outside the pool."""

    def __init__(self, threads, log: list):
        super().__init__(threads, MAX_UNIT_BYTES)
        self.log = log
        self.patches: dict = {}  # chain function name -> [(word, root Value)]
        self.python_work: list = []  # names of nodes the generated function runs in Python

    def add(self, builder, kind, make_source, members, operands, geometry, scratch=None):
        result = super().add(builder, kind, make_source, members, operands, geometry, scratch)
        chain, kernel = self._open, self._open.kernels[-1]
        words = self.patches.setdefault(chain.function, [])
        for k, node in enumerate(operands):
            value = builder.values[node]
            if value.root.kind != "buffer":
                words.append((kernel.first + k, value.root))
        return result

    def bind(self, library, builder, chains=None) -> None:
        super().bind(library, builder, chains)
        for chain in self.chains if chains is None else chains:
            builder.globals[chain.function] = ChainRecorder(builder.globals[chain.function],
                                                            self.patches.get(chain.function, []),
                                                            not self.python_work, self.log)


class ScanLowering(NativeLowering):
    """The native lowering of a scan body: records its chains (RecordingCalls) and what it leaves
    to Python; lowers the body's zeros, copies and column sums too (``scan_kernels``)."""

    def __init__(self):
        super().__init__(build, THREADS)
        self.log: list = []  # [(thread id, [(recorder, block)])] while a first step records
        self.calls = RecordingCalls(THREADS, self.log)

    def emit_group(self, builder, plan) -> bool:
        emitted = super().emit_group(builder, plan)
        if not emitted:
            self.calls.python_work.append(plan.group.nodes[0].name)
        return emitted

    def emit_node(self, builder, node) -> bool:
        if super().emit_node(builder, node) or self._emitting(builder, self._emit_scan_node, node):
            return True
        value = builder.values[node]
        if value.kind not in ("view", "alias", "size") or "inplace" in getattr(node.target, "tags", ()):
            self.calls.python_work.append(node.name)
        return False

    def structure(self, groups: list, values: dict) -> dict:
        kernels = super().structure(groups, values)
        for node in values:
            if node.op == "call_function" and getattr(node.target, "name", None) in KERNELS:
                if kernels.get(node) is None:
                    kernels[node] = scan_node_source(node, values)
        return kernels

    def _emit_scan_node(self, builder, node) -> bool:
        return emit_scan_node(self.calls, builder, node)

    def finish(self, builder) -> None:
        super().finish(builder)  # binds the chains through RecordingCalls.bind
        self.calls = RecordingCalls(THREADS, self.log)  # the next generated function's


class NativeScanLoop(NumpyScanRunner):
    """A scan body compiled by the native pipeline: ``loop`` runs the whole scan in C when the body
    is all C kernels (NOTE: [native scan loops]); else steps call the compiled body (``__call__``).

    Attributes:
        loops_in_c: scans run by the C loop (tests read it).
        refused: why the C loop is not used, or None.
    """

    def __init__(self, backend, graph, sliced: dict, plan: tuple, n_carry: int, n_out: int,
                 reversed_inputs=frozenset()):
        super().__init__(backend, graph, sliced, plan, n_carry, reversed_inputs)
        self.gm.class_name = "ScanBodyNative"
        self.n_out = n_out
        self.lowering = ScanLowering()
        self.specializations = None
        self.loops_in_c = 0
        self.refused: str | None = None
        self._lock = threading.Lock()

    def _compile(self, args):
        self.specializations = Specializations(self.gm, self.backend.block_bytes, self.backend.workers, self.lowering)
        try:
            self.function = self.specializations.build(list(args), propagate=False)
        except BuildError as exc:
            self.refused = f"the body's kernels did not build: {exc}"
            self.function = numpy_backend(self.gm, args)
        if self.function is self.gm.forward:
            self.refused = self.refused or f"the body runs eagerly ({self.specializations.eager_reason})"

    def __call__(self, t, *values):
        args = self.arguments(t, values[:self.n_carry], values[self.n_carry:])
        if self.function is None:
            self._compile(args)
        return self.function(*args)

    def loop(self, length, init, closed):
        """The scan's result computed by the C loop, or None (the scan then runs step by step)."""
        length = int(length)
        if self.refused is not None or length < 1 or not all(isinstance(c, Tensor) for c in init):
            return super().loop(length, init, closed)  # step by step, the body compiled
        with self._lock:
            carries = [_own_contiguous(c) for c in init]
            args = self.arguments(0, carries, closed, ops.select)
            if self.function is None:
                self._compile(args)
                if self.refused is not None:
                    return super().loop(length, init, closed)
            self.lowering.log[:] = [(threading.get_ident(), [])]
            try:
                first = self.function(*args)
            finally:
                calls = self.lowering.log.pop()[1]
            plan = self._plan(calls, args, first, carries, closed, length)
            if isinstance(plan, str):
                self.refused = plan
                return super().loop(length, init, closed)
            stacked, words = plan
            _loop_function()(ctypes.c_int64(length), *words, ctypes.c_int(THREADS.value))
            self.loops_in_c += 1
            return tuple(carries) + tuple(stacked)

    def _plan(self, calls: list, args: list, first, carries: list, closed, length: int):
        """``(stacked outputs, the C loop's argument arrays)`` or why the loop cannot run in C."""
        if not calls:
            return "the body calls no C kernel"
        if not all(recorder.pure for recorder, _ in calls):
            return "some of the body's nodes run in Python"
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        step_bytes = {}  # placeholder -> bytes its address moves per step
        for node, (kind, i), arg in zip(placeholders, self.plan, args):
            step_bytes[node.name] = (closed[i]._strides[self.sliced[i]] * closed[i]._dtype.itemsize
                                     * (-1 if i in self.reversed else 1) if kind == "slice" else 0)
        patches = []
        for index, (recorder, block) in enumerate(calls):
            for word, root in recorder.patches:
                if root.kind in ("fresh", "param"):  # step 0's scratch memory, or an attribute of the body
                    continue
                if root.kind != "input" or root.node.name not in step_bytes:  # the body's copy in the plan
                    return f"a kernel reads {root.name} ({root.kind}), which the loop cannot place"
                if step_bytes[root.node.name]:
                    patches += [index, word, block[word], step_bytes[root.node.name]]
        outputs = list(first)
        if len(outputs) != self.n_carry + self.n_out or not all(isinstance(o, Tensor) for o in outputs):
            return "the body's outputs do not match the scan"
        moves = {}  # storage -> the bytes per step of the inputs over it
        for node, arg in zip(placeholders, args):
            if isinstance(arg, Tensor):
                moves.setdefault(id(arg._storage), set()).add(step_bytes[node.name])
        if any(len(m) > 1 for m in moves.values()):  # an output over that storage would move ambiguously
            return "inputs moving differently per step share memory"
        storages = {key: m.pop() for key, m in moves.items()}
        copies, stacked = [], []
        for k, out in enumerate(outputs[self.n_carry:]):
            if not out.is_contiguous():
                return f"step output {k} is not contiguous"
            rows, _ = self.recycled.rows(length, out)  # NOTE: [recycled scan rows]
            stacked.append(rows)
            copies += [_address(out), storages.get(id(out._storage), 0), _address(rows),
                       out.numel() * out._dtype.itemsize, out.numel() * out._dtype.itemsize]
        carry_storages = {id(c._storage) for c in carries}
        for k, (out, carry) in enumerate(zip(outputs[:self.n_carry], carries)):
            if not out.is_contiguous() or out._sizes != carry._sizes or out._dtype is not carry._dtype:
                return f"new carry {k} does not have its carry's geometry"
            if id(out._storage) in carry_storages and out._storage is not carry._storage:
                return f"new carry {k} is another carry"  # copied in place, it would overwrite one still read
            copies += [_address(out), storages.get(id(out._storage), 0), _address(carry), 0,
                       out.numel() * out._dtype.itemsize]
        self._keep = (first, calls)  # the fresh outputs of step 0 are the loop's scratch memory
        words = [len(calls), _int64s([r.address for r, _ in calls]), _int64s([ctypes.addressof(b) for _, b in calls]),
                 len(patches) // 4, _int64s(patches), len(copies) // 5, _int64s(copies)]
        return stacked, [w if not isinstance(w, int) else ctypes.c_int64(w) for w in words]


def _own_contiguous(tensor):
    """A contiguous copy of ``tensor`` (the loop writes its carries in place)."""
    copy = tensor.contiguous()
    return ops.clone(copy) if copy is tensor else copy


def _address(tensor) -> int:
    return tensor._storage.data.ctypes.data + tensor._offset * tensor._dtype.itemsize


def _int64s(values: list):
    return (ctypes.c_int64 * max(1, len(values)))(*values)


def compile_native_scans(gm, backend) -> None:
    """Give every scan node of ``gm`` a native body and C loop (in place; recompiles ``gm``)."""
    changed = False
    for node in gm.graph.nodes:
        if not is_scan(node):
            continue
        body = node.args[0]
        if body.run is not body.gm and not isinstance(body.run, NumpyScanRunner) or isinstance(body.run, NativeScanLoop):
            continue
        rewritten = without_step(body)
        if rewritten is None:
            continue
        graph, sliced, plan = rewritten
        if isinstance(body.run, NumpyScanRunner):  # the numpy tier's, on the same graph: its inputs are unflipped
            reversed_inputs = body.run.reversed
        else:
            reversed_inputs = unflip_sliced_inputs(node, sliced)
        runner = NativeScanLoop(backend, graph, sliced, plan, body.n_carry, body.n_out, reversed_inputs)
        node.update_arg(0, body.with_runner(runner, runner.loop))
        changed = True
    if changed:
        gm.graph.eliminate_dead_code()
        gm.recompile()

