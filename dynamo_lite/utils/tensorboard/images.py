"""Images for TensorBoard: layouts to HWC, batches to a grid, uint8 scaling, PNG encoding, matplotlib figures."""
from __future__ import annotations

import struct
import zlib

import numpy as np

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> grey, grey+alpha, RGB, RGBA


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of a uint8 ``H x W x C`` image (C = 1, 2, 3 or 4), lossless, 8 bits per sample."""
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in _PNG_COLOR_TYPES:
        raise ValueError(f"encode_png expects a uint8 HxWxC image with 1-4 channels, got {image.dtype} {image.shape}")
    height, width, channels = image.shape
    rows = np.ascontiguousarray(image).reshape(height, width * channels)
    raw = np.zeros((height, width * channels + 1), np.uint8)  # filter byte 0 (none) before each row
    raw[:, 1:] = rows
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR_TYPES[channels], 0, 0, 0)
    return b"".join((_PNG_SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)),
                     _chunk(b"IEND", b"")))


def _check_format(array: np.ndarray, dataformats: str) -> str:
    dataformats = dataformats.upper()
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {dataformats}")
    if array.ndim != len(dataformats):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {array.shape}, "
                             f"input_format: {dataformats}")
    unknown = set(dataformats) - set("NCHW")
    if unknown or not {"H", "W"} <= set(dataformats):
        raise AssertionError(f"input_format must name H and W and may name N and C, got {dataformats}")
    return dataformats


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """An ``N x C x H x W`` batch tiled row by row into one ``C x H' x W'`` image (C of 1 becomes 3)."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, axis=1)
    count, channels, height, width = images.shape
    ncols = max(min(count, ncols), 1)
    nrows = -(-count // ncols)
    canvas = np.zeros((channels, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(count):
        y, x = divmod(i, ncols)
        canvas[:, y * height:(y + 1) * height, x * width:(x + 1) * width] = images[i]
    return canvas


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """``array`` laid out as ``dataformats`` (CHW, HWC, HW, WH, NCHW, NHWC, ...) as one HWC image.

    A batch (N) becomes a grid of up to 8 columns; one channel becomes three (grey RGB).
    """
    dataformats = _check_format(array, dataformats)
    if "N" in dataformats:
        if "C" not in dataformats:
            array = np.expand_dims(array, -1)
            dataformats += "C"
        array = array.transpose([dataformats.index(c) for c in "NCHW"])
        return make_grid(array).transpose(1, 2, 0)
    if "C" not in dataformats:
        array = array.transpose([dataformats.index(c) for c in "HW"])
        return np.stack([array] * 3, axis=2)
    array = array.transpose([dataformats.index(c) for c in "HWC"])
    if array.shape[2] == 1:
        array = np.concatenate([array] * 3, axis=2)
    return array


def to_uint8(array: np.ndarray) -> np.ndarray:
    """uint8 pixels: uint8 input as it is, anything else read as [0, 1] and scaled by 255 (clipped)."""
    if array.dtype == np.uint8:
        return array
    scaled = np.asarray(array, dtype=np.float32) * 255.0
    return np.clip(scaled, 0, 255).astype(np.uint8)


def figure_to_chw(figure, close: bool = True) -> np.ndarray:
    """A matplotlib figure rendered to a ``3 x H x W`` uint8 array (the figure is closed if ``close``)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
    except ImportError as exc:  # pragma: no cover - add_figure is only reachable with a figure
        raise ImportError("add_figure needs matplotlib: pip install matplotlib") from exc
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    width, height = canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(height, width, 4)
    image = np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))
    if close:
        import matplotlib.pyplot as plt
        plt.close(figure)
    return image
