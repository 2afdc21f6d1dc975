"""TrainingLog: what ``dynamo-lite demo --train --logdir DIR`` writes for TensorBoard while it trains.

Runs (subdirectories of ``DIR``): ``eager`` and ``compiled`` hold each task's loss and step
time (``<task>/loss``, ``<task>/step_ms``), so TensorBoard draws the two runs of a task in one
chart; ``graph_<task>`` holds the graphs dynamo_lite captures for the task's model.
"""
from __future__ import annotations

import inspect
import os

from .writer import SummaryWriter


class TrainingLog:
    """Event files of one training demo under ``logdir`` (written every ``flush_secs``, so it can be watched live).

    Example:
        >>> log = TrainingLog("runs/demo")
        >>> on_step = log.on_step("gpt", "eager")
        >>> on_step(0, 4.2, 0.003)  # step, loss, seconds
        >>> log.close()
    """

    def __init__(self, logdir: str, flush_secs: float = 2):
        self.logdir = str(logdir)
        self.flush_secs = flush_secs
        self.writers: dict = {}

    def writer(self, run: str) -> SummaryWriter:
        if run not in self.writers:
            self.writers[run] = SummaryWriter(os.path.join(self.logdir, run), flush_secs=self.flush_secs)
        return self.writers[run]

    def on_step(self, task: str, label: str):
        """A ``(step, loss, seconds)`` callback logging one training run (``label``: eager or compiled)."""
        writer = self.writer(label)

        def log(step: int, loss: float, seconds: float) -> None:
            writer.add_scalar(f"{task}/loss", loss, step)
            writer.add_scalar(f"{task}/step_ms", seconds * 1e3, step)

        return log

    def add_graph(self, task: str, model, batch) -> None:
        """The graphs of ``model`` called on a batch in the run ``graph_<task>``.

        The model takes as many of the batch's tensors as its ``forward`` has positional
        parameters (``GPT(idx, targets)`` both, a classifier only the inputs).
        """
        parameters = inspect.signature(model.forward).parameters.values()
        count = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters)
        writer = self.writer(f"graph_{task}")
        writer.add_graph(model, tuple(batch[:count]))
        writer.flush()

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()
