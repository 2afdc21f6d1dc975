"""Utilities outside the tensor core: data loading (dl.utils.data), activation checkpointing (dl.utils.checkpoint)."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401,E402
