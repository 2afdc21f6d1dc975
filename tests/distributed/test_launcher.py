"""The launcher's command line (per MPI flavour) and the per-rank environment the bootstrap sets."""
from __future__ import annotations

import sys

import pytest

from dynamo_lite.distributed import run
from dynamo_lite.distributed.bootstrap import rank_environment


def command(argv, flavour="mpich"):
    options = run.build_parser().parse_args(argv)
    options.master_addr = options.master_addr or "127.0.0.1"
    return run.build_command(options, "/x/mpiexec", flavour)


def test_one_machine_mpich():
    cmd = command(["--nproc-per-node", "3", "train.py", "--lr", "0.1"])
    assert cmd[:3] == ["/x/mpiexec", "-n", "3"]
    assert cmd[-6:] == [sys.executable, "-u", "-m", "dynamo_lite.distributed.bootstrap", "train.py", "--lr", "0.1"][-6:]
    joined = " ".join(cmd)
    assert "-genv MASTER_ADDR 127.0.0.1" in joined and "-genv MASTER_PORT 29500" in joined


def test_several_machines_per_flavour(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("# machines\nnode-a:4\nnode-b:4\n")
    argv = ["--nnodes", "2", "--nproc_per_node", "4", "--hostfile", str(hosts), "--master-port", "1234", "-m",
            "pkg.train"]
    mpich = command(argv)
    assert mpich[:3] == ["/x/mpiexec", "-n", "8"] and "-f" in mpich and "-ppn" in mpich
    assert mpich[-2:] == ["-m", "pkg.train"]
    openmpi = " ".join(command(argv, "openmpi"))
    assert "--hostfile" in openmpi and "--map-by ppr:4:node" in openmpi and "-x MASTER_PORT=1234" in openmpi
    assert run.first_host(str(hosts)) == "node-a"


def test_refuses_what_mpi_does_differently(tmp_path):
    with pytest.raises(SystemExit, match="node-rank"):
        run.main(["--node-rank", "1", "x.py"])
    with pytest.raises(SystemExit, match="hostfile"):
        run.main(["--nnodes", "2", "x.py"])


@pytest.mark.parametrize("environ, expected", [
    ({"PMI_RANK": "3", "PMI_SIZE": "4", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"},
     {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1"}),
    ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
      "OMPI_COMM_WORLD_LOCAL_SIZE": "2"},
     {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "0"}),
    ({}, {}),
])
def test_bootstrap_environment(environ, expected):
    assert rank_environment(environ) == expected
