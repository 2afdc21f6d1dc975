"""GPU run of the model zoo: compiled (``backend="cupy"``) vs eager CuPy vs hand-written CuPy.

Run from the repository root:

    python3 -m benchmarks.gpu_run [--repeat 20] [--workloads mlp,attention_block]

Needs CuPy and a CUDA device; without one it says why and exits 0 (there is no GPU on
the project's development machines, so the kernels are checked there by NVRTC and the
host emulation instead; see docs/backends.md). Columns, per workload, in ms per
call (median of ``--repeat`` timed calls after warm-up, the device synchronized around
each): eager dynamo_lite on CUDA tensors, the same model compiled with the cupy backend,
and the hand-written NumPy reference (``benchmarks/numpy_reference.py``) run on CuPy
arrays, i.e. the program a user would write directly against CuPy. The ratios are
measured in this one process, as the project reports speed.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import statistics
import sys
import time

import dynamo_lite as dl
from benchmarks import numpy_reference
from benchmarks.models import WORKLOADS


def gpu_unavailable_reason() -> str | None:
    """Why there is no GPU run here, or None."""
    try:
        import cupy
    except ImportError as exc:
        return f"CuPy is not installed ({exc}); install the 'cuda' extra"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA device present"
    except Exception as exc:  # CuPy's CUDARuntimeError when there is no driver or device
        return f"no usable CUDA device ({exc})"
    return None


def cupy_references():
    """The hand-written reference workloads, executed with ``np`` bound to CuPy.

    CuPy mirrors NumPy's API, so the same hand-written program is the natural
    "written directly against CuPy" baseline.
    """
    source = inspect.getsource(numpy_reference)
    source = source.replace("import numpy as np", "import cupy as np")
    source = source.replace("from numpy.lib.stride_tricks", "from cupy.lib.stride_tricks")
    spec = importlib.util.spec_from_loader("benchmarks.cupy_reference", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, "<cupy reference>", "exec"), module.__dict__)
    return module.REFERENCES


def _time(fn, repeat: int, synchronize) -> float:
    for _ in range(3):
        fn()
    synchronize()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        synchronize()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def run(names, repeat: int) -> list:
    """``[(name, eager ms, compiled ms, hand-written ms or None, note)]`` for each workload."""
    import cupy

    synchronize = cupy.cuda.get_current_stream().synchronize
    references = cupy_references()
    rows = []
    for name in names:
        workload = WORKLOADS[name]
        model, inputs = workload.make(), workload.make_inputs()
        if isinstance(model, dl.nn.Module):
            model = model.to("cuda")
        inputs = tuple(x.to("cuda") for x in inputs)
        compiled = dl.compile(model, backend="cupy")
        eager_ms = _time(lambda: model(*inputs), repeat, synchronize)
        compiled_ms = _time(lambda: compiled(*inputs), repeat, synchronize)
        params = {k: cupy.from_dlpack(v) for k, v in model.state_dict().items()} if hasattr(model, "state_dict") else {}
        arrays = [cupy.from_dlpack(x) for x in inputs]
        note = ""
        try:
            hand_ms = _time(lambda: references[name](params, *arrays), repeat, synchronize)
        except Exception as exc:  # a NumPy call CuPy lacks: report it, keep going
            hand_ms, note = None, f"hand-written: {type(exc).__name__}: {exc}"[:80]
        rows.append((name, eager_ms, compiled_ms, hand_ms, note))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    args = parser.parse_args(argv)
    reason = gpu_unavailable_reason()
    if reason is not None:
        print(f"gpu_run: no GPU run on this machine: {reason}")
        return 0
    import cupy

    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"GPU run on {device}, CuPy {cupy.__version__}, Python {sys.version.split()[0]}; ms per call (median)")
    print(f"  {'workload':26s} {'eager':>9s} {'compiled':>9s} {'hand':>9s} {'eager/compiled':>15s} {'hand/compiled':>14s}")
    for name, eager_ms, compiled_ms, hand_ms, note in run(args.workloads.split(","), args.repeat):
        hand = f"{hand_ms:9.3f}" if hand_ms is not None else f"{'n/a':>9s}"
        ratio = f"{hand_ms / compiled_ms:14.2f}" if hand_ms is not None else f"{'':>14s}"
        print(f"  {name:26s} {eager_ms:9.3f} {compiled_ms:9.3f} {hand} {eager_ms / compiled_ms:15.2f} {ratio}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
