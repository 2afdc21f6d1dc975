"""Utilities outside the tensor core: data loading (dl.utils.data)."""
from . import data  # noqa: F401
