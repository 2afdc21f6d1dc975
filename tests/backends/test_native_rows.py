"""Native row kernels (reductions, softmax, layer_norm) vs eager: values, NaN/inf, prologues, fallbacks, sizes."""
from __future__ import annotations

import os

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from tests.backends.native_cases import Recording, needs_compiler
from tests.helpers import assert_equal_values

pytestmark = needs_compiler

TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}
SPECIALS = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, 3.4e38, -88.0, 89.0, 1.5]


def compare(fn, *args, rows, groups=0):
    """Native equals eager on ``args`` (NaN where eager has NaN); ``rows`` row kernels and ``groups`` ran."""
    recording = Recording()
    compiled = dl.compile(fn, backend=recording)
    with np.errstate(all="ignore"):
        expected, actual = fn(*args), compiled(*args)
    assert_equal_values(actual, expected, **TOLERANCE)
    assert (recording.count("row"), recording.count("group")) == (rows, groups), recording.codes
    return recording


def rows_of_specials(dtype):
    data = [SPECIALS[i:] + SPECIALS[:i] for i in range(len(SPECIALS))]
    data[3] = [1.0, 2.0, -3.0, 0.5] * 2 + [7.0, -7.0]  # a finite row
    data[4] = [-float("inf")] * len(SPECIALS)
    return dl.tensor(data, dtype=dtype)


@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
@pytest.mark.parametrize("op", [
    lambda x: dl.softmax(x, -1),
    lambda x: dl.log_softmax(x, 1),
    lambda x: F.layer_norm(x, (x.shape[-1],)),
    lambda x: x.sum(-1),
    lambda x: x.mean(-1, keepdim=True),
    lambda x: x.amax(-1),
    lambda x: x.amin(1),
    lambda x: x.var(-1),
    lambda x: x.std(-1, correction=0),
], ids=["softmax", "log_softmax", "layer_norm", "sum", "mean", "amax", "amin", "var", "std"])
def test_nan_inf_rows_as_eager(op, dtype):
    compare(op, rows_of_specials(dtype), rows=1)


@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
@pytest.mark.parametrize("length", [1, 7, 8, 9, 127, 128, 129, 1000, 4099])
def test_sums_and_statistics_have_eagers_bits(length, dtype):
    # NOTE: [native sums]: NumPy's pairwise order in the element type, so the bits are eager's.
    # Values spread over many magnitudes make any other summation order round differently.
    rng = np.random.default_rng(length)
    data = rng.standard_normal((3, length)) * np.exp(rng.standard_normal((3, length)) * 4) + 5
    x = dl.tensor(data.astype(dtype.numpy))

    def f(x):
        return (x.sum(-1), x.mean(-1, keepdim=True), x.var(-1), x.std(-1, correction=0), x.var(-1, correction=0.5),
                F.layer_norm(x, (length,)), (x * 1.5 + 0.25).sum(-1), x.sum())

    recording = Recording()
    expected, actual = f(x), dl.compile(f, backend=recording)(x)
    assert recording.count("row") == 8 and recording.count("group") == 0, recording.codes
    for index, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype and a.shape == e.shape, index
        assert a.numpy().tobytes() == e.numpy().tobytes(), (index, a.numpy(), e.numpy())


def test_softmax_rows_with_and_without_denormal_terms():
    # A float32 row whose terms are all normal takes a cheaper exp (row_ops._exp_terms); rows around
    # that bound, with denormal terms, with -inf: each as eager, denormals to the last bit.
    spans = [-86.9, -87.0, -87.1, -87.4, -95.0, -103.0, -104.5, -150.0, -float("inf")]
    x = dl.tensor(np.array([[0.0, 1.0, s + 1.0, -3.0] * 5 for s in spans], dtype=np.float32))
    recording = compare(lambda x: (dl.softmax(x, -1), dl.log_softmax(x, -1)), x, rows=2)
    assert "dl_expf_normal(" in recording.codes[0] and "dl_expf_bounded(" in recording.codes[0]
    compiled = dl.compile(lambda x: dl.softmax(x, -1), backend="native")
    tiny = compiled(x).numpy() < np.finfo(np.float32).tiny
    assert tiny.any()
    np.testing.assert_array_equal(compiled(x).numpy()[tiny], dl.softmax(x, -1).numpy()[tiny])


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 33), (1, 1, 1)])
def test_every_op_on_random_data(shape):
    x = dl.randn(*shape)
    w, b = dl.randn(shape[-1]), dl.randn(shape[-1])

    def f(x, w, b):
        return (dl.softmax(x, -1), dl.log_softmax(x, -1), F.layer_norm(x, (shape[-1],), w, b, 1e-3),
                F.layer_norm(x, (shape[-1],), w), x.sum(), x.mean(), x.var(-1), x.std(-1), x.amax(-1), x.amin())

    compare(f, x, w, b, rows=10)


def test_layer_norm_over_several_dims_and_reductions_over_inner_dims():
    x = dl.randn(4, 3, 5, 6)
    w = dl.randn(5, 6)
    compare(lambda x, w: (F.layer_norm(x, (5, 6), w), x.sum((2, 3)), x.mean((1, 2, 3), keepdim=True)), x, w, rows=3)


def test_broadcast_and_transposed_inputs_of_a_prologue():
    x = dl.randn(6, 40).t()  # strided: read through the prologue group's own strides
    mask = dl.randn(40, 1)

    def f(x, mask):
        return dl.softmax(x * 0.5 + mask, -1)

    recording = compare(f, x.contiguous(), mask, rows=1)
    assert "computed inside softmax" in recording.codes[0]  # mul, add: no pass of their own
    compare(f, x, mask, rows=0, groups=1)  # x's rows are not unit-stride: NumPy's softmax, C group


def test_rms_norm_reads_its_input_once_per_pass():
    x, w = dl.randn(8, 64), dl.randn(64)
    recording = compare(lambda x, w: F.rms_norm(x, (64,), w), x, w, rows=1, groups=2)
    assert "computed inside mean" in recording.codes[0]


def test_not_lowered_keeps_numpy_code():
    x = dl.randn(5, 6)
    compare(lambda x: (x.sum(0), dl.softmax(x, 0), x.sum(-1, dtype=dl.float64)), x, rows=0)
    compare(lambda i: i.sum(-1), dl.arange(12).reshape(3, 4), rows=0)


def test_prologue_inputs_keep_their_memory_until_the_row_kernel():
    # t dies after u = t * 2 by the schedule; u is computed inside the sum, later: t's
    # memory must not go to z in between.
    a, b = dl.randn(16, 16), dl.randn(16, 16)

    def f(a, b):
        t = a @ b
        u = t * 2
        z = (a + 1) @ b
        return u.sum(-1) + z.sum(-1)

    compare(f, a, b, rows=2, groups=2)


def test_gemm_epilogue_is_one_c_pass():
    x, w, b, r = dl.randn(8, 16), dl.randn(32, 16), dl.randn(32), dl.randn(8, 32)
    recording = compare(lambda x, w, b, r: F.gelu(F.linear(x, w, b), approximate="tanh") + r, x, w, b, r,
                        rows=0, groups=1)
    code = recording.codes[0]
    kernel_line = next(line for line in code.splitlines() if "native kernel dl_group" in line)
    assert "native kernel dl_gemm0: linear" in code and sorted(kernel_line.split(": ")[1].split(", ")) == ["add", "add_1", "gelu"], code


def test_one_library_serves_every_size(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMO_LITE_CACHE_DIR", str(tmp_path))
    compiled = dl.compile(lambda x: (dl.softmax(x * 2, -1), F.layer_norm(x, (x.shape[-1],))), backend="native",
                          dynamic=True)
    for n, m in ((3, 50), (7, 130), (40, 9)):
        x = dl.randn(n, m)
        assert_equal_values(compiled(x), (dl.softmax(x * 2, -1), F.layer_norm(x, (m,))), **TOLERANCE)
    assert len(os.listdir(os.path.join(tmp_path, "native"))) == 1


def test_report_outlines_a_prologue_with_its_row_op():
    graphs = []

    class Keeping(Recording):
        def __call__(self, gm, example_inputs):
            graphs.append(gm)
            return super().__call__(gm, example_inputs)

    dl.compile(lambda x: dl.softmax(x * 2 + 1, -1) + 1, backend=Keeping())(dl.randn(4, 8))
    assert graphs[0].fused_groups == [["mul", "add", "softmax"], ["add_1"]]
