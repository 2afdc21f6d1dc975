"""Connectionist temporal classification loss (``F.ctc_loss``, ``nn.CTCLoss``), in log space.

The forward (alpha) recursion runs over time on all sequences at once, each row of the batch
over its extended label sequence ``blank, l1, blank, l2, ..., blank``; it is written with
registry ops, so autograd differentiates the recursion itself (no separate beta pass).
Impossible states hold a large negative number instead of -inf, which keeps every
log-sum-exp and its gradient finite; a loss that large means "no path" and becomes inf.
"""
from __future__ import annotations

from ...ops.core import api as ops
from ...tensor.tensor import Tensor
from ...tensor.dtype import int64

__all__ = ["ctc_loss"]

_NO_PATH = -1e30  # log-probability of an impossible state (exp underflows to exactly 0)
REDUCTIONS = ("none", "mean", "sum")


def _lengths(values) -> list:
    values = values.tolist() if isinstance(values, Tensor) else list(values)
    return [int(v) for v in values]


def _targets_per_row(targets, target_lengths: list) -> list:
    """Each row's labels (a list of ints), from padded ``(N, S)`` or concatenated 1-D targets."""
    rows = targets.tolist()
    if targets.dim() == 1:
        starts = [sum(target_lengths[:i]) for i in range(len(target_lengths))]
        return [rows[start:start + n] for start, n in zip(starts, target_lengths)]
    return [row[:n] for row, n in zip(rows, target_lengths)]


def _log_add3(a, b, c):
    """``log(exp(a) + exp(b) + exp(c))`` elementwise."""
    top = ops.maximum(ops.maximum(a, b), c)
    return top + ops.log(ops.exp(a - top) + ops.exp(b - top) + ops.exp(c - top))


def _path_losses(log_probs, labels: list, input_lengths: list, blank: int):
    """``-log p(labels | input)`` per row of the batch; log_probs ``(T, N, C)``."""
    batch = len(labels)
    width = 2 * max((len(row) for row in labels), default=0) + 1
    extended = [[blank] * width for _ in range(batch)]
    skip_allowed = [[False] * width for _ in range(batch)]
    for b, row in enumerate(labels):
        for i, label in enumerate(row):
            extended[b][2 * i + 1] = label
            skip_allowed[b][2 * i + 1] = i > 0 and row[i - 1] != label
    index = ops.tensor(extended, dtype=int64, device=log_probs.device)
    skips = ops.tensor(skip_allowed, device=log_probs.device)
    start = ops.tensor([[s < 2 for s in range(width)] for _ in range(batch)], device=log_probs.device)
    no_path = ops.full((batch, width), _NO_PATH, dtype=log_probs.dtype, device=log_probs.device)
    pad1, pad2 = no_path[:, :1], no_path[:, :2]
    alpha = ops.where(start, log_probs[0].gather(1, index), no_path)
    finals = [None] * batch
    ends = [2 * len(row) for row in labels]
    for t in range(max(input_lengths)):
        if t:
            stay, step = alpha, ops.cat([pad1, alpha[:, :-1]], 1)
            jump = ops.where(skips, ops.cat([pad2, alpha[:, :-2]], 1), no_path)
            alpha = _log_add3(stay, step, jump) + log_probs[t].gather(1, index)
        for b, length in enumerate(input_lengths):
            if length == t + 1:
                last = alpha[b, ends[b]]
                finals[b] = last if ends[b] == 0 else ops.logsumexp(alpha[b, ends[b] - 1:ends[b] + 1], 0)
    return -ops.stack(finals)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False):
    """The CTC loss of log-probabilities ``(T, N, C)`` (or unbatched ``(T, C)``) against label sequences.

    Args:
        log_probs: log-softmax outputs over C classes per time step.
        targets: padded labels ``(N, S)`` or all sequences concatenated (1-D); never ``blank``.
        input_lengths: the time steps used per sequence (list or tensor).
        target_lengths: the label count per sequence.
        blank: the blank class.
        reduction: "none" (per sequence), "mean" (each divided by its target length, then averaged), "sum".
        zero_infinity: give impossible alignments a loss (and gradient) of 0 instead of inf.

    Example:
        >>> log_probs = dl.full((2, 1, 2), 0.5).log()
        >>> F.ctc_loss(log_probs, dl.tensor([[1]]), [2], [1], reduction="sum").item()  # 3 paths of 1/4
        0.2876820724517809
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0) if targets.dim() == 1 else targets
    input_lengths = _lengths(input_lengths)
    target_lengths = _lengths(target_lengths)
    for length in input_lengths:
        if length > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {log_probs.shape[0]}, but got value "
                               f"{length} (while checking arguments for ctc_loss)")
    labels = _targets_per_row(targets, target_lengths)
    losses = _path_losses(log_probs, labels, input_lengths, blank)
    impossible = losses > -_NO_PATH / 2
    losses = ops.where(impossible, ops.full_like(losses, 0.0 if zero_infinity else float("inf")), losses)
    if reduction == "none":
        return losses.squeeze(0) if unbatched else losses
    if reduction == "sum":
        return losses.sum()
    divisors = ops.tensor([max(n, 1) for n in target_lengths], dtype=losses.dtype, device=losses.device)
    return (losses / divisors).mean()
