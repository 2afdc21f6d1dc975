"""Backend registry: maps names to ``(graph_module, example_inputs) -> callable`` compilers.

A backend registers with the devices it can run and a priority; ``"auto"`` (the default
of ``dl.compile``) picks, per graph, the highest-priority backend that supports every
device among the graph's example inputs. A backend registered without a priority is
only used when asked for by name. A backend may have an upper *tier* (``register_tier``):
``"auto"`` then runs the backend's function first, builds the tier's in the background, and
keeps whichever of the two (or the graph run eagerly) measures fastest on the real inputs
(NOTE: [tiering] in ``tiered.py``).

Example:
    >>> @register_backend("my_backend", devices=("cpu",))
    ... def my_backend(gm, example_inputs):
    ...     return gm.forward
    >>> lookup_backend("my_backend") is my_backend
    True
    >>> dl.compile(fn, backend="my_backend")
"""
from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass
from typing import Callable

from .per_shape import compile_graph
from .tiered import Tier, TieredFunction

log = logging.getLogger("dynamo_lite")

ALL_DEVICES = ("cpu", "cuda")


class InvalidBackend(RuntimeError):
    """An unknown backend name, or no backend for the inputs' devices (a backend raises it for inputs on a device
    it does not serve): the caller's error, which the frame hook raises to the caller instead of running eagerly."""


def _unknown_backend(name) -> InvalidBackend:
    return InvalidBackend(
        f"Invalid backend: {name!r}, see dl.list_backends() for available backends "
        f"({', '.join(list_backends()) or 'none'})."
    )


@dataclass(frozen=True)
class BackendSpec:
    """A registered backend.

    Attributes:
        name: the registry name (``dl.compile(backend=name)``).
        compiler: ``compiler(graph_module, example_inputs) -> callable``.
        devices: device types it runs on.
        priority: rank for ``"auto"`` (higher wins); None: never chosen automatically.
        requires: a module the backend needs installed (``"cupy"``); ``list_backends`` leaves it out without it.
    """

    name: str
    compiler: Callable
    devices: frozenset
    priority: int | None
    requires: str | None = None

    def installed(self) -> bool:
        """Whether what the backend needs is installed (found, not imported)."""
        return self.requires is None or importlib.util.find_spec(self.requires) is not None


_BACKENDS: dict[str, BackendSpec] = {}
_TIERS: dict[str, Tier] = {}  # backend name -> the upper tier "auto" switches to once it is built


def register_backend(name=None, compiler: Callable | None = None, *, devices=ALL_DEVICES,
                     priority: int | None = None, override: bool = False, requires: str | None = None):
    """Register a backend under ``name``; usable as a decorator.

    Args:
        name: registry name; ``@register_backend`` without arguments uses the function's name.
        compiler: the backend; when omitted, returns a decorator.
        devices: device types the backend supports (``"cpu"``, ``"cuda"``).
        priority: rank for ``backend="auto"`` (higher wins), None to be used only by name.
        override: replace an existing registration instead of raising.
        requires: a module the backend needs (``list_backends`` lists it only where that is installed).

    Returns:
        The compiler (so the decorated function stays usable), or the decorator.

    Raises:
        ValueError: ``name`` is already registered (and ``override`` is False).
    """
    if callable(name) and compiler is None:  # bare @register_backend
        return register_backend(name.__name__, name, devices=devices, priority=priority, override=override,
                                requires=requires)

    def register(fn: Callable) -> Callable:
        backend_name = name or fn.__name__
        if not callable(fn):
            raise TypeError(f"backend {backend_name!r} must be callable, got {type(fn).__name__}")
        if backend_name == "auto":
            raise ValueError("'auto' is reserved: it picks a registered backend by device")
        if backend_name in _BACKENDS and not override:
            raise ValueError(f"backend {backend_name!r} is already registered (pass override=True to replace it)")
        _BACKENDS[backend_name] = BackendSpec(backend_name, fn, frozenset(devices), priority, requires)
        return fn

    return register if compiler is None else register(compiler)


def upper_tier(base: str) -> str | None:
    """The name of the tier ``"auto"`` moves ``base``'s hot graphs to (None: none)."""
    tier = _TIERS.get(base)
    return None if tier is None else tier.name


def register_tier(base: str, tier: Tier | None) -> None:
    """Make ``"auto"`` run ``base``'s functions until ``tier`` has built its own (None: no tier).

    Example:
        >>> register_tier("numpy", Tier("native", native_backend.compile_or_raise, native_backend.unavailable))
    """
    if tier is None:
        _TIERS.pop(base, None)
    else:
        _TIERS[base] = tier


def backend_name_of(function, default: str) -> str:
    """The backend whose code ``function`` (a backend's result) runs now, else ``default``."""
    return getattr(function, "backend_name", default)


def unregister_backend(name: str) -> None:
    """Remove a registration (tests, plugins)."""
    _BACKENDS.pop(name, None)


def lookup_backend(name) -> Callable:
    """The compiler registered as ``name`` (a callable is returned as is).

    Raises:
        InvalidBackend: no backend of that name.
    """
    if callable(name):
        return name
    if name == "auto":
        return AUTO
    spec = _BACKENDS.get(name)
    if spec is None:
        raise _unknown_backend(name)
    return spec.compiler


def backend_spec(name: str) -> BackendSpec:
    """The full registration of ``name`` (devices, priority)."""
    if name not in _BACKENDS:
        raise _unknown_backend(name)
    return _BACKENDS[name]


def list_backends(device: str | None = None) -> list[str]:
    """Registered backend names whose requirements are installed (those supporting ``device`` if given), sorted."""
    return sorted(name for name, spec in _BACKENDS.items()
                  if (device is None or device in spec.devices) and spec.installed())


def best_backend(device_types) -> str:
    """Name of the highest-priority backend supporting every device type in ``device_types``.

    Ties go to the earlier registration.

    Raises:
        InvalidBackend: no automatically selectable backend supports those devices.
    """
    wanted = frozenset(device_types) or frozenset({"cpu"})
    candidates = [spec for spec in _BACKENDS.values() if spec.priority is not None and wanted <= spec.devices]
    if not candidates:
        raise InvalidBackend(
            f"backend 'auto' found no backend supporting devices {sorted(wanted)}; "
            f"registered: {', '.join(list_backends()) or 'none'}"
        )
    return max(candidates, key=lambda spec: spec.priority).name  # max keeps the first of equals


def input_device_types(example_inputs) -> frozenset:
    """Device types of the tensors among ``example_inputs`` (``{"cpu"}`` if there are none)."""
    found = set()
    for value in example_inputs:
        dev = getattr(value, "device", None)
        kind = getattr(dev, "type", None)
        if isinstance(kind, str):
            found.add(kind)
    return frozenset(found) or frozenset({"cpu"})


class AutoBackend:
    """The ``"auto"`` backend: compiles each graph with ``best_backend`` for its inputs' devices."""

    __name__ = "auto"
    symbolic_shapes = True  # the chosen backend gets the graph through compile_graph
    # A graph switches to its backend's upper tier once its calls have taken this long
    # (NOTE: [tiering]); 0 starts every build at once, ``math.inf`` never tiers up.
    tier_up_seconds = 0.05
    # Counted calls of each candidate when choosing between tiers and eager (NOTE: [tier
    # choice by measurement]), and calls before a choice is measured again (doubling).
    measure_rounds = 3
    recheck_calls = 1000

    def choose(self, example_inputs) -> str:
        """The backend name ``"auto"`` uses for these inputs."""
        return best_backend(input_device_types(example_inputs))

    def __call__(self, gm, example_inputs):
        name = self.choose(example_inputs)
        log.debug("backend 'auto' chose %r", name)
        function = compile_graph(_BACKENDS[name].compiler, gm, example_inputs)
        tier = _TIERS.get(name)
        if tier is None or self.tier_up_seconds == float("inf"):
            return function
        # the upper tier is built for the inputs of the call that makes it hot: holding the
        # first call's inputs until then would keep the user's tensors alive
        return TieredFunction(function, name, tier, lambda inputs: compile_graph(tier.compile, gm, inputs),
                              self.tier_up_seconds, getattr(gm, "class_name", "graph"), eager=getattr(gm, "forward", None),
                              rounds=self.measure_rounds, recheck_calls=self.recheck_calls,
                              example_inputs=example_inputs if self.tier_up_seconds <= 0 else ())

    def __repr__(self) -> str:
        return "<dynamo_lite auto backend>"


AUTO = AutoBackend()


def resolve_backend(backend) -> tuple[Callable, str]:
    """``(compiler, name)`` for what ``dl.compile(backend=...)`` accepts: a name or a callable.

    Raises:
        InvalidBackend: unknown name.
        TypeError: neither a string nor a callable.
    """
    if isinstance(backend, str):
        return lookup_backend(backend), backend
    if callable(backend):
        return backend, getattr(backend, "__name__", type(backend).__name__)
    raise TypeError(f"backend must be a registered name or a callable (graph_module, example_inputs), got {backend!r}")
