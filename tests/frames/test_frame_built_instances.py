"""Objects a compiled function builds in its own frame, as users write them: instances of
their classes, nn.Modules made in forward, dataclasses, deep copies, generators, dicts keyed
by objects. Each compiles into the one graph TorchDynamo makes, and behaves like eager
(results, identity of what escapes, mutations, exceptions)."""
from __future__ import annotations

import copy
import dataclasses
import functools

import numpy as np

import dynamo_lite as dl
import dynamo_lite.nn as nn
from tests.frames.differential import assert_transparent


def t(call: int, n: int = 3):
    return dl.arange(float(n)) + call


def one_graph(fn, backend, make_args=lambda c: (t(c),)):
    return assert_transparent(fn, make_args, backend, graphs=1, breaks=0)


# -- user class instances made in the frame ------------------------------------------------
class Scaler:
    def __init__(self, factor, shift=0.0):
        self.factor = factor
        self.shift = shift
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        return x * self.factor + self.shift

    def rescale(self, by):
        self.factor = self.factor * by
        return self


def test_instance_made_and_used_in_the_frame(backend):
    def f(x):
        s = Scaler(2.0, shift=1.0)
        y = s(x)
        s.rescale(3)
        return s(y) + s.calls

    one_graph(f, backend)


def test_instance_made_in_the_frame_escapes_with_its_attributes(backend):
    def f(x):
        s = Scaler(x.sum(), 1.0)
        s.rescale(2)
        s.extra = [x, 1]
        return s, s.factor

    one_graph(f, backend)


def test_instance_made_in_the_frame_stored_into_an_argument(backend):
    def f(x, registry):
        s = Scaler(3)
        registry.append(s)
        registry.append(s)  # the same object twice
        return s(x)

    one_graph(f, backend, lambda c: (t(c), []))


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, other):
        return Point(self.x + other.x, self.y + other.y)

    def __eq__(self, other):
        return isinstance(other, Point) and self.x == other.x and self.y == other.y

    __hash__ = None


def test_instances_with_dunder_methods(backend):
    def f(x):
        p = Point(x, 1) + Point(x * 2, 2)
        return p.x + p.y, p.y

    one_graph(f, backend)


class Version:
    def __init__(self, major, minor=0):
        self.major, self.minor = major, minor

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return (self.major, self.minor) == (other.major, other.minor)

    def __lt__(self, other):
        return (self.major, self.minor) < (other.major, other.minor)

    __hash__ = None


def test_comparisons_of_instances(backend):
    def f(x):
        a, b = Version(1, 2), Version(1, 3)
        plain = Scaler(1)
        checks = [a == Version(1, 2), a != b, a < b, b > a, a == 3, a != "v", plain == plain, plain != Scaler(1),
                  plain == None]  # noqa: E711
        return x + sum(checks), checks

    one_graph(f, backend)


def test_ordering_without_a_method_raises_like_eager(backend):
    def f(x):
        y = x + 1
        return y if Version(1) <= Version(2) else x  # no __le__, no __ge__: TypeError

    assert_transparent(f, lambda c: (t(c),), backend)


# -- nn.Modules made in forward ------------------------------------------------------------
def test_activation_modules_made_in_forward(backend):
    def f(x):
        act = nn.ReLU()
        seq = nn.Sequential(nn.Tanh(), nn.ReLU())
        return act(x - 2) + seq(x - 1)

    one_graph(f, backend)


def test_activation_module_made_in_forward_escapes_as_a_new_module(backend):
    def f(x, registry):
        act = nn.LeakyReLU(0.25)
        seq = nn.Sequential(act, nn.Dropout(0.0))
        registry.append(seq)
        return seq(x - 1), act, seq[0] is act

    # (modules carry a process-wide version tag, different for every module made: compared by hand)
    summary = lambda out: (out[0], type(out[1]).__name__, out[1].negative_slope, out[2])  # noqa: E731
    assert_transparent(lambda x: summary(f(x, [])), lambda c: (t(c),), backend, graphs=1, breaks=0)
    compiled = dl.compile(f, backend=backend)
    first, second = [], []
    out_a, out_b = compiled(t(0), first), compiled(t(1), second)
    for out, call in ((out_a, 0), (out_b, 1)):
        expected = summary(f(t(call), []))
        assert summary(out)[1:] == expected[1:] and out[0].tolist() == expected[0].tolist()
    assert out_a[1] is not out_b[1] and first[0][0] is out_a[1] and isinstance(first[0], nn.Sequential)
    assert first[0] is not second[0] and dl.stats().graph_breaks == 0


def test_module_list_of_activations_made_in_forward(backend):
    def f(x):
        layers = nn.ModuleList([nn.ReLU(), nn.Softplus(beta=2.0), nn.Identity()])
        for layer in layers:
            x = layer(x - 1)
        return x, len(layers), isinstance(layers[1], nn.Softplus)

    one_graph(f, backend)


def test_module_made_in_forward_from_a_tensor_breaks_with_a_reason(backend):
    def f(x):
        y = x + 1
        return nn.Softplus(beta=y.sum())(y)  # the constructor would take a tensor from the graph

    assert_transparent(f, lambda c: (t(c),), backend)
    report = dl.explain(f, backend=backend)(t(0))
    assert "creating a module inside the compiled function from a Tensor" in str(report.break_reasons[0])


def test_linear_with_a_given_weight_made_in_forward(backend):
    """Still a graph break: nn.Linear's constructor draws its initial weights from the random
    generator (the break says so); compiled must still equal eager."""
    def f(x, w, b):
        layer = nn.Linear(3, 2)
        layer.weight = nn.Parameter(w)
        layer.bias = nn.Parameter(b)
        return layer(x)

    def make_args(c):
        return t(c).reshape(1, 3), dl.ones(2, 3) * (c + 1), dl.zeros(2) + c

    assert_transparent(f, make_args, backend, setup=dl.manual_seed, state=lambda: dl.rand(2))


def test_partial_of_a_module_class(backend):
    def f(x):
        make = functools.partial(nn.LeakyReLU, 0.5)
        return make()(x - 1)

    one_graph(f, backend)


# -- iinfo/finfo of NumPy and dl, dl.device --------------------------------------------------
def test_numpy_iinfo_and_finfo_are_constants(backend):
    def f(x):
        return x.clamp(max=np.iinfo(np.int8).max) + np.finfo(np.float32).eps, np.iinfo(np.int16).min

    one_graph(f, backend)


def test_device_object_compared_and_used(backend):
    def f(x):
        dev = dl.device("cpu")
        return x.to(dev) + (1 if x.device == dev else 2), str(dev), dev.type

    one_graph(f, backend)


# -- copy.deepcopy, dataclasses, functools.wraps ---------------------------------------------
def test_deepcopy_of_a_container(backend):
    def f(x, cfg):
        local = copy.deepcopy(cfg)
        local["sizes"].append(4)
        return x * len(local["sizes"]), local

    one_graph(f, backend, lambda c: (t(c), {"sizes": [1, 2], "name": "a"}))


def test_deepcopy_of_a_module_is_transparent(backend):
    """Still a graph break (the copy of a module's parameters runs eagerly); equal to eager."""
    base = nn.Linear(3, 3)

    def f(x):
        y = x * 2
        twin = copy.deepcopy(base)
        return twin(y) - base(y), twin is base

    assert_transparent(f, lambda c: (t(c).reshape(1, 3),), backend)


def test_deepcopy_of_an_instance_made_in_the_frame(backend):
    def f(x):
        s = Scaler([1, (2, "a")], {"k": [3]})
        twin = copy.deepcopy(s)
        twin.factor.append(3)
        twin.shift["k"].append(4)
        return x * len(s.factor) + len(twin.shift["k"]), s, twin, twin.factor[1] is s.factor[1]

    one_graph(f, backend)


@dataclasses.dataclass
class Config:
    scale: float
    bias: float = 0.0
    tags: list = dataclasses.field(default_factory=list)


def test_dataclass_made_in_the_frame(backend):
    def f(x):
        cfg = Config(2.0)
        cfg.tags.append("a")
        return x * cfg.scale + cfg.bias, cfg

    one_graph(f, backend)


def test_dataclass_fields_and_asdict(backend):
    def f(x, cfg):
        names = [field.name for field in dataclasses.fields(cfg)]
        d = dataclasses.asdict(cfg)
        return x * d["scale"] + len(names), names, d

    one_graph(f, backend, lambda c: (t(c), Config(2.0 + c, 1.0, ["t"])))


def test_dataclass_replace(backend):
    def f(x, cfg):
        other = dataclasses.replace(cfg, bias=5.0)
        return x * other.scale + other.bias, other, cfg

    one_graph(f, backend, lambda c: (t(c), Config(2.0 + c)))


@dataclasses.dataclass
class Batch:
    inputs: object
    config: Config
    sizes: tuple = (1, 2)


def test_nested_dataclass_asdict_astuple_and_fields_of_the_class(backend):
    def f(x):
        batch = Batch(3, Config(0.5, tags=["a", ("b", 1)]))
        as_dict = dataclasses.asdict(batch, dict_factory=dict)
        as_tuple = dataclasses.astuple(batch.config)
        names = [field.name for field in dataclasses.fields(Batch)]
        return (x * as_dict["config"]["scale"] + as_dict["inputs"], as_dict, as_tuple, names,
                as_dict["config"]["tags"] is batch.config.tags, dataclasses.is_dataclass(batch))

    one_graph(f, backend)


def test_asdict_of_a_tensor_field_is_transparent(backend):
    """asdict deep-copies a tensor field: a graph break (copying its storage runs eagerly)."""
    def f(x):
        y = x + 1
        d = dataclasses.asdict(Batch(y, Config(2.0)))
        return d["inputs"] * d["config"]["scale"], d["inputs"] is y

    assert_transparent(f, lambda c: (t(c),), backend)
    report = dl.explain(f, backend=backend)(t(0))
    assert "copy.deepcopy of a Tensor" in str(report.break_reasons[0])


def _delegating(x):
    total = yield from _tail(x)
    yield total


def test_yield_from_gives_the_return_value_of_the_inner_generator(backend):
    def f(x):
        return list(_delegating(x))

    one_graph(f, backend)


def _double(v):
    """doubles"""
    return v * 2


def _plus_one(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) + 1

    return wrapper


def test_functools_wraps_decorator_applied_in_the_frame(backend):
    def f(x):
        wrapped = _plus_one(_double)
        return wrapped(x), wrapped.__name__, wrapped.__doc__, wrapped.__wrapped__ is _double, wrapped

    one_graph(f, backend)


# -- generators and iterators --------------------------------------------------------------
def _pairs(x):
    yield x
    yield from (x + 1, x + 2)
    yield from _tail(x)


def _tail(x):
    yield x * 10
    return "done"


def test_generator_with_yield_from(backend):
    def f(x):
        return sum(_pairs(x)), list(_pairs(x))[-1]

    one_graph(f, backend)


def test_next_on_a_generator(backend):
    def f(x):
        gen = _pairs(x)
        first = next(gen)
        second = next(gen)
        rest = list(gen)
        return first + second, len(rest), next(gen, "empty")

    one_graph(f, backend)


class Window:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        for i in range(len(self.items) - 1):
            yield self.items[i] + self.items[i + 1]


class Countdown:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n


def test_user_iter_as_a_generator(backend):
    def f(x):
        return [v * 2 for v in Window([x, x + 1, x + 2])]

    one_graph(f, backend)


def test_user_iterator_with_next(backend):
    def f(x):
        total = x
        for k in Countdown(3):
            total = total + k
        return total

    one_graph(f, backend)


class Bag:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __contains__(self, value):
        return value in self.items

    def __call__(self, x):
        return x * len(self.items)


class Empty:
    def __len__(self):
        return 0


def test_container_protocols_of_a_user_class(backend):
    def f(x):
        bag = Bag([1, 2, 3])
        flags = [callable(bag), callable(Window([x])), 2 in bag, 5 in bag, bool(bag), bool(Empty()),
                 1 in Countdown(3), 7 in Countdown(2)]
        if bag and not Empty():
            x = x + 1
        return bag(x) + bag[1] + len(bag), flags, bag[-1:]

    one_graph(f, backend)


def test_len_without_a_method_raises_like_eager(backend):
    def f(x):
        y = x + 1
        return y * len(Scaler(1))

    assert_transparent(f, lambda c: (t(c),), backend)


# -- id(), dicts/sets keyed by objects, in, dict views, callable ----------------------------
def test_id_of_a_module_keys_a_dict(backend):
    layer = nn.Linear(3, 3)

    def f(x):
        seen = {id(layer): "layer"}
        return x + len(seen[id(layer)])

    one_graph(f, backend)


def test_dict_keyed_by_tensors(backend):
    def f(x, y):
        scale = {x: 2, y: 3}
        return x * scale[x] + y * scale[y], len(scale)

    one_graph(f, backend, lambda c: (t(c), t(c + 1)))


def test_dict_keyed_by_tensors_recompiles_when_the_arguments_alias(backend):
    shared = t(5)

    def f(x, y):
        scale = {x: 2, y: 3}
        return x * scale[x], len(scale)

    assert_transparent(f, lambda c: (t(c), t(c + 1)) if c < 2 else (shared, shared), backend, calls=4)


def test_is_between_arguments_recompiles_when_they_alias(backend):
    shared, box = t(5), [Scaler(1)]

    def f(x, y, a, b):
        return x + 1, x is y, a is b, a is not b

    assert_transparent(f, lambda c: (t(c), t(c + 1), box[0], Scaler(2)) if c < 2 else (shared, shared, box[0], box[0]),
                       backend, calls=4)


def test_set_of_modules(backend):
    a, b = nn.ReLU(), nn.Tanh()

    def f(x):
        mods = {a, b, a}
        return x + len(mods), a in mods

    one_graph(f, backend)


def test_in_on_a_list_of_tensors(backend):
    def f(x, y):
        items = [x, y]
        return x + 1 if x in items else x - 1

    one_graph(f, backend, lambda c: (t(c), t(c + 1)))


def test_in_compares_the_elements_before_a_tensor_like_eager(backend):
    def f(x, y):
        z = x * 2
        items = [x, y]
        return z + 1 if y in items else z - 1  # x == y first: an ambiguous bool in eager

    assert_transparent(f, lambda c: (t(c), t(c + 1)), backend)


def test_in_on_a_list_of_modules_and_a_dict_keyed_by_objects(backend):
    a, b = nn.ReLU(), nn.Tanh()

    def f(x, m):
        scale = {a: 2, b: 3}
        return x * scale[m] + (1 if m in [a, b] else 0), m in scale

    one_graph(f, backend, lambda c: (t(c), a if c % 2 else b))


def test_dict_keys_as_a_value(backend):
    def f(x, d):
        keys = d.keys()
        d["z"] = 3
        return x + len(keys), list(keys), "z" in keys

    one_graph(f, backend, lambda c: (t(c), {"a": 1}))


def test_callable(backend):
    def f(x, fn):
        return (fn(x) if callable(fn) else x + fn), callable(Scaler), callable(3)

    one_graph(f, backend, lambda c: (t(c), (lambda v: v * 3) if c % 2 else 5))


def test_dict_fromkeys_of_a_list_of_names(backend):
    def f(x, names):
        d = dict.fromkeys(names)
        d[names[0]] = x + 1
        return d

    one_graph(f, backend, lambda c: (t(c), ["a", "b"]))
