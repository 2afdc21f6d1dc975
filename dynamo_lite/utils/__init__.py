"""Utilities outside the tensor core: data loading (dl.utils.data), activation checkpointing (dl.utils.checkpoint).

``dynamo_lite.utils.tensorboard`` (SummaryWriter) is imported on its own: it needs the tensorboard extra.
"""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401,E402
