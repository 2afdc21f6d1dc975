"""nn.Module programs: TorchDynamo's test_modules.py cases (``make_test(module)``, expected_frame_count 1
unless the module graph-breaks on purpose) are one graph each: submodules, containers, hooks, attribute
tricks (properties, class attributes, ``getattr`` by name, ``super().forward``)."""
from __future__ import annotations

import copy

import dynamo_lite as dl
from dynamo_lite import nn

from tests.parity.harness import Case, tensors


def _seeded(module_class, *args):
    dl.manual_seed(0)
    return module_class(*args)


class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.scale = 2.0

    def forward(self, x):
        return self.linear(x).relu() * self.scale


class SequentialStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))

    def forward(self, x):
        return self.body(x)


class ModuleListLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x) + i
        return x


class ModuleListIndex(ModuleListLoop):
    def forward(self, x):
        return self.layers[-1](self.layers[0](x))


class ModuleListZip(ModuleListLoop):
    def forward(self, x):
        outs = [layer(x) for layer in self.layers[:2]]
        return sum(o * w for o, w in zip(outs, [0.5, 2.0]))


class ModuleDictLookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3)})

    def forward(self, x):
        return [self.heads[k](x) for k in ("a", "b")], list(self.heads.keys())


class ParameterAccess(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(dl.randn(4, 4))
        self.register_buffer("offset", dl.ones(4))

    def forward(self, x):
        return x @ self.weight.t() + self.offset


class NamedParametersLoop(Basic):
    def forward(self, x):
        total = x.sum() * 0
        for name, p in self.named_parameters():
            total = total + p.sum() * len(name)
        return total


class ChildrenLoop(SequentialStack):
    def forward(self, x):
        for child in self.body.children():
            x = child(x)
        return x


class TrainingFlag(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return x * 2 if self.training else self.drop(x) + 1


class WithProperty(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    @property
    def width(self):
        return self.linear.out_features

    def forward(self, x):
        return self.linear(x) * self.width


class ClassAttribute(nn.Module):
    factor = 3

    def forward(self, x):
        return x * self.factor + type(self).factor


class GetattrByName(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj_0 = nn.Linear(4, 4)
        self.proj_1 = nn.Linear(4, 4)

    def forward(self, x):
        for i in range(2):
            x = getattr(self, f"proj_{i}")(x)
        return x


class MethodCallsMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def _block(self, x, k):
        return self.linear(x) * k

    def forward(self, x):
        return self._block(x, 2) + self._block(x, 3)


class StaticAndClassMethods(nn.Module):
    @staticmethod
    def _double(x):
        return x * 2

    @classmethod
    def _name_length(cls):
        return len(cls.__name__)

    def forward(self, x):
        return self._double(x) + self._name_length()


class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        return self.linear(x)


class SuperForward(Parent):
    def forward(self, x):
        return super().forward(x).sigmoid()


class CounterAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * 2


class BufferUpdate(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("running", dl.zeros(4))

    def forward(self, x):
        self.running.mul_(0.9).add_(x.mean(0) * 0.1)
        return x - self.running


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.norm = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.norm(self.conv(x.reshape(1, 2, 4, 2))).relu()


class NormEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        idx = dl.arange(4) % 10
        return self.norm(self.embed(idx) + x)


class ConstantDictAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.config = {"scale": 2, "act": "relu"}

    def forward(self, x):
        act = getattr(dl, self.config["act"])
        return act(x) * self.config["scale"]


class ModuleInForward(nn.Module):
    def forward(self, x):
        return nn.ReLU()(x) + nn.functional.gelu(x)


class SetattrInInit(nn.Module):
    def __init__(self):
        super().__init__()
        for name in ("a", "b"):
            setattr(self, name, nn.Linear(4, 4))

    def forward(self, x):
        return self.a(x) + self.b(x)


class IsInstanceOfSubmodule(Basic):
    def forward(self, x):
        if isinstance(self.linear, nn.Linear):
            x = self.linear(x)
        return x


class ModulesLoopTypes(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))

    def forward(self, x):
        n = sum(1 for m in self.modules() if isinstance(m, nn.Linear))
        return self.seq(x) * n


def _hooked():
    module = _seeded(Basic)
    module.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    module.register_forward_hook(lambda m, args, out: out + 1)
    return module


def _hooked_with_state():
    module = _seeded(Basic)
    seen = []
    module.register_forward_hook(lambda m, args, out: seen.append(1))
    return module


MODULES = [("basic", Basic), ("sequential", SequentialStack), ("modulelist_loop", ModuleListLoop),
           ("modulelist_index", ModuleListIndex), ("modulelist_zip", ModuleListZip),
           ("moduledict", ModuleDictLookup), ("parameter_buffer", ParameterAccess),
           ("named_parameters_loop", NamedParametersLoop), ("children_loop", ChildrenLoop),
           ("training_flag", TrainingFlag), ("property", WithProperty), ("class_attribute", ClassAttribute),
           ("getattr_by_name", GetattrByName), ("method_calls_method", MethodCallsMethod),
           ("static_and_class_methods", StaticAndClassMethods), ("super_forward", SuperForward),
("buffer_update", BufferUpdate), ("conv_batchnorm", ConvBlock),
           ("norm_embedding", NormEmbed), ("constant_dict_attribute", ConstantDictAttribute),
           ("module_in_forward", ModuleInForward), ("setattr_in_init", SetattrInInit),
           ("isinstance_submodule", IsInstanceOfSubmodule), ("modules_loop_types", ModulesLoopTypes)]


def _module_case(name, build, evaluate=False, dynamo=1):
    module = build() if not isinstance(build, type) else _seeded(build)
    if evaluate:
        module.eval()
    twin = copy.deepcopy(module)  # eager and compiled each run (and mutate) their own copy
    inputs, turn = tensors((4, 4)), [0]
    getters = (lambda: module, lambda: twin)  # functions: compared by name, not by walking the module

    def make_args(call):
        turn[0] += 1
        return (getters[turn[0] % 2],) + inputs(call)

    def state():  # what a run may change: parameters, buffers, plain attributes
        current = (module, twin)[turn[0] % 2]
        return dict(current.state_dict()), getattr(current, "calls", None)
    return Case(name, _call_module, make_args, dynamo, state=state)


def _call_module(module_of, x):
    return module_of()(x)


CASES = ([_module_case(name, cls) for name, cls in MODULES]
         + [_module_case("eval_mode", TrainingFlag, evaluate=True), _module_case("forward_hooks", _hooked),
            _module_case("hook_with_state", _hooked_with_state),
            # an int attribute forward reads and changes is a constant under guard: each call recompiles once
            # in TorchDynamo too (it specializes ints; automatic dynamic comes after a second change)
            _module_case("counter_attribute", CounterAttribute, dynamo=2)])
