"""Learning-rate schedulers (torch's formulas): the LRScheduler base, factor, cosine, cyclic, composite and plateau schedules.

Example:
    >>> from dynamo_lite.optim import lr_scheduler
    >>> sched = lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
"""
from .base import LRScheduler, set_lr
from .composite import ChainedScheduler, SequentialLR
from .cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts
from .cyclic import CyclicLR, OneCycleLR
from .factors import (ConstantLR, ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR, MultiStepLR, PolynomialLR,
                      StepLR)
from .plateau import ReduceLROnPlateau

__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
           "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR", "MultiplicativeLR", "OneCycleLR",
           "PolynomialLR", "ReduceLROnPlateau", "SequentialLR", "StepLR", "set_lr"]
