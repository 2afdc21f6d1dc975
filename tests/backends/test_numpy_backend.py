"""The numpy backend: fused blocks, buffer reuse, simplifications, aliasing, zoo workloads vs eager."""
from __future__ import annotations


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from benchmarks.models import WORKLOADS
from dynamo_lite.backends.numpy import NumpyBackend
from dynamo_lite.backends.numpy.blocking import plan_blocking
from dynamo_lite.backends.numpy.templates import TEMPLATES
from tests.helpers import assert_compiled, assert_equal_values, run_in_threads


class Recording:
    """A NumpyBackend that keeps the generated function of every graph it compiles."""

    def __init__(self, **options):
        self.backend = NumpyBackend(**options)
        self.functions = []

    def __call__(self, gm, example_inputs):
        function = self.backend(gm, example_inputs)
        self.functions.append(function)
        return function

    @property
    def programs(self):
        return [f.program for f in self.functions if hasattr(f, "program")]


def run_both(fn, *args, **options):
    """(eager result, compiled result, Recording) of one call each, on copies of ``args``."""
    eager_args = [a.clone() if isinstance(a, dl.Tensor) else a for a in args]
    compiled_args = [a.clone() if isinstance(a, dl.Tensor) else a for a in args]
    recording = Recording(**options)
    compiled = dl.compile(fn, backend=recording)
    return fn(*eager_args), compiled(*compiled_args), recording


def assert_bitwise(actual, expected):
    """Same dtype, shape, strides and bits (NaNs included)."""
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_bitwise(a, e)
        return
    if expected is None:
        assert actual is None
        return
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert actual.stride() == expected.stride(), (actual.stride(), expected.stride())
    a, e = np.ascontiguousarray(actual.detach().numpy()), np.ascontiguousarray(expected.detach().numpy())
    assert np.array_equal(a.view(np.uint8), e.view(np.uint8)), np.abs(a.astype(float) - e.astype(float)).max()


SMALL_BLOCKS = {"block_bytes": 256}  # 64 float32 per block: many blocks even for small tensors


# -- fused blocks ---------------------------------------------------------------------------
def chain(x, y):
    return ((x * y + 1).sigmoid() * x.tanh() - y).relu()


def test_pointwise_chain_runs_as_one_blocked_group_and_matches_bitwise():
    x, y = dl.randn(37, 29), dl.randn(37, 29)
    expected, actual, rec = run_both(chain, x, y, **SMALL_BLOCKS)
    assert_bitwise(actual, expected)
    (program,) = rec.programs
    (group,) = program.groups
    assert len(group.group.nodes) == 7 and group.blocking.block_count > 4
    assert len(group.scratch_dtypes) == 2  # seven ops computed in place in two block arrays
    assert "_run_blocks(" in program.source and "for _I" in program.source


def test_large_groups_are_shared_by_two_threads():
    x, y = dl.randn(1024, 1024), dl.randn(1024, 1024)
    expected, actual, rec = run_both(chain, x, y, threads=2)
    assert_bitwise(actual, expected)
    (group,) = rec.programs[0].groups
    assert group.parts == 2


def test_an_error_in_a_worker_thread_reaches_the_caller():
    def f(a, b):
        return (a * 3) // b - a

    a = dl.ones(1024, 1024, dtype=dl.int32)
    b = dl.ones(1024, 1024, dtype=dl.int32)
    b[1000, 5] = 0  # in the last blocks: the worker's share
    rec = Recording(threads=2)
    with pytest.raises(RuntimeError) as compiled_error:
        dl.compile(f, backend=rec)(a, b)
    assert rec.programs[0].groups[0].parts == 2
    with pytest.raises(RuntimeError) as eager_error:
        f(a, b)
    assert str(compiled_error.value) == str(eager_error.value)


@pytest.mark.parametrize("shapes", [((6, 5, 7), (7,)), ((6, 5, 7), (5, 1)), ((6, 1, 7), (1, 5, 1)), ((4, 9), ())])
def test_broadcast_inputs_in_blocks(shapes):
    sx, sy = shapes
    x, y = dl.randn(*sx), dl.randn(*sy)
    expected, actual, rec = run_both(lambda a, b: (a * b - a).exp() + b, x, y, **SMALL_BLOCKS)
    assert_bitwise(actual, expected)


def test_single_op_group_over_a_two_dim_iteration_space():
    # A bias add alone: no scratch, and every block index is a tuple (row, column slice).
    x, b = dl.randn(6, 200), dl.randn(200)
    expected, actual, rec = run_both(lambda a, c: a + c, x, b, **SMALL_BLOCKS)
    assert_bitwise(actual, expected)
    (group,) = rec.programs[0].groups
    assert group.blocking.shape == (6, 200) and group.blocking.block_shape == (64,)


@pytest.mark.parametrize("make", [
    lambda: dl.randn(12, 10).t(),
    lambda: dl.randn(12, 20)[:, ::2],
    lambda: dl.randn(3, 4, 6, 5).contiguous(memory_format=dl.channels_last),
    lambda: dl.randn(5, 1, 8).expand(5, 3, 8),
    lambda: dl.randn(40)[3:33].view(5, 6),
])
def test_non_contiguous_inputs_keep_eager_layout(make):
    x = make()
    expected, actual, _ = run_both(lambda a: (a * 2 + 1).sigmoid() - a, x, **SMALL_BLOCKS)
    assert_bitwise(actual, expected)


def test_group_output_read_inside_and_outside_the_group():
    def f(x):
        a = x * 3
        b = a.exp() + a
        return a, b * 2, b.sum()

    expected, actual, _ = run_both(f, dl.randn(20, 30), **SMALL_BLOCKS)
    assert_bitwise(actual, expected)


def test_mixed_dtypes_and_kernels_inside_a_group():
    def f(i, x):
        y = i * 2.5 + x  # int tensor with float scalar: promotion runs the kernel
        return (y > 0).logical_and(x < 1), dl.where(x > 0, y, x).gelu(), y.erf()

    i = dl.randint(-5, 5, (17, 13))
    expected, actual, _ = run_both(f, i, dl.randn(17, 13), **SMALL_BLOCKS)
    assert_bitwise(actual, expected)


def test_integer_division_by_zero_raises_like_eager():
    def f(a, b):
        return (a * 2) // b + 1

    a, b = dl.tensor([1, 2, 3]), dl.tensor([1, 0, 1])
    with pytest.raises(RuntimeError) as eager_error:
        f(a, b)
    with pytest.raises(RuntimeError) as compiled_error:
        dl.compile(f, backend="numpy")(a, b)
    assert str(compiled_error.value) == str(eager_error.value)


def test_plan_blocking_merges_dims_and_keeps_broadcasts_apart():
    contiguous = plan_blocking((64, 64), (64, 1), [(64, 1), (64, 1)], 4, block_bytes=1024)
    assert contiguous.shape == (4096,) and contiguous.block_shape == (256,) and contiguous.block_count == 16
    bias = plan_blocking((64, 64), (64, 1), [(64, 1), (0, 1)], 4, block_bytes=1024)
    assert bias.shape == (64, 64) and bias.block_shape == (4, 64)
    assert plan_blocking((8, 8), (8, 1), [(8, 1)], 4, block_bytes=1024) is None


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
def test_every_template_is_bitwise_equal_to_its_kernel(name, dtype):
    values = np.concatenate([np.random.default_rng(0).standard_normal(300) * 4,
                             [0.0, -0.0, 1e-40, -1e-40, 80.0, -80.0, 1e30, np.inf, -np.inf, np.nan]])
    x = dl.tensor(values, dtype=dtype)
    y = dl.tensor(values[::-1].copy(), dtype=dtype)
    calls = {"gelu": lambda a, b: (a * 1.5).gelu(approximate="tanh"),
             "maximum": lambda a, b: dl.maximum(a * 1.5, b), "minimum": lambda a, b: dl.minimum(a * 1.5, b),
             "add": lambda a, b: a * 1.5 + b, "sub": lambda a, b: a * 1.5 - b, "mul": lambda a, b: a * 1.5 * b,
             "div": lambda a, b: a * 1.5 / b}
    fn = calls.get(name, lambda a, b: getattr(a * 1.5, name)())
    expected, actual, rec = run_both(fn, x, y, **SMALL_BLOCKS)
    assert_bitwise(actual, expected)
    assert "_k_" + name not in rec.programs[0].source  # the template ran, not the kernel


# -- memory -------------------------------------------------------------------------------------
def mlp_like(x, w1, w2, w3):
    h = (x @ w1).relu()
    h = (h @ w2).tanh()
    return (h @ w3).sigmoid(), h


def test_buffers_are_reused_and_outputs_never_alias_them():
    args = [dl.randn(16, 32), dl.randn(32, 32), dl.randn(32, 32), dl.randn(32, 8)]
    rec = Recording()
    compiled = dl.compile(mlp_like, backend=rec)
    first = compiled(*args)
    snapshot = [t.numpy().copy() for t in first]
    second = compiled(*[a * 2 for a in args])
    for kept, tensor in zip(snapshot, first):
        np.testing.assert_array_equal(tensor.numpy(), kept)  # a later call never overwrote it
    storages = {id(t.untyped_storage()) for t in first + second}
    assert len(storages) == 4
    (program,) = rec.programs
    assert program.buffers_reused >= 1
    assert_equal_values(second, mlp_like(*[a * 2 for a in args]))


def test_calls_from_threads_each_get_their_own_pool_set():
    compiled = dl.compile(mlp_like, backend=NumpyBackend(**SMALL_BLOCKS))
    inputs = [[dl.randn(16, 32), dl.randn(32, 32), dl.randn(32, 32), dl.randn(32, 8)] for _ in range(6)]
    expected = [mlp_like(*a) for a in inputs]
    results = run_in_threads(compiled, inputs, repeats=30)
    for actual, exp in zip(results, expected):
        assert_bitwise(actual, exp)


# -- simplifications ------------------------------------------------------------------------------
def test_exact_identities_are_dropped_and_inexact_ones_kept():
    def f(x, i):
        a = (x * 1 - 0) / 1
        b = x + 0  # -0.0 + 0 is +0.0: kept for floats
        c = (i + 0) * 1  # exact for integers
        return a.exp(), b.exp(), c * 3

    x = dl.tensor([-0.0, 0.0, 1.5, -2.0])
    expected, actual, rec = run_both(f, x, dl.tensor([1, -2, 3, 4]))
    assert_bitwise(actual, expected)
    counts = rec.programs[0].simplifications
    assert counts["identity"] == 5
    assert "_np_add" in rec.programs[0].source  # x + 0 on floats stayed


def test_an_identity_that_is_an_output_stays_a_new_tensor():
    def f(x):
        return x * 1

    x = dl.randn(4)
    out = dl.compile(f, backend="numpy")(x)
    assert out is not x and out.untyped_storage() is not x.untyped_storage()
    assert_bitwise(out, f(x))


def test_an_identity_whose_view_is_an_output_stays_a_new_tensor():
    # Fuzz seed 4960: the output, a view of ``y * 1``, shared the input's storage.
    def f(x):
        return (x * 1).view(12).view(3, 4), x * 1.0

    x = dl.randn(3, 4)
    for out in dl.compile(f, backend="numpy")(x):
        assert out.untyped_storage() is not x.untyped_storage()


def test_consecutive_views_merge_and_linear_bias_joins_the_fused_group():
    def f(x, w, b):
        y = x.view(6, 4).view(2, 12).t().t()
        return dl.nn.functional.linear(y, w, b).relu()

    args = (dl.randn(24), dl.randn(5, 12), dl.randn(5))
    expected, actual, rec = run_both(f, *args)
    assert_bitwise(actual, expected)
    counts = rec.programs[0].simplifications
    assert counts["views"] >= 2 and counts["linear_bias"] == 1
    (group,) = rec.programs[0].groups
    assert [n.target.name for n in group.group.nodes] == ["add", "relu"]


def test_transposed_matmul_arguments_are_not_copied():
    def f(x, w):
        return x.mm(w.t()) + 1

    expected, actual, rec = run_both(f, dl.randn(8, 16), dl.randn(4, 16))
    assert_bitwise(actual, expected)
    source = rec.programs[0].source
    assert ".swapaxes(0, 1)" in source and "_k_clone" not in source


# -- aliasing and mutation ---------------------------------------------------------------------
def test_inplace_on_an_input_and_its_view_updates_it_and_bumps_versions():
    def f(x):
        x.add_(1)
        x[1:3].mul_(10)
        return x * 2

    base, expected_base = dl.zeros(4), dl.zeros(4)
    view = base[0:2]
    expected = f(expected_base)
    out = dl.compile(f, backend="numpy")(base)
    assert_bitwise(base, expected_base)
    assert_bitwise(out, expected)
    assert base._version == expected_base._version == 2
    np.testing.assert_array_equal(view.numpy(), [1.0, 10.0])


def test_views_returned_share_storage_like_eager():
    def f(x):
        y = x + 1
        return x.t(), y, y[0], x

    x = dl.randn(3, 4)
    out = dl.compile(f, backend="numpy")(x)
    expected = f(x)
    assert out[0].untyped_storage() is x.untyped_storage() and out[0].stride() == expected[0].stride()
    assert out[2].untyped_storage() is out[1].untyped_storage()
    assert out[3] is x
    assert_bitwise(list(out[:3]), list(expected[:3]))


def test_random_ops_draw_what_eager_draws():
    def f(x):
        return x + dl.randn(3, 4) * 0.5, dl.rand(2)

    x = dl.randn(3, 4)
    dl.manual_seed(7)
    expected = f(x)
    compiled = dl.compile(f, backend="numpy")
    dl.manual_seed(7)
    assert_bitwise(compiled(x), expected)


def test_multi_output_ops_and_reductions():
    def f(x):
        values, indices = x.max(dim=1)
        return values * 2, indices, x.softmax(dim=-1), x.sum(dim=0, keepdim=True) - x

    expected, actual, _ = run_both(f, dl.randn(7, 9))
    assert_bitwise(actual, expected)


# -- signatures and fallbacks ---------------------------------------------------------------------
def test_a_new_signature_gets_its_own_specialization():
    rec = Recording(**SMALL_BLOCKS)
    dl.compile(chain, backend=rec)(dl.randn(8, 8), dl.randn(8, 8))
    (function,) = rec.functions
    for shape in [(5, 3), (64, 33), (8, 8)]:
        x, y = dl.randn(*shape), dl.randn(*shape)
        assert_bitwise(function(x, y)[0], chain(x, y))
    x = dl.randn(8, 8).t()
    assert_bitwise(function(x, x)[0], chain(x, x))


def test_empty_tensors_run_eagerly_and_still_match():
    expected, actual, rec = run_both(lambda x: (x * 2).relu(), dl.randn(0, 3))
    assert_bitwise(actual, expected)
    assert not rec.programs  # the graph ran through eager dispatch


# -- debug output --------------------------------------------------------------------------------
def test_generated_code_is_shown_in_debug_mode_and_graph_logs(capsys, caplog):
    dl.compile(lambda x: (x * 2).relu(), backend="numpy", debug=True)(dl.randn(3))
    err = capsys.readouterr().err
    assert "backend code of graph 0" in err and "def forward(x):" in err and "_np_maximum" in err
    dl.reset()
    dl.config.set_logs("graph")
    try:
        with caplog.at_level("DEBUG", logger="dynamo_lite.graph"):
            dl.compile(lambda x: x.exp() + 1, backend="numpy")(dl.randn(3))
    finally:
        dl.config.set_logs("")
    assert any("numpy code of" in r.getMessage() and "_np_exp" in r.getMessage() for r in caplog.records)


# -- the model zoo --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_zoo_workload_matches_eager(name):
    workload = WORKLOADS[name]
    model, inputs = workload.make(), workload.make_inputs()
    expected = model(*inputs)
    rec = Recording()
    compiled = dl.compile(model, backend=rec, fullgraph=True)
    assert_bitwise(compiled(*inputs), expected)
    assert_bitwise(compiled(*inputs), expected)  # second call: pool set reused
    trains = isinstance(model, dl.nn.Module) and any(p.requires_grad for p in model.parameters())
    assert len(rec.programs) == (2 if trains else 1)  # a model with parameters: forward and backward graphs


# -- property: random pointwise chains ----------------------------------------------------------
UNARY = ["exp", "tanh", "sigmoid", "relu", "neg", "abs", "sin", "silu", "reciprocal", "square"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]


@st.composite
def pointwise_programs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)))
    steps = draw(st.lists(st.tuples(st.sampled_from(UNARY + BINARY), st.integers(0, 50), st.booleans()),
                          min_size=1, max_size=8))
    layout = draw(st.sampled_from(["contiguous", "transposed", "broadcast"]))
    dtype = draw(st.sampled_from([dl.float32, dl.float64]))
    block_bytes = draw(st.sampled_from([64, 512, 1 << 17]))
    return shape, steps, layout, dtype, block_bytes


def _program(steps):
    def f(x, y):
        values = [x, y]
        for name, pick, scalar in steps:
            a = values[pick % len(values)]
            if name in UNARY:
                values.append(getattr(a, name)())
            elif scalar and name in ("add", "sub", "mul", "div"):
                values.append(getattr(dl, name)(a, 0.75))
            else:
                values.append(getattr(dl, name)(a, values[(pick // 3) % len(values)]))
        return values[-1], values[len(values) // 2] * 2

    return f


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pointwise_programs())
def test_random_pointwise_chains_match_eager(program):
    shape, steps, layout, dtype, block_bytes = program
    x = dl.randn(*shape, dtype=dtype)
    y = dl.randn(*shape[::-1], dtype=dtype)
    if layout == "transposed":
        y = y.permute(*range(len(shape) - 1, -1, -1))
    else:
        y = dl.randn(*shape, dtype=dtype) if layout == "contiguous" else dl.randn(shape[-1], dtype=dtype)
    fn = _program(steps)
    dl.reset()
    expected, actual, _ = run_both(fn, x, y, block_bytes=block_bytes)
    assert_bitwise(actual, expected)


def test_a_constant_array_argument_whose_repr_wraps_compiles():
    # the node comment in the generated code held the array's repr, which NumPy wraps over lines:
    # the source did not parse and the graph fell back to eager
    fn = lambda: dl.tensor([0] * 13 + [1] * 13)  # noqa: E731
    before = dl.stats()
    result = dl.compile(fn, backend="numpy")()
    assert_compiled(before, dl.stats())
    assert result.tolist() == fn().tolist()
