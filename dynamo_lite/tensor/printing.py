"""Tensor ``repr``: ``tensor([[1., 2.], [3., 4.]])`` in the familiar layout.

Floats print in one of three modes chosen over the whole tensor: integral values as
``1.``, fixed point with 4 decimals, or scientific notation when magnitudes span more
than 1000x (or exceed 1e8, or go below 1e-4). Tensors over 1000 elements are summarized
with ``...`` keeping 3 items at each edge. ``set_printoptions`` changes these numbers
(and can force the notation).
"""
from __future__ import annotations

import math

import numpy as np



class PrintOptions:
    """How tensors print (one instance, ``PRINT_OPTIONS``, changed by ``dl.set_printoptions``).

    ``sci_mode`` None lets each tensor choose its notation; True/False forces it.
    """

    def __init__(self):
        self.precision, self.threshold, self.edgeitems, self.linewidth = 4, 1000, 3, 80
        self.sci_mode = None


PRINT_OPTIONS = PrintOptions()

#: profile -> (precision, threshold, edgeitems, linewidth).
PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set how tensors print: a ``profile`` (``"default"``, ``"short"``, ``"full"``), then the given options.

    Args:
        precision: digits after the decimal point.
        threshold: element count above which a tensor prints summarized.
        edgeitems: items kept at each edge of a summarized dim.
        linewidth: characters per line.
        sci_mode: True/False forces scientific/fixed notation; None (default) chooses per tensor.

    Example:
        >>> dl.set_printoptions(precision=2)
        >>> dl.tensor([1.2345])
        tensor([1.23])
        >>> dl.set_printoptions(profile="default")
    """
    options = PRINT_OPTIONS
    if profile is not None:
        options.precision, options.threshold, options.edgeitems, options.linewidth = PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(options, name, value)
    options.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options as a dict.

    Example:
        >>> dl.get_printoptions()["precision"]
        4
    """
    options = PRINT_OPTIONS
    return {"precision": options.precision, "threshold": options.threshold, "edgeitems": options.edgeitems,
            "linewidth": options.linewidth, "sci_mode": options.sci_mode}


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
        if PRINT_OPTIONS.sci_mode is not None:
            self.sci_mode = PRINT_OPTIONS.sci_mode
        precision = PRINT_OPTIONS.precision
        if self.sci_mode:
            strs = [f"{v:.{precision}e}" for v in finite.tolist()]
        elif self.int_mode:
            strs = [f"{v:.0f}." for v in finite.tolist()]
        else:
            strs = [f"{v:.{precision}f}" for v in finite.tolist()]
        self.width = max(len(s) for s in strs)

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{PRINT_OPTIONS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRINT_OPTIONS.precision}f}"
        return text.rjust(self.width)


def _summarized(values: np.ndarray) -> np.ndarray:
    """Only the edge items of every dim (what a summarized print shows)."""
    edge = PRINT_OPTIONS.edgeitems
    for dim, size in enumerate(values.shape):
        if size > 2 * edge:
            head = np.take(values, range(edge), axis=dim)
            tail = np.take(values, range(size - edge, size), axis=dim)
            values = np.concatenate([head, tail], axis=dim)
    return values


def _vector(values: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    edge = PRINT_OPTIONS.edgeitems
    per_line = max(1, (PRINT_OPTIONS.linewidth - indent) // (fmt.width + 2))
    if summarize and values.shape[0] > 2 * edge:
        head, tail = values[:edge].tolist(), values[-edge:].tolist()
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
    edge = PRINT_OPTIONS.edgeitems
    if summarize and n > 2 * edge:
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        rows = list(range(n))
    parts = ["..." if i is None else _nested(values[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _add_suffixes(text: str, suffixes, indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > PRINT_OPTIONS.linewidth:
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
        summarize = values.size > PRINT_OPTIONS.threshold
        shown = _summarized(values) if summarize else values
        body = _nested(values, indent, summarize, _Formatter(shown, dtype.is_floating_point))
        if dtype not in (get_default_dtype(), int64, bool_):
            suffixes.append(f"dtype={dtype!r}")
    if autograd:
        suffixes.append(autograd)
    return _add_suffixes(prefix + body, suffixes, indent)
