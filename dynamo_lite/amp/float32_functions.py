"""The composite functions autocast runs in float32: torch's float32 list holds the losses,
which dynamo_lite writes with several registry ops, so they are wrapped as a whole.

NOTE: [autocast float32 functions] Importing dl.amp replaces each loss in nn.functional (and
nn.functional_loss, which the loss modules call) by ``float32_function(loss)``: outside autocast
the wrapper calls the loss unchanged; inside, it casts the floating tensor arguments to float32
first. Done here, above nn in the layering, rather than in nn itself.
"""
from __future__ import annotations

from ..nn import functional, functional_loss
from ..ops.autocast_policy import float32_function

__all__ = ["FLOAT32_LOSSES"]

#: the nn.functional losses torch's autocast computes in float32 (recorded in tests/amp/fixtures).
FLOAT32_LOSSES = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
                  "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div")


def _install() -> None:
    for name in FLOAT32_LOSSES:
        loss = getattr(functional_loss, name)
        if getattr(loss, "__wrapped_for_autocast__", None) is None:
            wrapped = float32_function(loss)
            setattr(functional_loss, name, wrapped)
            setattr(functional, name, wrapped)


_install()
