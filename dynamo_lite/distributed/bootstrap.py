"""The first code of each rank the launcher starts: torchrun's environment from MPI's, then the user's script.

``mpiexec`` tells each process its place through its own variables (MPICH: ``PMI_RANK``,
``PMI_SIZE``, ``MPI_LOCALRANKID``; Open MPI: ``OMPI_COMM_WORLD_*``); this module turns them
into the ones torchrun sets (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``,
``GROUP_RANK``) without initializing MPI, then runs the script (or ``-m`` module) as
``__main__`` with its arguments.
"""
from __future__ import annotations

import os
import runpy
import sys

#: torchrun's variable -> the launchers' variables that carry it, first found wins
MPI_ENVIRONMENT = {
    "RANK": ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK"),
    "WORLD_SIZE": ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"),
    "LOCAL_RANK": ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK"),
    "LOCAL_WORLD_SIZE": ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE"),
}


def rank_environment(environ) -> dict:
    """torchrun's variables for this process, from the MPI launcher's (those it did not give are left out)."""
    found = {}
    for name, sources in MPI_ENVIRONMENT.items():
        value = next((environ[s] for s in sources if s in environ), None)
        if value is not None:
            found[name] = value
    per_node = environ.get("LOCAL_WORLD_SIZE") or found.get("LOCAL_WORLD_SIZE")
    if "RANK" in found and per_node:
        found["GROUP_RANK"] = str(int(found["RANK"]) // int(per_node))
    return found


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    os.environ.update(rank_environment(os.environ))
    if argv and argv[0] == "-m":
        module, args = argv[1], argv[2:]
        sys.argv = [module, *args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script, args = argv[0], argv[1:]
        sys.argv = [script, *args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
