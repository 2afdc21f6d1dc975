"""The main-process side of DataLoader workers: start them, hand out index batches, deliver in order, shut down.

NOTE: [DataLoader start method] Workers start with ``fork`` on Linux, as torch's do: cheap,
and the dataset, collate_fn and worker_init_fn are inherited, not pickled (a lambda or a
class defined in ``__main__`` works). That stays safe after ``dl.compile`` loaded native
kernels and GNU OpenMP with them: a process forked after that runs kernels on one thread,
never touching the thread pool fork() does not copy (NOTE: [kernels after fork]). Where
there is no fork, workers start with ``forkserver`` (or ``spawn``), which pickles those
objects to the workers; one that cannot travel is named in a clear error before any worker
starts. ``DataLoader(multiprocessing_context=...)`` overrides the choice.
"""
from __future__ import annotations

import io
import itertools
import multiprocessing
import os
import pickle
import queue
import sys
import time
import uuid
import weakref

from .shared_memory import leftovers_pattern, loads, remove_leftovers
from .worker import ExceptionWrapper, IterationEnd, WorkerSpec, worker_loop

# How often the main process, waiting for a batch without a timeout, checks its workers (seconds).
STATUS_CHECK_INTERVAL = 1.0
# How long shutdown waits for a worker to exit before terminating it (seconds).
SHUTDOWN_TIMEOUT = 5.0


def default_context():
    """The multiprocessing context workers start from (NOTE: [DataLoader start method])."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in methods:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


class _MainReferences(pickle.Pickler):
    """Pickles to nowhere, noting every class or function it would name from ``__main__``."""

    def __init__(self):
        super().__init__(io.BytesIO(), protocol=pickle.HIGHEST_PROTOCOL)
        self.found = []

    def reducer_override(self, obj):
        if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__"):
            if getattr(obj, "__module__", None) == "__main__":
                self.found.append(obj)
        return NotImplemented


def check_picklable(loader, method: str) -> None:
    """Raise a clear error when a worker started with ``method`` could not receive the loader's objects.

    Raises:
        pickle.PicklingError: the object (dataset, collate_fn or worker_init_fn) cannot be
            pickled, or names a class or function of a ``__main__`` that the worker cannot
            import (a script run with ``-c``, from stdin or interactively).
    """
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    for role in ("dataset", "collate_fn", "worker_init_fn"):
        obj = getattr(loader, role)
        pickler = _MainReferences()
        try:
            pickler.dump(obj)
        except Exception as exc:
            raise pickle.PicklingError(
                f"DataLoader {role}={obj!r} cannot be pickled, and workers started with the {method!r} start method "
                f"receive it pickled ({type(exc).__name__}: {exc}). Define it at module level (not a lambda or a "
                "local function), or use multiprocessing_context='fork' where the platform has it."
            ) from exc
        if pickler.found and not main_file:
            names = ", ".join(getattr(o, "__qualname__", repr(o)) for o in pickler.found)
            raise pickle.PicklingError(
                f"DataLoader {role}={obj!r} uses {names} from __main__, which a worker started with the {method!r} "
                "start method cannot import (the main program has no file: -c, stdin or interactive). Move it into "
                "a module, or use multiprocessing_context='fork' where the platform has it."
            )


def resolve_context(context):
    if context is None:
        return default_context()
    if isinstance(context, str):
        if context not in multiprocessing.get_all_start_methods():
            raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                             f"{multiprocessing.get_all_start_methods()!r}, but got multiprocessing_context={context!r}")
        return multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(f"multiprocessing_context option should be a valid context object or a string specifying "
                        f"the start method, but got multiprocessing_context={context}")
    return context


class WorkerProcesses:
    """The worker processes of one iterator, their queues, and how to stop them cleanly.

    Kept apart from the iterator so that a ``weakref.finalize`` can shut the workers down
    when the iterator is dropped or the interpreter exits, without keeping the iterator alive.
    """

    def __init__(self, loader, context, base_seed: int):
        self.owner_pid = os.getpid()
        self.file_prefix = f"dynamo_lite_{self.owner_pid}_{uuid.uuid4().hex[:12]}_"
        self.leftovers = leftovers_pattern(self.file_prefix)
        self.result_queue = context.Queue()
        self.done = context.Event()
        self.index_queues, self.processes = [], []
        self.stopped = False
        method = context.get_start_method()
        if method != "fork":
            check_picklable(loader, method)
        try:
            for worker_id in range(loader.num_workers):
                self._start(loader, context, base_seed, worker_id)
        except BaseException:  # e.g. spawn cannot pickle the dataset: stop the workers already started
            self.shutdown()
            raise

    def _start(self, loader, context, base_seed: int, worker_id: int) -> None:
        spec = WorkerSpec(worker_id, loader.num_workers, loader.dataset, loader._iterable, loader._auto_collation,
                          loader.collate_fn, loader.drop_last, base_seed, loader.worker_init_fn,
                          self.file_prefix)
        index_queue = context.Queue()
        index_queue.cancel_join_thread()  # never block exit on indices no worker will read
        self.index_queues.append(index_queue)
        process = context.Process(target=worker_loop, args=(spec, index_queue, self.result_queue, self.done),
                                  daemon=True)
        process.start()
        self.processes.append(process)

    def dead_pids(self) -> list:
        return [process.pid for process in self.processes if not process.is_alive()]

    def shutdown(self) -> None:
        """Stop and join every worker, drop undelivered batches and their shared-memory files."""
        if self.stopped or os.getpid() != self.owner_pid:
            return  # a forked worker holding a copy of another loader's pool must not touch it
        self.stopped = True
        self.done.set()
        for index_queue in self.index_queues:
            try:
                index_queue.put(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + SHUTDOWN_TIMEOUT
        for process in self.processes:
            while process.is_alive() and time.monotonic() < deadline:
                self.drain()  # a worker blocked on a full result pipe must be able to finish
                process.join(timeout=0.05)
            if process.is_alive():
                process.terminate()
            process.join()
        self.drain()
        for q in (*self.index_queues, self.result_queue):
            q.cancel_join_thread()
            q.close()
        remove_leftovers(self.leftovers)

    def drain(self) -> None:
        while True:
            try:
                self.result_queue.get_nowait()
            except (queue.Empty, OSError, ValueError):
                return


class MultiProcessIterator:
    """Iterates a DataLoader with ``num_workers`` processes; batches arrive in sampler order.

    Each worker has its own index queue; index batches go round-robin to the workers still
    active, at most ``prefetch_factor * num_workers`` ahead of the consumer. Results come
    back on one queue as (task id, pickled batch) and are reordered by task id. Task ids keep
    growing across the epochs of persistent workers, so a late result of an abandoned epoch
    is recognised and dropped.
    """

    def __init__(self, loader):
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._prefetch = loader.prefetch_factor if loader.prefetch_factor is not None else 2
        self._persistent = loader.persistent_workers
        self._in_order = loader.in_order
        self._base_seed = loader._draw_base_seed()
        self._pool = WorkerProcesses(loader, resolve_context(loader.multiprocessing_context), self._base_seed)
        # Shut the workers down when this iterator is dropped (mid-epoch, after an error) or at exit.
        self._finalizer = weakref.finalize(self, self._pool.shutdown)
        self._next_task = 0
        self._start_epoch(loader, first=True)

    def shutdown(self) -> None:
        self._finalizer()

    # -- epochs -------------------------------------------------------------------------------
    def _start_epoch(self, loader, first: bool) -> None:
        self._batches = loader._index_batches()
        self._epoch_start = self._rcvd = self._next_task
        self._tasks = {}  # task id -> [worker id] or [worker id, arrived data]
        self._active = [True] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        if not first:
            for index_queue in self._pool.index_queues:
                index_queue.put("reset")
        for _ in range(self._prefetch * self._num_workers):
            self._dispatch()

    def reset(self, loader) -> "MultiProcessIterator":
        """Start the next epoch on the same (persistent) workers."""
        self._start_epoch(loader, first=False)
        return self

    def _dispatch(self) -> None:
        """Send the next index batch to the next active worker (round-robin)."""
        for _ in range(self._num_workers):
            worker = next(self._cycle)
            if self._active[worker]:
                break
        else:
            return
        try:
            indices = next(self._batches)
        except StopIteration:
            return
        self._pool.index_queues[worker].put((self._next_task, indices))
        self._tasks[self._next_task] = [worker]
        self._next_task += 1

    # -- delivery -----------------------------------------------------------------------------
    def __iter__(self):
        return self

    def __next__(self):
        while True:
            ready = self._next_ready()
            if ready is not None:
                return self._deliver(ready)
            if not self._tasks:
                if not self._persistent:
                    self.shutdown()
                raise StopIteration
            task, payload = self._receive()
            if task < self._epoch_start:
                loads(payload)  # a late batch of an abandoned epoch: map and drop it (frees its file)
                continue
            data = loads(payload)
            if isinstance(data, IterationEnd):
                self._active[data.worker_id] = False
                self._tasks.pop(task, None)
                self._dispatch()
                continue
            self._tasks[task].append(data)

    def _next_ready(self):
        """The data of the next task to deliver if it has arrived, skipping tasks of exhausted workers."""
        while self._tasks:
            if not self._in_order:
                for task, entry in self._tasks.items():
                    if len(entry) == 2:
                        del self._tasks[task]
                        return entry
                return None
            entry = self._tasks.get(self._rcvd)
            if entry is None or (len(entry) == 1 and not self._active[entry[0]]):
                self._tasks.pop(self._rcvd, None)
                self._rcvd += 1
                continue
            if len(entry) == 2:
                del self._tasks[self._rcvd]
                self._rcvd += 1
                return entry
            return None
        return None

    def _deliver(self, entry):
        self._dispatch()
        data = entry[1]
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _receive(self):
        if self._timeout > 0:
            try:
                return self._pool.result_queue.get(timeout=self._timeout)
            except queue.Empty:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
        while True:
            try:
                return self._pool.result_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                dead = self._pool.dead_pids()
                if dead:
                    pids = ", ".join(str(pid) for pid in dead)
                    self.shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
