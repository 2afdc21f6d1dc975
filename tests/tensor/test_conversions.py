"""Conversions: to/float/..., clone, copy_, fill_/zero_, Python scalars and the repr."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.tensor.dtype import ALL_DTYPES


def test_to_returns_self_when_nothing_changes():
    x = dl.zeros(2, 3)
    assert x.to(dl.float32) is x
    assert x.to("cpu") is x
    assert x.to(x) is x
    assert x.cpu() is x
    assert x.to(dl.float32, copy=True) is not x
    assert x.to(device="cpu", dtype=dl.float32) is x


@settings(max_examples=30, deadline=None)
@given(src=st.sampled_from(ALL_DTYPES), dst=st.sampled_from(ALL_DTYPES), transposed=st.booleans())
def test_to_dtype_matches_numpy_astype(src, dst, transposed):
    a = (np.arange(-6, 6).reshape(3, 4) * 1.5).astype(src.numpy)
    t = dl.from_numpy(a)
    if transposed:
        t, a = t.t(), a.T
    out = t.to(dst)
    assert out.dtype is dst and out.shape == t.shape
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_array_equal(out.numpy(), a.astype(dst.numpy))
    if src is not dst:
        assert out.untyped_storage() is not t.untyped_storage()
        assert out.stride() == t.stride()  # dense layouts are preserved


@pytest.mark.parametrize(
    "method, dtype",
    [("float", dl.float32), ("double", dl.float64), ("half", dl.float16), ("int", dl.int32), ("long", dl.int64),
     ("bool", dl.bool), ("byte", dl.uint8), ("short", dl.int16), ("char", dl.int8)],
)
def test_dtype_methods(method, dtype):
    x = dl.tensor([0.0, 1.5, -2.0])
    assert getattr(x, method)().dtype is dtype
    assert x.type_as(dl.zeros(1, dtype=dtype)).dtype is dtype


def test_to_argument_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        dl.zeros(1).to(bogus=1)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        dl.zeros(1).to("tpu")


def test_clone_layouts_and_independence():
    x = dl.arange(12.0).view(3, 4).t()
    c = x.clone()
    assert c.stride() == x.stride() and c.untyped_storage() is not x.untyped_storage()
    c[0, 0] = 100.0
    assert x[0, 0].item() == 0.0
    assert x.clone(memory_format=dl.contiguous_format).stride() == (3, 1)
    assert dl.clone(x).tolist() == x.tolist()
    cl = dl.zeros(2, 3, 4, 5).clone(memory_format=dl.channels_last)
    assert cl.stride() == (60, 1, 15, 3)
    assert cl.clone().stride() == (60, 1, 15, 3)
    assert dl.zeros(4).expand(2, 4).clone().stride() == (4, 1)


def test_copy_broadcasts_converts_and_bumps_version():
    x = dl.zeros(2, 3)
    v = x[1]
    out = x.copy_(dl.tensor([1, 2, 3]))
    assert out is x and x._version == 1 and v._version == 1
    np.testing.assert_array_equal(x.numpy(), [[1, 2, 3], [1, 2, 3]])
    x.t().copy_(dl.tensor([[5.0, 6.0], [7.0, 8.0], [9.0, 10.0]]))
    np.testing.assert_array_equal(x.numpy(), [[5, 7, 9], [6, 8, 10]])
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(3\) must match the existing size \(2\)"):
        x.copy_(dl.zeros(2))
    with pytest.raises(TypeError, match="must be Tensor"):
        x.copy_(1.0)


def test_fill_and_zero():
    x = dl.ones(2, 2)
    x[0].fill_(3)
    x[1].fill_(dl.tensor(4.5))
    np.testing.assert_array_equal(x.numpy(), [[3, 3], [4.5, 4.5]])
    assert x._version == 2
    assert x.zero_() is x and x.numpy().sum() == 0 and x._version == 3
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions"):
        x.fill_(dl.zeros(2))


def test_python_scalars():
    assert dl.tensor([[2.5]]).item() == 2.5 and isinstance(dl.tensor(3).item(), int)
    assert isinstance(dl.tensor(True).item(), bool)
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        dl.zeros(2).item()
    assert bool(dl.tensor([1])) is True and bool(dl.tensor(0.0)) is False
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(dl.zeros(2))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        bool(dl.zeros(0))
    assert float(dl.tensor(2)) == 2.0 and int(dl.tensor(2.9)) == 2
    assert [10, 20, 30][dl.tensor(1)] == 20
    with pytest.raises(TypeError, match="only integer tensors of a single element can be converted to an index"):
        [1][dl.tensor(0.0)]
    assert len(dl.zeros(4, 2)) == 4
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(dl.tensor(1))
    rows = list(dl.arange(6).view(3, 2))
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(dl.tensor(1))
    assert dl.arange(4).view(2, 2).t().tolist() == [[0, 2], [1, 3]]
    assert f"{dl.tensor(1.23456):.2f}" == "1.23"


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: dl.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
        (lambda: dl.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
        (lambda: dl.tensor([1.5, -2.25]), "tensor([ 1.5000, -2.2500])"),
        (lambda: dl.tensor(2.5), "tensor(2.5000)"),
        (lambda: dl.tensor([1.0, 2.0], dtype=dl.float64), "tensor([1., 2.], dtype=dynamo_lite.float64)"),
        (lambda: dl.tensor([1, 2], dtype=dl.int32), "tensor([1, 2], dtype=dynamo_lite.int32)"),
        (lambda: dl.tensor([True, False]), "tensor([ True, False])"),
        (lambda: dl.tensor([]), "tensor([])"),
        (lambda: dl.zeros(0, 3), "tensor([], size=(0, 3))"),
        (lambda: dl.zeros(0, dtype=dl.int64), "tensor([], dtype=dynamo_lite.int64)"),
        (lambda: dl.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
        (lambda: dl.tensor([1.0, float("nan"), float("inf")]), "tensor([1., nan, inf])"),
        (lambda: dl.zeros(2, 1, 2), "tensor([[[0., 0.]],\n\n        [[0., 0.]]])"),
        (lambda: dl.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    ],
)
def test_repr(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_repr_wraps_long_rows_and_summarizes_matrices():
    text = repr(dl.arange(30.0))
    lines = text.split("\n")
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    assert lines[1].startswith("        ")
    big = repr(dl.zeros(100, 100))
    assert "...," in big and big.count("\n") == 6


def test_deepcopy_and_pickle_give_independent_tensors_that_keep_view_sharing():
    import copy
    import pickle

    base = dl.zeros(4)
    base.numpy()  # hands out (and caches) the array window first
    view = base[1:]
    base_copy, view_copy = copy.deepcopy((base, view))
    base_copy.fill_(3.0)
    assert view_copy.tolist() == [3.0, 3.0, 3.0]  # the copies still share one storage
    assert base.tolist() == [0.0, 0.0, 0.0, 0.0]  # the originals are untouched
    restored = pickle.loads(pickle.dumps(base[1:3]))
    assert restored.tolist() == [0.0, 0.0] and restored.storage_offset() == 1
