"""Data-parallel training over MPI: DDP step time on 1 and 2 ranks, allreduce bandwidth, overlap of reduction and backward.

Run from the repository root: ``python3 -m benchmarks.distributed`` (it starts the ranks
itself through mpiexec; needs the 'distributed' extra). Every rank runs with one BLAS
thread (``OPENBLAS_NUM_THREADS=1``, ``dl.set_num_threads(1)``).

- **step**: an MLP 784-512-512-10, batch 64 per rank, SGD: forward, cross-entropy,
  backward, step; milliseconds, median of interleaved rounds. Variants: ``local`` (the
  module alone, no communication), ``ddp poll`` (DDP, buckets of 1 MiB then 25 MiB,
  reductions progressed by testing from the hooks), ``ddp thread`` (a progress thread runs
  each reduction), ``ddp 1 bucket`` (one bucket, reduced after the last gradient: no overlap);
  the same three with ``dl.compile`` of the model (``compiled ddp`` cuts the graph where the
  buckets end, NOTE: [DDP graph split]).
- **overlap**: the share of the reduction's cost hidden behind the backward:
  ``(t_1bucket - t_ddp) / (t_1bucket - t_local)`` (1 = fully hidden, 0 = none), eager and compiled;
  and, less sensitive to a loaded machine, the time each backward still waited for its
  reductions after the last gradient (``reducer.last_wait_seconds``), against the 1-bucket
  variant, where all of the reduction is waited for: ``1 - wait_ddp / wait_1bucket``.
- **allreduce**: ``dl.distributed.all_reduce`` of 1-64 MiB float32 on 2 ranks; ms and
  bus bandwidth (``bytes * 2 (n-1)/n / time``).

The reference measured beside torch (torch 2.13, gloo, same MLP and batch, 1 thread/rank, on
this kind of 2-core machine): 8.8 ms/step on 1 process, 18-23 ms on 2; gloo allreduce of
16 MB 22-27 ms. torch is not a dependency; those figures are quoted, not re-measured here.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

SIZES_MB = (1, 2, 4, 8, 16, 32, 64)
VARIANTS = ("local", "ddp poll", "ddp thread", "ddp 1 bucket", "compiled local", "compiled ddp", "compiled 1 bucket")


def worker(rounds: int, steps: int) -> None:
    """One rank: time every variant (interleaved rounds) and the allreduce sizes; rank 0 prints JSON."""
    import dynamo_lite as dl
    import dynamo_lite.distributed as dist
    from dynamo_lite.nn.parallel import DistributedDataParallel as DDP

    dl.set_num_threads(1)
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    F = dl.nn.functional

    def mlp():
        dl.manual_seed(0)
        return dl.nn.Sequential(dl.nn.Linear(784, 512), dl.nn.ReLU(), dl.nn.Linear(512, 512), dl.nn.ReLU(),
                                dl.nn.Linear(512, 10))

    models = {"local": mlp(), "ddp poll": DDP(mlp()), "ddp thread": DDP(mlp()),
              "ddp 1 bucket": DDP(mlp(), bucket_cap_mb=1024)}
    models["ddp thread"].reducer.progress = "thread"
    models.update({"compiled local": mlp(), "compiled ddp": DDP(mlp()), "compiled 1 bucket": DDP(mlp(), bucket_cap_mb=1024)})
    forwards = dict(models)
    for name in ("compiled local", "compiled ddp", "compiled 1 bucket"):
        forwards[name] = dl.compile(models[name])
    optimizers = {name: dl.optim.SGD(m.parameters(), lr=0.01) for name, m in models.items()}
    rng = np.random.default_rng(rank)
    x = dl.from_numpy(rng.standard_normal((64, 784)).astype(np.float32))
    y = dl.from_numpy(rng.integers(0, 10, 64))

    def step(name):
        optimizers[name].zero_grad()
        F.cross_entropy(forwards[name](x), y).backward()
        optimizers[name].step()

    times = {name: [] for name in VARIANTS}
    waits = {name: [] for name in VARIANTS if hasattr(models[name], "reducer")}
    for name in VARIANTS:
        for _ in range(3):
            step(name)
    for _ in range(rounds):
        for name in VARIANTS:
            dist.barrier()
            start = time.perf_counter()
            for _ in range(steps):
                step(name)
                if name in waits:
                    waits[name].append(models[name].reducer.last_wait_seconds * 1e3)
            times[name].append((time.perf_counter() - start) / steps * 1e3)
    result = {"ranks": size, "step_ms": {name: float(np.median(t)) for name, t in times.items()},
              "wait_ms": {name: float(np.median(w)) for name, w in waits.items()},
              "buckets": {name: len(m.reducer.buckets) for name, m in models.items() if hasattr(m, "reducer")}}
    if size > 1:
        bandwidth = {}
        for mb in SIZES_MB:
            t = dl.ones(mb * 1024 * 1024 // 4)
            dist.all_reduce(t)
            samples = []
            for _ in range(max(3, rounds)):
                dist.barrier()
                start = time.perf_counter()
                dist.all_reduce(t)
                samples.append(time.perf_counter() - start)
            seconds = float(np.median(samples))
            bandwidth[mb] = {"ms": seconds * 1e3, "bus_GBps": mb * 2 ** 20 * 2 * (size - 1) / size / seconds / 1e9}
        small = dl.ones(1)
        samples = []
        for _ in range(200):
            start = time.perf_counter()
            dist.all_reduce(small)
            samples.append(time.perf_counter() - start)
        result["allreduce"] = bandwidth
        result["allreduce_4B_us"] = float(np.median(samples)) * 1e6
    if rank == 0:
        print("RESULT " + json.dumps(result))
    dist.destroy_process_group()


def launch(nprocs: int, rounds: int, steps: int) -> dict:
    from dynamo_lite.distributed.run import find_mpiexec

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    command = [find_mpiexec(), "-n", str(nprocs), sys.executable, "-m", "benchmarks.distributed", "--worker",
               "--rounds", str(rounds), "--steps", str(steps)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def report(results: list) -> None:
    print("MLP 784-512-512-10, batch 64/rank, 1 BLAS thread/rank: ms per step (median)")
    print(f"{'ranks':>5} " + " ".join(f"{name:>17}" for name in VARIANTS))
    for result in results:
        ms = result["step_ms"]
        print(f"{result['ranks']:>5} " + " ".join(f"{ms[name]:17.2f}" for name in VARIANTS))
    for result in results:
        if result["ranks"] == 1:
            continue
        ms = result["step_ms"]
        shares = []
        for name, no_overlap, local in (("ddp poll", "ddp 1 bucket", "local"), ("ddp thread", "ddp 1 bucket", "local"),
                                        ("compiled ddp", "compiled 1 bucket", "compiled local")):
            cost = ms[no_overlap] - ms[local]
            shares.append(f"{name} {(ms[no_overlap] - ms[name]) / cost if cost > 0 else float('nan'):.2f}")
        print(f"overlap on {result['ranks']} ranks (share of the reduction hidden behind the backward): "
              + ", ".join(shares))
        wait = result["wait_ms"]
        print("  waited for reductions after the last gradient (ms, median): "
              + ", ".join(f"{name} {value:.2f}" for name, value in wait.items())
              + "; hidden by overlap: " + ", ".join(
                  f"{name} {1 - wait[name] / wait[whole]:.2f}" for name, whole in (
                      ("ddp poll", "ddp 1 bucket"), ("ddp thread", "ddp 1 bucket"),
                      ("compiled ddp", "compiled 1 bucket")) if wait[whole] > 0))
    for result in results:
        if "allreduce" in result:
            print(f"\nallreduce on {result['ranks']} ranks (float32): 4 bytes {result['allreduce_4B_us']:.1f} us")
            for mb, entry in result["allreduce"].items():
                print(f"  {int(mb):>3} MiB  {entry['ms']:8.2f} ms  {entry['bus_GBps']:6.2f} GB/s bus bandwidth")
    print("\ntorch 2.13 gloo (quoted, same MLP): 8.8 ms/step on 1 process, 18-23 ms on 2; 16 MB allreduce 22-27 ms")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ranks", default="1,2", help="comma-separated rank counts (default 1,2)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.rounds, args.steps)
        return
    results = [launch(int(n), args.rounds, args.steps) for n in args.ranks.split(",")]
    report(results)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
