"""Module state dicts: saving and loading parameters and persistent buffers by qualified name."""
from __future__ import annotations

from collections import OrderedDict, namedtuple

from ..tensor.tensor import Tensor
from .parameter import Parameter, _alias
from .versioning import changed
from .grad_mode import no_grad


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys that did not match."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class StateDictMixin:
    """``state_dict`` / ``load_state_dict`` for Module (kept apart to keep module.py small)."""

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else _alias(param)
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else _alias(buf)

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered mapping from qualified names to parameter and persistent buffer values.

        Values share storage with the module's tensors (plain Tensors, not Parameters,
        unless ``keep_vars=True``).

        Example:
            >>> list(dl.nn.Linear(2, 3).state_dict())
            ['weight', 'bias']
        """
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _local_state(self) -> dict:
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        return {k: v for k, v in {**self._parameters, **persistent}.items() if v is not None}

    def _load_from_state_dict(self, state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs, assign=False):
        """Load this module's own entries (not its children's) from ``state_dict``."""
        local_state = self._local_state()
        for name, current in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected dl.Tensor or Tensor-like '
                    f"object from checkpoint but received {type(value)}"
                )
                continue
            if tuple(value.shape) != tuple(current.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                    f"the shape in current model is {current.shape}."
                )
                continue
            if assign:
                self._assign_loaded(name, current, value)
                continue
            try:
                with no_grad():  # loading is not part of any computation autograd records
                    current.copy_(value)
            except Exception as exc:  # report every failing key at once, as torch does
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model are '
                    f"{current.shape} and whose dimensions in the checkpoint are {value.shape}, "
                    f"an exception occurred : {exc.args}."
                )
        if strict:
            for key in state_dict:
                if not key.startswith(prefix):
                    continue
                head, dot, _ = key[len(prefix):].partition(".")
                known = head in self._modules if dot else head in local_state
                if not known:
                    unexpected_keys.append(key)

    def _assign_loaded(self, name: str, current, value) -> None:
        if isinstance(current, Parameter):
            current._set_data(value)
        else:
            self._buffers[name] = value
            changed(self)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy values from ``state_dict`` into this module's parameters and buffers.

        Copies in place (the tensors keep their identity, dtype and memory format), or
        with ``assign=True`` makes them use the given tensors. With ``strict=True`` any
        missing or unexpected key is an error.

        Returns:
            A named tuple ``(missing_keys, unexpected_keys)``.

        Raises:
            RuntimeError: listing every missing/unexpected key and every shape mismatch.

        Example:
            >>> dst = dl.nn.Linear(2, 3)
            >>> dst.load_state_dict(dl.nn.Linear(2, 3).state_dict())
            <All keys matched successfully>
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        for prefix, module in self.named_modules(remove_duplicate=False):
            module._load_from_state_dict(
                state_dict, prefix + "." if prefix else "", strict,
                missing_keys, unexpected_keys, error_msgs, assign,
            )
        if strict:
            if unexpected_keys:
                keys = ", ".join(f'"{k}"' for k in unexpected_keys)
                error_msgs.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing_keys:
                keys = ", ".join(f'"{k}"' for k in missing_keys)
                error_msgs.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if error_msgs:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(error_msgs)
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)
