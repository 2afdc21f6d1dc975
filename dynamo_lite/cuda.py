"""dl.cuda: CUDA device queries (through CuPy), behaving like torch's on a machine without CUDA.

NOTE: [no CUDA device] ``is_available()`` never raises: it is False when CuPy does not
import or sees no device. On such a machine the calls that need a device
(``current_device``, ``get_device_name``, ``synchronize``) raise ``AssertionError``, the
type torch raises there, and the seeding calls are accepted silently (torch defers
them until CUDA initializes, which never happens). Inside compiled code
``is_available()`` and ``device_count()`` are constants of the process (NOTE: [trace rules]),
so ``if dl.cuda.is_available():`` does not break the graph.
"""
from __future__ import annotations

import functools

from .tensor.device import as_device
from .tensor.generator import default_generator

_NO_DEVICE = "dynamo_lite found no usable CUDA device (CuPy is not installed or sees no device)"


@functools.lru_cache(maxsize=None)
def _cupy_device_count() -> int:
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # ImportError, or CuPy's CUDARuntimeError when no driver/device is present
        return 0


def _cupy():
    if not is_available():
        raise AssertionError(_NO_DEVICE)
    import cupy
    return cupy


def _index(device) -> int:
    """The device index of ``device`` (an int, "cuda:1", a dl.device or None: the current one)."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    index = as_device(device).index
    return current_device() if index is None else index


def is_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device; never raises.

    Example:
        >>> device = "cuda" if dl.cuda.is_available() else "cpu"
    """
    return _cupy_device_count() > 0


def device_count() -> int:
    """The number of CUDA devices CuPy sees (0 without CuPy or a device)."""
    return _cupy_device_count()


def current_device() -> int:
    """The index of the current CUDA device.

    Raises:
        AssertionError: without a CUDA device (as torch does), see NOTE: [no CUDA device].
    """
    return int(_cupy().cuda.runtime.getDevice())


def get_device_name(device=None) -> str:
    """The name of a CUDA device (default: the current one).

    Raises:
        AssertionError: without a CUDA device (as torch does).

    Example:
        >>> dl.cuda.get_device_name(0)   # on a machine with a GPU, e.g. 'NVIDIA A100-SXM4-40GB'
    """
    cupy = _cupy()
    name = cupy.cuda.runtime.getDeviceProperties(_index(device))["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device=None) -> None:
    """Wait until every kernel queued on a CUDA device (default: the current one) finished.

    Raises:
        AssertionError: without a CUDA device (as torch does).
    """
    cupy = _cupy()
    with cupy.cuda.Device(_index(device)):
        cupy.cuda.runtime.deviceSynchronize()


def manual_seed(seed) -> None:
    """Seed the random numbers of CUDA kernels; accepted silently without a CUDA device.

    CUDA kernels draw their seeds from the one default generator (NOTE: [random state]),
    so with a device this seeds that generator, as ``dl.manual_seed`` does.

    Example:
        >>> dl.cuda.manual_seed(0)   # a no-op on a machine without CUDA
    """
    seed = int(seed)
    if is_available():
        default_generator.manual_seed(seed)


def manual_seed_all(seed) -> None:
    """Seed the random numbers of every CUDA device (one generator serves them all)."""
    manual_seed(seed)
from .amp import cuda_amp as amp  # noqa: E402  (dl.cuda.amp.autocast / GradScaler, torch's deprecated spellings)
