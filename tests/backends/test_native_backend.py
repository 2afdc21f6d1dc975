"""The native backend: C kernels of fused groups vs eager (NaN/inf, strides, broadcasting, sizes), cache, fallback."""
from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.backends.native import NativeBackend, get_num_threads, set_num_threads
from dynamo_lite.backends.native.toolchain import build, cache_dir
from tests.backends.native_cases import Recording, needs_compiler
from tests.helpers import assert_equal_values


# Transcendental functions come from libm/libmvec, NumPy has its own: a few ulp apart.
ULPS = {"rtol": 1e-5, "atol": 1e-6}  # the compiled-vs-eager suites' tolerance
EXACT = {"rtol": 0, "atol": 0}


def compare(fn, *args, kernels=1, tolerance=ULPS):
    """Compiled (native) equals eager on ``args``; ``kernels`` C kernels ran."""
    recording = Recording()
    compiled = dl.compile(fn, backend=recording)
    expected, actual = fn(*args), compiled(*args)
    assert_equal_values(actual, expected, **tolerance)
    assert sum(code.count("native kernel dl_group") for code in recording.codes) == kernels, recording.codes
    return recording


def chain(x, y):
    return ((x * y + 1).sigmoid() * x.tanh() - y).relu()


SPECIALS = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, 3.4e38, -88.0, 89.0]


@needs_compiler
@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
def test_nan_inf_as_eager(dtype):
    x = dl.tensor(SPECIALS * 3, dtype=dtype)
    y = dl.tensor(list(reversed(SPECIALS)) * 3, dtype=dtype)

    def f(x, y):
        return (dl.maximum(x, y) + dl.minimum(x, y) * 2, (x / y).exp().log1p(), x.relu() - y.sqrt(), x.rsqrt())

    with np.errstate(all="ignore"):
        recording = Recording()
        compiled = dl.compile(f, backend=recording)
        expected, actual = f(x, y), compiled(x, y)
    # exp/log1p/sqrt come from libm or its vector variants: a few ulp, NaN and inf exact.
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=0)
    assert "native kernel dl_group" in recording.codes[0]


@needs_compiler
def test_strided_and_broadcast_inputs():
    x = dl.randn(40, 70).t()  # transposed: strides (1, 70)
    y = dl.randn(40)
    recording = compare(chain, x, y)
    assert "float" in recording.codes[0]  # the C source is in the debug text


@needs_compiler
def test_arithmetic_is_bit_exact():
    # No FMA contraction: x * y + 0.1 rounds twice, as NumPy's two ufuncs do.
    x, y = dl.randn(1000), dl.randn(1000)
    compare(lambda x, y: dl.maximum((x * y + 0.1) / (y - 3), x.relu()) * 7, x, y, tolerance=EXACT)


@needs_compiler
def test_float64_and_scalar_constants():
    compare(lambda x: (x * 0.1 + 3).tanh() / 7, dl.randn(5, 3, 4, dtype=dl.float64))


@needs_compiler
def test_mixed_dtypes_convert_as_eager_and_integer_results_stay_on_numpy_code():
    # float * int converts the int to float first, as eager's kernel (NOTE: [native operand types]): one
    # C kernel, same bits; an integer result is not lowered: no C kernel, same result.
    compare(lambda x, i: x * i + 1, dl.randn(6), dl.arange(6), tolerance=EXACT)
    compare(lambda i: i * 3 + 1, dl.arange(6), kernels=0, tolerance=EXACT)


@needs_compiler
def test_one_kernel_source_serves_every_size(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMO_LITE_CACHE_DIR", str(tmp_path))
    compiled = dl.compile(chain, backend="native", dynamic=True)
    for n in (3000, 5000, 7001):
        x, y = dl.randn(n), dl.randn(n)
        assert_equal_values(compiled(x, y), chain(x, y), **ULPS)
    files = os.listdir(os.path.join(tmp_path, "native"))
    assert len(files) == 1, files


@needs_compiler
def test_cache_hit_and_atomic_files(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMO_LITE_CACHE_DIR", str(tmp_path))
    source = "int dl_answer(void) { return 42; }\n"
    assert build(source).dl_answer() == 42
    directory = cache_dir()
    first = sorted(os.listdir(directory))
    assert len(first) == 1 and first[0].endswith(".so")  # no temporary file left behind
    stamp = os.stat(os.path.join(directory, first[0])).st_mtime_ns
    assert build(source).dl_answer() == 42
    assert os.stat(os.path.join(directory, first[0])).st_mtime_ns == stamp  # loaded, not rebuilt


def test_missing_compiler_falls_back_to_numpy(monkeypatch, caplog):
    monkeypatch.setenv("CC", "/nonexistent/dynamo-lite-cc")
    backend = NativeBackend()
    compiled = dl.compile(chain, backend=backend)
    x, y = dl.randn(8, 4), dl.randn(4)
    with caplog.at_level(logging.WARNING, logger="dynamo_lite"):
        assert_equal_values(compiled(x, y), chain(x, y), rtol=0, atol=0)
        dl.compile(lambda x: x * 3, backend=backend)(x)
    messages = [r.getMessage() for r in caplog.records if "native backend unavailable" in r.getMessage()]
    assert len(messages) == 1 and "/nonexistent/dynamo-lite-cc" in messages[0]


def test_num_threads():
    from dynamo_lite.backends.native.blas_threads import blas_threads, set_blas_threads

    before, blas_before = get_num_threads(), blas_threads()
    try:
        set_num_threads(1)
        assert get_num_threads() == 1
        assert blas_threads() in (1, None)  # None: this NumPy's BLAS has no known entry point
        with pytest.raises(ValueError, match="positive int"):
            set_num_threads(0)
    finally:
        set_num_threads(before)
        if blas_before is not None:  # the process's own setting (OPENBLAS_NUM_THREADS=1 in benchmarks)
            set_blas_threads(blas_before)


@needs_compiler
@pytest.mark.parametrize("approximate", [None, "none", "tanh"])
def test_gelu_both_forms_with_specials(approximate):
    # Exact gelu uses libm's erfc, eager its own erfc polynomial: both within float32 tolerance.
    x = dl.cat([dl.tensor(SPECIALS + [-3.4e38, -10.0, 1.5]), dl.randn(500) * 4])
    kwargs = {} if approximate is None else {"approximate": approximate}
    with np.errstate(all="ignore"):
        recording = compare(lambda x: dl.nn.functional.gelu(x * 1.5, **kwargs), x)
    assert ("erfcf(((-" in recording.codes[0]) == (approximate != "tanh")  # a call, not the declaration


@needs_compiler
@pytest.mark.parametrize("chosen", [None, "ACTIVE"])
def test_idle_openmp_threads_sleep_unless_the_user_chose(chosen, tmp_path):
    # libgomp reads the policy when the first kernel library loads it: a fresh process.
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(PYTHONPATH=root, DYNAMO_LITE_CACHE_DIR=str(tmp_path), **({"OMP_WAIT_POLICY": chosen} if chosen else {}))
    code = ("import os, dynamo_lite as dl; dl.compile(lambda x: x * 2 + 1, backend='native')(dl.randn(4)); "
            "print(os.environ.get('OMP_WAIT_POLICY'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.stdout.split()[-1] == (chosen or "PASSIVE"), out.stderr[-2000:]


@needs_compiler
def test_a_symbolic_graph_builds_one_library_for_every_size(monkeypatch):
    # dynamic=True: sizes and strides reach the kernels at run time (a per-shape argument
    # block), so one generated function and one shared object serve sizes 5, 9 and 17.
    import dynamo_lite.backends.native as native

    built = []

    def counting_build(source):
        built.append(source)
        return build(source)

    monkeypatch.setattr(native, "build", counting_build)

    def f(x, w, b):
        h = dl.nn.functional.layer_norm(x * 2 + 1, (x.shape[-1],), w, b)
        return dl.softmax(h.tanh(), -1) + x.shape[0], (x - 1).relu()

    recording = Recording()
    compiled = dl.compile(f, backend=recording, dynamic=True)
    dl.manual_seed(0)
    w, b = dl.randn(12), dl.randn(12)
    for n in (5, 9, 17):
        x = dl.randn(n, 12)
        assert_equal_values(compiled(x, w, b), f(x, w, b), **ULPS)
    assert len(recording.codes) == 1 and "dl_row" in recording.codes[0] and "dl_group" in recording.codes[0]
    assert len(built) == 1, f"{len(built)} builds for 3 sizes"


@needs_compiler
def test_masked_fill_is_one_kernel_before_the_softmax_kernel():
    # The causal-attention pattern: scale, fill the masked scores with -inf, softmax; the
    # bool mask (its own comparison kernel) broadcasts over batch and heads. The C kernels equal
    # eager's bits, -inf rows too.
    # (Not a softmax prologue: a bool input read in every pass over the row made it slower.)
    mask = dl.tril(dl.ones(8, 8)).view(1, 1, 8, 8)

    def attention_weights(scores, value):
        return dl.softmax((scores * 0.25).masked_fill(mask == 0, value), -1)

    scores = dl.randn(2, 3, 8, 8)
    scores[0, 0, 2, 1] = float("nan")
    for value in (float("-inf"), -3, dl.tensor(-2.5)):
        recording = compare(attention_weights, scores, value, kernels=2)
        kernel_lines = [line.split(": ")[1] for line in recording.codes[0].splitlines() if "native kernel dl_group" in line]
        assert recording.count("row") == 1 and kernel_lines == ["eq", "mul, masked_fill"], kernel_lines
    filled = dl.compile(lambda x, m: x.masked_fill(m, 7.5) * 2, backend="native")
    x, m = dl.randn(5, 6, dtype=dl.float64), dl.randn(6) > 0
    assert_equal_values(filled(x, m), x.masked_fill(m, 7.5) * 2, rtol=0, atol=0)


@needs_compiler
@pytest.mark.parametrize("stride, padding, dilation, ceil_mode", [(2, 0, 1, False), (1, 1, 1, False), (2, 1, 2, True),
                                                                   (3, 1, 1, True)])
def test_conv2d_and_max_pool2d_kernels_have_eager_bits(stride, padding, dilation, ceil_mode):
    # The gather, eager's gemm (from C) and the pooling windows are C loops; the relu is computed
    # per tap inside the pooling kernel (a padding tap stays -inf: the padding is the relu's output's).
    F = dl.nn.functional

    def f(x, w, b):
        y = F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation).relu()
        return F.max_pool2d(y, 3, stride, padding, dilation, ceil_mode), F.max_pool2d(x, 2)

    dl.manual_seed(0)
    # 3 output channels: too few for the direct kernel (NOTE: [conv2d epilogues]), the gather + gemm path.
    x, w, b = dl.randn(2, 3, 13, 11), dl.randn(3, 3, 3, 2), dl.randn(3) - 4  # mostly negative: relu gives 0
    x[1, 2, 4, 5] = float("nan")  # NaN wins every window holding it, as eager's maximum
    x[0, 0, 0, 0] = float("inf")
    recording = compare(f, x, w, b, kernels=0, tolerance=EXACT)
    assert recording.count("image") == 3 and "native kernel dl_image1: relu, max_pool2d" in recording.codes[0]
    assert "gemm(" in recording.codes[0]


@needs_compiler
@pytest.mark.parametrize("weight_layout", [dl.channels_last, dl.contiguous_format])
@pytest.mark.parametrize("with_bias", [True, False])
def test_channels_last_conv2d_calls_eagers_gemm(weight_layout, with_bias):
    # channels_last: eager's one gemm over every pixel from C when the weight is NHWC-dense (NumPy
    # passes it transposed); an NCHW weight keeps the gather + NumPy product. Both exact.
    F = dl.nn.functional
    dl.manual_seed(3)
    x = dl.randn(3, 5, 9, 7).contiguous(memory_format=dl.channels_last)
    w = dl.randn(3, 5, 3, 2).contiguous(memory_format=weight_layout)  # too few outputs for the direct kernel
    b = dl.randn(3) if with_bias else None
    x[2, 1, 4, 4] = float("nan")
    recording = Recording()
    f = lambda x, w: F.conv2d(x, w, b, stride=(2, 1), padding=1)  # noqa: E731
    expected, actual = f(x, w), dl.compile(f, backend=recording)(x, w)
    assert actual.stride() == expected.stride()
    assert_equal_values(actual, expected, rtol=0, atol=0)
    assert ("gemm(" in recording.codes[0]) == (weight_layout is dl.channels_last)


@needs_compiler
def test_a_pooled_group_read_elsewhere_keeps_its_own_kernel():
    F = dl.nn.functional

    def f(x):
        y = (x * 2).relu()
        return F.max_pool2d(y, 2, padding=1), y.sum()

    x = dl.randn(2, 3, 8, 8)
    recording = compare(f, x, kernels=1, tolerance=EXACT)
    assert recording.count("image") == 1
    # Read only by the pooling: computed per tap; a padding tap is -inf, not the group of -inf (+inf here).
    recording = compare(lambda x: F.max_pool2d(x * -1, 2, padding=1), x, kernels=0, tolerance=EXACT)
    assert "native kernel dl_image0: mul, max_pool2d" in recording.codes[0]


@needs_compiler
def test_image_ops_take_sizes_at_run_time_and_follow_channels_last():
    F = dl.nn.functional

    def f(x, w, b):
        return F.max_pool2d(F.conv2d(x, w, b, padding=1), 2, padding=1)

    recording = Recording()
    compiled = dl.compile(f, backend=recording, dynamic=True)
    w, b = dl.randn(3, 3, 3, 3), dl.randn(3)  # too few outputs for the direct kernel: eager's gemm, exact
    for size in (8, 11, 16):
        x = dl.randn(2, 3, size, size + 1)
        assert_equal_values(compiled(x, w, b), f(x, w, b), rtol=0, atol=0)
    assert len(recording.codes) == 1 and recording.count("image") == 2
    # channels_last: eager's other im2col order and product; the pooling loops over pixels.
    x = dl.randn(2, 3, 9, 8).contiguous(memory_format=dl.channels_last)
    x[1, :, 3, 3] = float("nan")
    w = w.contiguous(memory_format=dl.channels_last)
    recording = Recording()
    expected = f(x, w, b)
    actual = dl.compile(f, backend=recording)(x, w, b)
    assert actual.stride() == expected.stride() and recording.count("image") == 2
    assert_equal_values(actual, expected, rtol=0, atol=0)


@needs_compiler
@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
def test_linear_calls_eagers_gemm_from_c(dtype):
    # NumPy's own gemm with eager's arguments (NOTE: [native linear]): eager's bits, whatever
    # the leading dimensions; a product NumPy gives to gemv (one row) keeps the registry kernel.
    F = dl.nn.functional
    dl.manual_seed(0)
    base, w, b = dl.randn(3, 7, 24, dtype=dtype), dl.randn(9, 20, dtype=dtype), dl.randn(2, 9, dtype=dtype)
    base[1, 2, 3] = float("nan")
    w[4, 5] = float("inf")

    def f(x, w, b):
        rows = x[:, :, 2:22]  # evenly strided rows, lda 24 > K 20
        wide = w[:, 1:17]  # the weight's rows are 20 apart: ldb > K
        return F.linear(rows, w, b[1]), F.linear(rows[:, :, :16] * 2, wide), F.linear(rows[0, :1], w, b[0])

    recording = Recording()
    compiled = dl.compile(f, backend=recording)
    with np.errstate(all="ignore"):
        expected, actual = f(base, w, b), compiled(base, w, b)
    assert_equal_values(actual, expected, rtol=0, atol=0)
    assert recording.count("gemm") == 2, recording.codes  # the one-row product runs eager's kernel


@needs_compiler
def test_matmul_calls_eagers_gemm_per_batch():
    # Attention's products over views of one buffer, a fold of rows, a transposed operand: eager's
    # gemm calls from C. x @ x^T (NumPy's syrk), broadcast batches, vectors: the registry kernel.
    dl.manual_seed(1)
    qkv, m, v, w = dl.randn(2, 6, 3 * 8), dl.randn(5, 7), dl.randn(7), dl.randn(5, 3)
    qkv[1, 2, 3] = float("nan")

    def f(qkv, m, v):
        q, k, value = (t.view(2, 6, 2, 4).transpose(1, 2) for t in qkv.split(8, dim=2))
        scores = q @ k.transpose(-2, -1)
        mixed = (scores * 0.5) @ value  # softmax's exp is not eager's bits; the product is
        return (mixed, qkv[:, :, :5] @ m, m.t() @ w, m.t() @ m, q @ q.transpose(-2, -1), qkv[:, :, :7] @ v,
                scores @ dl.ones(2, 1, 6, 3))

    recording = Recording()
    compiled = dl.compile(f, backend=recording)
    with np.errstate(all="ignore"):
        expected, actual = f(qkv, m, v), compiled(qkv, m, v)
    assert_equal_values(actual, expected, rtol=0, atol=0)
    # q @ k^T, scores @ value, the fold of qkv's rows, m^T @ w (transposed a); m^T @ m is NumPy's syrk
    assert recording.count("gemm") == 4, recording.codes


@needs_compiler
@pytest.mark.parametrize("dtype", [dl.float32, dl.float64, dl.int64, dl.float16, dl.bool])
def test_clone_is_a_strided_copy_kernel(dtype):
    # Bits copied as they are, into the layout eager's clone gives (contiguous, channels_last, preserved).
    x = (dl.randn(2, 3, 4, 5) * 10).to(dtype)
    if dtype.is_floating_point:
        x[0, 1, 2, 3], x[1, 0, 0, 0] = float("nan"), -0.0

    def f(x):
        return (x.transpose(1, 3).contiguous(), x.permute(0, 2, 3, 1).clone(),
                x[:, :, ::2].clone(memory_format=dl.channels_last), x[0, 0, 0, 0].clone())

    recording = Recording()
    expected, actual = f(x), dl.compile(f, backend=recording)(x)
    for a, e in zip(actual, expected):
        assert a.stride() == e.stride()
        assert np.asarray(a).tobytes() == np.asarray(e).tobytes()
    assert recording.count("group") == 4


@needs_compiler
def test_a_parameter_given_new_storage_is_read_from_it():
    # Kernels read parameters by address, cached per storage: `.data = ...` rebinds it (the
    # guards recompile such a graph too; the cache must not hand out the old address anyway).
    from dynamo_lite.backends.native.calls import AddressCache

    model = dl.nn.Sequential(dl.nn.LayerNorm(6), dl.nn.Tanh())
    compiled = dl.compile(model, backend="native")
    x = dl.randn(3, 6)
    assert_equal_values(compiled(x), model(x), **ULPS)
    weight, cache = model[0].weight, AddressCache()
    assert cache.of(weight) == weight._storage.data_ptr()
    weight.data = dl.randn(6)
    assert cache.of(weight) == weight._storage.data_ptr()
    assert_equal_values(compiled(x), model(x), **ULPS)
