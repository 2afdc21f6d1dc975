"""The ``single_process`` fixture: a default group made without MPI, and the environment left as it was."""
from __future__ import annotations

import sys

import pytest

import dynamo_lite.distributed as dist

LAUNCH_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK")


@pytest.fixture
def clean_launch_environment(monkeypatch):
    """RANK/WORLD_SIZE/LOCAL_RANK unset during the test and whatever init_process_group sets removed after."""
    for name in LAUNCH_VARIABLES:
        monkeypatch.setenv(name, "")  # records the original state, restored after the test
        monkeypatch.delenv(name)


@pytest.fixture
def single_process(monkeypatch, clean_launch_environment):
    """The default group made without MPI (importing the MPI group fails), destroyed afterwards."""
    monkeypatch.setitem(sys.modules, "dynamo_lite.distributed.mpi_group", None)
    dist.init_process_group("mpi", world_size=1, rank=0)
    yield
    dist.destroy_process_group()
