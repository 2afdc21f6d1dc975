"""The Optimizer base: parameter groups, per-parameter state, zero_grad, state_dict."""
from __future__ import annotations

import copy
import functools
from typing import Any

from ..autograd.grad_mode import enable_grad, no_grad
from ..ops.core.dispatch import is_tracing
from ..tensor.tensor import Tensor
from .tracked import TrackedDict, TrackedList, TrackedState, edited

_MISSING = object()


class _RequiredParameter:
    """Marks a hyperparameter without a default (``lr`` of SGD before torch 2.x)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _type_name(value) -> str:
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def step_under_no_grad(step):
    """Wrap an optimizer's ``step`` so its updates record no autograd history."""

    @functools.wraps(step)
    def wrapper(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            step(self)
        return loss

    return wrapper


class Optimizer:
    """Base class of all optimizers.

    Subclasses pass their hyperparameter ``defaults`` and implement ``step`` (decorated
    with :func:`step_under_no_grad`, which evaluates the closure with gradients on).

    Example:
        >>> opt = dl.optim.SGD(model.parameters(), lr=0.1)
        >>> opt.zero_grad(); loss_fn(model(x)).backward(); opt.step()
    """

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_type_name(params)}")
        self.state: TrackedState = TrackedState()  # NOTE: [optimizer edit count]
        self.param_groups: list = TrackedList()
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [TrackedDict(params=param_groups)]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for index, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {index}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        edited()
        self.__dict__.update(state)

    def __setattr__(self, name: str, value) -> None:
        if self.__dict__.get(name, _MISSING) is not value:  # NOTE: [optimizer edit count]
            edited()
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        edited()
        object.__delattr__(self, name)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (with its own hyperparameters) to optimize."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_type_name(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = TrackedList([params])
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = TrackedList(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_type_name(param)}")
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in param_group["params"]}) != len(param_group["params"]):
            raise ValueError("optimizer contains a parameter group with duplicate parameters")
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if existing & {id(p) for p in param_group["params"]}:
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every optimized parameter (to None by default)."""
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if set_to_none:
                    param.grad = None
                    continue
                if param.grad.grad_fn is not None:
                    param.grad.detach_()
                else:
                    param.grad.requires_grad_(False)
                param.grad.zero_()

    def step(self, closure=None):
        """Update the parameters once; subclasses implement it."""
        raise NotImplementedError

    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``.

        Parameters are numbered in group order; the state tensors are the live ones
        (not copies), as in torch, in plain dicts (what ``dl.save`` writes and torch reads).
        """
        index_of: dict = {}
        packed_groups = []
        for group in self.param_groups:
            for param in group["params"]:
                index_of.setdefault(id(param), len(index_of))
            packed = {key: value for key, value in group.items() if key != "params"}
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            packed_groups.append(packed)
        state = {index_of[id(param)]: dict(self.state[param]) for group in self.param_groups
                 for param in group["params"] if param in self.state}
        return {"state": state, "param_groups": packed_groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyperparameters and state saved by :meth:`state_dict` (tensors are copied)."""
        state_dict = copy.deepcopy(state_dict)
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        param_of = {index: param for group, saved in zip(self.param_groups, saved_groups)
                    for index, param in zip(saved["params"], group["params"])}
        self.state = TrackedState()
        for index, values in state_dict["state"].items():
            if index in param_of:
                param = param_of[index]
                self.state[param] = TrackedDict({key: _cast_state(param, key, value) for key, value in values.items()})
        self.param_groups = TrackedList(TrackedDict(saved, params=group["params"])
                                        for group, saved in zip(self.param_groups, saved_groups))


def _cast_state(param: Tensor, key: str, value: Any):
    """State tensors take the parameter's dtype, except the step counter."""
    if isinstance(value, Tensor) and key != "step" and value.dtype.is_floating_point:
        return value.to(dtype=param.dtype)
    return value


_INVALID = {
    "lr": "Invalid learning rate: {}",
    "eps": "Invalid epsilon value: {}",
    "momentum": "Invalid momentum value: {}",
    "weight_decay": "Invalid weight_decay value: {}",
    "alpha": "Invalid alpha value: {}",
    "lr_decay": "Invalid lr_decay value: {}",
    "initial_accumulator_value": "Invalid initial_accumulator_value value: {}",
}


def check_non_negative(**values) -> None:
    """Raise torch's ValueError for a negative hyperparameter (``Invalid learning rate: -1``)."""
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(_INVALID[name].format(value))


def check_betas(betas) -> None:
    """Each beta lies in [0, 1)."""
    for index, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta}")


def apply_update(param: Tensor, update: Tensor, scale, divisor: Tensor | None = None) -> None:
    """``param += scale * update`` (``/ divisor``): torch's ``add_(alpha=)``/``addcdiv_(value=)``.

    NOTE: [tensor learning rate] As in torch, ``lr`` may be a 0-dim Tensor. Compiled steps
    then read it at run time (it is a graph constant, guarded by identity, not by value),
    and the lr schedulers write new values into it in place, so a schedule never recompiles
    the step. A Python float lr is a constant of the graph until it changes; the recompile
    then lifts it to a graph input (NOTE: [lifted floats] in frames/tracing/variables/
    lifted_float.py), so a float schedule costs one recompile. ``alpha``/``value`` take
    numbers only: a tensor ``scale``, and any scale in a compiled step (where a lifted float
    is a graph value), multiplies instead: ``param += (update * scale) / divisor``.

    Example:
        >>> apply_update(param, grad, -lr)          # param.add_(grad, alpha=-lr)
        >>> apply_update(param, exp_avg, -step_size, denom)
    """
    if isinstance(scale, Tensor) or is_tracing():
        scaled = update * scale
        param.add_(scaled if divisor is None else scaled / divisor)
    elif divisor is None:
        param.add_(update, alpha=scale)
    else:
        param.addcdiv_(update, divisor, value=scale)


def params_with_grad(group: dict):
    """The group's parameters that received a gradient, with their gradient."""
    for param in group["params"]:
        if param.grad is not None:
            yield param, param.grad
