"""The launcher: ``python -m dynamo_lite.distributed.run --nproc-per-node N script.py args`` starts N ranks via mpiexec.

It takes torchrun's flags where they make sense and runs one ``mpiexec`` command that starts
every rank, each through ``dynamo_lite.distributed.bootstrap`` (which sets ``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK`` from MPI's variables) with
``MASTER_ADDR``/``MASTER_PORT`` in the environment. Several machines: MPI starts the remote
ranks itself (over ssh) from a host file, so the launcher runs on one machine only, with
``--nnodes M --hostfile FILE`` (docs/distributed.md). The exit status is mpiexec's.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

#: how each MPI launcher spells what the launcher needs
MPIEXEC_FLAVOURS = {
    "mpich": {
        "hostfile": lambda path: ["-f", path],
        "per_node": lambda n: ["-ppn", str(n)],
        "env": lambda name, value: ["-genv", name, value],
        "root": [],
    },
    "openmpi": {
        "hostfile": lambda path: ["--hostfile", path],
        "per_node": lambda n: ["--map-by", f"ppr:{n}:node"],
        "env": lambda name, value: ["-x", f"{name}={value}"],
        "root": ["--allow-run-as-root"],
    },
}


def find_mpiexec(explicit=None) -> str:
    """The mpiexec to use: ``explicit``, the one beside this Python (the mpich wheel's), or on PATH."""
    if explicit:
        return explicit
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(beside):
        return beside
    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit("mpiexec was not found: install the 'distributed' extra (pip install "
                         "'dynamo_lite[distributed]') or pass --mpiexec PATH")
    return found


def flavour_of(mpiexec: str) -> str:
    """'openmpi' or 'mpich' (what ``mpiexec --version`` says)."""
    try:
        text = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        text = ""
    return "openmpi" if "Open MPI" in text or "OpenRTE" in text else "mpich"


def first_host(hostfile: str) -> str:
    """The first host named in an MPI host file (``host``, ``host:slots`` or ``host slots=N`` lines)."""
    with open(hostfile) as handle:
        for line in handle:
            line = line.split("#", 1)[0].strip()
            if line:
                return line.split()[0].split(":")[0]
    raise SystemExit(f"the host file {hostfile} names no host")


def parse_nproc(value: str) -> int:
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    return int(value)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dynamo_lite.distributed.run",
        description="Start a data-parallel job: N processes per node through mpiexec, with torchrun's variables.")
    parser.add_argument("--nnodes", type=int, default=1, help="machines (more than 1 needs --hostfile)")
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=parse_nproc, default=1, dest="nproc_per_node",
                        help="processes per machine (an int, or 'auto'/'cpu': the CPU count)")
    parser.add_argument("--node-rank", "--node_rank", type=int, default=0, dest="node_rank",
                        help="accepted for torchrun's sake: MPI starts every node from this one, so only 0")
    parser.add_argument("--master-addr", "--master_addr", default=None, dest="master_addr",
                        help="MASTER_ADDR (default: 127.0.0.1, or the host file's first host)")
    parser.add_argument("--master-port", "--master_port", type=int, default=29500, dest="master_port")
    parser.add_argument("--standalone", action="store_true", help="one machine (the default)")
    parser.add_argument("--hostfile", default=None, help="MPI host file naming the machines (several nodes)")
    parser.add_argument("--mpiexec", default=None, help="the mpiexec to run (default: beside python, or PATH)")
    parser.add_argument("--no-python", "--no_python", action="store_true", dest="no_python",
                        help="run the program directly instead of through python")
    parser.add_argument("-m", "--module", action="store_true", help="the program is a module name (python -m)")
    parser.add_argument("program", help="the training script")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return parser


def build_command(options, mpiexec: str, flavour: str) -> list:
    """The mpiexec command line that starts every rank."""
    spelling = MPIEXEC_FLAVOURS[flavour]
    world_size = options.nnodes * options.nproc_per_node
    command = [mpiexec, "-n", str(world_size)]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command += spelling["root"]
    if options.hostfile:
        command += spelling["hostfile"](options.hostfile) + spelling["per_node"](options.nproc_per_node)
    environment = {"MASTER_ADDR": options.master_addr, "MASTER_PORT": str(options.master_port),
                   "LOCAL_WORLD_SIZE": str(options.nproc_per_node)}
    for name, value in environment.items():
        command += spelling["env"](name, value)
    if options.no_python:
        return command + [options.program, *options.args]
    target = ["-m", options.program] if options.module else [options.program]
    return command + [sys.executable, "-u", "-m", "dynamo_lite.distributed.bootstrap", *target, *options.args]


def main(argv=None) -> int:
    options = build_parser().parse_args(argv)
    if options.node_rank != 0:
        raise SystemExit("--node-rank: MPI starts the ranks of every node from one machine; run the launcher "
                         "once, on the first machine, with --nnodes and --hostfile (docs/distributed.md)")
    if options.nnodes > 1 and not options.hostfile:
        raise SystemExit("--nnodes > 1 needs --hostfile: an MPI host file naming the machines")
    if options.nproc_per_node < 1 or options.nnodes < 1:
        raise SystemExit("--nnodes and --nproc-per-node must be positive")
    if options.master_addr is None:
        options.master_addr = first_host(options.hostfile) if options.hostfile else "127.0.0.1"
    mpiexec = find_mpiexec(options.mpiexec)
    command = build_command(options, mpiexec, flavour_of(mpiexec))
    environment = dict(os.environ, MASTER_ADDR=options.master_addr, MASTER_PORT=str(options.master_port))
    return subprocess.call(command, env=environment)


if __name__ == "__main__":
    sys.exit(main())
