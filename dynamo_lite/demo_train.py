"""``dynamo-lite demo --train``: train the GPT-style model and a small CNN eagerly and compiled, side by side.

Each model is trained twice from the same weights on the same batches with AdamW: once
eagerly and once through ``dl.compile(train_step)`` (forward, loss, ``backward()``,
``optimizer.step()``, ``zero_grad()``). The demo prints a progress bar, the time per step
of both runs, the compile counters and both loss curves as text sparklines; with
``--png FILE`` it also plots them, if matplotlib happens to be installed.

Example:
    $ dynamo-lite demo --train --steps 200
"""
from __future__ import annotations

import copy
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from dynamo_lite.backends.native.blas_threads import blas_threads, set_blas_threads

SPARK = "▁▂▃▄▅▆▇█"
#: Loss curves of the two runs agree within this (float32 rounding, over hundreds of steps).
CURVE_RTOL = 1e-3

TEXT = ("dynamo_lite compiles python tensor programs by rewriting their bytecode: a frame hook "
        "traces each function symbolically, captures the tensor operations in a graph, and "
        "hands it to a backend, while guards decide when a compiled translation can be reused. ")


@dataclass
class Task:
    """A model to train, its batches and its loss."""

    name: str
    description: str
    make_model: object
    batches: list
    loss: object


@dataclass
class Run:
    """One training run: its losses and the time of each step."""

    losses: list = field(default_factory=list)
    seconds: list = field(default_factory=list)


def gpt_task(models, batch: int = 8, seq: int = 32) -> Task:
    """Next-character prediction on a short text with the zoo's GPT-style model."""
    chars = sorted(set(TEXT))
    ids = np.array([chars.index(c) for c in TEXT * 4], dtype=np.int64)
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(16):
        starts = rng.integers(0, len(ids) - seq - 1, batch)
        x = np.stack([ids[s:s + seq] for s in starts])
        y = np.stack([ids[s + 1:s + seq + 1] for s in starts])
        batches.append((dl.from_numpy(x), dl.from_numpy(y)))

    def make_model():
        dl.manual_seed(0)
        return models.GPT(len(chars), seq, 32, 4, 2)

    def loss(model, x, y):
        return model(x, y)[1]

    return Task("gpt", f"GPT-style LM, vocab {len(chars)}, 2 layers, n_embd 32, batch {batch}x{seq}",
                make_model, batches, loss)


def cnn_task(models, batch: int = 16, size: int = 16, classes: int = 10) -> Task:
    """Classify noisy copies of ten fixed random images with the zoo's small CNN."""
    rng = np.random.default_rng(1)
    templates = rng.standard_normal((classes, 3, size, size)).astype(np.float32)
    batches = []
    for _ in range(16):
        labels = rng.integers(0, classes, batch)
        images = templates[labels] + 1.5 * rng.standard_normal((batch, 3, size, size)).astype(np.float32)
        batches.append((dl.from_numpy(images), dl.from_numpy(labels.astype(np.int64))))

    def make_model():
        dl.manual_seed(0)
        return models.SmallCNN(3, size, classes)

    def loss(model, x, y):
        return F.cross_entropy(model(x), y)

    return Task("small_cnn", f"2x(Conv2d+ReLU+MaxPool2d)+Linear, {batch}x3x{size}x{size}, {classes} classes",
                make_model, batches, loss)


def make_train_step(task: Task, model, optimizer):
    def train_step(x, y):
        loss = task.loss(model, x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
    return train_step


def progress(label: str, done: int, total: int, started: float, out) -> None:
    """Redraw a one-line progress bar: ``label [#####.....] done/total  elapsed`` (on a
    terminal; elsewhere, such as a log file, only the finished bar is written)."""
    interactive = getattr(out, "isatty", lambda: False)()
    if not interactive and done != total:
        return
    width = 30
    filled = width * done // total
    out.write(f"\r  {label:9s} [{'#' * filled}{'.' * (width - filled)}] {done:4d}/{total}  "
              f"{time.perf_counter() - started:5.1f}s")
    if done == total:
        out.write("\n")
    out.flush()


def train(label: str, step, batches: list, steps: int, out, on_step=None) -> Run:
    run, started = Run(), time.perf_counter()
    every = max(1, steps // 30)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        begin = time.perf_counter()
        loss = step(x, y)
        run.seconds.append(time.perf_counter() - begin)
        run.losses.append(loss.item())
        if on_step is not None:  # --logdir: TensorBoard (dynamo_lite/utils/tensorboard/training_log.py)
            on_step(i, run.losses[-1], run.seconds[-1])
        if (i + 1) % every == 0 or i + 1 == steps:
            progress(label, i + 1, steps, started, out)
    return run


def sparkline(values: list, width: int = 60, low: float | None = None, high: float | None = None) -> str:
    """``values`` averaged into ``width`` buckets, drawn with eight bar heights."""
    buckets = np.array_split(np.asarray(values, dtype=np.float64), min(width, len(values)))
    means = [float(b.mean()) for b in buckets]
    low = min(means) if low is None else low
    high = max(means) if high is None else high
    span = (high - low) or 1.0
    return "".join(SPARK[min(len(SPARK) - 1, int((m - low) / span * len(SPARK)))] for m in means)


def run_task(task: Task, steps: int, backend: str, out, log=None) -> dict:
    """Train ``task`` eagerly and compiled; return what the summary and the plot need."""
    eager_model = task.make_model()
    compiled_model = copy.deepcopy(eager_model)
    eager_opt = dl.optim.AdamW(eager_model.parameters(), lr=3e-3)
    compiled_opt = dl.optim.AdamW(compiled_model.parameters(), lr=3e-3)
    print(f"{task.name}: {task.description}, AdamW, {steps} steps", file=out)
    if log is not None:
        log.add_graph(task.name, eager_model, task.batches[0])
    eager = train("eager", make_train_step(task, eager_model, eager_opt), task.batches, steps, out,
                  log and log.on_step(task.name, "eager"))
    dl.reset()
    before = dl.stats()
    compiled_step = dl.compile(make_train_step(task, compiled_model, compiled_opt), backend=backend)
    compiled = train("compiled", compiled_step, task.batches, steps, out, log and log.on_step(task.name, "compiled"))
    after = dl.stats()
    fallbacks = after.fallbacks[len(before.fallbacks):]
    same = np.allclose(compiled.losses, eager.losses, rtol=CURVE_RTOL, atol=1e-5)
    compiled_ok = after.graph_count > before.graph_count and not fallbacks
    low = min(eager.losses + compiled.losses)
    high = max(eager.losses + compiled.losses)
    # Medians of the steady state: the first steps include compilation (and recompiles).
    warm = slice(min(10, steps - 1), None)
    eager_ms = float(np.median(eager.seconds[warm])) * 1e3
    compiled_ms = float(np.median(compiled.seconds[warm])) * 1e3
    print(f"  loss      eager    {eager.losses[0]:.3f} -> {eager.losses[-1]:.3f}  {sparkline(eager.losses, low=low, high=high)}",
          file=out)
    print(f"  loss      compiled {compiled.losses[0]:.3f} -> {compiled.losses[-1]:.3f}  "
          f"{sparkline(compiled.losses, low=low, high=high)}", file=out)
    print(f"  step time eager {eager_ms:.2f} ms, compiled {compiled_ms:.2f} ms; compiled/eager step time "
          f"{compiled_ms / eager_ms:.2f} (lower is better); first compiled step {compiled.seconds[0] * 1e3:.0f} ms",
          file=out)
    print(f"  compiled: {after.graph_count - before.graph_count} graphs, "
          f"{after.graph_breaks - before.graph_breaks} graph breaks, {after.recompiles - before.recompiles} "
          f"recompiles, {len(fallbacks)} eager fallbacks", file=out)
    for record in fallbacks:
        print(f"    fallback: {record}", file=out)
    worst = max(abs(a - e) / max(abs(e), 1e-12) for a, e in zip(compiled.losses, eager.losses))
    print(f"  curves {'agree' if same else 'DIFFER'} (largest relative difference {worst:.1e}); "
          f"compilation {'ok' if compiled_ok else 'FAILED'}", file=out)
    return {"name": task.name, "eager": eager, "compiled": compiled, "ok": same and compiled_ok}


def plot(results: list, path: str, out) -> None:
    """Write the loss curves to ``path`` if matplotlib is importable (it is never required)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no plot written to {path} (the sparklines above show the curves)",
              file=out)
        return
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.5))
    for ax, result in zip(np.atleast_1d(axes), results):
        ax.plot(result["eager"].losses, label="eager")
        ax.plot(result["compiled"].losses, label="compiled", linestyle="--")
        ax.set_title(result["name"])
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    print(f"wrote {path}", file=out)


TASKS = {"gpt": gpt_task, "small_cnn": cnn_task}


def open_training_log(logdir: str, out):
    """The TensorBoard log of ``--logdir`` (SystemExit naming the extra if tensorboard is missing)."""
    try:
        from dynamo_lite.utils.tensorboard.training_log import TrainingLog
    except ImportError as exc:
        raise SystemExit(f"--logdir: {exc}") from None
    print(f"logging to {logdir}; watch it with: tensorboard --logdir {os.path.dirname(logdir.rstrip('/')) or logdir}",
          file=out)
    return TrainingLog(logdir)


def demo_train(models, steps: int, backend: str, tasks: list, png: str | None = None, threads: int = 1,
               out=None, logdir: str | None = None) -> int:
    """Train each task eagerly and compiled; 0 if every compiled run matched its eager run.

    ``threads``: BLAS/kernel threads while training (small models are fastest on one).
    """
    out = sys.stdout if out is None else out
    if steps < 2:
        print("--steps must be at least 2", file=sys.stderr)
        return 2
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        print(f"unknown training task(s) {unknown}; choose from {', '.join(TASKS)}", file=sys.stderr)
        return 2
    print(f"dynamo_lite training demo: backend {backend!r}, {steps} steps per run, {threads} thread(s)", file=out)
    log = open_training_log(logdir, out) if logdir else None
    previous, previous_blas = dl.get_num_threads(), blas_threads()
    dl.set_num_threads(threads)
    try:
        with dl.enable_grad():
            results = [run_task(TASKS[name](models), steps, backend, out, log) for name in tasks]
    finally:
        if log is not None:
            log.close()
        dl.set_num_threads(previous)
        if previous_blas is not None:  # the BLAS may have been pinned apart (OPENBLAS_NUM_THREADS=1)
            set_blas_threads(previous_blas)
    if png:
        plot(results, png, out)
    dl.reset()
    return 0 if all(r["ok"] for r in results) else 1

