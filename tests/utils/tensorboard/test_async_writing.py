"""Asynchronous writing: the writer thread, flush and flush_secs, no loss on close or at exit, and fork safety
(a forked DataLoader worker never writes into the parent's event file)."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import dynamo_lite as dl

from .conftest import accumulate, require_tensorboard

require_tensorboard()

from dynamo_lite.utils import data  # noqa: E402
from dynamo_lite.utils.tensorboard import SummaryWriter  # noqa: E402
from dynamo_lite.utils.tensorboard.records import read_records  # noqa: E402

# 3.12+ warns when a process with threads forks; the writer's thread is one, and the point
# of these tests is that the fork is safe for it (NOTE: [event writers and fork]).
FORK_WITH_THREADS = "ignore:This process .* is multi-threaded:DeprecationWarning"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def scalars_in(path) -> list:
    """``(step, value)`` of every scalar event in one event file (its records' checksums checked)."""
    from tensorboard.compat.proto.event_pb2 import Event
    out = []
    for record in read_records(str(path)):
        event = Event.FromString(record)
        out += [(event.step, v.simple_value) for v in event.summary.value]
    return out


def event_files(folder) -> list:
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.startswith("events.out.tfevents"))


def wait_for(condition, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_events_wait_in_the_queue_until_flush(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=1000, flush_secs=3600)
    for step in range(20):
        writer.add_scalar("x", float(step), step)
    (path,) = event_files(tmp_path)
    assert scalars_in(path) == []  # only the file-version record so far
    writer.flush()
    assert scalars_in(path) == [(s, float(s)) for s in range(20)]
    writer.close()


def test_max_queue_writes_without_flush(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=5, flush_secs=3600)
    for step in range(5):
        writer.add_scalar("x", float(step), step)
    (path,) = event_files(tmp_path)
    assert wait_for(lambda: len(scalars_in(path)) == 5)
    writer.close()


def test_flush_secs_writes_on_its_own(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=1000, flush_secs=0.2)
    writer.add_scalar("x", 1.0, 0)
    (path,) = event_files(tmp_path)
    assert wait_for(lambda: scalars_in(path) == [(0, 1.0)])
    writer.close()


def test_many_threads_logging_at_once(tmp_path):
    import threading
    writer = SummaryWriter(tmp_path, max_queue=3)

    def log(k):
        for step in range(50):
            writer.add_scalar(f"t{k}", float(step), step)

    threads = [threading.Thread(target=log, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    acc = accumulate(tmp_path)
    assert all([e.value for e in acc.Scalars(f"t{k}")] == list(range(50)) for k in range(4))


@pytest.mark.parametrize("ending", ["falls off the end", "sys.exit(0)", "raise SystemExit(3)"])
def test_nothing_is_lost_at_interpreter_exit(tmp_path, ending):
    script = textwrap.dedent(f"""
        import sys
        from dynamo_lite.utils.tensorboard import SummaryWriter
        writer = SummaryWriter(sys.argv[1], max_queue=100000, flush_secs=100000)
        for step in range(500):
            writer.add_scalar("x", float(step), step)
        {"pass" if ending == "falls off the end" else ending}
    """)
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, timeout=120)
    assert [e.value for e in accumulate(tmp_path).Scalars("x")] == list(range(500))


class LoggingDataset(data.Dataset):
    """Each item logs a scalar through the writer the parent opened (inherited by fork)."""

    def __init__(self, writer):
        self.writer = writer

    def __len__(self):
        return 8

    def __getitem__(self, i):
        self.writer.add_scalar("worker/item", float(i), i)
        return dl.tensor([float(i)])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.filterwarnings(FORK_WITH_THREADS)
def test_forked_dataloader_workers_write_their_own_files(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=1000, flush_secs=3600)
    for step in range(5):
        writer.add_scalar("parent", float(step), step)  # still queued when the workers fork
    loader = data.DataLoader(LoggingDataset(writer), batch_size=2, num_workers=2, multiprocessing_context="fork")
    batches = [b for b in loader]
    for step in range(5, 10):
        writer.add_scalar("parent", float(step), step)
    writer.close()
    assert sorted(float(v) for b in batches for v in b.reshape(-1).tolist()) == [float(i) for i in range(8)]
    files = event_files(tmp_path)
    (parent,) = [f for f in files if f".{os.getpid()}." in os.path.basename(f)]
    # The parent's file holds its ten events once each, nothing from the workers.
    assert scalars_in(parent) == [(s, float(s)) for s in range(10)]
    # Each worker wrote its items to a file of its own, each exactly once in all.
    children = [f for f in files if f != parent]
    assert len(children) == 2
    items = sorted(v for f in children for _, v in scalars_in(f))
    assert items == [float(i) for i in range(8)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.filterwarnings(FORK_WITH_THREADS)
def test_a_forked_child_that_does_not_log_leaves_the_parents_file_alone(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=1000, flush_secs=3600)
    writer.add_scalar("x", 1.0, 0)
    pid = os.fork()
    if pid == 0:  # the child: closing its copy must neither write the parent's queue nor close its file
        try:
            writer.close()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    writer.add_scalar("x", 2.0, 1)
    writer.close()
    assert len(event_files(tmp_path)) == 1
    assert [e.value for e in accumulate(tmp_path).Scalars("x")] == [1.0, 2.0]


def test_values_are_read_when_logged_not_when_written(tmp_path):
    image = np.zeros((3, 2, 2), dtype=np.float32)
    values = dl.zeros(100)
    writer = SummaryWriter(tmp_path, max_queue=1000, flush_secs=3600)
    writer.add_image("img", image, 0)
    writer.add_histogram("h", values, 0)
    image[:] = 1.0
    values.add_(5.0)
    writer.close()
    acc = accumulate(tmp_path)
    assert acc.Histograms("h")[0].histogram_value.max == 0.0
    assert acc.Images("img")[0].encoded_image_string != b""
