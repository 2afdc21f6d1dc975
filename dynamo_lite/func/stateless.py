"""dl.func.functional_call: call a module with some parameters and buffers replaced for that call only."""
from __future__ import annotations

from ..nn.versioning import changed

__all__ = ["functional_call"]


def _merge(parameter_and_buffer_dicts) -> dict:
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    merged: dict = {}
    repeated = []
    for mapping in parameter_and_buffer_dicts:
        repeated += [key for key in mapping if key in merged]
        merged.update(mapping)
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return merged


def _owner(module, qualified_name: str):
    """``(submodule, its dict holding the name, local name)`` for ``"layer.0.weight"``, or None."""
    *path, local = qualified_name.split(".")
    for part in path:
        module = module._modules.get(part)
        if module is None:
            return None
    for table in (module._parameters, module._buffers):
        if local in table:
            return module, table, local
    return None


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters/buffers replaced by the given tensors; the module
    is restored afterwards (also on an exception).

    Args:
        module: the module to call.
        parameter_and_buffer_dicts: ``{qualified name: tensor}``, or a tuple of such dicts (names must not repeat).
        args: a tuple of positional arguments (a single non-tuple value is one argument).
        kwargs: keyword arguments.
        tie_weights: a tensor registered under several names is replaced under all of them.
        strict: every parameter and buffer must be given, and no other name.

    Example:
        >>> layer = dl.nn.Linear(2, 1)
        >>> dl.func.functional_call(layer, {"weight": dl.ones(1, 2), "bias": dl.zeros(1)}, dl.ones(1, 2)).item()
        2.0
    """
    replacements = _merge(parameter_and_buffer_dicts)
    owned = dict(module.named_parameters(remove_duplicate=False))
    owned.update(dict(module.named_buffers()))
    if strict:
        unexpected = [k for k in replacements if k not in owned]
        missing = [k for k in owned if k not in replacements]
        if unexpected or missing:
            lines = [f"\tUnexpected key(s): {', '.join(repr(k) for k in unexpected)}."] if unexpected else []
            lines += [f"\tMissing key(s): {', '.join(repr(k) for k in missing)}."] if missing else []
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n" + "\n".join(lines))
    if tie_weights:
        by_identity = {id(owned[name]): value for name, value in replacements.items() if name in owned}
        for name, tensor in owned.items():
            if name not in replacements and id(tensor) in by_identity:
                replacements[name] = by_identity[id(tensor)]
    saved = []
    try:
        for name, value in replacements.items():
            found = _owner(module, name)
            if found is None:
                continue  # a name the module does not hold: ignored unless strict, as torch
            owner, table, local = found
            saved.append((owner, table, local, table[local]))
            table[local] = value
            changed(owner)
        args = args if isinstance(args, tuple) else (() if args is None else (args,))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, table, local, original in reversed(saved):
            table[local] = original
            changed(owner)

