"""DataLoader worker processes: same batches as in-process loading, shared memory, worker info and
seeds, worker_init_fn, IterableDataset sharding, errors with the worker's traceback, timeout,
persistent workers, prefetching and shutdown without leftover processes or shared-memory files."""
from __future__ import annotations

import glob
import mmap
import multiprocessing
import os
import pickle
import time

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.utils import data
from dynamo_lite.utils.data import shared_memory, worker_pool

from .worker_datasets import Failing, NonLeaf, Rows, Shards, WhoAmI, mark_initialised

# fork is fast and every dataset here is safe to fork; one test covers spawn, one the default choice.
FAST = "fork" if "fork" in multiprocessing.get_all_start_methods() else None


def seeded(seed: int):
    return dl.Generator().manual_seed(seed)


def as_lists(batches):
    return [[part.tolist() for part in batch] for batch in batches]


def files_of(iterator):
    return glob.glob(os.path.join(shared_memory.SHARED_DIR, iterator._pool.file_prefix + "*"))


def assert_stopped(iterator):
    for process in iterator._pool.processes:
        assert not process.is_alive() and process.exitcode is not None
    assert not set(iterator._pool.processes) & set(multiprocessing.active_children())
    assert not files_of(iterator)


@pytest.mark.parametrize("shuffle", [False, True])
def test_workers_deliver_the_in_process_batches_in_order(shuffle):
    make = lambda workers: data.DataLoader(Rows(43, draw=False), batch_size=5, shuffle=shuffle, num_workers=workers,
                                           generator=seeded(7), multiprocessing_context=FAST if workers else None)
    expected = as_lists(make(0))
    assert as_lists(make(2)) == expected and len(expected) == 9
    assert as_lists(make(3)) == expected


def test_batches_arrive_in_shared_memory_without_a_copy():
    loader = data.DataLoader(Rows(12), batch_size=4, num_workers=2, multiprocessing_context=FAST)
    iterator = iter(loader)
    rows, indices = next(iterator)
    for tensor in (rows, indices):
        buffer = tensor.untyped_storage().data.base  # a memoryview of the worker's file, mapped here
        assert isinstance(buffer.obj, mmap.mmap)
    assert rows.tolist() == dl.arange(36, dtype=dl.float32).reshape(12, 3)[:4].tolist()
    rows.add_(1)  # writable, like any tensor
    rest = list(iterator)
    assert [i.tolist() for _, i in rest] == [[4, 5, 6, 7], [8, 9, 10, 11]]
    assert_stopped(iterator)


def test_no_auto_batching_sends_each_row_as_a_compact_copy_not_the_whole_dataset():
    ds = Rows(300)
    loader = data.DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=FAST)
    rows = [row for row, _ in loader]
    assert len(rows) == 300 and rows[299].tolist() == ds.values[299].tolist()
    assert rows[0].untyped_storage().nbytes() == 3 * 4


def test_worker_info_seeds_and_worker_init_fn():
    assert data.get_worker_info() is None
    generator = seeded(11)
    base_seed = int(dl.empty((), dtype=dl.int64).random_(generator=seeded(11)).item())
    loader = data.DataLoader(WhoAmI(), batch_size=2, num_workers=3, generator=generator, worker_init_fn=mark_initialised,
                             multiprocessing_context=FAST)
    seen = {}
    for batch in loader:
        for index, pid, worker_id, num_workers, seed, init in zip(*batch):
            seen[int(index)] = (int(pid), int(worker_id), int(num_workers), int(seed), init)
    assert sorted(seen) == list(range(12))
    for index, (pid, worker_id, num_workers, seed, init) in seen.items():
        assert worker_id == (index // 2) % 3  # batches go round-robin
        assert (num_workers, seed, init) == (3, base_seed + worker_id, f"init {worker_id}")
        assert pid != os.getpid()
    assert len({pid for pid, *_ in seen.values()}) == 3


def test_random_draws_in_workers_are_reproducible_and_differ_between_workers():
    make = lambda: data.DataLoader(Rows(8, draw=True), batch_size=2, num_workers=2, generator=seeded(3),
                                   multiprocessing_context=FAST)
    first, second = as_lists(make()), as_lists(make())
    assert first == second
    noise = [np.array(rows) - np.arange(len(rows) * 3).reshape(-1, 3) for rows, _ in first]
    assert not np.allclose(noise[0] - 2 * 3 * 0, noise[1])  # worker 0 and worker 1 drew differently
    other = as_lists(data.DataLoader(Rows(8, draw=True), batch_size=2, num_workers=2, generator=seeded(4),
                                     multiprocessing_context=FAST))
    assert other != first


def test_iterable_dataset_sharded_with_get_worker_info():
    loader = data.DataLoader(Shards(10), batch_size=2, num_workers=2, multiprocessing_context=FAST)
    # worker 0 streams 0..4, worker 1 streams 5..9; batches alternate between the workers
    assert [b.tolist() for b in loader] == [[0, 1], [5, 6], [2, 3], [7, 8], [4], [9]]
    loader = data.DataLoader(Shards(7), batch_size=None, num_workers=3, multiprocessing_context=FAST)
    assert sorted(int(b) for b in loader) == list(range(7))
    uneven = data.DataLoader(Shards(9), batch_size=4, num_workers=2, multiprocessing_context=FAST)
    assert [b.tolist() for b in uneven] == [[0, 1, 2, 3], [5, 6, 7, 8], [4]]


@pytest.mark.parametrize("error, kind", [(ValueError("bad sample 5"), ValueError), (KeyError("missing"), KeyError),
                                         (ZeroDivisionError("x"), ZeroDivisionError)])
def test_worker_exception_is_raised_in_the_main_process_with_the_worker_traceback(error, kind):
    loader = data.DataLoader(Failing(error, bad=5), batch_size=2, num_workers=2, multiprocessing_context=FAST)
    iterator = iter(loader)
    assert next(iterator).tolist() == [0, 1] and next(iterator).tolist() == [2, 3]
    with pytest.raises(kind) as info:
        next(iterator)
    message = str(info.value)
    assert "Caught " + kind.__name__ + " in DataLoader worker process 0." in message
    assert "Original Traceback (most recent call last):" in message
    assert "worker_datasets.py" in message and "raise self.error" in message
    assert next(iterator).tolist() == [6, 7]  # the iterator goes on, as torch's does
    del iterator


def test_error_then_dropped_iterator_leaves_nothing_behind():
    iterator = iter(data.DataLoader(Failing(ValueError("x"), bad=0), batch_size=2, num_workers=2,
                                    multiprocessing_context=FAST))
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process 0"):
        next(iterator)
    iterator.shutdown()  # what dropping it does (__del__)
    assert_stopped(iterator)


def test_non_leaf_tensor_from_a_worker_raises_torch_message():
    loader = data.DataLoader(NonLeaf(), batch_size=None, num_workers=1, multiprocessing_context=FAST)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        next(iter(loader))


def test_timeout_raises_torch_runtime_error():
    loader = data.DataLoader(Failing(sleep=1.0), batch_size=1, num_workers=1, timeout=0.2, multiprocessing_context=FAST)
    iterator = iter(loader)
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.2 seconds$"):
        next(iterator)
    iterator.shutdown()
    assert_stopped(iterator)


def test_a_worker_that_dies_is_reported():
    iterator = iter(data.DataLoader(Failing(die=0), batch_size=1, num_workers=2, multiprocessing_context=FAST))
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(iterator)
    assert_stopped(iterator)


def test_dropping_the_iterator_mid_epoch_stops_the_workers_and_removes_the_files():
    loader = data.DataLoader(Rows(400), batch_size=2, num_workers=2, prefetch_factor=4, multiprocessing_context=FAST)
    iterator = iter(loader)
    next(iterator)
    assert len(iterator._tasks) <= 4 * 2  # never more than prefetch_factor * num_workers ahead
    processes, pattern = list(iterator._pool.processes), iterator._pool.leftovers
    del iterator  # batches still in flight: their files must go too
    for process in processes:
        assert not process.is_alive()
    assert not glob.glob(pattern)


def test_persistent_workers_are_reused_and_restart_iterable_streams():
    loader = data.DataLoader(WhoAmI(), batch_size=3, num_workers=2, persistent_workers=True,
                             multiprocessing_context=FAST)
    first = [set(batch[1].tolist()) for batch in loader]
    half = iter(loader)
    next(half)  # an abandoned epoch: its late batches must not leak into the next one
    second = list(loader)
    assert set().union(*first) == {int(pid) for batch in second for pid in batch[1]}
    assert [b[0].tolist() for b in second] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    stream = data.DataLoader(Shards(6), batch_size=2, num_workers=2, persistent_workers=True,
                             multiprocessing_context=FAST)
    assert [b.tolist() for b in stream] == [b.tolist() for b in stream] == [[0, 1], [3, 4], [2], [5]]
    iterator = loader._iterator
    del loader
    iterator.shutdown()
    assert_stopped(iterator)


@pytest.mark.parametrize("method", [m for m in ("spawn", "forkserver") if m in multiprocessing.get_all_start_methods()])
def test_spawned_workers_give_the_same_batches(method):
    make = lambda workers, context: data.DataLoader(Rows(10), batch_size=4, shuffle=True, num_workers=workers,
                                                    generator=seeded(5), multiprocessing_context=context)
    assert as_lists(make(2, method)) == as_lists(make(0, None))


def test_default_start_method_is_fork_where_there_is_fork():
    # Loading native kernels (and OpenMP) no longer changes it: forked children run kernels
    # on one thread (tests/utils/test_dataloader_hostile.py covers the compiled case).
    if not FAST:
        pytest.skip("no fork on this platform")
    assert worker_pool.default_context().get_start_method() == "fork"


def test_bad_options_raise_torch_errors():
    ds = Rows(4)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        data.DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        data.DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        data.DataLoader(ds, num_workers=1, timeout=-1)
    with pytest.raises(TypeError, match="multiprocessing_context option should be a valid context object"):
        data.DataLoader(ds, num_workers=1, multiprocessing_context=3)


def test_a_dataset_spawn_cannot_pickle_fails_at_iter_without_leaving_workers():
    class Local(data.Dataset):  # not importable by name: spawn cannot send it
        def __len__(self):
            return 4

        def __getitem__(self, index):
            return index

    before = set(multiprocessing.active_children())
    with pytest.raises((AttributeError, TypeError, pickle.PicklingError)):
        iter(data.DataLoader(Local(), num_workers=2, multiprocessing_context="spawn"))
    assert set(multiprocessing.active_children()) <= before


def test_out_of_order_delivery_still_delivers_every_batch_once():
    loader = data.DataLoader(Failing(sleep=0.01), batch_size=2, num_workers=3, in_order=False,
                             multiprocessing_context=FAST)
    assert sorted(tuple(b.tolist()) for b in loader) == [(i, i + 1) for i in range(0, 16, 2)]


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no forkserver")
def test_idle_forkserver_workers_keep_serving():
    # Their OS parent is the fork server, not this process: the "is my loader's process alive"
    # check they make when idle must look at this process.
    from dynamo_lite.utils.data.worker import PARENT_CHECK_INTERVAL

    iterator = iter(data.DataLoader(Rows(40), batch_size=2, num_workers=2, multiprocessing_context="forkserver"))
    time.sleep(2.5 * PARENT_CHECK_INTERVAL)  # the prefetched batches are done; the workers sit idle
    assert [i.tolist() for _, i in iterator] == [[k, k + 1] for k in range(0, 40, 2)]
