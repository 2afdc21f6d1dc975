"""Every collective on every rank against NumPy: each rank can compute every rank's input (seeded by rank)."""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from job_checks import Checks

import dynamo_lite as dl
import dynamo_lite.distributed as dist

dist.init_process_group("mpi", init_method="env://")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
checks = Checks(sys.argv[1], RANK)


def data(rank: int, shape=(3, 4), dtype=np.float32):
    rng = np.random.default_rng(100 + rank)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(1, 4, shape).astype(dtype)


def every(shape=(3, 4), dtype=np.float32):
    return [data(r, shape, dtype) for r in range(SIZE)]


def close(actual, expected, tol=1e-5):
    actual = actual.numpy() if isinstance(actual, dl.Tensor) else actual
    assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


REDUCTIONS = {
    dist.ReduceOp.SUM: lambda xs: np.sum(xs, 0), dist.ReduceOp.PRODUCT: lambda xs: np.prod(xs, 0),
    dist.ReduceOp.MIN: lambda xs: np.min(xs, 0), dist.ReduceOp.MAX: lambda xs: np.max(xs, 0),
    dist.ReduceOp.AVG: lambda xs: np.mean(xs, 0),
}


def check_environment():
    assert os.environ["RANK"] == str(RANK) and os.environ["WORLD_SIZE"] == str(SIZE)
    assert "LOCAL_RANK" in os.environ
    assert dist.is_initialized() and dist.is_available() and dist.get_backend() == "mpi"
    assert dl.distributed is dist


def check_init_twice():
    try:
        dist.init_process_group("mpi")
    except ValueError as exc:
        assert "twice" in str(exc)
    else:
        raise AssertionError("a second init_process_group did not raise")


def make_all_reduce(op, dtype):
    def check():
        t = dl.from_numpy(data(RANK, dtype=dtype).copy())
        storage = t.untyped_storage()
        dist.all_reduce(t, op=op)
        close(t, REDUCTIONS[op](every(dtype=dtype)).astype(dtype))
        assert t.untyped_storage() is storage  # reduced in the tensor's own buffer
    return check


def check_all_reduce_non_contiguous():
    base = dl.from_numpy(data(RANK, (4, 3)).copy())
    view = base.t()  # 3 x 4, not contiguous
    dist.all_reduce(view)
    close(base, np.sum(every((4, 3)), 0))


def check_all_reduce_bool_and_int():
    flags = dl.tensor([RANK == 0, True, False])
    dist.all_reduce(flags, op=dist.ReduceOp.MAX)
    assert flags.tolist() == [True, True, False]
    ints = dl.tensor([RANK + 1], dtype=dl.int32)
    dist.all_reduce(ints, op=dist.ReduceOp.PRODUCT)
    assert ints.item() == int(np.prod(np.arange(1, SIZE + 1)))


def check_all_reduce_avg_int_raises():
    try:
        dist.all_reduce(dl.tensor([1, 2]), op=dist.ReduceOp.AVG)
    except TypeError as exc:
        assert "AVG" in str(exc)
    else:
        raise AssertionError("AVG of an integer tensor did not raise")


def check_async_work():
    t = dl.from_numpy(data(RANK).copy())
    work = dist.all_reduce(t, async_op=True)
    assert isinstance(work, dist.Work)
    assert work.wait() is True and work.is_completed()
    close(t, np.sum(every(), 0))
    assert work.result()[0] is t
    t2 = dl.from_numpy(data(RANK).copy())
    future = dist.all_reduce(t2, async_op=True).get_future().then(lambda fut: fut.value()[0] * 2)
    close(future.wait(), 2 * np.sum(every(), 0))


def check_broadcast():
    src = SIZE - 1
    t = dl.from_numpy(data(RANK).copy())
    assert dist.broadcast(t, src=src) is None
    close(t, data(src))
    base = dl.from_numpy(data(RANK, (4, 3)).copy())
    dist.broadcast(base.t(), src=0)
    close(base, data(0, (4, 3)))


def check_all_gather():
    out = [dl.zeros(3, 4) for _ in range(SIZE)]
    dist.all_gather(out, dl.from_numpy(data(RANK).copy()))
    for r in range(SIZE):
        close(out[r], data(r))


def check_all_gather_into_tensor():
    flat = dl.zeros(SIZE * 3, 4)
    dist.all_gather_into_tensor(flat, dl.from_numpy(data(RANK).copy()))
    close(flat, np.concatenate(every(), 0))
    stacked = dl.zeros(SIZE, 3, 4)
    dist.all_gather_into_tensor(stacked, dl.from_numpy(data(RANK).copy()))
    close(stacked, np.stack(every()))


def check_all_gather_errors():
    try:
        dist.all_gather([dl.zeros(3, 4)] * (SIZE + 1), dl.zeros(3, 4))
    except ValueError:
        pass
    else:
        raise AssertionError("a tensor_list of the wrong length did not raise")
    try:
        dist.all_gather_into_tensor(dl.zeros(SIZE * 3 + 1), dl.zeros(3))
    except ValueError as exc:
        assert "world_size" in str(exc)
    else:
        raise AssertionError("a wrongly sized output did not raise")


def make_reduce_scatter(op):
    def check():
        out = dl.zeros(2, 4)
        dist.reduce_scatter_tensor(out, dl.from_numpy(data(RANK, (2 * SIZE, 4)).copy()), op=op)
        close(out, REDUCTIONS[op](every((2 * SIZE, 4)))[2 * RANK:2 * RANK + 2])
    return check


def check_reduce_scatter_list():
    out = dl.zeros(5)
    inputs = [dl.from_numpy(data(RANK, (SIZE, 5))[r].copy()) for r in range(SIZE)]
    dist.reduce_scatter(out, inputs)
    close(out, np.sum(every((SIZE, 5)), 0)[RANK])


def check_reduce():
    dst = 1 % SIZE
    mine = data(RANK)
    t = dl.from_numpy(mine.copy())
    dist.reduce(t, dst=dst, op=dist.ReduceOp.MAX)
    close(t, np.max(every(), 0) if RANK == dst else mine)


def check_gather():
    gathered = [dl.zeros(3, 4) for _ in range(SIZE)] if RANK == 0 else None
    dist.gather(dl.from_numpy(data(RANK).copy()), gathered, dst=0)
    if RANK == 0:
        for r in range(SIZE):
            close(gathered[r], data(r))


def check_scatter():
    pieces = [dl.from_numpy(data(0, (SIZE, 3, 4))[r].copy()) for r in range(SIZE)] if RANK == 0 else None
    out = dl.zeros(3, 4)
    dist.scatter(out, pieces, src=0)
    close(out, data(0, (SIZE, 3, 4))[RANK])


def check_scatter_list_on_non_source_raises():
    if RANK == 0:
        dist.scatter(dl.zeros(1), [dl.zeros(1)] * SIZE, src=0)
        return
    try:
        dist.scatter(dl.zeros(1), [dl.zeros(1)] * SIZE, src=0)
    except ValueError as exc:
        assert "must NOT be specified" in str(exc)
        dist.scatter(dl.zeros(1), None, src=0)  # the collective the source rank runs
    else:
        raise AssertionError("scatter_list on a non-source rank did not raise")


def check_barrier():
    assert dist.barrier() is None
    assert dist.barrier(async_op=True).wait()


def check_object_collectives():
    objects = [{"rank": RANK}, "x" * RANK, (RANK, 1.5)]
    dist.broadcast_object_list(objects, src=SIZE - 1)
    assert objects == [{"rank": SIZE - 1}, "x" * (SIZE - 1), (SIZE - 1, 1.5)]
    gathered = [None] * SIZE
    dist.all_gather_object(gathered, {"r": RANK, "v": [RANK] * RANK})
    assert gathered == [{"r": r, "v": [r] * r} for r in range(SIZE)]
    out = [None] * SIZE if RANK == 0 else None
    dist.gather_object(RANK * 10, out, dst=0)
    if RANK == 0:
        assert out == [r * 10 for r in range(SIZE)]
    received = [None]
    dist.scatter_object_list(received, [f"to {r}" for r in range(SIZE)] if RANK == 0 else None, src=0)
    assert received == [f"to {RANK}"]


def check_new_group():
    members = [0, SIZE - 1]
    group = dist.new_group(members)
    if RANK in members:
        assert dist.get_world_size(group) == 2 and dist.get_rank(group) == members.index(RANK)
        assert dist.get_process_group_ranks(group) == members
        t = dl.from_numpy(data(RANK).copy())
        dist.all_reduce(t, group=group)
        close(t, data(0) + data(SIZE - 1))
        b = dl.from_numpy(data(RANK).copy())
        dist.broadcast(b, src=SIZE - 1, group=group)  # src is a global rank
        close(b, data(SIZE - 1))
    else:
        assert group is dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(group) == -1 and dist.get_world_size(group) == -1
        t = dl.ones(2)
        assert dist.all_reduce(t, group=group) is None and t.tolist() == [1.0, 1.0]
    dist.destroy_process_group(group)


def check_destroy_and_reinit():
    dist.destroy_process_group()
    assert not dist.is_initialized()
    try:
        dist.all_reduce(dl.ones(1))
    except ValueError as exc:
        assert str(exc) == ("Default process group has not been initialized, please make sure to call "
                            "init_process_group.")
    else:
        raise AssertionError("a collective after destroy_process_group did not raise")
    dist.init_process_group("mpi")
    t = dl.ones(1)
    dist.all_reduce(t)
    assert t.item() == SIZE


checks.run("environment", check_environment)
checks.run("init_twice", check_init_twice)
for op in REDUCTIONS:
    checks.run(f"all_reduce_{op.name}_float32", make_all_reduce(op, np.float32))
    checks.run(f"all_reduce_{op.name}_float64", make_all_reduce(op, np.float64))
    if op is not dist.ReduceOp.AVG:
        checks.run(f"all_reduce_{op.name}_int64", make_all_reduce(op, np.int64))
        checks.run(f"reduce_scatter_{op.name}", make_reduce_scatter(op))
checks.run("reduce_scatter_AVG", make_reduce_scatter(dist.ReduceOp.AVG))
for name, fn in [("all_reduce_non_contiguous", check_all_reduce_non_contiguous),
                 ("all_reduce_bool_and_int", check_all_reduce_bool_and_int),
                 ("all_reduce_avg_int_raises", check_all_reduce_avg_int_raises),
                 ("async_work", check_async_work), ("broadcast", check_broadcast), ("all_gather", check_all_gather),
                 ("all_gather_into_tensor", check_all_gather_into_tensor), ("all_gather_errors", check_all_gather_errors),
                 ("reduce_scatter_list", check_reduce_scatter_list), ("reduce", check_reduce), ("gather", check_gather),
                 ("scatter", check_scatter), ("scatter_list_on_non_source", check_scatter_list_on_non_source_raises),
                 ("barrier", check_barrier), ("object_collectives", check_object_collectives),
                 ("new_group", check_new_group), ("destroy_and_reinit", check_destroy_and_reinit)]:
    checks.run(name, fn)
checks.save()
dist.destroy_process_group()
