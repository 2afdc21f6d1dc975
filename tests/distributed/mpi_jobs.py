"""Run a job script on several ranks (mpiexec or the launcher) and read back what each rank checked.

A job script (``jobs/*.py``) runs its checks on every rank and writes ``rank<R>.json`` into
the folder given as its first argument: check name -> {"ok": bool, "detail": str}. One job
checks many things, so the suite starts few MPI jobs.
"""
from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
JOBS = pathlib.Path(__file__).resolve().parent / "jobs"


def mpiexec_path() -> str | None:
    beside = pathlib.Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def mpi_skip_reason() -> str | None:
    """Why multi-process jobs cannot run here (None when they can)."""
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed: install the 'distributed' extra (pip install 'dynamo_lite[distributed]')"
    if mpiexec_path() is None:
        return "no mpiexec found (the 'distributed' extra's mpich wheel provides one)"
    return None


def run_job(script: str, nprocs: int, out_dir, *args, launcher: bool = False, timeout: int = 240) -> list:
    """Each rank's results of ``jobs/<script>`` on ``nprocs`` ranks (started by mpiexec, or by the launcher)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.pop("RANK", None), env.pop("WORLD_SIZE", None), env.pop("LOCAL_RANK", None)
    target = [str(JOBS / script), str(out_dir), *map(str, args)]
    if launcher:
        command = [sys.executable, "-m", "dynamo_lite.distributed.run", "--nproc-per-node", str(nprocs), *target]
    else:
        command = [mpiexec_path(), "-n", str(nprocs), sys.executable, *target]
    done = subprocess.run(command, env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=timeout,
                          check=False)
    results = []
    for rank in range(nprocs):
        path = pathlib.Path(out_dir) / f"rank{rank}.json"
        assert path.exists(), f"rank {rank} wrote no results (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
        results.append(json.loads(path.read_text()))
    assert done.returncode == 0, f"the job exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return results


def failures(results: list, prefix: str = "") -> list:
    """'rank R: name: detail' for each failed check whose name starts with ``prefix``."""
    return [f"rank {rank}: {name}: {entry['detail']}" for rank, checks in enumerate(results)
            for name, entry in checks.items() if name.startswith(prefix) and not entry["ok"]]


def checked(results: list, prefix: str) -> int:
    """How many checks named ``prefix...`` ran on rank 0 (a test asserts some did)."""
    return sum(1 for name in results[0] if name.startswith(prefix))
