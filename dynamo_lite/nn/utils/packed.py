"""Packed sequences: PackedSequence and pack_padded_sequence / pad_packed_sequence / pack_sequence.

A batch of sequences of different lengths is stored time-major without padding: the
rows of step ``t`` are the ``batch_sizes[t]`` sequences still running at ``t``, longest
sequences first (``sorted_indices`` maps that order to the caller's batch order,
``unsorted_indices`` back). The recurrent layers run on ``data`` directly, one slice of
rows per step, so each sequence's final state is the one at its own last step.
"""
from __future__ import annotations

from collections import namedtuple

from ...ops.core import api as ops
from ...tensor.tensor import Tensor
from ...tensor.dtype import float16, float32, float64, int64

_SORTED_MESSAGE = ("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                   "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
                   "if you do not need ONNX exportability.")


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Sequences of different lengths packed time-major (see the module docstring); made by the pack functions.

    Example:
        >>> packed = dl.nn.utils.rnn.pack_sequence([dl.ones(3), dl.ones(1)])
        >>> packed.batch_sizes.tolist()
        [2, 1, 1]
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        """``data`` converted like ``Tensor.to``; the index tensors move to its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, *(None if i is None else i.to(data.device)
                                                    for i in (self.sorted_indices, self.unsorted_indices)))

    def float(self):
        return self.to(dtype=float32)

    def double(self):
        return self.to(dtype=float64)

    def half(self):
        return self.to(dtype=float16)

    def cpu(self):
        return self.to("cpu")

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"


def invert_permutation(permutation):
    """The permutation ``inverse`` with ``inverse[permutation[i]] == i``."""
    inverse = ops.empty_like(permutation)
    inverse[permutation] = ops.arange(permutation.numel(), device=permutation.device)
    return inverse


def _length_list(lengths) -> list:
    return [int(n) for n in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]


def _counts_above(values: list, count: int) -> list:
    """``[number of values > i for i in range(count)]``: batch sizes from lengths and back."""
    return [len([v for v in values if v > i]) for i in range(count)]


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(L, B, *)`` (``(B, L, *)`` with ``batch_first``) of sequences of ``lengths``.

    Args:
        input: the padded sequences.
        lengths: each sequence's length (a list or a 1-D CPU tensor).
        batch_first: the batch is dim 0 of ``input``.
        enforce_sorted: require ``lengths`` in decreasing order; otherwise they are sorted here
            (stably) and ``sorted_indices`` records the order.

    Example:
        >>> padded = dl.tensor([[1.0, 4.0], [2.0, 0.0], [3.0, 0.0]])
        >>> pack_padded_sequence(padded, [3, 1]).data.tolist()
        [1.0, 4.0, 2.0, 3.0]
    """
    lengths = _length_list(lengths)
    if enforce_sorted:
        if lengths != sorted(lengths, reverse=True):
            raise RuntimeError(_SORTED_MESSAGE)
        sorted_indices = None
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable: ties keep the batch order
        sorted_indices = ops.tensor(order, dtype=int64, device=input.device)
        lengths = [lengths[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    if lengths[0] > input.shape[0]:
        raise RuntimeError(f"Expected a sequence of length at most {input.shape[0]} (the padded length), "
                           f"got {lengths[0]}")
    batch_sizes = _counts_above(lengths, lengths[0])
    data = ops.cat([input[t, :rows] for t, rows in enumerate(batch_sizes)], 0)
    return PackedSequence(data, ops.tensor(batch_sizes, dtype=int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None):
    """Unpack to ``(padded, lengths)``: ``(L, B, *)`` (``(B, L, *)`` with ``batch_first``) in the caller's order.

    Args:
        sequence: the packed batch.
        batch_first: return the batch as dim 0.
        padding_value: the value of the padded positions.
        total_length: pad to this length (at least the longest sequence's) instead of the longest.

    Example:
        >>> packed = pack_sequence([dl.tensor([1.0, 2.0]), dl.tensor([3.0])])
        >>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
        >>> padded.tolist(), lengths.tolist()
        ([[1.0, 2.0], [3.0, 0.0]], [2, 1])
    """
    data, batch_sizes = sequence.data, sequence.batch_sizes.tolist()
    longest, batch = len(batch_sizes), batch_sizes[0]
    if total_length is not None:
        if total_length < longest:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {longest}")
        longest = total_length
    trailing = tuple(data.shape[1:])
    steps, start = [], 0
    for rows in batch_sizes:
        step = data[start:start + rows]
        start += rows
        if rows < batch:
            step = ops.cat([step, ops.full((batch - rows,) + trailing, padding_value, dtype=data.dtype,
                                           device=data.device)], 0)
        steps.append(step)
    steps += [ops.full((batch,) + trailing, padding_value, dtype=data.dtype, device=data.device)] * (
        longest - len(batch_sizes))
    padded = ops.stack(steps, 1 if batch_first else 0)
    lengths = ops.tensor(_counts_above(batch_sizes, batch), dtype=int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths

