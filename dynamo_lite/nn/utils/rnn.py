"""nn.utils.rnn: pad_sequence, and packed sequences (PackedSequence and its pack / pad functions)."""
from __future__ import annotations

from ...ops.core import api as ops
from ...tensor.tensor import Tensor

from .packed import PackedSequence, pack_padded_sequence, pad_packed_sequence  # noqa: F401  (dl.nn.utils.rnn.*)

PADDING_SIDES = ("left", "right")


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"):
    """Stack sequences of different lengths (dim 0) into one tensor, padding the short ones.

    Args:
        sequences: tensors of shape ``(L_i, *)`` with the same trailing shape (or one tensor, split on dim 0).
        batch_first: output ``(B, L, *)`` instead of ``(L, B, *)``.
        padding_value: the value of the padded positions.
        padding_side: pad after ("right") or before ("left") each sequence.

    Example:
        >>> pad_sequence([dl.ones(2), dl.ones(1)], batch_first=True).tolist()
        [[1.0, 1.0], [1.0, 0.0]]
    """
    if padding_side not in PADDING_SIDES:
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    padded = []
    for sequence in sequences:
        for dim, (want, got) in enumerate(zip(trailing, sequence.shape[1:]), 1):
            if got not in (want, 1):
                raise RuntimeError(f"The size of tensor a ({want}) must match the size of tensor b ({got}) "
                                   f"at non-singleton dimension {dim}")
        sequence = sequence.expand((sequence.shape[0],) + trailing)  # copied into the output: broadcasts
        filler = ops.full((longest - sequence.shape[0],) + tuple(sequence.shape[1:]), padding_value,
                         dtype=sequence.dtype, device=sequence.device)
        padded.append(ops.cat([sequence, filler] if padding_side == "right" else [filler, sequence]))
    return ops.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors ``(L_i, *)`` (longest first unless ``enforce_sorted=False``).

    Example:
        >>> pack_sequence([dl.tensor([1.0, 2.0]), dl.tensor([3.0])]).data.tolist()
        [1.0, 3.0, 2.0]
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)
