"""The cupy backend's generated kernels, *run* without a GPU: the same CUDA sources are
compiled by the host C++ compiler with a shim for the CUDA built-ins (backends/cupy/emulation.py)
and must agree with eager on values, dtypes, shapes and strides."""
import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import dynamo_lite as dl
from benchmarks.models import WORKLOADS
from dynamo_lite.backends import registry
from dynamo_lite.backends.cupy import CupyBackend, launch_config, lower
from dynamo_lite.backends.cupy.emulation import EMULATED_LAUNCH, HostEmulationRuntime, compiler
from dynamo_lite.backends.cupy.kernel import ELEMENTWISE, ROWS
from dynamo_lite.backends.cupy.runtime import Launch
from tests.backends.cupy_cases import CASES, case_params

pytestmark = [
    pytest.mark.skipif(compiler() is None, reason="no host C++ compiler to emulate CUDA kernels"),
    # The eager gelu kernel warns on inf inputs (eager's behaviour, not the backend's).
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
]


@pytest.fixture(scope="module")
def emulated():
    backend = CupyBackend(HostEmulationRuntime, device_type="cpu")
    registry.register_backend("cupy_emulated", backend, devices=("cpu",), override=True)
    yield backend
    registry.unregister_backend("cupy_emulated")


def as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def tolerance(dtype):
    return {dl.float16: 2e-3, dl.float32: 2e-5, dl.float64: 1e-12}.get(dtype, 0)


def assert_matches_eager(fn, *inputs, backend, rtol=None, atol=None):
    expected = as_tuple(fn(*inputs))
    # fullgraph: a backend failure must raise, not quietly run the function eagerly
    actual = as_tuple(dl.compile(fn, backend=backend, fullgraph=True)(*inputs))
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        where = f"output {i}"
        if e is None:  # e.g. the GPT's loss without targets
            assert a is None, where
            continue
        assert (a.dtype, a.shape, a.stride()) == (e.dtype, e.shape, e.stride()), where
        tol = tolerance(e.dtype)
        np.testing.assert_allclose(a.detach().numpy().astype(np.float64), e.detach().numpy().astype(np.float64),
                                   rtol=tol if rtol is None else rtol, atol=tol if atol is None else atol,
                                   err_msg=where)


@pytest.mark.parametrize("case, dtype", case_params(), ids=lambda v: str(v).replace("dynamo_lite.", ""))
def test_every_rule_matches_eager(emulated, case, dtype):
    program, make_inputs, _ = CASES[case]
    assert_matches_eager(program, *make_inputs(dtype), backend="cupy_emulated")


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_model_zoo_matches_eager(emulated, name):
    workload = WORKLOADS[name]
    assert_matches_eager(workload.make(), *workload.make_inputs(), backend="cupy_emulated",
                         rtol=workload.rtol, atol=workload.atol)


# -- row kernels: a block per row, a thread per row ------------------------------------
def rows_program(x, w, b):
    t = x.transpose(0, 2)  # non-contiguous input
    return (x.sum(), x.sum(2), (x * 2 + 1).mean((0, 2), keepdim=True), t.amax(1), (x - 1).abs().amin(0),
            dl.softmax(x, 2), dl.softmax(t, 1), dl.log_softmax(x * 0.5, 0),
            dl.layer_norm(x, (40,), w, b), dl.layer_norm(t + 1, (6, 5)), (x > 0).all(), (x > 3).any(2))


def emulated_launches(fn, *inputs) -> list:
    return [(k.kind, launch_config(k, **EMULATED_LAUNCH)) for k in lower(dl.explain(fn)(*inputs).graphs[0]).kernels
            if k.launch == ROWS]


def test_row_kernels_match_eager(emulated):
    dl.manual_seed(0)
    x, w, b = dl.randn(5, 6, 40), dl.randn(40), dl.randn(40)
    assert_matches_eager(rows_program, x, w, b, backend="cupy_emulated")
    launches = [launch for _, launch in emulated_launches(rows_program, x, w, b)]
    # a thread per row, several lanes per row, several rows per block with several lanes each
    assert {launch.lanes for launch in launches} == {1, EMULATED_LAUNCH["max_lanes"]}
    assert any(launch.lanes > 1 and launch.block > launch.lanes for launch in launches)


def test_many_short_rows_use_a_thread_per_row(emulated):
    def fn(x):
        return (x * x).sum(1), dl.softmax(x, 1)

    x = dl.randn(9000, 20)
    launches = emulated_launches(fn, x)
    assert [(kind, launch.lanes) for kind, launch in launches] == [("reduction", 1), ("softmax", 1)]
    assert lower(dl.explain(fn)(x).graphs[0]).kernels[0].nodes[0].target.name == "mul"
    assert_matches_eager(fn, x, backend="cupy_emulated")


def test_sums_over_outer_axes_repeat_eager_bit_for_bit(emulated):
    """NOTE: [summation order]: where the innermost axis is kept, eager adds row after row in
    float32, and so does the kernel (one thread per output, in memory order)."""
    def fn(g, x):
        return g.sum((0, 1)), (x * 3).mean(0), dl.softmax(x, 0)

    dl.manual_seed(5)
    g, x = dl.randn(8, 128, 24) * 100 + 1, dl.randn(1000, 7)
    kernels = lower(dl.explain(fn)(g, x).graphs[0]).kernels
    assert [k.in_order for k in kernels] == [True, True, True]
    assert {launch_config(k, **EMULATED_LAUNCH).lanes for k in kernels} == {1}
    expected = fn(g, x)
    actual = dl.compile(fn, backend="cupy_emulated", fullgraph=True)(g, x)
    for a, e in zip(actual[:2], expected[:2]):
        np.testing.assert_array_equal(a.numpy(), e.numpy())
    np.testing.assert_allclose(actual[2].numpy(), expected[2].numpy(), rtol=1e-6)
    # along the innermost axis eager sums pairwise; the kernel in double: within eager's error
    row_sums = lower(dl.explain(lambda x: x.sum(1))(x.t().contiguous()).graphs[0]).kernels
    assert [k.in_order for k in row_sums] == [False] and "double acc" in row_sums[0].source


def run_rows_kernel(runtime, kernel, inputs, config):
    out = dl.empty(kernel.outputs[0].meta["val"].shape)
    runtime.launch(runtime.load(kernel), kernel, inputs, [out], config)
    return out


@pytest.mark.parametrize("rows", [1, 7])
def test_row_kernels_give_one_result_under_every_launch(emulated, rows):
    """One source for every split of a block into rows (NOTE: [rows per block]): any
    power-of-two lanes per row, rows per block, and grid (fewer blocks than rows too)."""
    def fn(x, w):
        return x.sum(1), dl.softmax(x * 2, 1), dl.layer_norm(x, (37,), w)

    dl.manual_seed(3)
    x, w = dl.randn(rows, 37), dl.randn(37)
    expected = fn(x, w)
    runtime = HostEmulationRuntime()
    for kernel, want in zip(lower(dl.explain(fn)(x, w).graphs[0]).kernels, expected):
        inputs = [x if n.name == "x" else w for n in kernel.inputs]
        itemsize = kernel.shared_itemsize
        for lanes, rows_per_block, grid in [(1, 1, 1), (1, 3, 2), (2, 4, 1), (4, 2, 3), (8, 1, 2), (16, 2, 5)]:
            block = lanes * rows_per_block
            config = Launch(grid, block, block * itemsize, lanes)
            got = run_rows_kernel(runtime, kernel, inputs, config)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=2e-6,
                                       err_msg=f"{kernel.kind} with {config}")


def test_empty_and_zero_dim_tensors(emulated):
    def fn(x, s):
        return x + 1, x.sum(0), x.sum(1), s * 2, s.sum(), dl.softmax(x, 1)

    assert_matches_eager(fn, dl.zeros(0, 3), dl.tensor(1.5), backend="cupy_emulated")


# -- fusion decisions ---------------------------------------------------------------------
def kinds(fn, *inputs):
    return [k.kind for k in lower(dl.explain(fn)(*inputs).graphs[0]).kernels]


def test_a_prologue_is_absorbed_only_when_nothing_else_reads_it(emulated):
    x = dl.randn(4, 8)
    assert kinds(lambda x: (x * 2 + 1).relu().sum(1), x) == ["reduction"]
    assert kinds(lambda x: dl.softmax(x * 0.1, 1), x) == ["softmax"]
    def both(x):
        z = x * 2
        return z.sum(1), z  # the product is also returned: it is stored, then reduced

    assert kinds(both, x) == ["pointwise", "reduction"]
    assert_matches_eager(both, x, backend="cupy_emulated")


def test_mutation_between_group_and_reduction_blocks_the_prologue(emulated):
    def fn(x, y):
        z = x * 2
        x.add_(1)  # z must be computed before this write, not inside the sum below
        return z.sum(), y + x

    x = dl.randn(4, 8)
    expected = fn(x.clone(), dl.ones(8))
    actual = dl.compile(fn, backend="cupy_emulated", fullgraph=True)(x.clone(), dl.ones(8))
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-6)


def test_integer_division_stays_eager_and_raises_like_eager(emulated):
    def fn(x, y):
        return x // y + 1

    x, y = dl.tensor([5, 7]), dl.tensor([2, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(x, y)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        dl.compile(fn, backend="cupy_emulated", fullgraph=True)(x, y)
    assert kinds(fn, x, dl.tensor([2, 3])) == ["pointwise"]  # only the + 1


def test_kernel_rejects_inputs_of_another_geometry(emulated):
    (gm,) = dl.explain(lambda x: x + 1)(dl.randn(3, 4)).graphs
    lowered = lower(gm, emulated.runtime or HostEmulationRuntime())
    with pytest.raises(RuntimeError, match="generated for"):
        lowered.module()(dl.randn(4, 3).t())


def test_launch_configuration():
    from types import SimpleNamespace

    def K(**fields):
        return SimpleNamespace(**{"in_order": False, **fields})

    assert launch_config(K(launch=ELEMENTWISE, work=1000, row_size=1, shared_itemsize=0)) == (4, 256, 0, None)
    assert launch_config(K(launch=ELEMENTWISE, work=10**9, row_size=1, shared_itemsize=0))[0] == 65535 * 4
    # (grid, block, shared bytes, lanes): two rows of 100 per block of 256 threads
    assert launch_config(K(launch=ROWS, work=7, row_size=100, shared_itemsize=4)) == (4, 256, 1024, 128)
    assert launch_config(K(launch=ROWS, work=7, row_size=5000, shared_itemsize=8)) == (7, 256, 2048, 256)
    assert launch_config(K(launch=ROWS, work=1, row_size=40, shared_itemsize=8)) == (1, 64, 512, 64)
    # short rows, or rows summed in order: a thread per row, no shared memory, no more threads than rows
    assert launch_config(K(launch=ROWS, work=3, row_size=3, shared_itemsize=4)) == (1, 3, 0, 1)
    assert launch_config(K(launch=ROWS, work=9000, row_size=20, shared_itemsize=4)) == (36, 256, 0, 1)
    assert launch_config(K(launch=ROWS, work=768, row_size=1024, shared_itemsize=4, in_order=True)) == (3, 256, 0, 1)
    assert launch_config(K(launch=ROWS, work=3, row_size=40, shared_itemsize=4), **EMULATED_LAUNCH) == (2, 8, 32, 4)


# -- property: random pointwise chains over random layouts -------------------------------
UNARY = ("exp", "tanh", "sigmoid", "relu", "neg", "abs")
BINARY = ("add", "mul", "sub", "maximum")


@st.composite
def chains(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    layout = draw(st.sampled_from(["contiguous", "transposed", "sliced", "broadcast"]))
    steps = draw(st.lists(st.tuples(st.sampled_from(UNARY + BINARY), st.booleans()), min_size=1, max_size=5))
    dtype = draw(st.sampled_from([dl.float32, dl.float64]))
    return shape, layout, steps, dtype


def make_operand(shape, layout, dtype, seed):
    dl.manual_seed(seed)
    if layout == "transposed" and len(shape) > 1:
        return dl.randn(*reversed(shape), dtype=dtype).permute(*reversed(range(len(shape))))
    if layout == "sliced":
        return dl.randn(*shape[:-1], shape[-1] * 2, dtype=dtype)[..., ::2]
    if layout == "broadcast":
        return dl.randn(shape[-1], dtype=dtype).expand(*shape)
    return dl.randn(*shape, dtype=dtype)


@settings(max_examples=10, deadline=None)
@given(chains())
def test_random_pointwise_chains_match_eager(emulated, chain):
    shape, layout, steps, dtype = chain
    x = make_operand(shape, layout, dtype, 1)
    y = make_operand(shape[-1:], "contiguous", dtype, 2)  # broadcasts along the leading dims

    def fn(x, y):
        value = x
        for name, use_y in steps:
            op = getattr(dl, name)
            value = op(value) if name in UNARY else op(value, y if use_y else x)
        return value

    assert_matches_eager(fn, x, y, backend="cupy_emulated")


# -- property: random row kernels over random layouts ------------------------------------
@st.composite
def row_programs(draw):
    shape = tuple(draw(st.lists(st.integers(2, 40), min_size=1, max_size=3)))
    layout = draw(st.sampled_from(["contiguous", "transposed", "sliced"]))
    dims = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    op = draw(st.sampled_from(["sum", "mean", "amax", "softmax", "log_softmax"]))
    return shape, layout, tuple(sorted(dims)), op


@settings(max_examples=10, deadline=None)
@given(row_programs())
@example(((20, 2, 20), "transposed", (0,), "sum"))  # a cancelling sum: off by 2.4e-6 absolute
def test_random_row_kernels_match_eager(emulated, program):
    """Sums are within float32 rounding of eager's, amax is eager's bits (NOTE: [summation order])."""
    shape, layout, dims, op = program
    dl.reset()  # one code object for every example: its cache entries must not pile up
    x = make_operand(shape, layout, dl.float32, 4) * 10 + 1

    def fn(x):
        if op in ("softmax", "log_softmax"):
            return getattr(dl, op)(x * 2, dims[0])
        return getattr(x * 2, op)(dims)

    (kernel,) = lower(dl.explain(fn)(x).graphs[0]).kernels
    expected = fn(x)
    actual = dl.compile(fn, backend="cupy_emulated", fullgraph=True)(x)
    assert (actual.shape, actual.stride()) == (expected.shape, expected.stride())
    if op == "amax":  # order-free: eager's bits
        np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    elif op in ("sum", "mean"):
        # Another order's rounding is bounded by the magnitudes summed, not by the result
        # (which cancellation can make tiny). An in-order kernel repeats NumPy's in-memory-order
        # loop, but which order NumPy's own reduction takes depends on the SIMD loops the CPU
        # gets (it differed in the last bit on an AVX2 machine), so both are held to the bound
        # of two n-term sums: (n - 1) float32 epsilons of sum(|terms|), at least 4.
        terms = int(np.prod([shape[d] for d in dims]))
        magnitude = getattr(np.abs(x.numpy() * 2), op)(axis=dims)
        bound = max(terms - 1, 4) * np.finfo(np.float32).eps * magnitude
        assert np.all(np.abs(actual.numpy() - expected.numpy()) <= bound)
    else:
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=2e-6, atol=2e-6)
