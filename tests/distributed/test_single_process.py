"""The package in one process: errors before init, the single-process group without MPI, DataParallel,
bucket assignment, and is_available without mpi4py (no MPI job is started here)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.distributed as dist
from dynamo_lite.distributed.buckets import assign_buckets
from dynamo_lite.nn.parallel import DataParallel, DistributedDataParallel
from tests.distributed.mpi_jobs import ROOT

NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


@pytest.mark.parametrize("call", [
    lambda: dist.all_reduce(dl.ones(2)), lambda: dist.broadcast(dl.ones(2), 0), lambda: dist.barrier(),
    lambda: dist.get_rank(), lambda: dist.get_world_size(), lambda: dist.new_group([0]),
    lambda: DistributedDataParallel(dl.nn.Linear(2, 2)),
    lambda: dl.utils.data.DistributedSampler(range(4)),
])
def test_before_init_raises_torchs_error(call):
    assert not dist.is_initialized()
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == NOT_INITIALIZED


def test_without_mpi_world_size_other_than_one_names_the_extra(monkeypatch, clean_launch_environment):
    monkeypatch.setitem(sys.modules, "dynamo_lite.distributed.mpi_group", None)
    with pytest.raises(RuntimeError, match=r"install the 'distributed' extra"):
        dist.init_process_group("mpi")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(RuntimeError, match=r"dynamo_lite\[distributed\]"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


def test_is_available_false_without_mpi4py():
    code = ("import sys; sys.modules['mpi4py'] = None; import dynamo_lite as dl; "
            "print(dl.distributed.is_available())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), check=True)
    assert out.stdout.strip() == "False"


def test_unknown_and_nccl_backends(clean_launch_environment):
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("carrier-pigeon")
    with pytest.raises(RuntimeError, match="nccl"):
        dist.init_process_group("nccl")


def test_single_process_collectives(single_process):
    assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
    assert dist.get_backend() == "single"
    t = dl.tensor([1.0, 2.0])
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.tolist() == [1.0, 2.0]
    out = [dl.zeros(2)]
    dist.all_gather(out, t)
    assert out[0].tolist() == [1.0, 2.0]
    flat = dl.zeros(2)
    assert dist.all_gather_into_tensor(flat, t, async_op=True).wait()
    assert flat.tolist() == [1.0, 2.0]
    received = dl.zeros(2)
    dist.scatter(received, [t], src=0)
    assert received.tolist() == [1.0, 2.0]
    objects = [None]
    dist.all_gather_object(objects, {"a": 1})
    assert objects == [{"a": 1}]
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("mpi", world_size=1)
    assert dist.new_group([0]).size() == 1


def test_single_process_ddp_trains_as_the_module(single_process):
    dl.manual_seed(0)
    model = dl.nn.Sequential(dl.nn.Linear(4, 8), dl.nn.ReLU(), dl.nn.Linear(8, 2))
    reference = dl.nn.Sequential(dl.nn.Linear(4, 8), dl.nn.ReLU(), dl.nn.Linear(8, 2))
    reference.load_state_dict(model.state_dict())
    ddp = DistributedDataParallel(model)
    x = dl.randn(5, 4)
    ddp(x).square().sum().backward()
    reference(x).square().sum().backward()
    for p, q in zip(ddp.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-6)
    assert next(iter(ddp.state_dict())) == "module.0.weight"


def test_ddp_needs_a_trainable_parameter(single_process):
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a gradient"):
        DistributedDataParallel(dl.nn.ReLU())


def test_data_parallel_runs_the_module_unchanged():
    model = dl.nn.Linear(3, 2)
    wrapped = DataParallel(model)
    x = dl.randn(4, 3)
    assert wrapped.module is model
    assert np.array_equal(wrapped(x).detach().numpy(), model(x).detach().numpy())
    assert list(wrapped.state_dict()) == ["module.weight", "module.bias"]


def test_bucket_assignment():
    params = [dl.zeros(100), dl.zeros(300), dl.zeros(50), dl.zeros(10, dtype=dl.float64), dl.zeros(400)]
    # reverse order; limits 1200 bytes then 2000: [4] is 1600 bytes >= 1200 closes the first bucket
    assert assign_buckets(params, [4, 3, 2, 1, 0], [1200, 2000]) == [[4], [3], [2, 1, 0]]
    assert assign_buckets(params, [0, 1, 2, 3, 4], [400]) == [[0], [1], [2, 4], [3]]


def test_reduce_op_names():
    assert {op.name for op in dist.ReduceOp} >= {"SUM", "PRODUCT", "MIN", "MAX", "AVG"}
    assert dist.reduce_op is dist.ReduceOp
