"""Train the zoo's GPT with DistributedDataParallel on N ranks; show its loss curve beside single-process training.

Run from the repository root on 2 ranks:

    python3 -m dynamo_lite.distributed.run --nproc-per-node 2 -m benchmarks.ddp_gpt --steps 30

(or ``mpiexec -n 2 python3 -m benchmarks.ddp_gpt``). Each rank trains on its slice of the
global batch (12 sequences of 32 characters; ``--batch``), AdamW. Rank 0 also trains the same
model single-process on the whole global batch and prints both curves: the DDP loss is the
average of the ranks' losses on their slices, which is the loss of the global batch, so the
two curves are equal up to float rounding. ``--compile`` wraps the DDP model in ``dl.compile``.
"""
from __future__ import annotations

import argparse

import numpy as np

import dynamo_lite as dl
import dynamo_lite.distributed as dist
from dynamo_lite.demo_train import gpt_task, sparkline
from dynamo_lite.nn.parallel import DistributedDataParallel as DDP

from . import models


def train(model, task, steps: int, part: slice, forward=None, average=False) -> list:
    forward = model if forward is None else forward
    optimizer = dl.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for step in range(steps):
        x, y = task.batches[step % len(task.batches)]
        optimizer.zero_grad()
        loss = forward(x[part], y[part])[1]
        loss.backward()
        optimizer.step()
        value = loss.detach().clone()
        if average:
            dist.all_reduce(value, op=dist.ReduceOp.AVG)
        losses.append(float(value.item()))
    return losses


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=12, help="the global batch (divisible by the rank count)")
    parser.add_argument("--compile", action="store_true", help="dl.compile the DDP model")
    args = parser.parse_args(argv)
    dl.set_num_threads(1)
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    if args.batch % size:
        raise SystemExit(f"--batch {args.batch} does not divide among {size} ranks")
    task = gpt_task(models, batch=args.batch)
    local = args.batch // size
    ddp = DDP(task.make_model())
    forward = dl.compile(ddp) if args.compile else ddp
    distributed = train(ddp, task, args.steps, slice(rank * local, (rank + 1) * local), forward, average=True)
    if rank == 0:
        single = train(task.make_model(), task, args.steps, slice(None))
        difference = max(abs(a - b) for a, b in zip(distributed, single))
        print(f"{task.description}; global batch {args.batch} = {size} ranks x {local}"
              + (" (DDP compiled)" if args.compile else ""))
        print(f"{'step':>4} {'DDP on ' + str(size) + ' ranks':>16} {'single process':>15}")
        for step, (a, b) in enumerate(zip(distributed, single)):
            print(f"{step:>4} {a:16.6f} {b:15.6f}")
        low, high = min(single + distributed), max(single + distributed)
        print("DDP    " + sparkline(distributed, low=low, high=high))
        print("single " + sparkline(single, low=low, high=high))
        print(f"largest loss difference: {difference:.2e}")
        params = [p.detach().numpy() for p in ddp.module.parameters()]
        print(f"parameters finite: {all(np.isfinite(p).all() for p in params)}"
              + (f"; {dl.stats().graph_count} graph(s), {dl.stats().graph_breaks} break(s)" if args.compile else ""))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
