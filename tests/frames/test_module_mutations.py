"""After a compiled call, mutating the model (or what it reads) gives the eager result next call.

Each case compiles a model, calls it once, applies one mutation and calls it again: the
compiled result (or exception) must equal eager's, through a recompile or an entry that
is still valid, never through a silent eager fallback. Cases whose mutation changes the
result also check that it did, so a stale entry cannot pass. See NOTE: [module version
tags] for which mutations retag a module and NOTE: [guard tree] for how guards use them.
"""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from tests.helpers import assert_equal_values, run_capturing

WIDTH = 6


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(WIDTH, WIDTH)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return x + self.drop(self.lin(x).relu())


class Net(nn.Module):
    """Blocks in a ModuleList, a gain Parameter, a buffer, a plain scale and a list of factors."""

    def __init__(self, blocks: int = 4):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(blocks)])
        self.gain = nn.Parameter(dl.randn(WIDTH))
        self.register_buffer("shift", dl.randn(WIDTH))
        self.scale = 2.0
        self.factors = [1.0, 3.0]

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return (x * self.gain + self.shift) * self.scale * self.factors[1]


def _replace_block(net):
    net.blocks[2] = Block()


def _replace_parameter(net):
    net.blocks[0].lin.weight = nn.Parameter(dl.randn(WIDTH, WIDTH))


def _swap_parameter_data(net):
    net.gain.data = dl.randn(WIDTH)


def _swap_parameter_dtype(net):
    net.gain.data = dl.randn(WIDTH, dtype=dl.float64)


def _load_state_dict(net):
    net.load_state_dict(Net().state_dict())


def _load_state_dict_assign(net):
    net.load_state_dict(Net().state_dict(), assign=True)


def _set_buffer(net):
    net.shift = dl.ones(WIDTH)


def _plain_attribute(net):
    net.scale = 0.5


def _list_attribute_contents(net):
    net.factors[1] = -1.0  # the module is not touched: its own guard must catch it


def _delete_block(net):
    del net.blocks[2]


def _append_block(net):
    net.blocks.append(Block())


def _insert_block(net):
    net.blocks.insert(0, Block())


def _train(net):
    net.train()


def _eval(net):
    net.eval()


def _double(net):
    net.double()


def _half_then_float(net):
    net.half().float()  # float32 again, but the values were rounded to float16


def _to_float64(net):
    net.to(dl.float64)


def _drop_bias(net):
    net.blocks[1].lin.bias = None


def _forward_hook(net):
    net.blocks[1].register_forward_hook(lambda module, args, output: output * 2)


def _pre_hook_removed(net):
    net._test_handle.remove()


#: name -> (mutation, start in eval mode?, must the result change?)
MUTATIONS = {
    "replace a submodule": (_replace_block, True, True),
    "replace a parameter": (_replace_parameter, True, True),
    "Parameter.data = same dtype": (_swap_parameter_data, True, True),
    "Parameter.data = float64": (_swap_parameter_dtype, True, True),
    "load_state_dict": (_load_state_dict, True, True),
    "load_state_dict(assign=True)": (_load_state_dict_assign, True, True),
    "assign a buffer": (_set_buffer, True, True),
    "plain attribute": (_plain_attribute, True, True),
    "list attribute contents": (_list_attribute_contents, True, True),
    "del blocks[2]": (_delete_block, True, True),
    "blocks.append": (_append_block, True, True),
    "blocks.insert": (_insert_block, True, True),
    "eval -> train": (_train, True, True),
    "train -> eval": (_eval, False, True),
    "double()": (_double, True, True),
    "half().float()": (_half_then_float, True, True),
    "to(float64)": (_to_float64, True, True),
    "bias set to None": (_drop_bias, True, True),
    "register_forward_hook": (_forward_hook, True, True),
    "remove a forward pre-hook": (_pre_hook_removed, True, True),
}


def _call(fn, x):
    dl.manual_seed(123)  # dropout in training mode draws the same masks in both runs
    return run_capturing(fn, x)


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutation_after_compiling_gives_the_eager_result(name, backend):
    mutate, start_in_eval, changes_result = MUTATIONS[name]
    dl.manual_seed(0)
    net = Net()
    if start_in_eval:
        net.eval()
    net._test_handle = net.blocks[0].register_forward_pre_hook(lambda module, args: (args[0] + 1,))
    x = dl.randn(3, WIDTH)
    compiled = dl.compile(net, backend=backend)
    before, _ = _call(compiled, x)
    assert_equal_values(before, _call(net, x)[0], rtol=1e-5, atol=1e-5)
    assert dl.stats().frames_compiled == 1 and dl.stats().graph_count == 1
    mutate(net)
    expected, expected_exc = _call(net, x)
    actual, actual_exc = _call(compiled, x)
    assert type(actual_exc) is type(expected_exc), f"eager raised {expected_exc!r}, compiled {actual_exc!r}"
    if expected_exc is None:
        assert_equal_values(actual, expected, rtol=1e-5, atol=1e-5)
        if changes_result:
            same = expected.dtype == before.dtype and bool((expected == before).all())
            assert not same, "the mutation was meant to change the result"
    else:
        assert str(actual_exc) == str(expected_exc)
    stats = dl.stats()
    assert not stats.fallbacks, [f.reason for f in stats.fallbacks]
    assert stats.cache_hits + stats.frames_compiled >= 2  # the second call ran a compiled entry


def test_double_with_a_float32_input_promotes_like_eager(backend):
    """issue #11: .double() keeps each Parameter object and swaps its data."""

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.g = nn.Parameter(dl.randn(8))

        def forward(self, x):
            return x * self.g

    m = M()
    compiled = dl.compile(m, backend=backend)
    x = dl.randn(4, 8)
    compiled(x)
    m.double()
    assert compiled(x).dtype == m(x).dtype == dl.float64
    assert_equal_values(compiled(x), m(x))
    assert dl.stats().recompiles == 1


def test_linear_after_double_raises_the_eager_dtype_error(backend):
    dl.manual_seed(0)
    layer = nn.Linear(4, 3)
    compiled = dl.compile(layer, backend=backend)
    x = dl.randn(2, 4)
    compiled(x)
    layer.double()
    expected, expected_exc = run_capturing(layer, x)
    actual, actual_exc = run_capturing(compiled, x)
    assert expected_exc is not None and type(actual_exc) is type(expected_exc)
    assert str(actual_exc) == str(expected_exc)


SCALE = 2.0


def _reads_global(x):
    return x * SCALE


def test_global_read_as_a_constant_is_guarded(backend):
    global SCALE
    compiled = dl.compile(_reads_global, backend=backend)
    x = dl.randn(3)
    try:
        assert_equal_values(compiled(x), x * 2.0)
        SCALE = 5.0
        assert_equal_values(compiled(x), x * 5.0)
    finally:
        SCALE = 2.0
    assert dl.stats().recompiles == 1


def test_closure_cell_read_as_a_constant_is_guarded(backend):
    factor = 2.0

    def f(x):
        return x * factor

    compiled = dl.compile(f, backend=backend)
    x = dl.randn(3)
    assert_equal_values(compiled(x), x * 2.0)
    factor = 4.0
    assert_equal_values(compiled(x), x * 4.0)
    assert dl.stats().recompiles == 1


def test_module_held_by_a_plain_object_is_guarded_on_its_own(backend):
    """A module reached through a non-module object: its own tag, not its holder's."""

    class Holder:
        pass

    holder = Holder()
    holder.net = Net().eval()

    def f(x):
        return holder.net(x)

    compiled = dl.compile(f, backend=backend)
    x = dl.randn(3, WIDTH)
    compiled(x)
    holder.net.scale = 3.0
    assert_equal_values(compiled(x), f(x), rtol=1e-5, atol=1e-5)
    holder.net = Net().eval()
    assert_equal_values(compiled(x), f(x), rtol=1e-5, atol=1e-5)
    assert dl.stats().recompiles == 2


def test_unrelated_mutations_keep_the_entry(backend):
    """Retagging without a real change (a new attribute nobody reads) needs no recompile."""
    net = Net().eval()
    compiled = dl.compile(net, backend=backend)
    x = dl.randn(3, WIDTH)
    compiled(x)
    net.step = 1  # retags the root; every guard still holds
    net.blocks[0].note = "unused"
    assert_equal_values(compiled(x), net(x), rtol=1e-5, atol=1e-5)
    assert_equal_values(compiled(x), net(x), rtol=1e-5, atol=1e-5)
    stats = dl.stats()
    assert stats.recompiles == 0 and stats.cache_hits == 2
