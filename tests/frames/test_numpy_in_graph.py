"""NumPy called on tensors inside a compiled function is captured in the graph: ``Tensor.numpy()``,
``np.asarray``/``np.array`` of a tensor, ufuncs and operators on the arrays, reductions, shape
methods, indexing and ``dl.from_numpy``/``dl.tensor`` back, with NumPy's own dtype rules (NEP 50
for Python scalars), NumPy scalars where NumPy gives scalars, and eager's aliasing (an array from
``Tensor.numpy()`` shares memory with the tensor). A NumPy call that is not modelled is a graph
break that runs NumPy eagerly, never a different result (NOTE: [NumPy arrays in the graph])."""
from __future__ import annotations

import numpy as np

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def floats(call: int, *shape):
    return dl.arange(float(np.prod(shape or (6,)))).reshape(*(shape or (6,))) * 0.5 - call


def ints(call: int, *shape):
    return (dl.arange(int(np.prod(shape or (6,)))) - 2 + call).reshape(*(shape or (6,)))


def one_graph(fn, backend, make_args):
    compiled = assert_transparent(fn, make_args, backend, graphs=1, breaks=0)
    expected, actual = fn(*make_args(0)), compiled(*make_args(0))
    assert _kinds(actual) == _kinds(expected), (_kinds(actual), _kinds(expected))
    return compiled


def _kinds(value):
    """The Python type (and NumPy dtype) of each leaf: a NumPy scalar is not a 0-d array."""
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_kinds(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return type(value).__name__, str(value.dtype)
    if isinstance(value, dl.Tensor):
        return "Tensor", str(value.dtype)
    return type(value).__name__


def test_post_processing_of_model_output(backend):
    """The usual pattern: logits to probabilities and labels in NumPy."""
    model = dl.nn.Linear(4, 3)

    def predict(x):
        logits = model(x).detach().numpy()
        shifted = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
        return probs, np.argmax(probs, axis=1), probs.mean()

    with dl.no_grad():
        one_graph(predict, backend, lambda c: (floats(c, 5, 4),))


def test_ufuncs_and_operators(backend):
    def f(x):
        a = x.numpy()
        b = np.sqrt(np.abs(a)) + a * 2 - 1
        c = np.where(a > 0, b, -b)
        return np.clip(c, -1.0, 2.5), np.maximum(a, 0.25), a ** 2, -a, a / 3, a // 2, a % 2

    one_graph(f, backend, lambda c: (floats(c, 2, 3),))


def test_numpy_dtype_rules_int_division_and_float64_default(backend):
    """int64 / int64 is float64 in NumPy (float32 in torch); an int array with a Python float is float64."""
    def f(x):
        a = x.numpy()
        return a / 2, a * 1.5, a + 1, a // 3, np.sqrt(a * a), np.mean(a), np.sum(a), a > 1

    one_graph(f, backend, lambda c: (ints(c, 2, 3),))


def test_python_scalars_are_weak_nep50(backend):
    """float32 array * Python float stays float32; int32 array + Python int stays int32."""
    def f(x, y):
        a, b = x.numpy(), y.numpy()
        return a * 2.5, b + 3, b * 2.0, a + b, (a + b).dtype == np.float64

    one_graph(f, backend, lambda c: (floats(c, 4), ints(c, 4).to(dl.int32)))


def test_reductions_with_axis(backend):
    def f(x):
        a = x.numpy()
        return (np.sum(a, axis=0), a.sum(axis=1, keepdims=True), np.max(a), a.min(axis=0), np.argmax(a),
                np.argmin(a, axis=1), a.std(), np.var(a, axis=0), np.prod(a + 1, axis=1), np.cumsum(a, axis=1),
                np.any(a > 1), np.all(a > -10, axis=0))

    one_graph(f, backend, lambda c: (floats(c, 3, 4),))


def test_int_reductions_follow_numpy(backend):
    def f(x):
        a = x.numpy()
        return np.sum(a), a.sum(axis=0), np.mean(a, axis=1), np.cumsum(a)

    one_graph(f, backend, lambda c: (ints(c, 3, 4).to(dl.int32),))


def test_shape_methods_and_indexing(backend):
    def f(x):
        a = x.numpy()
        return (a.reshape(4, 3), a.reshape(-1), a.T, a.transpose(1, 0), a[1], a[0, 2], a[:, 1:3], a[..., None],
                np.concatenate([a, a * 2], axis=0), np.stack([a, a]), a.astype(np.float64), a.astype(np.int64),
                a.flatten(), np.expand_dims(a, 0), a.shape, a.ndim, a.size, a.dtype)

    one_graph(f, backend, lambda c: (floats(c, 3, 4),))


def test_linalg_norm_and_matmul(backend):
    def f(x):
        a = x.numpy()
        return np.linalg.norm(a), np.linalg.norm(a, axis=1), a @ a.T, np.dot(a[0], a[1])

    one_graph(f, backend, lambda c: (floats(c, 3, 4),))


def test_asarray_and_array_of_a_tensor(backend):
    def f(x):
        a = np.asarray(x)
        b = np.array(x)
        b[0] = 100.0  # a copy: x does not change
        return a * 2, b

    one_graph(f, backend, lambda c: (floats(c, 4),))


def test_from_numpy_and_tensor_stay_in_the_graph(backend):
    def f(x):
        a = x.numpy() * 2
        t = dl.from_numpy(a)
        u = dl.tensor(a + 1)
        return t.relu() + u, u.dtype

    one_graph(f, backend, lambda c: (floats(c, 4),))


def test_in_place_through_numpy_writes_the_tensor(backend):
    """``Tensor.numpy()`` shares memory: ``a += 1`` and ``a[0] = 3`` change the argument, as eagerly."""
    def f(x):
        a = x.numpy()
        a += 1
        a[0] = 3
        a[1:3] *= 2
        return x, a

    one_graph(f, backend, lambda c: (floats(c, 5),))


def test_view_of_an_array_writes_through(backend):
    def f(x):
        a = x.numpy()
        row = a[1]
        row -= 10
        return a.sum(), x

    one_graph(f, backend, lambda c: (floats(c, 3, 2),))


def test_returned_array_is_a_real_ndarray_that_owns_its_values(backend):
    def f(x):
        return np.exp(x.numpy()), x.numpy().sum(), x.numpy()

    compiled = one_graph(f, backend, lambda c: (floats(c, 3),))
    x = floats(0, 3)
    e, s, same = compiled(x)
    assert type(e) is np.ndarray and type(s) is np.float32 and type(same) is np.ndarray
    same[0] = 42.0  # the array of x.numpy() is x's memory, compiled as eagerly
    assert x[0].item() == 42.0
    e[:] = 0.0  # an array computed in the graph aliases nothing the caller holds
    assert x[1].item() == 0.5


def test_numpy_scalar_from_a_reduction_in_arithmetic(backend):
    def f(x):
        a = x.numpy()
        scale = a.max() - a.min()
        return (a - a.min()) / scale, scale

    one_graph(f, backend, lambda c: (floats(c, 5),))


def test_bool_mask_indexing_is_a_break_not_a_wrong_result(backend):
    """A boolean mask gives a shape that depends on the data: NumPy runs it eagerly."""
    def f(x):
        a = x.numpy()
        return a[a > 0].sum()

    assert_transparent(f, lambda c: (floats(c, 6),), backend)
    report = dl.explain(f, backend=backend)(floats(0, 6))
    assert report.graph_break_count >= 1


def test_float16_sum_runs_in_numpy_with_numpys_bits(backend):
    """NumPy sums float16 in float16 blocks; the tensor kernels round differently: a break, NumPy's bits."""
    def f(x):
        return np.sum(x.numpy().astype(np.float16) * np.float16(0.1))

    def make_args(call):
        return (dl.arange(200.0) * 0.37 + call,)

    compiled = assert_transparent(f, make_args, backend)
    assert compiled(*make_args(0)) == f(*make_args(0))
    report = dl.explain(f, backend=backend)(*make_args(0))
    assert "float16" in " ".join(str(r) for r in report.break_reasons)


def test_unmodelled_numpy_function_breaks_with_a_reason_in_words(backend):
    def f(x):
        a = x.numpy() + 1
        return np.fft.rfft(a).real

    assert_transparent(f, lambda c: (floats(c, 8),), backend)
    report = dl.explain(f, backend=backend)(floats(0, 8))
    reasons = " ".join(str(r) for r in report.break_reasons)
    assert "rfft" in reasons and "Variable" not in reasons


def test_overflowing_python_int_raises_as_eagerly(backend):
    """NEP 50: a Python int that does not fit the array's dtype raises OverflowError."""
    def f(x):
        return x.numpy().astype(np.uint8) + 300

    assert_transparent(f, lambda c: (ints(c, 3).abs(),), backend)


def test_in_place_with_an_unsafe_cast_raises_as_eagerly(backend):
    def f(x):
        a = (x * 2).numpy()
        a += 1.5  # int64 += float: UFuncTypeError (same_kind casting)
        return a

    assert_transparent(f, lambda c: (ints(c, 3),), backend)


def test_numpy_of_a_tensor_requiring_grad_raises_as_eagerly(backend):
    w = dl.ones(3, requires_grad=True)

    def f(x):
        return (x * w).numpy()

    assert_transparent(f, lambda c: (floats(c, 3),), backend)


def test_recompiles_not_per_value(backend):
    def f(x):
        return np.tanh(x.numpy()).sum()

    compiled = dl.compile(f, backend=backend)
    for call in range(4):
        assert np.isclose(compiled(floats(call, 4)), f(floats(call, 4)))
    assert dl.stats().frames_compiled == 1


def test_array_arguments_are_graph_inputs_sharing_memory(backend):
    """An ndarray argument is read by the graph and written through in place, as eagerly."""
    def f(a, x):
        b = a * 2 + x.numpy()
        a += 1
        return b.sum(axis=0), a

    def args(c):
        return np.arange(6.0).reshape(2, 3) + c, dl.ones(2, 3, dtype=dl.float64)

    compiled = one_graph(f, backend, args)
    a = args(0)[0]
    assert compiled(a, args(0)[1])[1] is a


def test_numpy_scalar_across_a_break(backend):
    """A NumPy scalar made before a break reaches the code after it as a graph input, not a constant."""
    def f(x):
        m = np.median(x.numpy())  # not modelled: runs eagerly
        return np.sqrt(np.abs(x.numpy() * m)).sum()

    assert_transparent(f, lambda c: (floats(c, 5),), backend, calls=4)
    dl.reset()
    compiled = dl.compile(f, backend=backend)
    for call in range(4):
        compiled(floats(call, 5))
    assert dl.stats().frames_compiled == 2, dl.stats()  # the frame and its resume function, once each


def test_arrays_made_from_constants_are_new_on_every_call(backend):
    def f(x):
        a = x.numpy()
        weights = np.array([1.0, 2.0, 3.0])
        out = np.zeros(3)
        out[0] = a.sum()
        return a * weights + np.arange(3), out, np.linspace(0, 1, 3) + a, weights

    compiled = one_graph(f, backend, lambda c: (floats(c, 3),))
    first, second = compiled(floats(0, 3)), compiled(floats(0, 3))
    assert all(a is not b for a, b in zip(first, second))


def test_item_and_tolist_of_arrays(backend):
    def f(x):
        a = x.numpy() * 2
        return a.tolist(), a[1].item(), x * a.max().item()

    one_graph(f, backend, lambda c: (floats(c, 3),))


def test_random_numpy_is_never_folded(backend):
    """np.random draws from a generator's state: it runs eagerly on every call."""
    def f(x):
        return x.numpy() + np.random.rand(3)

    compiled = dl.compile(f, backend=backend)
    np.random.seed(0)
    first = compiled(floats(0, 3))
    second = compiled(floats(0, 3))
    np.random.seed(0)
    assert np.array_equal(first, f(floats(0, 3))) and np.array_equal(second, f(floats(0, 3)))


def test_scalars_read_before_a_write_keep_their_value(backend):
    """A NumPy scalar (``a[0]``) and ``t.item()`` are copies: writing the array or tensor later
    does not change them."""
    def f(x):
        a = x.numpy()
        first = a[0]
        second = x[1].item()
        items = x.tolist()
        a[0] = 100
        x[1] = 50
        return first, second, items, a[1:]

    one_graph(f, backend, lambda c: (floats(c, 3),))


def test_ufuncs_and_operators_on_tensors_read_their_arrays(backend):
    """``np.exp(t)`` and ``t + a`` read the tensor through ``__array__`` (a tensor's operator
    declines an ndarray, NumPy's reflected one runs): ndarrays with NumPy's dtypes."""
    def f(x, y):
        a = y.numpy()
        return x + a, a * x, x < a, np.exp(x), np.maximum(x, 0.5), np.add(x, 1), x - np.array(1.0)

    one_graph(f, backend, lambda c: (ints(c, 3).to(dl.int32), floats(c, 3)))


def test_evaluation_step_with_numpy_metrics(backend):
    """A user's evaluation step: the loss, a count read with item(), accuracy and confidences in NumPy."""
    model = dl.nn.Sequential(dl.nn.Linear(4, 8), dl.nn.ReLU(), dl.nn.Linear(8, 3))

    def evaluate(x, labels):
        with dl.no_grad():
            logits = model(x)
            loss = dl.nn.functional.cross_entropy(logits, labels)
        scores = logits.numpy()
        accuracy = (scores.argmax(axis=1) == labels.numpy()).mean()
        probs = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
        return loss, labels.sum().item(), accuracy * 100, np.max(probs, axis=1)

    one_graph(evaluate, backend, lambda c: (floats(c, 6, 4) / 3, (dl.arange(6) + c) % 3))


SCALE = np.float32(0.5)


def test_numpy_scalars_with_tensors(backend):
    """A tensor's operator takes a NumPy scalar as a Python number (a tensor); NumPy's scalar
    on the left runs NumPy's ufunc on the tensor's array (an ndarray)."""
    def f(x, n):
        return (x * SCALE, SCALE * x, n + np.int64(2), n * np.float64(1.5), x.numpy().sum() * x,
                x + np.sqrt(2.0), np.float32(3) * x)

    one_graph(f, backend, lambda c: (floats(c, 3), ints(c, 3).to(dl.int32)))


def test_identity_of_arrays_and_numbers(backend):
    def f(x, a):
        b = x.numpy()
        s = x.sum().item()
        return b is None, b is b, np.asarray(b) is b, a is b, s is None, a is not None, x + 1

    one_graph(f, backend, lambda c: (floats(c, 2), np.ones(2)))
