"""What one call did, as plain comparable data: values, identities, mutations, output, errors.

``snapshot({"result": ..., "args.x": ..., "globals.G": ...})`` walks the call's result, its arguments
(after the call) and the module's globals in one pass, so an object reached twice — an
output that is an input, the same list returned twice — is written once and then as
``("is", <path of its first occurrence>)``; a tensor also records the path of the first
tensor seen on the same storage (views alias their base). Two runs behave the same iff
their snapshots compare equal (``differences``), with a small tolerance on float values.
"""
from __future__ import annotations

import types

import numpy as np

import dynamo_lite as dl

RTOL, ATOL = 1e-4, 1e-5
_SCALARS = (int, float, bool, str, bytes, type(None), complex)
_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


class _Walker:
    """One identity numbering shared by every root of a snapshot."""

    def __init__(self):
        self.paths: dict[int, str] = {}  # id(obj) -> path of its first occurrence
        self.storages: dict[int, str] = {}
        self.keep = []  # objects keyed by id() must stay alive during the walk

    def walk(self, obj, path: str, depth: int = 0):
        if isinstance(obj, _SCALARS):
            return obj
        if depth > 12:
            return ("deep", type(obj).__name__)
        if isinstance(obj, tuple):  # immutable: its identity is not observable behaviour
            return (type(obj).__name__, [self.walk(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(obj)])
        if id(obj) in self.paths:
            return ("is", self.paths[id(obj)])
        self.paths[id(obj)] = path
        self.keep.append(obj)
        if isinstance(obj, dl.Tensor):
            storage = obj.untyped_storage()
            self.keep.append(storage)
            base = self.storages.setdefault(id(storage), path)
            return ("tensor", str(obj.dtype), tuple(obj.shape), base, np.array(obj.numpy(), copy=True))
        if isinstance(obj, (list, *_VIEWS)):
            return (type(obj).__name__, [self.walk(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(obj)])
        if isinstance(obj, dict):
            return ("dict", {repr(k): self.walk(v, f"{path}[{k!r}]", depth + 1) for k, v in obj.items()})
        if isinstance(obj, (set, frozenset)):
            return (type(obj).__name__, sorted(repr(v) for v in obj))
        if isinstance(obj, type):
            return ("class", obj.__qualname__, self.attributes(vars(obj), path, depth))
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.GeneratorType)):
            return (type(obj).__name__, getattr(obj, "__qualname__", "?"))
        if isinstance(obj, dl.dtype):
            return ("dtype", repr(obj))
        state = getattr(obj, "__dict__", None)
        if state is not None:
            return ("object", type(obj).__qualname__, self.attributes(state, path, depth))
        return ("value", type(obj).__qualname__, repr(obj))

    def attributes(self, namespace, path: str, depth: int) -> dict:
        """The data attributes of an instance or class (what a program can mutate)."""
        return {k: self.walk(v, f"{path}.{k}", depth + 1) for k, v in sorted(namespace.items())
                if not k.startswith("__") and not isinstance(v, _CODE)}


_CODE = (types.FunctionType, property, staticmethod, classmethod, types.BuiltinFunctionType, types.MethodType,
         types.WrapperDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType)


def program_globals(namespace: dict) -> dict:
    """The module state a call may change: data globals and the program's classes."""
    return {
        name: value for name, value in namespace.items()
        if not name.startswith("__") and name not in ("np", "dl", "make_inputs", "f")
        and not isinstance(value, (types.FunctionType, types.ModuleType))
    }


def snapshot(values: dict) -> dict:
    """``{path: data}`` for values named by their paths (``"result"``, ``"args.xs"``),
    identities shared by all."""
    walker = _Walker()
    return {path: walker.walk(value, path) for path, value in values.items()}


def differences(expected, actual, path: str) -> list[str]:
    """Where two snapshots differ, as ``path: expected != actual`` lines (empty if equal)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if list(expected) != list(actual):
            return [f"{path}: keys {list(expected)} != {list(actual)}"]
        return [line for k in expected for line in differences(expected[k], actual[k], f"{path}.{k}")]
    if not (isinstance(expected, tuple) and isinstance(actual, tuple)):
        if isinstance(expected, float) and isinstance(actual, float):
            close = np.isclose(expected, actual, RTOL, ATOL, equal_nan=True)
            return [] if close else [f"{path}: {expected!r} != {actual!r}"]
        same = type(expected) is type(actual) and expected == actual
        return [] if same else [f"{path}: {describe(expected)} != {describe(actual)}"]
    if expected[0] != actual[0]:
        return [f"{path}: {describe(expected)} != {describe(actual)}"]
    return _COMPARE.get(expected[0], _compare_plain)(expected, actual, path)


def _compare_tensor(expected, actual, path):
    _, dtype, shape, base, values = expected
    if (dtype, shape) != actual[1:3]:
        return [f"{path}: {describe(expected)} != {describe(actual)}"]
    if base != actual[3]:
        return [f"{path}: shares storage with {base} != with {actual[3]}"]
    if not np.allclose(values, actual[4], RTOL, ATOL, equal_nan=True):
        return [f"{path}: values {_array(values)} != {_array(actual[4])}"]
    return []


def _compare_items(expected, actual, path):
    if len(expected[1]) != len(actual[1]):
        return [f"{path}: {describe(expected)} != {describe(actual)}"]
    return [line for i, (e, a) in enumerate(zip(expected[1], actual[1]))
            for line in differences(e, a, f"{path}[{i}]")]


def _compare_dict(expected, actual, path):
    if list(expected[1]) != list(actual[1]):
        return [f"{path}: keys {list(expected[1])} != {list(actual[1])}"]
    return [line for k in expected[1] for line in differences(expected[1][k], actual[1][k], f"{path}[{k}]")]


def _compare_object(expected, actual, path):
    if expected[1] != actual[1]:
        return [f"{path}: {describe(expected)} != {describe(actual)}"]
    return differences(expected[2], actual[2], path)


def _compare_plain(expected, actual, path):
    return [] if expected == actual else [f"{path}: {describe(expected)} != {describe(actual)}"]


_COMPARE = {"tensor": _compare_tensor, "list": _compare_items, "tuple": _compare_items, "Size": _compare_items,
            "dict_keys": _compare_items, "dict_values": _compare_items, "dict_items": _compare_items,
            "dict": _compare_dict, "object": _compare_object, "class": _compare_object}


def describe(node, limit: int = 120) -> str:
    """Short readable text for a snapshot node."""
    if not isinstance(node, tuple):
        text = repr(node)
    elif node[0] == "is":
        text = f"the object at {node[1]}"
    elif node[0] == "tensor":
        text = f"tensor({node[1].rsplit('.', 1)[-1]}, shape {node[2]}, {_array(node[4])})"
    elif node[0] in _COMPARE and node[0] not in ("tensor", "dict", "object", "class"):
        text = f"{node[0]}[{', '.join(describe(v, 80) for v in node[1])}]"
    elif node[0] == "dict":
        text = "{" + ", ".join(f"{k}: {describe(v, 80)}" for k, v in node[1].items()) + "}"
    elif node[0] in ("object", "class"):
        text = f"{node[1]}({', '.join(f'{k}={describe(v, 80)}' for k, v in node[2].items())})"
    else:
        text = repr(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _array(values: np.ndarray) -> str:
    return " ".join(np.array2string(values, threshold=20, precision=4).split())
