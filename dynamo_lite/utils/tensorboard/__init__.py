"""dl.utils.tensorboard: SummaryWriter, torch.utils.tensorboard's API writing event files for TensorBoard.

Needs the optional ``tensorboard`` package (``pip install 'dynamo_lite[tensorboard]'``):
the event protos are TensorBoard's own, so what is written is what TensorBoard reads.
"""
try:
    import tensorboard  # noqa: F401
    from tensorboard.compat.proto import event_pb2  # noqa: F401
except ImportError as exc:
    raise ImportError(
        "dynamo_lite.utils.tensorboard needs the 'tensorboard' package; install the extra: "
        "pip install 'dynamo_lite[tensorboard]' (or pip install tensorboard)"
    ) from exc

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]
