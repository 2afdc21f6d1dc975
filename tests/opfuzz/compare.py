"""Compare a compiled run's tensors with eager's: dtype, shape, strides, values.

Exactly computed values (``Line.exact``) must match bit for bit: every integer and bool
element, every float element including the sign of zero and the positions of NaN (NaN
payloads are not compared). The others (transcendental functions, float reductions and
contractions, whose summation order is the backend's choice) must agree within a
relative tolerance per dtype, scaled by the largest finite magnitude of the expected
tensor (a sum's rounding error grows with its terms, not its result), with NaN and
infinities in the same places.
"""
from __future__ import annotations

import numpy as np

import dynamo_lite as dl

# Relative tolerance of inexactly computed values: a few hundred ulps of float32 covers a
# reordered sum of a few thousand terms; half precision results are rounded once more.
RTOL = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 2e-4, "float64": 1e-9}


def as_numpy(t: dl.Tensor) -> np.ndarray:
    t = t.detach()
    if t.dtype in (dl.bfloat16,):
        t = t.float()  # exact: every bfloat16 is a float32
    return np.array(t.numpy())


def tensor_differences(want: dl.Tensor, got, exact: bool, path: str) -> list[str]:
    if not isinstance(got, dl.Tensor):
        return [f"{path}: expected a Tensor, got {type(got).__name__}"]
    if got.dtype != want.dtype:
        return [f"{path}: dtype {got.dtype} != eager {want.dtype}"]
    if tuple(got.shape) != tuple(want.shape):
        return [f"{path}: shape {tuple(got.shape)} != eager {tuple(want.shape)}"]
    problems = []
    if want.numel() > 1 and _significant_strides(want) != _significant_strides(got):
        problems.append(f"{path}: strides {got.stride()} != eager {want.stride()}")
    a, b = as_numpy(want), as_numpy(got)
    if a.dtype.kind in "biu":
        bad = a != b
    elif exact:
        bad = (np.isnan(a) != np.isnan(b)) | ((a != b) & ~np.isnan(a)) | (np.signbit(a) != np.signbit(b)) & ~np.isnan(a)
    else:
        bad = _outside_tolerance(a, b, RTOL[str(want.dtype).rsplit(".", 1)[-1]])
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        kind = "exact" if exact or a.dtype.kind in "biu" else "tolerance"
        problems.append(f"{path}: {int(bad.sum())}/{a.size} values differ ({kind}), first at {where}: "
                        f"eager {a[where]!r}, compiled {b[where]!r}")
    return problems


def _outside_tolerance(a: np.ndarray, b: np.ndarray, rtol: float) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    finite = np.isfinite(a64)
    scale = np.abs(a64[finite]).max() if finite.any() else 1.0
    with np.errstate(all="ignore"):
        close = np.abs(a64 - b64) <= rtol * (np.abs(a64) + max(scale, 1.0) * 0.1)
    same_special = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
    return ~np.where(finite & np.isfinite(b64), close, same_special)


def _significant_strides(t: dl.Tensor) -> tuple:
    """Strides of the dims of size > 1 (a size-1 dim's stride is arbitrary)."""
    return tuple(s for n, s in zip(t.shape, t.stride()) if n > 1)


def value_differences(want, got, exact: bool, path: str) -> list[str]:
    """Differences between an eager result ``want`` and a compiled one, recursively."""
    if isinstance(want, dl.Tensor):
        return tensor_differences(want, got, exact, path)
    if isinstance(want, (tuple, list)):
        if type(got) is not type(want) or len(got) != len(want):
            return [f"{path}: {type(got).__name__} of {len(got) if hasattr(got, '__len__') else '?'} != eager's"]
        return [p for i, (w, g) in enumerate(zip(want, got)) for p in value_differences(w, g, exact, f"{path}[{i}]")]
    return [] if type(want) is type(got) and want == got else [f"{path}: {got!r} != eager {want!r}"]
