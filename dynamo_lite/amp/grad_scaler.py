"""GradScaler: loss scaling for low-precision training, with steps skipped on inf/NaN gradients."""
from __future__ import annotations

import enum
import warnings
from collections import defaultdict

from ..autograd.grad_mode import no_grad
from ..ops.core import api as ops
from ..tensor.dtype import float16, float32, int32
from ..tensor.tensor import Tensor
from .autocast_mode import cuda_usable

__all__ = ["GradScaler", "OptState"]

_FIX = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."


class OptState(enum.Enum):
    """Where an optimizer is in the scaler's iteration: nothing done, gradients unscaled, stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Multiplies the loss by a scale so small low-precision gradients do not flush to zero, divides
    the gradients by it before the step, skips steps whose gradients hold inf/NaN, and adapts the
    scale: times ``backoff_factor`` after such a step, times ``growth_factor`` after
    ``growth_interval`` clean ones.

    Example:
        >>> scaler = dl.amp.GradScaler("cpu")
        >>> scaler.scale(loss).backward()
        >>> scaler.step(optimizer)
        >>> scaler.update()
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not cuda_usable():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale, self._growth_factor, self._backoff_factor = init_scale, growth_factor, backoff_factor
        self._growth_interval, self._init_growth_tracker = growth_interval, 0
        self._scale = self._growth_tracker = None
        self._per_optimizer_states = defaultdict(_fresh_state)

    def is_enabled(self) -> bool:
        return self._enabled

    def _lazy_init(self) -> None:
        self._scale = ops.full((), self._init_scale, dtype=float32, device=self._device)
        self._growth_tracker = ops.full((), self._init_growth_tracker, dtype=int32, device=self._device)

    def _check_initialized(self, what: str):
        if self._scale is None:
            raise AssertionError(f"Attempted {what} but _scale is None.  " + _FIX)
        return self._scale, self._growth_tracker

    def scale(self, outputs):
        """``outputs`` (a tensor or nested tuples/lists of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init()
            return outputs * self._scale.to(device=outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(output) for output in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (once per iteration), noting inf/NaN."""
        if not self._enabled:
            return
        self._check_initialized("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = self._scale.double().reciprocal().float()
        found_inf = ops.zeros((), dtype=float32, device=self._scale.device)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if param.grad.dtype is float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not bool(param.grad.isfinite().all()):
                        found_inf.fill_(1.0)
                    param.grad.mul_(inverse.to(param.grad.dtype))
        state["found_inf_per_device"] = {self._scale.device: found_inf}
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless the (unscaled) gradients held inf/NaN; returns what it returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_initialized("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(found.item() for found in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Adapt the scale to this iteration (or set ``new_scale``) and start the next iteration."""
        if not self._enabled:
            return
        scale, tracker = self._check_initialized("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor "
                          "with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found = [f for state in self._per_optimizer_states.values() for f in state["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(scale, tracker, sum(f.item() for f in found) > 0)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _update_scale(self, scale, tracker, found_inf: bool) -> None:
        if found_inf:
            scale.mul_(self._backoff_factor)
            tracker.fill_(0)
            return
        successful = tracker.item() + 1
        if successful == self._growth_interval:
            grown = scale * self._growth_factor
            if bool(grown.isfinite()):  # a float32 overflow keeps the old scale
                scale.copy_(grown)
            tracker.fill_(0)
        else:
            tracker.fill_(successful)

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def state_dict(self) -> dict:
        """The scale, factors, interval and growth tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
