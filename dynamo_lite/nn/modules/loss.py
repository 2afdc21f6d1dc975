"""Loss modules: CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCE(WithLogits)Loss, KLDivLoss, SmoothL1Loss, HuberLoss."""
from __future__ import annotations

from .. import functional_loss as L
from ..module import Module


class _Loss(Module):
    """A loss module: holds ``reduction`` (and, for weighted losses, a ``weight`` buffer)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        self.reduction = L.legacy_reduction(size_average, reduce, reduction)

    def extra_repr(self) -> str:
        return ""


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error (see ``F.mse_loss``).

    Example:
        >>> nn.MSELoss()(dl.tensor([1.0, 2.0]), dl.zeros(2))
        tensor(2.5000)
    """

    def forward(self, input, target):
        return L.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error (see ``F.l1_loss``).

    Example:
        >>> nn.L1Loss(reduction="sum")(dl.tensor([1.0, -2.0]), dl.zeros(2))
        tensor(3.)
    """

    def forward(self, input, target):
        return L.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of target classes (see ``F.nll_loss``).

    Example:
        >>> nn.NLLLoss()(dl.tensor([[-1.0, -2.0]]), dl.tensor([1]))
        tensor(2.)
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return L.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or probabilities (see ``F.cross_entropy``).

    Example:
        >>> loss = nn.CrossEntropyLoss(label_smoothing=0.1)
        >>> loss(dl.randn(4, 3, requires_grad=True), dl.tensor([0, 2, 1, 0])).backward()
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return L.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (see ``F.binary_cross_entropy``).

    Example:
        >>> nn.BCELoss()(dl.tensor([0.5]), dl.tensor([1.0]))
        tensor(0.6931)
    """

    def forward(self, input, target):
        return L.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (see ``F.binary_cross_entropy_with_logits``).

    Example:
        >>> nn.BCEWithLogitsLoss(pos_weight=dl.tensor([2.0]))(dl.tensor([0.0]), dl.tensor([1.0]))
        tensor(1.3863)
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return L.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss"]


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence loss (see ``F.kl_div``).

    Example:
        >>> nn.KLDivLoss(reduction="batchmean")(dl.log(dl.tensor([[0.5, 0.5]])), dl.tensor([[0.5, 0.5]])).item()
        0.0
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return L.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SmoothL1Loss(_Loss):
    """Smooth L1 loss (see ``F.smooth_l1_loss``).

    Example:
        >>> nn.SmoothL1Loss(beta=0.5)(dl.tensor([2.0]), dl.zeros(1)).item()
        1.75
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return L.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Huber loss (see ``F.huber_loss``).

    Example:
        >>> nn.HuberLoss(delta=2.0)(dl.tensor([3.0]), dl.zeros(1)).item()
        4.0
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return L.huber_loss(input, target, reduction=self.reduction, delta=self.delta)
