"""DataLoader throughput: a plain Python loop vs DataLoader with num_workers 0 and 2 (and torch's, if installed).

Run from the repository root: ``OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.data_loading``.
Each variant reads one epoch of a map-style dataset whose samples cost some work
(``--work`` NumPy operations on a small image each), batches of 32. Interleaved rounds,
medians; samples per second. Workers pay off once per-sample work outweighs the cost of
moving the batch between processes (here: through shared memory, no copy on receipt).
"""
from __future__ import annotations

import argparse
import importlib

import numpy as np

import dynamo_lite as dl
from dynamo_lite.utils import data

from .timing import measure


class Images(data.Dataset):
    """Sample i: a 3x32x32 float32 'image' after ``work`` rounds of pointwise work, and a label."""

    def __init__(self, count: int, work: int):
        self.images = np.random.default_rng(0).standard_normal((count, 3, 32, 32)).astype(np.float32)
        self.work = work

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index):
        image = self.images[index]
        for _ in range(self.work):
            image = np.tanh(image * 1.01 + 0.01)
        return dl.from_numpy(np.ascontiguousarray(image)), index % 10


def plain_loop(dataset, batch_size: int):
    """The hand-written baseline: read samples in order, stack by hand."""
    def epoch():
        for start in range(0, len(dataset), batch_size):
            samples = [dataset[i] for i in range(start, min(start + batch_size, len(dataset)))]
            dl.stack([s[0] for s in samples]), dl.tensor([s[1] for s in samples])
    return epoch


def loader_epoch(loader):
    def epoch():
        for _ in loader:
            pass
    return epoch


def torch_epoch(dataset, batch_size: int, workers: int):
    import torch.utils.data as tdata

    class TorchImages(tdata.Dataset):
        def __len__(self):
            return len(dataset)

        def __getitem__(self, index):
            image, label = dataset[index]
            return image.numpy(), label

    loader = tdata.DataLoader(TorchImages(), batch_size=batch_size, num_workers=workers,
                              persistent_workers=workers > 0)
    return loader_epoch(loader)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--work", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    # The class as imported by name (not __main__.Images): forkserver/spawn workers unpickle it.
    images = importlib.import_module("benchmarks.data_loading").Images
    dataset, batch = images(args.samples, args.work), 32
    variants = {
        "plain loop": plain_loop(dataset, batch),
        "DataLoader num_workers=0": loader_epoch(data.DataLoader(dataset, batch_size=batch)),
        "DataLoader num_workers=2": loader_epoch(data.DataLoader(dataset, batch_size=batch, num_workers=2)),
        "DataLoader num_workers=2 persistent": loader_epoch(
            data.DataLoader(dataset, batch_size=batch, num_workers=2, persistent_workers=True)),
    }
    try:
        for workers in (0, 2):
            variants[f"torch DataLoader num_workers={workers}"] = torch_epoch(dataset, batch, workers)
    except ImportError:
        pass
    timings = measure(variants, rounds=args.rounds, target_seconds=0.0)
    print(f"{args.samples} samples, batch {batch}, {args.work} NumPy ops per sample")
    print(f"{'variant':<40}{'ms/epoch':>10}{'samples/s':>12}{'spread':>8}")
    for name, timing in timings.items():
        print(f"{name:<40}{timing.median * 1e3:>10.1f}{args.samples / timing.median:>12.0f}{timing.spread:>8.2f}")


if __name__ == "__main__":
    main()
