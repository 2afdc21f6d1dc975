"""Tensor ``repr``: ``tensor([[1., 2.], [3., 4.]])`` in the familiar layout.

Floats print in one of three modes chosen over the whole tensor: integral values as
``1.``, fixed point with 4 decimals, or scientific notation when magnitudes span more
than 1000x (or exceed 1e8, or go below 1e-4). Tensors over 1000 elements are summarized
with ``...`` keeping 3 items at each edge.
"""
from __future__ import annotations

import math

import numpy as np

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


class _Formatter:
    """Chooses one width and notation for every element of a (host) array."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode, self.sci_mode, self.width = True, False, 1
        flat = values.reshape(-1)
        if not floating:
            self.width = max((len(str(v)) for v in flat.tolist()), default=1)
            return
        flat = flat.astype(np.float64)
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        mags = np.abs(finite)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        spread = hi / lo > 1000.0 or hi > 1.0e8
        self.sci_mode = spread if self.int_mode else (spread or lo < 1.0e-4)
        if self.sci_mode:
            strs = [f"{v:.{PRECISION}e}" for v in finite.tolist()]
        elif self.int_mode:
            strs = [f"{v:.0f}." for v in finite.tolist()]
        else:
            strs = [f"{v:.{PRECISION}f}" for v in finite.tolist()]
        self.width = max(len(s) for s in strs)

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRECISION}f}"
        return text.rjust(self.width)


def _summarized(values: np.ndarray) -> np.ndarray:
    """Only the edge items of every dim (what a summarized print shows)."""
    for dim, size in enumerate(values.shape):
        if size > 2 * EDGEITEMS:
            head = np.take(values, range(EDGEITEMS), axis=dim)
            tail = np.take(values, range(size - EDGEITEMS, size), axis=dim)
            values = np.concatenate([head, tail], axis=dim)
    return values


def _vector(values: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
    if summarize and values.shape[0] > 2 * EDGEITEMS:
        head, tail = values[:EDGEITEMS].tolist(), values[-EDGEITEMS:].tolist()
        data = [fmt.format(v) for v in head] + [" ..."] + [fmt.format(v) for v in tail]
    else:
        data = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, fmt)
    n = values.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        rows = list(range(EDGEITEMS)) + [None] + list(range(n - EDGEITEMS, n))
    else:
        rows = list(range(n))
    parts = ["..." if i is None else _nested(values[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _add_suffixes(text: str, suffixes, indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"


def format_tensor(values: np.ndarray, dtype, device, autograd: str = "") -> str:
    """The repr of a tensor whose elements are ``values`` (a host NumPy array).

    ``autograd`` is the last suffix (``grad_fn=<MulBackward0>`` or ``requires_grad=True``).
    """
    from .dtype import bool_, get_default_dtype, int64

    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")
    if values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype is not get_default_dtype():
            suffixes.append(f"dtype={dtype!r}")
        body = "[]"
    else:
        summarize = values.size > THRESHOLD
        shown = _summarized(values) if summarize else values
        body = _nested(values, indent, summarize, _Formatter(shown, dtype.is_floating_point))
        if dtype not in (get_default_dtype(), int64, bool_):
            suffixes.append(f"dtype={dtype!r}")
    if autograd:
        suffixes.append(autograd)
    return _add_suffixes(prefix + body, suffixes, indent)
