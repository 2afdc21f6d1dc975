"""Headless Chromium shows TensorBoard's Scalars tab with the curve SummaryWriter logged (and none without data)."""
import io
import math
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from .conftest import require_tensorboard

require_tensorboard()

from dynamo_lite.utils.tensorboard import SummaryWriter  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (.ci/run installs it where it can)")]


def screenshot(url: str, folder) -> np.ndarray:
    """RGB pixels of the page after up to 20 s of (virtual) time for its scripts and requests."""
    from PIL import Image  # a dependency of tensorboard
    path = folder / "shot.png"
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=20000",
                               "--window-size=1200,900", f"--screenshot={path}", url],
                              capture_output=True, timeout=180, cwd=folder)
    assert done.returncode == 0 and path.exists(), done.stderr.decode(errors="replace")[-2000:]
    return np.asarray(Image.open(io.BytesIO(path.read_bytes())).convert("RGB")).astype(np.int32)


def curve_columns(pixels: np.ndarray) -> np.ndarray:
    """Columns of the main panel (right of the sidebar, below the toolbar) holding run-coloured (red-orange) pixels.

    The first run's colour is #ff7043 (TensorBoard's palette); the toolbar's orange (#f57c00)
    is above row 70 and the sidebar's run checkbox left of column 300, both outside.
    """
    panel = pixels[70:, 300:]
    r, g, b = panel[..., 0], panel[..., 1], panel[..., 2]
    reddish = (r > 220) & (g > 60) & (g < 170) & (b > 20) & (b < 130) & (r - g > 80)
    return np.flatnonzero(reddish.any(axis=0))


def test_scalars_tab_draws_the_logged_curve(tmp_path, tensorboard_server):
    logdir = tmp_path / "logs"
    with SummaryWriter(logdir / "demo") as writer:
        for step in range(60):
            writer.add_scalar("loss/train", math.exp(-step / 8), step)
    server = tensorboard_server(logdir)
    server.wait_for("/data/plugin/scalars/tags", lambda b: b"loss/train" in b)
    pixels = screenshot(server.url + "/#scalars", tmp_path)
    columns = curve_columns(pixels)
    # A curve over 60 steps spans most of the chart's width (~280 px at this window size).
    assert columns.size > 120 and columns.max() - columns.min() > 150, columns


def test_no_curve_without_scalars(tmp_path, tensorboard_server):
    logdir = tmp_path / "logs"
    with SummaryWriter(logdir / "demo") as writer:
        writer.add_text("note", "no scalars in this run", 0)
    server = tensorboard_server(logdir)
    server.wait_for("/data/plugin/text/tags", lambda b: b"note" in b)
    pixels = screenshot(server.url + "/#scalars", tmp_path)
    assert curve_columns(pixels).size < 20
