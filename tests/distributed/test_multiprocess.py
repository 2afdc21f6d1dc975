"""Real multi-process jobs: every collective against NumPy and DDP against single-process training,
on 2 and 3 ranks, started by mpiexec and by the launcher (skipped with the reason without MPI)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.distributed.mpi_jobs import ROOT, checked, failures, mpi_skip_reason, run_job

pytestmark = pytest.mark.skipif(mpi_skip_reason() is not None, reason=str(mpi_skip_reason()))

# (ranks, started by the launcher): each job runs once per module, and its tests read its results
COLLECTIVE_JOBS = {"2 ranks, mpiexec": (2, False), "3 ranks, launcher": (3, True)}
DDP_JOBS = {"2 ranks, launcher": (2, True), "3 ranks, mpiexec": (3, False)}


@pytest.fixture(scope="module", params=list(COLLECTIVE_JOBS))
def collectives(request, tmp_path_factory):
    nprocs, launcher = COLLECTIVE_JOBS[request.param]
    return run_job("collectives_job.py", nprocs, tmp_path_factory.mktemp("collectives"), launcher=launcher)


@pytest.fixture(scope="module", params=list(DDP_JOBS))
def ddp(request, tmp_path_factory):
    nprocs, launcher = DDP_JOBS[request.param]
    return run_job("ddp_job.py", nprocs, tmp_path_factory.mktemp("ddp"), launcher=launcher)


@pytest.mark.parametrize("prefix", [
    "environment", "init_twice", "all_reduce_", "async_work", "broadcast", "all_gather", "reduce_scatter", "reduce",
    "gather", "scatter", "barrier", "object_collectives", "new_group", "destroy_and_reinit",
])
def test_collective(collectives, prefix):
    assert checked(collectives, prefix) >= 1, f"the job ran no check named {prefix}*"
    assert not failures(collectives, prefix), "\n".join(failures(collectives, prefix))


def test_every_reduce_op_against_numpy(collectives):
    for op in ("SUM", "PRODUCT", "MIN", "MAX", "AVG"):
        assert f"all_reduce_{op}_float32" in collectives[0]
        assert f"reduce_scatter_{op}" in collectives[0]


@pytest.mark.parametrize("check", [
    "training_equals_single_process", "small_buckets_and_thread_progress", "initial_bucket_order", "comm_hook",
    "construction_broadcast", "buffers_broadcast_before_forward", "state_dict_and_module", "no_sync_accumulation",
    "find_unused_parameters", "unused_parameters_error", "mismatched_models_raise", "compiled_equals_eager", "compiled_split_at_buckets",
    "sampler_with_workers",
])
def test_ddp(ddp, check):
    assert check in ddp[0], f"the job did not run {check}"
    assert not failures(ddp, check), "\n".join(failures(ddp, check))


def test_gpt_example_through_the_launcher_module_path():
    """benchmarks/ddp_gpt.py on 2 ranks (``-m`` through the launcher): its DDP loss curve equals the
    single-process curve on the global batch."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "dynamo_lite.distributed.run", "--nproc-per-node", "2", "-m",
               "benchmarks.ddp_gpt", "--steps", "4"]
    done = subprocess.run(command, env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = re.findall(r"^\s+(\d+)\s+([\d.]+)\s+([\d.]+)$", done.stdout, re.MULTILINE)
    assert len(rows) == 4, done.stdout
    for _, ddp_loss, single_loss in rows:
        assert abs(float(ddp_loss) - float(single_loss)) < 1e-5, done.stdout
