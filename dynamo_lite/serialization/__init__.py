"""Checkpoints in PyTorch's file format: ``dl.save`` and ``dl.load`` (tensors, containers, plain values)."""
from .load import load
from .save import save

__all__ = ["load", "save"]
