"""EventFileWriter: appends events to one event file from a writer thread (a queue, flushed every flush_secs).

NOTE: [asynchronous event writing] ``add_event`` serializes the event in the caller's thread
(so later changes to the logged values cannot leak in) and puts the bytes on a bounded
queue; a daemon thread frames them as records (records.py) and writes them with ``os.write``
when ``max_queue`` records are pending, when ``flush_secs`` have passed, on ``flush()`` and
on ``close()``. Nothing is lost at interpreter exit: an ``atexit`` handler closes every writer
this process opened. Pending records live in Python memory, never in a buffered file object.

NOTE: [event writers and fork] A DataLoader worker forked while a writer is open inherits a
copy of it. ``os.register_at_fork`` resets that copy in the child: it drops the parent's
pending records (the parent writes them), closes its copy of the descriptor, and forgets the
parent's thread, queue and lock (one of which may have been held at the fork). If the child
logs, it opens an event file of its own in the same directory (its pid is in the name) with
its own thread, so parent and child never write to the same file.
"""
from __future__ import annotations

import atexit
import itertools
import multiprocessing.util
import os
import queue
import socket
import threading
import time
import weakref

from tensorboard.compat.proto.event_pb2 import Event

from .records import encode_record

_FILE_IDS = itertools.count()
_LIVE: "weakref.WeakSet[EventFileWriter]" = weakref.WeakSet()
_STOP = object()
_MAIN_PID = os.getpid()


def event_file_name(suffix: str = "") -> str:
    """``events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>``, the name TensorBoard looks for."""
    return f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}.{next(_FILE_IDS)}{suffix}"


class EventFileWriter:
    """Writes ``Event`` protos to an event file in ``logdir`` (created with the directory).

    Args:
        logdir: the directory of the event file.
        max_queue: records held before they are written (and the queue's bound).
        flush_secs: at most this long between a record's arrival and its write.
        filename_suffix: appended to the event file's name.
    """

    def __init__(self, logdir: str, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = ""):
        self._logdir = str(logdir)
        self._max_queue = max(int(max_queue), 1)
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix
        self._closed = False
        self._error: BaseException | None = None
        self._reset_state()
        os.makedirs(self._logdir, exist_ok=True)
        self._open_file()
        _LIVE.add(self)

    # -- state ----------------------------------------------------------------------------
    def _reset_state(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._queue: queue.Queue = queue.Queue(self._max_queue)
        self._thread: threading.Thread | None = None
        self._pending: list = []
        self._fd: int | None = None
        self._path: str | None = None
        self._next_flush = time.monotonic() + self._flush_secs

    def _open_file(self) -> None:
        self._path = os.path.join(self._logdir, event_file_name(self._suffix))
        self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        # The first record names the format version, as TensorBoard expects.
        self._pending.append(encode_record(Event(wall_time=time.time(), file_version="brain.Event:2")
                                           .SerializeToString()))
        self._write_pending()
        if self._pid != _MAIN_PID:
            # A multiprocessing child (a DataLoader worker) leaves through os._exit, which
            # skips atexit; multiprocessing runs its own exit finalizers first.
            multiprocessing.util.Finalize(None, _close_quietly, args=(weakref.ref(self),), exitpriority=10)

    def _after_fork_in_child(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)  # the child's copy only; the parent's stays open
            except OSError:
                pass
        self._reset_state()

    @property
    def path(self) -> str | None:
        """The event file being written (None in a forked child until it logs)."""
        return self._path

    def get_logdir(self) -> str:
        return self._logdir

    # -- writing --------------------------------------------------------------------------
    def add_event(self, event: Event) -> None:
        """Queue ``event`` (its ``wall_time`` defaults to now)."""
        if not event.wall_time:
            event.wall_time = time.time()
        self.add_serialized(event.SerializeToString())

    def add_serialized(self, data: bytes) -> None:
        self._raise_error()
        if self._closed:
            raise RuntimeError("the event file writer is closed")
        with self._lock:
            if self._fd is None:  # a forked child's first event
                self._open_file()
            thread = self._start_thread()
        if thread is None:  # no thread could start (interpreter shutdown): write now
            with self._lock:
                self._pending.append(encode_record(data))
                self._write_pending()
            return
        self._queue.put(data)

    def _start_thread(self):
        if self._thread is not None and self._thread.is_alive():
            return self._thread
        if self._thread is not None:  # died on an error: write in the caller from now on
            return None
        thread = threading.Thread(target=self._run, args=(self._queue,), name="dynamo_lite-tensorboard-writer",
                                  daemon=True)
        try:
            thread.start()
        except RuntimeError:  # "can't create new thread at interpreter shutdown"
            return None
        self._thread = thread
        return thread

    def _run(self, q: queue.Queue) -> None:
        try:
            while True:
                try:
                    item = q.get(timeout=max(self._next_flush - time.monotonic(), 0.0))
                except queue.Empty:
                    item = None
                if item is _STOP:
                    self._write_pending()
                    return
                if isinstance(item, threading.Event):  # a flush request
                    self._write_pending()
                    item.set()
                    continue
                if item is not None:
                    self._pending.append(encode_record(item))
                if len(self._pending) >= self._max_queue or time.monotonic() >= self._next_flush:
                    self._write_pending()
        except BaseException as exc:  # reported to the next caller; the thread ends
            self._error = exc

    def _write_pending(self) -> None:
        self._next_flush = time.monotonic() + self._flush_secs
        if not self._pending or self._fd is None:
            return
        data = memoryview(b"".join(self._pending))
        self._pending.clear()
        while data:
            written = os.write(self._fd, data)
            data = data[written:]

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise OSError(f"writing the event file {self._path} failed: {error}") from error

    # -- flush and close -------------------------------------------------------------------
    def flush(self) -> None:
        """Write everything queued so far to the file."""
        if self._closed:
            return
        thread = self._thread
        if thread is not None and thread.is_alive():
            done = threading.Event()
            self._queue.put(done)
            while not done.wait(0.1):
                if not thread.is_alive():
                    break
        self._drain()
        self._raise_error()

    def _drain(self) -> None:
        """Write what the queue still holds when no thread will (it ended, or never started)."""
        if self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if isinstance(item, bytes):
                    self._pending.append(encode_record(item))
                elif isinstance(item, threading.Event):
                    item.set()
            self._write_pending()

    def close(self) -> None:
        """Write everything queued and close the file; later events raise RuntimeError."""
        if self._closed:
            return
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(_STOP)
            thread.join()
        self._drain()
        self._closed = True
        _LIVE.discard(self)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._raise_error()

    @property
    def closed(self) -> bool:
        return self._closed


def _close_quietly(ref) -> None:
    writer = ref()
    if writer is not None and writer._pid == os.getpid():
        try:
            writer.close()
        except Exception:  # at exit there is no one left to tell
            pass


def _close_all_at_exit() -> None:
    """atexit: write and close every writer this process opened (not those of a forking parent)."""
    for writer in list(_LIVE):
        if writer._pid == os.getpid() and not writer.closed:
            try:
                writer.close()
            except Exception:  # at exit there is no one left to tell
                pass


def _reset_all_in_child() -> None:
    for writer in list(_LIVE):
        writer._after_fork_in_child()


atexit.register(_close_all_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_all_in_child)
