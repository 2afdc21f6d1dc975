"""A compiled function follows Python's own rules where model code leans on them: attribute
lookup order (class methods before a Module's submodules, instance ``forward`` overrides,
``__getattribute__``), guarded ``getattr``/``hasattr`` answers, user ``__getitem__`` on
NamedTuple subclasses, metaclass ``__instancecheck__``, PEP 479 in generators, grad mode
after nested ``set_grad_enabled`` blocks, and no reference cycle keeping inputs alive.
Each case is compared uncompiled vs compiled on every CPU backend, with a check that it
really compiled (graphs made, no eager fallback of the function itself)."""
from __future__ import annotations

import gc
import types
import typing
import weakref

import pytest

import dynamo_lite as dl
import dynamo_lite.nn as nn
from tests.frames.differential import assert_transparent


def t(call: int, n: int = 3):
    """A fresh tensor whose values differ from call to call (some negative)."""
    return dl.arange(float(n)) - 1 + call


# -- 1. a class method shadows a submodule stored under the same name ---------------------
class MethodBeatsSubmodule(nn.Module):
    def __init__(self):
        super().__init__()
        self.activation = nn.ReLU()  # lands in _modules; the class attribute wins lookups

    def activation(self, x):  # noqa: F811  (the point of the test)
        return x * 100

    def forward(self, x):
        return self.activation(x) + 1


def test_1_class_method_shadows_submodule(backend):
    model = MethodBeatsSubmodule()

    def f(x):
        return model(x)

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


# -- 2. an instance ``forward`` assigned after compiling is honoured -------------------------
class PlusOne(nn.Module):
    def forward(self, x):
        return x + 1


class TimesTen(nn.Module):
    def forward(self, x):
        return x * 10


PATCHED = PlusOne()


def _patch_forward(call):
    PATCHED.__dict__.pop("forward", None)
    if call == 1:
        PATCHED.forward = types.MethodType(TimesTen.forward, PATCHED)


def test_2_forward_replaced_on_the_instance(backend):
    def f(x):
        return PATCHED(x)

    assert_transparent(f, lambda c: (t(c),), backend, setup=_patch_forward)


def test_2_forward_replaced_on_a_compiled_module(backend):
    module = PlusOne()
    compiled = dl.compile(module, backend=backend)
    x = t(0)
    assert compiled(x).tolist() == (x + 1).tolist()
    module.forward = types.MethodType(TimesTen.forward, module)
    assert compiled(x).tolist() == (x * 10).tolist()
    del module.forward
    assert compiled(x).tolist() == (x + 1).tolist()


# -- 3. getattr with a default / hasattr answers are guarded -------------------------------
class Config:
    pass


def _config(call):
    cfg = Config()
    if call == 1:
        cfg.name = "set"
    return cfg


def test_3_getattr_default_recompiles_when_set(backend):
    def f(x, cfg):
        if getattr(cfg, "name", False):
            return x + 1
        return x - 1

    assert_transparent(f, lambda c: (t(c), _config(c)), backend)


def test_3_hasattr_recompiles_when_set(backend):
    def f(x, cfg):
        if hasattr(cfg, "name"):
            return x * 2
        return x * 3

    assert_transparent(f, lambda c: (t(c), _config(c)), backend)


SHARED = Config()


def test_3_hasattr_on_the_same_object_after_setattr(backend):
    def f(x):
        if hasattr(SHARED, "z"):
            return x + SHARED.z
        return x - 1

    compiled = dl.compile(f, backend=backend)
    x = t(0)
    assert compiled(x).tolist() == f(x).tolist()
    SHARED.z = 5
    try:
        assert compiled(x).tolist() == f(x).tolist() == (x + 5).tolist()
    finally:
        del SHARED.z
    assert compiled(x).tolist() == (x - 1).tolist()


# -- 4. a class with its own __getattribute__ ----------------------------------------------
class Computed:
    def __init__(self):
        self.a = 3

    def __getattribute__(self, name):
        if name == "b":
            return 7
        return object.__getattribute__(self, name)


def test_4_own_getattribute(backend):
    def f(x, obj):
        y = x * 2
        return y * obj.b + obj.a

    assert_transparent(f, lambda c: (t(c), Computed()), backend)


# -- 5. a NamedTuple subclass with its own __getitem__ and methods -------------------------
class Pair(typing.NamedTuple):
    first: object
    second: object


class NamedPair(Pair):
    def __getitem__(self, key):
        if isinstance(key, str):
            return getattr(self, key)
        return super().__getitem__(key)

    def total(self):
        return self.first + self.second


def test_5_namedtuple_subclass_getitem_argument(backend):
    def f(p):
        return p["first"] * 2 + p[1] + p.total()

    assert_transparent(f, lambda c: (NamedPair(t(c), t(c) * 3),), backend, graphs=1, breaks=0)


def test_5_namedtuple_subclass_built_in_frame(backend):
    def f(x):
        p = NamedPair(x, x * 2)
        return p["second"] - p[0], p.total(), p

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


# -- 6. isinstance honours a metaclass __instancecheck__ ------------------------------------
class AcceptsAll(type):
    def __instancecheck__(cls, instance):
        return True


class Anything(metaclass=AcceptsAll):
    pass


class AcceptsLists(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, list)


class ListLike(metaclass=AcceptsLists):
    pass


def test_6_metaclass_instancecheck(backend):
    def f(x, xs):
        y = x * 2
        if isinstance(y, Anything):
            y = y + 1
        if isinstance(xs, ListLike):
            y = y + len(xs)
        if isinstance(x, ListLike):
            y = y * 100
        return y

    assert_transparent(f, lambda c: (t(c), [1, 2]), backend)


# -- 7. PEP 479: StopIteration leaving a generator is a RuntimeError -------------------------
def _stops_early():
    yield 1
    raise StopIteration


def test_7_stopiteration_inside_a_generator(backend):
    def f(x):
        try:
            for v in _stops_early():
                x = x + v
        except RuntimeError as error:
            return x * 100, str(error)
        return x * 200, ""

    assert_transparent(f, lambda c: (t(c),), backend)


def _next_of_empty():
    yield next(iter([]))


def test_7_next_of_empty_inside_a_generator(backend):
    def f(x):
        try:
            return list(_next_of_empty()), x
        except RuntimeError as error:
            return str(error), x * 2

    assert_transparent(f, lambda c: (t(c),), backend)


# -- 8. grad mode after nested set_grad_enabled blocks in a try -----------------------------
@pytest.mark.parametrize("start", [True, False])
def test_8_nested_set_grad_enabled_in_try(backend, start):
    def f(x):
        try:
            with dl.set_grad_enabled(False):
                y = x * 2
                with dl.set_grad_enabled(True):
                    z = x * 3
                y = y + 1
        except ValueError:
            pass
        return y + z, y.requires_grad, z.requires_grad, dl.is_grad_enabled()

    def observed(call):
        dl.set_grad_enabled(start)
        return None

    try:
        assert_transparent(f, lambda c: (dl.tensor([1.0, 2.0], requires_grad=True),), backend,
                           setup=observed, state=dl.is_grad_enabled)
    finally:
        dl.set_grad_enabled(True)


@pytest.mark.parametrize("start", [True, False])
def test_8_set_grad_enabled_calls_in_try_finally(backend, start):
    def f(x):
        try:
            dl.set_grad_enabled(False)
            y = x * 2
            try:
                dl.set_grad_enabled(True)
                z = x * 3
            finally:
                dl.set_grad_enabled(False)
        finally:
            dl.set_grad_enabled(start)
        return y + z, z.requires_grad

    try:
        assert_transparent(f, lambda c: (dl.tensor([1.0, 2.0], requires_grad=True),), backend,
                           setup=lambda c: dl.set_grad_enabled(start), state=dl.is_grad_enabled)
    finally:
        dl.set_grad_enabled(True)


# -- 9. the compiling call keeps no reference cycle holding the inputs ------------------------
def _freed_without_gc(run) -> bool:
    """Whether the tensor ``run`` receives dies when its last reference goes, gc off."""
    gc.collect()
    gc.disable()
    try:
        x = dl.randn(64)
        ref = weakref.ref(x)
        run(x)
        del x
        return ref() is None
    finally:
        gc.enable()


def test_9_input_freed_after_compiling_call(backend):
    def f(x):
        return x * 2 + 1

    compiled = dl.compile(f, backend=backend)
    assert _freed_without_gc(compiled), "the compiling call kept its input alive in a reference cycle"
    assert _freed_without_gc(compiled), "a cached call kept its input alive"
    assert dl.stats().graph_count >= 1


def test_9_scope_tensors_freed_after_compiling_call(backend):
    made = []

    def f(x):
        y = x.sin()
        inner = y * 2
        made.append(weakref.ref(inner))
        return (inner + 1).sum()

    compiled = dl.compile(f, backend=backend)

    def run(x):
        compiled(x)

    assert _freed_without_gc(run)
    assert all(ref() is None for ref in made), "a tensor of the compiled scope stayed alive"


def test_9_module_input_freed_after_compiling_call(backend):
    model = nn.Linear(64, 4)
    compiled = dl.compile(model, backend=backend)

    def run(x):
        with dl.no_grad():
            compiled(x.reshape(1, 64))

    assert _freed_without_gc(run)
    assert _freed_without_gc(run)


class WithDefaults(typing.NamedTuple("Base", [("a", object), ("b", object), ("c", object)])):
    """A namedtuple subclass whose own ``__new__`` fills a field (PackedSequence does)."""

    __slots__ = ()

    def __new__(cls, a, b=None, c=None):
        if c is None and b is not None:
            c = b * 2
        return super().__new__(cls, a, b, c)


def test_5_namedtuple_subclass_own_new(backend):
    def f(x):
        p = WithDefaults(x, x + 1)
        return p, p.c - p.a

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)
