"""View ops against NumPy: values, torch's strides, shared storage and versions, errors."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.ops.core.registry import REGISTRY
from dynamo_lite.tensor import views as rules
from dynamo_lite.tensor.meta import TensorMeta


def strided(shape, kind="contiguous", dtype=np.float64):
    """(tensor, matching numpy array) whose memory layout is ``kind``."""
    n = int(np.prod(shape))
    if kind == "contiguous":
        a = np.arange(n, dtype=dtype).reshape(shape)
    elif kind == "transposed":
        a = np.arange(n, dtype=dtype).reshape(shape[::-1]).T
    elif kind == "stepped":
        big = np.arange(n * 2, dtype=dtype).reshape(shape[:-1] + (shape[-1] * 2,)) if shape else np.arange(1.0)
        a = big[..., ::2] if shape else big.reshape(())
    else:  # expanded along dim 0
        a = np.broadcast_to(np.arange(int(np.prod(shape[1:])), dtype=dtype).reshape((1,) + shape[1:]), shape)
        base = dl.from_numpy(np.ascontiguousarray(a[:1]))
        return base.expand(*shape), a
    return dl.from_numpy(a), a


def same_storage(a, b):
    return a.untyped_storage() is b.untyped_storage()


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)
kinds = st.sampled_from(["contiguous", "transposed", "stepped", "expanded"])


# -- strides torch gives ---------------------------------------------------------------
def test_known_strides():
    x = dl.arange(12).view(3, 4)
    assert x.t().stride() == (1, 4)
    assert x.t().shape == (4, 3)
    assert x.unsqueeze(0).stride() == (12, 4, 1)
    assert x.unsqueeze(2).stride() == (4, 1, 1)
    assert x.t().unsqueeze(1).stride() == (1, 12, 4)
    assert x[:, 1].stride() == (4,) and x[:, 1].storage_offset() == 1
    assert x.expand(2, 3, 4).stride() == (0, 4, 1)
    assert dl.arange(3).expand(1, 3).stride() == (3, 1)
    assert dl.zeros(2, 3, 4, 5).contiguous(memory_format=dl.channels_last).stride() == (60, 1, 15, 3)
    assert dl.zeros(2, 3, 4, 5).permute(0, 2, 3, 1).stride() == (60, 5, 1, 20)
    assert x.narrow(1, 1, 2).stride() == (4, 1) and x.narrow(1, 1, 2).storage_offset() == 1
    assert x.T.stride() == (1, 4) and x.mT.stride() == (1, 4)
    assert dl.zeros(2, 3, 4).T.shape == (4, 3, 2)
    assert x.unfold(1, 2, 2).shape == (3, 2, 2) and x.unfold(1, 2, 2).stride() == (4, 2, 1)


def test_view_of_noncontiguous_when_possible():
    x = dl.zeros(4, 6)[:, :4]  # rows are contiguous chunks
    assert x.view(4, 2, 2).stride() == (6, 2, 1)
    y = dl.zeros(2, 3, 4).transpose(0, 1)  # (3, 2, 4), strides (4, 12, 1)
    assert y.view(3, 2, 2, 2).stride() == (4, 12, 2, 1)


# -- values vs numpy ---------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(shape=shapes, kind=kinds, data=st.data())
def test_views_match_numpy(shape, kind, data):
    t, a = strided(shape, kind)
    nd = len(shape)
    d0 = data.draw(st.integers(-nd, nd - 1))
    d1 = data.draw(st.integers(-nd, nd - 1))
    perm = data.draw(st.permutations(range(nd)))
    cases = [
        (t.transpose(d0, d1), np.swapaxes(a, d0, d1)),
        (t.permute(*perm), np.transpose(a, perm)),
        (t.unsqueeze(d0), np.expand_dims(a, d0)),
        (t.squeeze(), a.squeeze()),
        (t.movedim(d0, d1), np.moveaxis(a, d0, d1)),
        (t.select(d0, -1), np.take(a, -1, axis=d0)),
        (t.narrow(d0, 0, 1), np.take(a, [0], axis=d0)),
        (t.expand(2, *shape), np.broadcast_to(a, (2,) + shape)),
    ]
    for got, want in cases:
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
        assert same_storage(got, t)
    viewable = rules.view_strides(t.shape, t.stride(), (t.numel(),)) is not None
    for got in (t.flatten(), t.reshape(-1)):
        np.testing.assert_array_equal(got.numpy(), a.reshape(-1))
        assert same_storage(got, t) == (viewable or t.ndim == 1)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, kind=kinds, data=st.data())
def test_view_possible_agrees_with_numpy(shape, kind, data):
    t, a = strided(shape, kind)
    n = int(np.prod(shape))
    factors = [d for d in range(1, n + 1) if n % d == 0]
    first = data.draw(st.sampled_from(factors))
    new_shape = (first, n // first) if data.draw(st.booleans()) else (n // first, 1, first)
    strides = rules.view_strides(t.shape, t.stride(), new_shape)
    try:
        np.reshape(a, new_shape, copy=False)
        numpy_can = True
    except ValueError:
        numpy_can = False
    assert (strides is not None) == numpy_can
    r = t.reshape(new_shape)
    np.testing.assert_array_equal(r.numpy(), a.reshape(new_shape))
    assert same_storage(r, t) == (strides is not None)
    if strides is not None:
        assert t.view(new_shape).stride() == strides
    else:
        with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
            t.view(new_shape)


def test_split_chunk_unbind():
    t, a = strided((7, 3), "transposed")
    parts = t.split(3)
    assert [p.shape[0] for p in parts] == [3, 3, 1]
    for p, q in zip(parts, np.split(a, [3, 6])):
        np.testing.assert_array_equal(p.numpy(), q)
        assert same_storage(p, t)
    assert [p.shape[1] for p in t.split([1, 2], dim=1)] == [1, 2]
    assert [c.shape[0] for c in t.chunk(3)] == [3, 3, 1]
    assert [c.shape[0] for c in dl.zeros(6).chunk(4)] == [2, 2, 2]  # fewer chunks than asked
    assert len(dl.zeros(0, 2).chunk(3)) == 3
    rows = t.unbind(1)
    assert isinstance(rows, tuple) and len(rows) == 3
    np.testing.assert_array_equal(rows[2].numpy(), a[:, 2])
    assert isinstance(dl.split(t, 2), tuple)


def test_squeeze_variants():
    x = dl.zeros(1, 3, 1, 2)
    assert x.squeeze().shape == (3, 2)
    assert x.squeeze(0).shape == (3, 1, 2)
    assert x.squeeze(1).shape == (1, 3, 1, 2)  # not size 1: unchanged
    assert x.squeeze((0, 2)).shape == (3, 2)
    assert dl.squeeze(dl.tensor(1.0), 0).shape == ()


def test_flatten_unflatten_movedim():
    x = dl.zeros(2, 3, 4, 5)
    assert x.flatten(1).shape == (2, 60)
    assert x.flatten(1, 2).shape == (2, 12, 5)
    assert x.flatten(2, 2) is x
    assert dl.tensor(3.0).flatten().shape == (1,)
    assert x.unflatten(1, (3, 1)).shape == (2, 3, 1, 4, 5)
    assert x.unflatten(-1, (-1, 1)).shape == (2, 3, 4, 5, 1)
    assert x.movedim((0, 1), (2, 3)).shape == (4, 5, 2, 3)
    assert x.movedim(1, -1).shape == (2, 4, 5, 3)


def test_as_strided_and_detach():
    x = dl.arange(10.0)
    y = x.as_strided((3, 3), (1, 1), 2)
    np.testing.assert_array_equal(y.numpy(), np.lib.stride_tricks.sliding_window_view(np.arange(10.0), 3)[2:5])
    assert same_storage(x, y) and y.storage_offset() == 2
    d = x.detach()
    assert d is not x and same_storage(d, x)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        x.as_strided((20,), (1,))
    with pytest.raises(RuntimeError, match="Negative strides"):
        x.as_strided((2,), (-1,))


def test_writes_through_views_and_shared_version():
    base = dl.zeros(3, 4)
    v = base.t()[1:3]
    assert v._version == base._version == 0
    v.fill_(5.0)
    assert base._version == v._version == 1
    expected = np.zeros((3, 4))
    expected[:, 1:3] = 5.0
    np.testing.assert_array_equal(base.numpy(), expected)
    base.numpy()[0, 0] = 7.0  # writes to the NumPy window show in every view
    assert base.t()[0, 0].item() == 7.0


def test_contiguous():
    x = dl.zeros(3, 4)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y.is_contiguous() and not same_storage(x, y) and y.stride() == (3, 1)
    n = dl.zeros(2, 3, 4, 5)
    c = n.contiguous(memory_format=dl.channels_last)
    assert c.is_contiguous(memory_format=dl.channels_last)
    assert c.contiguous(memory_format=dl.channels_last) is c
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        x.contiguous(memory_format=dl.preserve_format)


def test_dense_strides_like():
    assert rules.dense_strides_like((4, 3), (0, 1)) == (3, 1)  # broadcast dims keep contiguous order
    assert rules.dense_strides_like((3, 4), (2, 6)) == (1, 3)  # permutation of the input kept
    assert rules.dense_strides_like((2, 3), (1, 2)) == (1, 2)  # dense: strides kept as they are


# -- errors ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn, exc, message",
    [
        (lambda x: x.view(5, 3), RuntimeError, r"shape '\[5, 3\]' is invalid for input of size 12"),
        (lambda x: x.view(-1, -1), RuntimeError, "only one dimension can be inferred"),
        (lambda x: x.view(-2, 6), RuntimeError, "invalid shape dimension -2"),
        (lambda x: x.t().view(12), RuntimeError, "view size is not compatible"),
        (lambda x: x.transpose(0, 2), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
        (lambda x: x.unsqueeze(3), IndexError, "Dimension out of range"),
        (lambda x: dl.zeros(2, 3, 4).t(), RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"),
        (lambda x: x.permute(0), RuntimeError, "number of dimensions in the tensor input does not match"),
        (lambda x: x.permute(0, 0), RuntimeError, "duplicate dims"),
        (lambda x: x.expand(3, 5), RuntimeError, r"The expanded size of the tensor \(5\) must match the existing size \(4\) at non-singleton dimension 1"),
        (lambda x: x.expand(4), RuntimeError, r"the number of sizes provided \(1\) must be greater or equal"),
        (lambda x: x.expand(-1, 3, 4), RuntimeError, "isn't allowed in a leading, non-existing dimension 0"),
        (lambda x: x.narrow(0, 2, 2), RuntimeError, r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)"),
        (lambda x: x.narrow(0, 4, 0), IndexError, "start out of range"),
        (lambda x: x.select(0, 3), IndexError, r"select\(\): index 3 out of range for tensor of size \[3, 4\] at dimension 0"),
        (lambda x: dl.tensor(1.0).select(0, 0), IndexError, "select\\(\\) cannot be applied to a 0-dim tensor"),
        (lambda x: x.split([1, 1]), RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 3"),
        (lambda x: x.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0"),
        (lambda x: x.flatten(1, 0), RuntimeError, "start_dim cannot come after end_dim"),
        (lambda x: x.unflatten(1, (3, 2)), RuntimeError, "don't multiply up to the size of dim 1"),
        (lambda x: x.movedim((0, 1), 0), RuntimeError, "movedim: Invalid source or destination dims"),
        (lambda x: dl.zeros(3).mT, RuntimeError, "only supported on matrices"),
    ],
)
def test_view_errors(fn, exc, message):
    x = dl.arange(12).view(3, 4)
    with pytest.raises(exc, match=message):
        fn(x)


def test_view_ops_are_registered_with_rules():
    for name in ("view", "transpose", "permute", "expand", "squeeze", "unsqueeze", "narrow", "select",
                 "as_strided", "slice", "detach", "alias", "unfold"):
        op = REGISTRY[name]
        assert op.view is not None and "view" in op.tags and op.kernel is None


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.t(), lambda x: x.view(2, 6), lambda x: x[1:, None, ::2], lambda x: x.expand(2, 3, 4),
        lambda x: x.unsqueeze(1).squeeze(1), lambda x: x.narrow(1, 1, 2), lambda x: x.select(1, 2),
    ],
)
def test_meta_equals_eager(call):
    """The translator's meta rules must describe exactly what eager produces."""
    from dynamo_lite.ops.core.dispatch import TRACING

    x = dl.arange(12.0).view(3, 4)
    eager = call(x)

    class Recorder:
        def record(self, op, args, kwargs):
            metas = [TensorMeta.of(a) if isinstance(a, dl.Tensor) else a for a in args]
            return _meta_tensor(op.meta(*metas, **kwargs))

    TRACING.tracer = Recorder()
    try:
        traced = call(_meta_tensor(TensorMeta.of(x)))
    finally:
        TRACING.tracer = None
    assert (traced._sizes, traced._strides, traced._offset) == (eager._sizes, eager._strides, eager._offset)


def _meta_tensor(meta):
    """A data-less Tensor standing for ``meta`` (as a tracer's proxy would)."""
    from dynamo_lite.tensor.storage import Storage

    return dl.Tensor._make(Storage(None, meta.device), meta._sizes, meta._strides, meta._offset, meta.dtype)


def test_split_rules_match_wrappers():
    """The geometry-list rules (for backends) agree with the narrow/select views wrappers make."""
    x = dl.arange(30.0).view(5, 6).t()
    geom = (x.shape, x.stride(), x.storage_offset())
    cases = [
        (rules.split(geom, 4, 1), x.split(4, 1)),
        (rules.split_with_sizes(geom, [1, 5], 0), x.split([1, 5])),
        (rules.chunk(geom, 4, 0), x.chunk(4)),
        (rules.unbind(geom, 1), x.unbind(1)),
    ]
    for geoms, tensors in cases:
        assert [(t.shape, t.stride(), t.storage_offset()) for t in tensors] == geoms
