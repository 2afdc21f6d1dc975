"""Interleaved timing: every variant measured in the same rounds, reported as medians.

Machines are noisy (other processes, frequency changes). Timing variant A for a while
and then variant B lets a burst of load hit one and not the other; here every round
times each variant once, in turn, and the median over rounds is kept, so ratios
between variants stay meaningful even when absolute times drift.

Example:
    >>> medians = measure({"eager": lambda: f(x), "compiled": lambda: g(x)}, rounds=7)
    >>> medians["compiled"] / medians["eager"]
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field


@dataclass
class Timing:
    """Seconds per call of one variant: the median and every round's value."""

    median: float
    rounds: list = field(default_factory=list)
    number: int = 1

    @property
    def spread(self) -> float:
        """Relative interquartile range of the rounds (0.05: rounds agree within ~5%)."""
        if len(self.rounds) < 4:
            return 0.0
        q = statistics.quantiles(self.rounds, n=4)
        return (q[2] - q[0]) / self.median if self.median else 0.0


def calls_per_round(fn, target_seconds: float) -> int:
    """How many calls of ``fn`` take about ``target_seconds`` (at least one)."""
    fn()  # warm: caches, lazily built state
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    if once >= target_seconds:
        return 1
    # Small functions: time a batch to estimate better than one call can.
    batch = max(1, min(10_000, int(0.01 / once)))
    start = time.perf_counter()
    for _ in range(batch):
        fn()
    once = max((time.perf_counter() - start) / batch, 1e-8)
    return max(1, int(target_seconds / once))


def measure(variants: dict, rounds: int = 7, target_seconds: float = 0.02, clock=time.perf_counter) -> dict:
    """Median seconds per call of each variant, timed interleaved.

    Args:
        variants: name -> zero-argument callable.
        rounds: how many times each variant is timed (the median is reported).
        target_seconds: length of one timing; fast callables run in a loop of that length.
        clock: what a round reads: wall time by default; ``time.process_time`` counts the
            CPU time of every thread of the process (steadier on a loaded machine).

    Returns:
        name -> Timing.
    """
    numbers = {name: calls_per_round(fn, target_seconds) for name, fn in variants.items()}
    samples: dict = {name: [] for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            number = numbers[name]
            start = clock()
            for _ in range(number):
                fn()
            samples[name].append((clock() - start) / number)
    return {name: Timing(statistics.median(values), values, numbers[name]) for name, values in samples.items()}
