"""dl.save replaces a checkpoint atomically: a writer killed mid-write or a full disk keeps the old file."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import dynamo_lite as dl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The child saves 8 MiB over the old checkpoint with a file-size limit of 64 KiB: the
# kernel stops the write there, with SIGXFSZ (killed mid-write) or, when the signal is
# ignored, with EFBIG from write() (a full disk, as the writer sees it).
CHILD = textwrap.dedent("""
    import resource, signal, sys
    sys.path.insert(0, {root!r})
    import dynamo_lite as dl
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN if {ignore_signal} else signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))
    try:
        dl.save({{"w": dl.zeros(2 << 20)}}, {path!r})
    except OSError as exc:
        print("raised", exc.errno)
        sys.exit(3)
""")


@pytest.mark.parametrize("ignore_signal, expected_rc", [(False, -25), (True, 3)], ids=["killed", "EFBIG"])
def test_an_interrupted_save_keeps_the_old_checkpoint(tmp_path, ignore_signal, expected_rc):
    path = tmp_path / "checkpoint.pt"
    dl.save({"w": dl.arange(3.0)}, path)
    old = path.read_bytes()
    script = CHILD.format(root=ROOT, ignore_signal=ignore_signal, path=str(path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == expected_rc, (done.returncode, done.stdout, done.stderr)
    assert path.read_bytes() == old
    assert dl.load(path)["w"].tolist() == [0.0, 1.0, 2.0]
    if ignore_signal:  # the writer that saw EFBIG removed its temporary file (a killed one cannot)
        assert os.listdir(tmp_path) == ["checkpoint.pt"]


def test_a_save_that_raises_keeps_the_old_checkpoint_and_leaves_nothing(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    dl.save({"w": dl.ones(2)}, path)
    old = path.read_bytes()
    save_module = sys.modules["dynamo_lite.serialization.save"]

    def full_disk(storage):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(save_module, "_host_bytes", full_disk)
    with pytest.raises(OSError, match="No space left"):
        dl.save({"w": dl.zeros(5)}, path)
    assert path.read_bytes() == old and os.listdir(tmp_path) == ["checkpoint.pt"]


def test_save_keeps_the_mode_and_writes_through_a_symlink(tmp_path):
    real = tmp_path / "real.pt"
    dl.save({"w": dl.ones(1)}, real)
    os.chmod(real, 0o640)
    link = tmp_path / "link.pt"
    link.symlink_to(real)
    dl.save({"w": dl.zeros(1)}, link)
    assert link.is_symlink() and dl.load(real)["w"].tolist() == [0.0]
    assert os.stat(real).st_mode & 0o777 == 0o640
    fresh = tmp_path / "fresh.pt"
    dl.save({"w": dl.ones(1)}, fresh)
    mask = os.umask(0o022)
    os.umask(mask)
    assert os.stat(fresh).st_mode & 0o777 == 0o666 & ~mask


def test_save_to_a_device_writes_in_place():
    dl.save({"w": dl.ones(1)}, os.devnull)  # not a regular file: no temporary file next to it
