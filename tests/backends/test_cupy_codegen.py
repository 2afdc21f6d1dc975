"""cupy backend codegen, checked without a GPU: every kernel of every model-zoo graph (and of
programs covering every C rule and dtype) compiles with NVRTC to an sm_90 cubin, and each
kernel's parameter list is what the graph asks for. Runs on every machine with the 'cuda'
extra installed; skips with the reason otherwise."""
import copy

import pytest

import dynamo_lite as dl
from benchmarks.models import WORKLOADS
from dynamo_lite.backends.cupy import lower, parse_signature
from dynamo_lite.backends.cupy.c_types import literal
from dynamo_lite.backends.cupy.indexing import broadcast_strides, make_space, split_space
from dynamo_lite.backends.cupy.nvrtc import (
    NvrtcUnavailable, compile_cubin, compile_cubin_nvcc, load_nvrtc, nvcc_path,
)
from dynamo_lite.tensor.meta import TensorMeta

from tests.backends.cupy_cases import CASES

# The eager gelu kernel warns on inf inputs while the cases are traced (eager's behaviour).
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

CUDA = dl.device("cuda:0")
ELF_MAGIC = b"\x7fELF"


@pytest.fixture(scope="module")
def nvrtc():
    try:
        return load_nvrtc()
    except NvrtcUnavailable as exc:
        pytest.skip(f"NVRTC unavailable, CUDA kernels not compiled: {exc}")


def on_cuda(gm):
    """A copy of ``gm`` whose TensorMetas say cuda:0 (the graph was traced on CPU tensors)."""
    gm = copy.deepcopy(gm)

    def move(value):
        if isinstance(value, TensorMeta):
            return TensorMeta(value._sizes, value._dtype, value._strides, CUDA, value._offset)
        if isinstance(value, tuple):
            return tuple(move(v) for v in value)
        return value

    for node in gm.graph.nodes:
        if "val" in node.meta:
            node.meta["val"] = move(node.meta["val"])
    return gm


def traced(fn, *inputs):
    explained = dl.explain(fn)(*inputs)
    assert explained.graph_break_count == 0, explained.break_reasons
    return [on_cuda(gm) for gm in explained.graphs]


def expected_params(kernel):
    """The parameters the kernel's graph nodes call for, derived from the graph alone:
    every tensor read from outside the kernel's nodes (in first-use order), then every
    node whose value is used outside the kernel."""
    members = set(kernel.nodes)
    inputs = {}
    for node in kernel.nodes:
        for arg in node.all_input_nodes:
            if arg not in members:
                inputs.setdefault(arg, None)
    outputs = [n for n in kernel.nodes if any(u not in members for u in n.users)]
    return [(n.meta["val"].dtype, False) for n in inputs] + [(n.meta["val"].dtype, True) for n in outputs]


def check_kernel_matches_graph(kernel):
    name, params = parse_signature(kernel.source)
    assert name == kernel.name
    assert [(dtype, is_output) for dtype, is_output, _ in params] == expected_params(kernel)
    assert all(n.meta["val"].device == CUDA for n in (*kernel.inputs, *kernel.outputs))


def check_every_op_is_lowered(gm, lowered):
    """Each pointwise/reduction/normalization node is computed by exactly one kernel."""
    covered = [n for k in lowered.kernels for n in k.nodes]
    assert len(covered) == len(set(covered))
    fused_tags = {"pointwise", "reduction", "normalization"}
    for node in gm.graph.nodes:
        if node.op == "call_function" and fused_tags & getattr(node.target, "tags", set()):
            assert node in covered, f"{node.name} ({node.target}) is not in any kernel"
    for node in lowered.graph.nodes:
        assert not (fused_tags & getattr(node.target, "tags", set())), f"{node.name} left as an op call"


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_zoo_kernels_compile_with_nvrtc_and_match_the_graph(nvrtc, name):
    workload = WORKLOADS[name]
    for gm in traced(workload.make(), *workload.make_inputs()):
        lowered = lower(gm)
        assert lowered.kernels
        for kernel in lowered.kernels:
            cubin = compile_cubin(kernel.source, kernel.name, arch="sm_90")
            assert cubin[:4] == ELF_MAGIC
            check_kernel_matches_graph(kernel)
        check_every_op_is_lowered(gm, lowered)


def test_zoo_fusion_shapes():
    """The kernels each zoo model lowers to: fused chains, and prologues folded into rows."""
    kinds, names = {}, {}
    for name in ("pointwise_chain", "attention_block", "lstm_cell"):
        workload = WORKLOADS[name]
        (gm,) = traced(workload.make(), *workload.make_inputs())
        kernels = lower(gm).kernels
        kinds[name] = [k.kind for k in kernels]
        names[name] = [k.name for k in kernels]
    assert kinds["pointwise_chain"] == ["pointwise"]  # 7 ops, one kernel
    assert kinds["lstm_cell"] == ["pointwise", "pointwise"]  # the gate adds, then all gate math
    # the 1/sqrt(d) scale becomes softmax's prologue: no pointwise kernel of its own
    assert kinds["attention_block"].count("softmax") == 1
    assert kinds["attention_block"].count("layer_norm") == 2
    # equal computations give equal sources: both LayerNorms are one cached kernel
    layer_norms = [n for n, k in zip(names["attention_block"], kinds["attention_block"]) if k == "layer_norm"]
    assert layer_norms[0] == layer_norms[1]


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_rule_and_dtype_compiles_with_nvrtc(nvrtc, case):
    program, make_inputs, dtypes = CASES[case]
    kernels = {}
    for dtype in dtypes:
        for gm in traced(program, *make_inputs(dtype)):
            for kernel in lower(gm).kernels:
                check_kernel_matches_graph(kernel)
                kernels[kernel.name] = kernel
    # One program holding every kernel of the case (the preamble is include-guarded).
    cubin = compile_cubin("\n".join(k.source for k in kernels.values()), case)
    assert cubin[:4] == ELF_MAGIC


def test_compile_errors_carry_the_log(nvrtc):
    from dynamo_lite.backends.cupy.nvrtc import KernelCompileError

    with pytest.raises(KernelCompileError, match="undefined"):
        compile_cubin('extern "C" __global__ void broken() { undefined_thing(); }', "broken")


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")
def test_zoo_kernels_also_compile_with_nvcc():
    workload = WORKLOADS["attention_block"]
    (gm,) = traced(workload.make(), *workload.make_inputs())
    kernels = {k.name: k for k in lower(gm).kernels}
    assert compile_cubin_nvcc("\n".join(k.source for k in kernels.values()), "attention")[:4] == ELF_MAGIC


# -- pure-Python pieces -------------------------------------------------------------------
def test_parse_signature_reads_back_types_and_constness():
    source = 'extern "C" __global__ void k(const unsigned short* __restrict__ in0, bool* __restrict__ out0) {}'
    assert parse_signature(source) == ("k", [(dl.float16, False, "in0"), (dl.bool, True, "out0")])
    with pytest.raises(ValueError):
        parse_signature("int main() {}")


@pytest.mark.parametrize("value, dtype, text", [
    (1.5, dl.float32, "0x1.8000000000000p+0f"),
    (0.1, dl.float32, "0x1.99999a0000000p-4f"),  # rounded to float32 once, like a scalar op
    (0.1, dl.float64, "0x1.999999999999ap-4"),
    (float("inf"), dl.float32, "__int_as_float(0x7f800000)"),
    (1e300, dl.float32, "__int_as_float(0x7f800000)"),
    (float("-inf"), dl.float64, "__longlong_as_double(-4503599627370496LL)"),
    (-3, dl.int8, "((signed char)(-3LL))"),
    (2.0, dl.int64, "((long long)2LL)"),
    (True, dl.bool, "true"),
])
def test_literals_are_exact(value, dtype, text):
    assert literal(value, dtype) == text


def test_iteration_spaces_coalesce_and_follow_the_output_layout():
    assert make_space((4, 8), [(8, 1), (8, 1)]).sizes == (32,)
    transposed = make_space((4, 8), [(1, 4), (8, 1)])  # output is column-major
    assert transposed.sizes == (8, 4) and transposed.strides == ((4, 1), (1, 8))
    assert broadcast_strides((2, 3, 4), (3, 1), (1, 1)) == (0, 1, 0)
    outer, inner = split_space((2, 3, 4), (2,), [(3, 1, 0), (12, 4, 1)], 0, 1)
    assert outer.sizes == (6,) and inner.sizes == (4,)
    assert make_space((5,), [(1,)]).index_type() == "int"
    assert make_space((2**20, 2**12), [(2**12, 1)]).index_type() == "long long"
