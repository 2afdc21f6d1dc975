"""A real browser renders the HTML compile report: SVG graphs in the DOM, a non-blank screenshot, no script error."""
import shutil
import struct
import subprocess
import tempfile
import zlib

import numpy as np
import pytest

import dynamo_lite as dl

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (.ci/run installs it where it can)")]


def two_breaks(x):
    y = x.sin() + 1
    print("between graphs")
    if y.sum().item() > 0:
        y = y * 3
    return y.relu()


def chromium(*arguments, cwd) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                               *arguments], capture_output=True, text=False, timeout=120, cwd=cwd)


def png_pixels(data: bytes) -> tuple:
    """``(width, height, rows)`` of an 8-bit RGB/RGBA PNG, unfiltered (rows of bytes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0
    channels = 3 if color == 2 else 4
    raw, stride, rows, previous = zlib.decompress(b"".join(chunks)), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def test_chromium_renders_the_report(tmp_path, capsys):
    out = dl.explain(two_breaks)(dl.from_numpy(np.ones((3, 4), dtype=np.float32)))
    page = out.to_html(tmp_path / "report.html")
    url = f"file://{page}"
    dom = chromium("--dump-dom", url, cwd=tmp_path)
    assert dom.returncode == 0, dom.stderr.decode(errors="replace")[-2000:]
    text = dom.stdout.decode()
    assert text.count("<svg") == out.graph_count and text.count('class="node') > 0
    shot = chromium(f"--screenshot={tmp_path / 'shot.png'}", "--window-size=1200,900", url, cwd=tmp_path)
    assert shot.returncode == 0, shot.stderr.decode(errors="replace")[-2000:]
    for run in (dom, shot):
        assert b"Uncaught" not in run.stderr and b"CONSOLE" not in run.stderr.replace(b"console", b"")
    width, height, channels, rows = png_pixels((tmp_path / "shot.png").read_bytes())
    assert (width, height) == (1200, 900)
    pixels = {row[i:i + 3] for row in rows[::10] for i in range(0, len(row), channels * 10)}
    assert len(pixels) > 10  # text, boxes and highlights, not one flat colour
