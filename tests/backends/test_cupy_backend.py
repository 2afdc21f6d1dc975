"""The cupy backend on a GPU: compiled graphs agree with eager CUDA (and CPU) runs. Tests
marked ``cuda`` skip, with the reason, where CuPy or a device is missing; the registry and
error tests at the top run everywhere."""
import numpy as np
import pytest

import dynamo_lite as dl
from benchmarks.models import WORKLOADS
from dynamo_lite.backends import backend_spec, best_backend, lookup_backend
from dynamo_lite.backends.registry import AUTO
from tests.backends.cupy_cases import CASES, case_params

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


# -- everywhere --------------------------------------------------------------------------
def test_cupy_is_registered_for_cuda_and_preferred_by_auto():
    spec = backend_spec("cupy")
    assert spec.devices == {"cuda"}
    assert spec.priority > backend_spec("eager").priority
    assert best_backend({"cuda"}) == "cupy"
    assert best_backend({"cpu"}) != "cupy"


def test_cupy_backend_rejects_cpu_inputs_by_name():
    (gm,) = dl.explain(lambda x: x + 1)(dl.ones(3)).graphs
    with pytest.raises(RuntimeError, match=r"backend 'cupy' compiles graphs whose tensors are on cuda, "
                                           r"but an input is on cpu"):
        lookup_backend("cupy")(gm, [dl.ones(3)])


# -- on a GPU ------------------------------------------------------------------------------
def as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def assert_close(actual, expected, rtol, atol, check_strides=True):
    for i, (a, e) in enumerate(zip(as_tuple(actual), as_tuple(expected))):
        if e is None:  # e.g. the GPT's loss without targets
            assert a is None, f"output {i}"
            continue
        assert a.device == dl.device("cuda:0"), f"output {i} is on {a.device}"
        assert (a.dtype, a.shape) == (e.dtype, e.shape), f"output {i}"
        if check_strides:
            assert a.stride() == e.stride(), f"output {i}"
        np.testing.assert_allclose(a.cpu().numpy().astype(np.float64), e.cpu().numpy().astype(np.float64),
                                   rtol=rtol, atol=atol, err_msg=f"output {i}")


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_model_zoo_compiled_matches_eager_on_gpu(name):
    workload = WORKLOADS[name]
    model, inputs = workload.make(), workload.make_inputs()
    if isinstance(model, dl.nn.Module):
        model = model.to("cuda")
    inputs = tuple(x.to("cuda") for x in inputs)
    expected = model(*inputs)
    actual = dl.compile(model, backend="cupy", fullgraph=True)(*inputs)
    assert_close(actual, expected, workload.rtol, workload.atol)


@pytest.mark.cuda
@pytest.mark.parametrize("case, dtype", case_params(), ids=lambda v: str(v).replace("dynamo_lite.", ""))
def test_every_rule_matches_eager_on_gpu(case, dtype):
    program, make_inputs, _ = CASES[case]
    cpu_inputs = make_inputs(dtype)
    inputs = tuple(x.to("cuda") for x in cpu_inputs)
    tol = {dl.float16: 2e-3, dl.float32: 1e-5, dl.float64: 1e-12}.get(dtype, 0)
    compiled = dl.compile(program, backend="cupy", fullgraph=True)(*inputs)
    assert_close(compiled, program(*inputs), tol, tol)
    # and against the CPU reference (CUDA math libraries differ from the host's by ulps)
    assert_close(compiled, program(*cpu_inputs), max(tol, 1e-5), max(tol, 1e-5), check_strides=False)


@pytest.mark.cuda
def test_auto_compiles_cuda_graphs_with_cupy():
    x = dl.randn(4, 4, device="cuda")
    assert AUTO.choose([x]) == "cupy"
    out = dl.compile(lambda t: (t * 2).relu().sum(1), fullgraph=True)(x)
    assert out.device.type == "cuda"
    np.testing.assert_allclose(out.cpu().numpy(), (x.cpu() * 2).relu().sum(1).numpy(), rtol=1e-6)


@pytest.mark.cuda
def test_kernels_are_cached_by_source():
    backend = lookup_backend("cupy")
    x = dl.randn(8, 8, device="cuda")
    dl.compile(lambda t: t.tanh() + 1, backend="cupy", fullgraph=True)(x)
    size = len(backend.runtime)
    dl.compile(lambda u: u.tanh() + 1, backend="cupy", fullgraph=True)(x)  # another function, same kernel
    assert len(backend.runtime) == size


@pytest.mark.cuda
def test_non_contiguous_and_broadcast_inputs_on_gpu():
    def fn(a, b):
        return (a * b + 1).sigmoid(), (a - b).sum(0), dl.softmax(a, 0)

    a = dl.randn(64, 32, device="cuda").t()
    b = dl.randn(64, device="cuda")
    assert_close(dl.compile(fn, backend="cupy", fullgraph=True)(a, b), fn(a, b), 1e-5, 1e-6)


@pytest.mark.cuda
def test_mixing_devices_inside_a_compiled_function_raises_like_eager():
    def fn(a, b):
        return a + b

    a, b = dl.ones(3, device="cuda"), dl.ones(3)
    with pytest.raises(RuntimeError) as eager:
        fn(a, b)
    with pytest.raises(RuntimeError) as compiled:
        dl.compile(fn, backend="cupy")(a, b)
    assert str(compiled.value) == str(eager.value)
    assert "cuda:0" in str(eager.value) and "cpu" in str(eager.value)


def test_gpu_benchmark_runs_or_says_why_not(capsys):
    from benchmarks import gpu_run

    reason = gpu_run.gpu_unavailable_reason()
    if reason is None:
        pytest.skip("a GPU is present: the benchmark itself is the GPU run")
    assert gpu_run.main(["--repeat", "1"]) == 0
    assert capsys.readouterr().out.startswith(f"gpu_run: no GPU run on this machine: {reason}")


def test_hand_written_cupy_references_cover_the_zoo():
    pytest.importorskip("cupy", reason="CuPy is not installed")
    from benchmarks import gpu_run

    assert set(gpu_run.cupy_references()) == set(WORKLOADS)
