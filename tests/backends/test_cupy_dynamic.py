"""The cupy backend on graphs with symbolic sizes: every generated kernel takes its sizes
and strides as arguments (NOTE: [sizes as kernel arguments]), so each kernel is compiled
once for every size of the graph. Run on the host emulation; the sources are compiled
with NVRTC where it is installed."""
import pytest

import dynamo_lite as dl
from benchmarks import models
from dynamo_lite.backends.cupy import CupyBackend
from dynamo_lite.backends.cupy.emulation import HostEmulationRuntime, compiler
from dynamo_lite.backends.cupy.kernel import ROWS
from dynamo_lite.backends.cupy.lowering import KernelCall
from dynamo_lite.backends.cupy.nvrtc import NvrtcUnavailable, compile_cubin, load_nvrtc
from tests.helpers import assert_equal_values

pytestmark = pytest.mark.skipif(compiler() is None, reason="no host C++ compiler to emulate CUDA kernels")

SIZES = [5, 9, 17]


class RecordingBackend(CupyBackend):
    """The emulated cupy backend, keeping the kernels of every graph it lowers."""

    def __init__(self):
        super().__init__(HostEmulationRuntime, device_type="cpu")
        self.lowerings = []

    def __call__(self, gm, example_inputs):
        compiled = super().__call__(gm, example_inputs)
        self.lowerings.append([node.target.kernel for node in compiled.graph.nodes
                               if isinstance(node.target, KernelCall)])
        return compiled


def rows_program(x, w, b):
    """softmax, layer_norm and sums over rows and columns, each with a fused prologue."""
    return (dl.softmax(x * 2, -1), dl.layer_norm(x + 1, (x.shape[-1],), w, b), x.sum(0), (x * x).mean(-1),
            dl.log_softmax(x, 0), x.amax(-1))


def rows_inputs(n):
    dl.manual_seed(n)
    return dl.randn(n, 2 * n - 1), dl.randn(2 * n - 1), dl.randn(2 * n - 1)


@pytest.fixture(autouse=True)
def _fresh():
    dl.reset()
    yield
    dl.reset()


def test_one_compile_per_kernel_serves_every_size():
    backend = RecordingBackend()
    compiled = dl.compile(rows_program, backend=backend, dynamic=True)
    loaded = []
    for n in SIZES:
        inputs = rows_inputs(n)
        assert_equal_values(compiled(*inputs), rows_program(*inputs), rtol=2e-5, atol=2e-6)
        loaded.append(len(backend.runtime._functions))
    stats = dl.stats()
    assert stats.frames_compiled == 1 and stats.graph_count == 1 and not stats.fallbacks
    # the symbolic graph is lowered for each size; each lowering generates the same sources
    assert len(backend.lowerings) == len(SIZES)
    sources = [[k.source for k in kernels] for kernels in backend.lowerings]
    assert sources[0] == sources[1] == sources[2]
    assert len(sources[0]) == 6 and {k.launch for k in backend.lowerings[0]} == {ROWS}
    assert loaded == [6, 6, 6]  # compiled once, at the first size; new argument values after
    assert [k.size_args for k in backend.lowerings[0]] != [k.size_args for k in backend.lowerings[1]]


def test_the_size_independent_sources_compile_with_nvrtc():
    try:
        load_nvrtc()
    except NvrtcUnavailable as exc:
        pytest.skip(f"NVRTC unavailable, CUDA kernels not compiled: {exc}")
    backend = RecordingBackend()
    compiled = dl.compile(rows_program, backend=backend, dynamic=True)
    for n in SIZES:
        compiled(*rows_inputs(n))
    kernels = {k.name: k for kernels in backend.lowerings for k in kernels}
    assert len(kernels) == 6
    for kernel in kernels.values():
        assert compile_cubin(kernel.source, kernel.name)[:4] == b"\x7fELF"
        assert str(SIZES[-1] * 2 - 1) not in kernel.source.split("__global__")[1]  # no size is baked in



def test_gpt_sequence_sweep_compiles_its_kernels_for_the_first_two_lengths_only():
    """dynamic=None: static at the first length, symbolic from the second (#16); the
    symbolic graph's kernels are compiled at the second length and serve every later one.
    Inference (no_grad): graphs with grad run their backward op by op at symbolic sizes."""
    backend = RecordingBackend()
    model = models.make_gpt()
    base = models.gpt_inputs()[0]
    compiled = dl.compile(model, backend=backend)
    loaded = []
    with dl.no_grad():
        for length in [32, 31, 17, 8, 5, 2]:
            idx = base[:, :length].contiguous()
            assert_equal_values(compiled(idx), model(idx), rtol=1e-4, atol=1e-5)
            loaded.append(len(backend.runtime._functions))
    stats = dl.stats()
    assert stats.frames_compiled == 2 and not stats.fallbacks and stats.graph_breaks == 0
    assert len(backend.lowerings) == 6  # the static graph, then the symbolic one per length
    assert loaded[1:] == [loaded[1]] * 5, loaded
