"""Tests for dl.nn.Module / Parameter: registration, traversal, state_dict, conversion, repr."""
import copy
from collections import OrderedDict

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn


class Leaf(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(dl.ones(2, 3))
        self.register_buffer("running", dl.zeros(3))
        self.register_buffer("scratch", dl.zeros(1), persistent=False)

    def forward(self, x):
        return x @ self.w + self.running


class Tree(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()
        self.b = nn.Sequential(Leaf(), nn.ReLU())
        self.scale = nn.Parameter(dl.full((1,), 2.0))


# -- Parameter -----------------------------------------------------------------------
def test_parameter_shares_storage_with_data():
    data = dl.zeros(2, 2)
    p = nn.Parameter(data)
    assert isinstance(p, dl.Tensor) and isinstance(p, nn.Parameter)
    assert p.data_ptr() == data.data_ptr()
    data.fill_(3.0)
    assert p.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert p.requires_grad is True
    assert nn.Parameter(data, requires_grad=False).requires_grad is False


def test_parameter_default_and_type_errors():
    assert nn.Parameter().shape == (0,)
    with pytest.raises(TypeError):
        nn.Parameter(np.zeros(3))


def test_parameter_repr_and_ops_return_plain_tensors():
    p = nn.Parameter(dl.ones(2))
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert str(p) == repr(p)
    assert type(p + 1) is dl.Tensor
    assert type(p.view(2)) is dl.Tensor
    assert type(p.data) is dl.Tensor and p.data.data_ptr() == p.data_ptr()


def test_parameter_deepcopy_is_independent():
    p = nn.Parameter(dl.ones(2))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.data_ptr() != p.data_ptr()
    with dl.no_grad():  # in place on a leaf that requires grad needs no_grad, as in torch
        p.fill_(5.0)
    assert q.tolist() == [1.0, 1.0]


# -- registration --------------------------------------------------------------------
def test_setattr_registers_parameters_modules_buffers():
    m = Leaf()
    assert list(m._parameters) == ["w"]
    assert list(m._buffers) == ["running", "scratch"]
    m.sub = nn.Linear(2, 2)
    assert m._modules["sub"] is m.sub
    assert "w" not in m.__dict__ and "sub" not in m.__dict__
    m.plain = 3
    assert m.__dict__["plain"] == 3 and "plain" not in m._parameters


def test_setattr_reassignment_rules():
    m = Leaf()
    m.w = None
    assert "w" in m._parameters and m.w is None
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'w'"):
        m.w = dl.ones(2)
    m.running = dl.ones(3)  # a tensor assigned to a buffer name replaces the buffer
    assert m._buffers["running"].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="as buffer 'running'"):
        m.running = 3
    m.child = nn.ReLU()
    with pytest.raises(TypeError, match="as child module 'child'"):
        m.child = 3
    # Assigning a Parameter over a plain attribute moves it into _parameters.
    m.plain = 1
    m.plain = nn.Parameter(dl.ones(1))
    assert "plain" in m._parameters and "plain" not in m.__dict__


def test_register_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match='contain ".", got: a.b'):
        m.register_buffer("a.b", dl.ones(1))
    with pytest.raises(KeyError, match="empty string"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="should be a string"):
        m.register_buffer(1, dl.ones(1))
    with pytest.raises(TypeError, match="dl.Tensor or None required"):
        m.register_buffer("x", 3.0)
    with pytest.raises(TypeError, match="dl.nn.Parameter or None required"):
        m.register_parameter("x", dl.ones(1))
    m.attr = 1
    with pytest.raises(KeyError, match="attribute 'attr' already exists"):
        m.register_buffer("attr", dl.ones(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)


def test_assign_before_init_is_an_error():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(dl.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Bad()


def test_getattr_and_delattr():
    m = Leaf()
    assert m.running is m._buffers["running"]
    with pytest.raises(AttributeError, match="'Leaf' object has no attribute 'nope'"):
        m.nope
    del m.w
    del m.running
    assert "w" not in m._parameters and "running" not in m._buffers
    m.x = 1
    del m.x
    assert not hasattr(m, "x")
    assert "scratch" in dir(m)


def test_call_runs_forward_and_missing_forward_errors():
    m = Leaf()
    out = m(dl.ones(4, 2))
    np.testing.assert_allclose(out.detach().numpy(), np.full((4, 3), 2.0))
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


# -- traversal -----------------------------------------------------------------------
def test_named_parameters_order_and_prefixes():
    t = Tree()
    names = [n for n, _ in t.named_parameters()]
    assert names == ["scale", "a.w", "b.0.w"]
    assert [n for n, _ in t.named_parameters(prefix="model")] == ["model.scale", "model.a.w", "model.b.0.w"]
    assert [n for n, _ in t.named_parameters(recurse=False)] == ["scale"]
    assert len(list(t.parameters())) == 3
    assert [n for n, _ in t.named_buffers()] == ["a.running", "a.scratch", "b.0.running", "b.0.scratch"]
    assert len(list(t.buffers(recurse=False))) == 0


def test_named_modules_children():
    t = Tree()
    assert [n for n, _ in t.named_modules()] == ["", "a", "b", "b.0", "b.1"]
    assert [n for n, _ in t.named_children()] == ["a", "b"]
    assert list(t.children()) == [t.a, t.b]
    assert len(list(t.modules())) == 5
    assert [n for n, _ in t.named_modules(prefix="m")][:2] == ["m", "m.a"]


def test_shared_parameters_and_modules_are_deduplicated():
    shared = nn.Linear(2, 2)
    net = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(net.named_parameters(remove_duplicate=False))) == 4
    assert [n for n, _ in net.named_modules()] == ["", "0", "1"]
    assert list(net.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    m = nn.Module()
    m.p = nn.Parameter(dl.ones(1))
    m.q = m.p
    assert len(list(m.parameters())) == 1


def test_get_submodule_and_parameter():
    t = Tree()
    assert t.get_submodule("b.0") is t.b[0]
    assert t.get_submodule("") is t
    assert t.get_parameter("b.0.w") is t.b[0].w
    assert t.get_parameter("scale") is t.scale
    assert t.get_buffer("a.running") is t.a.running
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        t.get_submodule("a.zz")
    with pytest.raises(AttributeError, match="is not an nn.Module"):
        t.get_submodule("a.w")
    with pytest.raises(AttributeError, match="is not an nn.Parameter"):
        t.get_parameter("a.running")


# -- state dict ----------------------------------------------------------------------
def test_state_dict_keys_values_and_round_trip():
    src, dst = Tree(), Tree()
    with dl.no_grad():
        src.a.w.fill_(7.0)
    src.b[0].running.fill_(-1.0)
    sd = src.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["scale", "a.w", "a.running", "b.0.w", "b.0.running"]
    assert type(sd["a.w"]) is dl.Tensor and sd["a.w"].data_ptr() == src.a.w.data_ptr()
    assert isinstance(src.state_dict(keep_vars=True)["a.w"], nn.Parameter)
    w_before = dst.a.w
    ptr_before = dst.a.w.data_ptr()
    result = dst.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert dst.a.w is w_before and dst.a.w.data_ptr() == ptr_before  # copied in place
    for key, value in src.state_dict().items():
        np.testing.assert_array_equal(dst.state_dict()[key].numpy(), value.numpy())
    with dl.no_grad():
        src.a.w.fill_(0.0)  # no aliasing between source and destination
    assert dst.a.w.tolist()[0][0] == 7.0


def test_load_state_dict_reports_missing_and_unexpected_keys():
    m = Leaf()
    sd = m.state_dict()
    del sd["w"]
    sd["extra"] = dl.ones(1)
    sd["sub.x"] = dl.ones(1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for Leaf:")
    assert 'Missing key(s) in state_dict: "w".' in msg
    assert 'Unexpected key(s) in state_dict: "extra", "sub.x".' in msg
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == [] and result.unexpected_keys == []


def test_load_state_dict_shape_mismatch():
    m = nn.Linear(3, 2)
    sd = nn.Linear(4, 2).state_dict()
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape"):
        m.load_state_dict(sd)
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        m.load_state_dict(sd, strict=False)


def test_load_state_dict_casts_dtype_and_assign():
    m = nn.Linear(2, 2)
    sd = {k: v.double() * 0 + 1 for k, v in m.state_dict().items()}
    m.load_state_dict(sd)
    assert m.weight.dtype == dl.float32 and m.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    w = m.weight
    m.load_state_dict(sd, assign=True)
    assert m.weight is w and m.weight.dtype == dl.float64


def test_non_tensor_value_in_state_dict():
    m = nn.Linear(2, 2)
    sd = dict(m.state_dict(), weight=[[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(RuntimeError, match="expected dl.Tensor"):
        m.load_state_dict(sd)


# -- modes and conversion ------------------------------------------------------------
def test_train_eval_propagate():
    t = Tree()
    assert t.training and t.b[1].training
    assert t.eval() is t
    assert not any(m.training for m in t.modules())
    t.train()
    assert all(m.training for m in t.modules())
    with pytest.raises(ValueError, match="boolean"):
        t.train("yes")


def test_to_dtype_keeps_parameter_identity():
    t = Tree()
    w = t.a.w
    t.a.register_buffer("count", dl.zeros(1, dtype=dl.int64))
    assert t.to(dl.float64) is t
    assert t.a.w is w and w.dtype == dl.float64
    assert t.a.running.dtype == dl.float64
    assert t.a.count.dtype == dl.int64  # integer buffers keep their dtype
    t.half()
    assert w.dtype == dl.float16
    t.float()
    assert w.dtype == dl.float32 and w.tolist() == [[1.0] * 3] * 2
    t.double()
    assert t.scale.dtype == dl.float64
    with pytest.raises(TypeError, match="only accepts floating point"):
        t.to(dl.int32)


def test_to_device_and_memory_format():
    m = nn.Conv2d(2, 4, 3)
    m.to("cpu")
    m.cpu()
    assert m.weight.device == dl.device("cpu")
    before = m.weight.detach().numpy().copy()
    m.to(memory_format=dl.channels_last)
    assert m.weight.is_contiguous(memory_format=dl.channels_last)
    assert not m.weight.is_contiguous()
    np.testing.assert_array_equal(m.weight.detach().numpy(), before)
    assert m.bias.is_contiguous()


def test_apply_visits_children_first():
    t = Tree()
    seen = []
    assert t.apply(lambda m: seen.append(type(m).__name__)) is t
    assert seen == ["Leaf", "Leaf", "ReLU", "Sequential", "Tree"]


# -- repr ----------------------------------------------------------------------------
def test_repr_nested():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1, bias=False)))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Linear(in_features=3, out_features=1, bias=False)\n"
        "  )\n"
        ")"
    )
    assert repr(nn.Module()) == "Module()"


def test_repr_with_extra_and_children():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Identity()

        def extra_repr(self):
            return "width=3"

    assert repr(Block()) == "Block(\n  width=3\n  (fc): Identity()\n)"


def test_module_list_repr_collapses_repeats():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
    assert repr(layers) == (
        "ModuleList(\n"
        "  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
        "  (3): ReLU()\n"
        ")"
    )


# -- containers ----------------------------------------------------------------------
def test_sequential_indexing_slicing_append():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    net = nn.Sequential(a, b)
    assert len(net) == 2 and net[0] is a and net[-1] is b
    assert list(net) == [a, b]
    assert net.append(c) is net and net[2] is c
    head = net[:2]
    assert isinstance(head, nn.Sequential) and list(head) == [a, b]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        net[3]
    del net[0]
    assert list(net._modules) == ["0", "1"] and net[0] is b
    net[0] = nn.Tanh()
    assert isinstance(net[0], nn.Tanh)
    named = nn.Sequential(OrderedDict([("fc", a), ("act", b)]))
    assert named.fc is a and named[1] is b and list(named[1:]._modules) == ["act"]


def test_sequential_forward_chains():
    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    x = dl.randn(5, 4)
    expected = net[2](net[1](net[0](x)))
    np.testing.assert_allclose(net(x).detach().numpy(), expected.detach().numpy())
    assert nn.Sequential()(x) is x


def test_module_list_api():
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    layers.append(nn.Sigmoid())
    layers.extend([nn.Identity()])
    layers.insert(1, nn.SiLU())
    assert [type(m).__name__ for m in layers] == ["ReLU", "SiLU", "Tanh", "Sigmoid", "Identity"]
    assert list(layers._modules) == ["0", "1", "2", "3", "4"]
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    assert isinstance(layers[-1], nn.Identity)
    popped = layers.pop(0)
    assert isinstance(popped, nn.ReLU) and len(layers) == 4
    layers += nn.ModuleList([nn.ReLU()])
    assert len(layers) == 5
    lin = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
    assert [n for n, _ in lin.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    with pytest.raises(IndexError):
        lin[2]
    with pytest.raises(NotImplementedError):
        lin(1)


def test_module_dict_api():
    d = nn.ModuleDict({"act": nn.ReLU(), "fc": nn.Linear(2, 2)})
    assert list(d) == ["act", "fc"] and len(d) == 2 and "fc" in d
    d["out"] = nn.Tanh()
    assert list(d.keys()) == ["act", "fc", "out"]
    assert [type(v).__name__ for v in d.values()] == ["ReLU", "Linear", "Tanh"]
    assert isinstance(d.pop("act"), nn.ReLU) and "act" not in d
    d.update([("x", nn.Identity())])
    assert [k for k, _ in d.items()] == ["fc", "out", "x"]
    assert [n for n, _ in d.named_parameters()] == ["fc.weight", "fc.bias"]
    del d["x"]
    d.clear()
    assert len(d) == 0
    with pytest.raises(ValueError, match="element #0"):
        d.update([1])


# -- grad mode -----------------------------------------------------------------------
def test_grad_mode_context_managers_run_blocks_and_decorate():
    from dynamo_lite.nn.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

    def f(x):
        return x + 1

    for cm in (no_grad(), enable_grad(), inference_mode(), inference_mode(False), set_grad_enabled(False)):
        with cm:
            assert f(1) == 2
    assert dl.is_grad_enabled()
    assert no_grad()(f)(1) == 2 and no_grad(f)(1) == 2 and inference_mode(f)(1) == 2

    @no_grad()
    def g(x):
        return x * 2

    assert g(3) == 6
    with pytest.raises(ZeroDivisionError):
        with no_grad():
            1 / 0
