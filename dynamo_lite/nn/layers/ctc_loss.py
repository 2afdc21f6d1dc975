"""nn.CTCLoss: the connectionist temporal classification loss as a module."""
from __future__ import annotations

from ..functional_ctc import ctc_loss
from ..module import Module


class CTCLoss(Module):
    """The CTC loss as a module (see ``F.ctc_loss``).

    Example:
        >>> loss = dl.nn.CTCLoss(blank=0, zero_infinity=True)
        >>> loss(dl.randn(5, 2, 4).log_softmax(2), dl.tensor([[1, 2], [3, 3]]), [5, 5], [2, 2]).dim()
        0
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)
