"""The default process group and the groups made from it: init, destroy, ranks and sizes.

NOTE: [default process group] torch.distributed's API names groups implicitly: ``group=None``
is the default (world) group made by ``init_process_group``. That group, and every group
``new_group`` made from it, live in the one ``WORLD`` object below, which
``destroy_process_group`` empties. Nothing else in the package keeps distributed state.
"""
from __future__ import annotations

import importlib.util
import logging
import os

from .process_group import ProcessGroup, SingleProcessGroup

LOG = logging.getLogger("dynamo_lite.distributed")

NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."
NO_MPI = (
    "the 'mpi' backend needs mpi4py and an MPI runtime, which are not installed: install the 'distributed' "
    "extra (pip install 'dynamo_lite[distributed]', i.e. mpi4py and the mpich wheel), or pass world_size=1 "
    "to run as one process without MPI"
)
NO_NCCL = (
    "the 'nccl' backend is not available in dynamo_lite: collectives run over MPI (backend='mpi', CPU tensors); "
    "docs/distributed.md describes the planned NCCL group"
)


class GroupMember:
    """torch's group markers: ``WORLD`` (the default group) and ``NON_GROUP_MEMBER`` (what
    ``new_group`` returns on a process outside the new group)."""

    WORLD = "<default process group>"
    NON_GROUP_MEMBER = "<non-group member>"


class _World:
    """The default group and the groups made from it (NOTE: [default process group])."""

    def __init__(self):
        self.default: ProcessGroup | None = None
        self.groups: list = []


WORLD = _World()


def is_available() -> bool:
    """Whether the distributed package can run multi-process jobs (mpi4py is installed).

    Example:
        >>> dl.distributed.is_available()
        True
    """
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    return is_available()


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_initialized() -> bool:
    """Whether ``init_process_group`` made the default group."""
    return WORLD.default is not None


def _env_int(name: str, given: int) -> int:
    if given is not None and given != -1:
        return int(given)
    value = os.environ.get(name)
    return -1 if value in (None, "") else int(value)


def _backend_name(backend) -> str:
    """'mpi' for None, 'mpi', 'gloo' and 'cpu:gloo,cuda:nccl'-style strings."""
    name = "mpi" if backend is None else str(backend).lower()
    if ":" in name:
        parts = dict(part.split(":", 1) for part in name.split(","))
        name = parts.get("cpu", next(iter(parts.values())))
    return name


def _mpi_world(rank: int, world_size: int) -> ProcessGroup:
    try:
        from . import mpi_group
    except (ImportError, RuntimeError, OSError) as exc:  # no mpi4py, or no MPI library for it to load
        if world_size == 1 and rank in (-1, 0):
            LOG.info("mpi4py is not installed: running as a single-process group")
            return SingleProcessGroup(0)
        raise RuntimeError(f"{NO_MPI} ({exc})") from exc
    mpi_rank, mpi_size = mpi_group.world_rank_and_size()
    if world_size not in (-1, mpi_size):
        raise ValueError(
            f"world_size={world_size} was asked for but MPI started {mpi_size} process(es): launch the job with "
            f"'mpiexec -n {world_size}' or 'python -m dynamo_lite.distributed.run --nproc-per-node {world_size}'"
        )
    if rank not in (-1, mpi_rank):
        raise ValueError(f"rank={rank} was asked for but MPI gave this process rank {mpi_rank}")
    os.environ.setdefault("LOCAL_RANK", str(mpi_group.local_rank()))
    return mpi_group.MPIProcessGroup()


def _nccl_world(rank: int, world_size: int) -> ProcessGroup:
    raise RuntimeError(NO_NCCL)


#: backend name -> maker of the world group; 'gloo' runs on the MPI group (CPU tensors) so ported scripts run
BACKENDS = {"mpi": _mpi_world, "gloo": _mpi_world, "nccl": _nccl_world}


def init_process_group(backend=None, init_method=None, timeout=None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None, device_id=None) -> None:
    """Make the default process group: every process of the job calls it once.

    Ranks and the world size come from MPI (``mpiexec`` or the ``dynamo_lite.distributed.run``
    launcher started the processes); ``rank``/``world_size`` and the ``env://`` variables
    ``RANK``/``WORLD_SIZE`` are checked against them. MPI does its own rendezvous, so other
    ``init_method`` addresses are accepted and not used. Afterwards ``RANK``, ``WORLD_SIZE``
    and ``LOCAL_RANK`` are set in the environment when the launcher did not set them.

    Args:
        backend: ``"mpi"`` (default); ``"gloo"`` runs on the same MPI group.
        world_size, rank: expected values (-1: take MPI's).

    Raises:
        ValueError: called twice, or a rank/world size MPI did not give.
        RuntimeError: mpi4py is missing (and world_size is not 1), or an unavailable backend.

    Example:
        >>> import dynamo_lite.distributed as dist
        >>> dist.init_process_group("mpi")
        >>> dist.get_rank(), dist.get_world_size()
    """
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    if name not in BACKENDS:
        raise ValueError(f"Invalid backend: '{backend}' (available: {', '.join(BACKENDS)})")
    if init_method not in (None, "env://"):
        LOG.info("init_method %r is not used: MPI does its own rendezvous", init_method)
    rank, world_size = _env_int("RANK", rank), _env_int("WORLD_SIZE", world_size)
    group = BACKENDS[name](rank, world_size)
    WORLD.default, WORLD.groups = group, [group]
    os.environ.setdefault("RANK", str(group.rank()))
    os.environ.setdefault("WORLD_SIZE", str(group.size()))
    os.environ.setdefault("LOCAL_RANK", "0")


def destroy_process_group(group=None) -> None:
    """Release ``group`` (default: every group, and the default group: the package is uninitialized).

    Example:
        >>> dl.distributed.destroy_process_group()
    """
    if group is None or group is GroupMember.WORLD or group is WORLD.default:
        for each in WORLD.groups:
            each.destroy()
        WORLD.default, WORLD.groups = None, []
    elif group is not GroupMember.NON_GROUP_MEMBER and group in WORLD.groups:
        group.destroy()
        WORLD.groups.remove(group)


def default_group() -> ProcessGroup:
    """The default group; torch's ValueError when ``init_process_group`` was not called."""
    if WORLD.default is None:
        raise ValueError(NOT_INITIALIZED)
    return WORLD.default


def resolve(group) -> ProcessGroup | None:
    """The ProcessGroup ``group`` names (None/WORLD: the default one); None for a non-member."""
    if group is None or group is GroupMember.WORLD:
        return default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        default_group()
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (default: the world); -1 outside the group."""
    resolved = resolve(group)
    return -1 if resolved is None else resolved.rank()


def get_world_size(group=None) -> int:
    """How many processes ``group`` has (default: the world); -1 outside the group."""
    resolved = resolve(group)
    return -1 if resolved is None else resolved.size()


def get_backend(group=None) -> str:
    return resolve(group).backend


def get_process_group_ranks(group) -> list:
    """The global ranks of ``group``'s members, in group-rank order."""
    return list(resolve(group).ranks)


def get_global_rank(group, group_rank: int) -> int:
    ranks = resolve(group).ranks
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    ranks = resolve(group).ranks
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def get_node_local_rank(fallback_rank=None) -> int:
    """``LOCAL_RANK`` from the environment (set by the launcher or ``init_process_group``)."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None):
    """A group of the given global ranks (default: all). Every process of the default group calls it;
    a process outside ``ranks`` gets ``GroupMember.NON_GROUP_MEMBER``.

    Example:
        >>> evens = dl.distributed.new_group([0, 2])
    """
    world = default_group()
    ranks = sorted(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"The new group's rank should be within the world_size set by init_process_group, "
                             f"got rank {r}")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"ranks must be distinct, got {ranks}")
    group = world.split(ranks)
    if group is None:
        return GroupMember.NON_GROUP_MEMBER
    WORLD.groups.append(group)
    return group
