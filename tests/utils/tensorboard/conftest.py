"""Shared helpers of the TensorBoard tests: skip without the extra, read runs back with TensorBoard's readers."""
from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

NO_EXTRA = "the 'tensorboard' extra is not installed (pip install 'dynamo_lite[tensorboard]')"


def require_tensorboard():
    """Skip the calling test module when TensorBoard is not installed, saying why."""
    return pytest.importorskip("tensorboard", reason=NO_EXTRA)


def accumulate(logdir, plugins: bool = False):
    """TensorBoard's own EventAccumulator over ``logdir``, loaded (``plugins``: the one the plugins use)."""
    if plugins:
        from tensorboard.backend.event_processing.plugin_event_accumulator import EventAccumulator
        accumulator = EventAccumulator(str(logdir), size_guidance={"tensors": 0})
    else:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
        accumulator = EventAccumulator(str(logdir), size_guidance={"images": 0, "scalars": 0, "histograms": 0})
    accumulator.Reload()
    return accumulator


def decode_png(data: bytes) -> np.ndarray:
    """``H x W x C`` uint8 pixels of an 8-bit, non-interlaced PNG (grey, grey+alpha, RGB or RGBA; any filter)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length:position + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, f"bad CRC in chunk {kind}"
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        position += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and interlace == 0
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    raw, stride = zlib.decompress(b"".join(idat)), width * channels
    out, previous = np.zeros((height, stride), np.int32), np.zeros(stride, np.int32)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        row = np.zeros(stride, np.int32)
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            predictor = {0: 0, 1: left, 2: up, 3: (left + up) // 2}.get(kind)
            if predictor is None:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            row[i] = (line[i] + predictor) & 255
        out[y], previous = row, row
    return out.reshape(height, width, channels).astype(np.uint8)


class TensorBoardServer:
    """``tensorboard --logdir DIR --host 127.0.0.1 --port P`` as a subprocess (a free port, a bounded wait)."""

    def __init__(self, logdir):
        import socket
        import subprocess
        import sys
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(f"{logdir}.tensorboard.log", "w+")
        # tensorboard.main is the `tensorboard` command; through sys.executable it is this
        # interpreter's. --load_fast=false: the Python reader, not the optional Rust one.
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", "127.0.0.1",
             "--port", str(self.port), "--load_fast=false", "--reload_interval", "1"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def get(self, path: str, timeout: float = 10.0) -> bytes:
        import urllib.request
        with urllib.request.urlopen(self.url + path, timeout=timeout) as response:
            return response.read()

    def wait_for(self, path: str, condition, seconds: float = 90.0):
        """Poll ``path`` until ``condition(body)`` holds; the body, or a failure with the server's log."""
        import time
        import urllib.error
        deadline = time.monotonic() + seconds
        body = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                body = self.get(path)
                if condition(body):
                    return body
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.25)
        self.log.seek(0)
        pytest.fail(f"TensorBoard did not serve {path} as expected within {seconds}s (last body {body!r:.300});"
                    f" exit code {self.process.poll()}; log:\n{self.log.read()[-3000:]}")

    def stop(self) -> None:
        import subprocess
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        self.log.close()


@pytest.fixture
def tensorboard_server():
    """Start servers with ``start(logdir)``; every one is terminated after the test, pass or fail."""
    servers = []

    def start(logdir) -> TensorBoardServer:
        servers.append(TensorBoardServer(logdir))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()
