"""einsum, tensordot, outer, kron, diag, baddbmm and roll, repeat_interleave, meshgrid, *stack vs NumPy.

Error messages marked "torch 2.13" were recorded by making the same call in PyTorch
2.13.0 (CPU wheel) in a private venv.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array
from tests.helpers import assert_same

from .oracle import laid_out

RNG = np.random.default_rng(3)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ii->i", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ba", [(2, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 2)]),
    ("i...,...->i...", [(3, 1, 4), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i,i->i", [(3,), (1,)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUMS)
def test_einsum_matches_numpy(equation, shapes):
    arrays = [f32(*s) for s in shapes]
    tensors = [laid_out(a, "transposed") for a in arrays]
    result = dl.einsum(equation, *tensors)
    broadcast = [np.broadcast_to(a, (3,)) if equation == "i,i->i" else a for a in arrays]
    np.testing.assert_allclose(result.numpy(), np.einsum(equation, *broadcast), rtol=1e-5, atol=1e-5)
    assert dl.einsum(equation, tensors).shape == result.shape  # operands as one list


def test_einsum_dtypes_and_errors():  # torch 2.13
    ints = dl.ones(2, 3, dtype=dl.int32)
    assert dl.einsum("ij->", ints).dtype is dl.int64  # summed like ``sum``
    assert dl.einsum("i,j->ij", dl.ones(2, dtype=dl.int32), dl.ones(3, dtype=dl.int32)).dtype is dl.int32
    cases = [
        (("ij,jk->ik", dl.ones(2, 3, dtype=dl.int64), dl.ones(3, 2)), "expected scalar type Long but found Float"),
        (("ij,jk->ik", dl.ones(2, 3), dl.ones(4, 2)),
         "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
        (("ij", dl.ones(2, 3, 4)), "einsum(): the number of subscripts in the equation (2) does not match the "
                                   "number of dimensions (3) for operand 0 and no ellipsis was given"),
        (("i->ii", dl.ones(3)), "einsum(): output subscript i appears more than once in the output"),
        (("ij,jk->ik", dl.ones(2, 3)), "einsum(): fewer operands were provided than specified in the equation"),
        (("ij->k", dl.ones(2, 3)),
         "einsum(): output subscript k does not appear in the equation for any input operand"),
        (("i1->", dl.ones(2, 3)),
         "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]"),
    ]
    for args, message in cases:
        with pytest.raises(RuntimeError) as info:
            dl.einsum(*args)
        assert str(info.value) == message


def test_tensordot_matches_numpy_and_errors():
    a, b = f32(2, 3, 4), f32(4, 3, 5)
    got = dl.tensordot(from_array(a), laid_out(b, "transposed"), dims=([1, 2], [1, 0]))
    np.testing.assert_allclose(got.numpy(), np.tensordot(a, b, axes=([1, 2], [1, 0])), rtol=1e-5)
    c = f32(3, 4, 6)
    np.testing.assert_allclose(dl.tensordot(from_array(a), from_array(c)).numpy(), np.tensordot(a, c), rtol=1e-5)
    np.testing.assert_allclose(dl.tensordot(from_array(a), from_array(c), 0).numpy(), np.tensordot(a, c, 0),
                               rtol=1e-5)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has size 3 in dim -1 "
                                           "and second has size 4 in dim 0"):  # torch 2.13
        dl.tensordot(dl.ones(2, 3), dl.ones(4, 4), dims=1)
    with pytest.raises(RuntimeError, match="both inputs should have same dtype"):
        dl.tensordot(dl.ones(2, 3), dl.ones(3, 4, dtype=dl.float64), dims=1)
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0, but got dims=-1"):
        dl.tensordot(dl.ones(2, 3), dl.ones(3, 4), dims=-1)


def test_outer_and_kron():
    a, b = f32(3), f32(4)
    np.testing.assert_allclose(dl.outer(from_array(a), from_array(b)).numpy(), np.outer(a, b), rtol=1e-6)
    assert dl.outer(dl.ones(2, dtype=dl.int64), dl.ones(3)).dtype is dl.float32
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):  # torch 2.13
        dl.outer(dl.ones(2, 2), dl.ones(3))
    for sa, sb in [((2, 3), (4,)), ((2, 2), (3, 1)), ((2,), (2, 3, 2))]:
        x, y = f32(*sa), f32(*sb)
        np.testing.assert_allclose(dl.kron(from_array(x), laid_out(y, "transposed")).numpy(), np.kron(x, y),
                                   rtol=1e-6)
    assert dl.kron(dl.ones(2, 3, dtype=dl.int32), dl.ones(4, dtype=dl.float16)).dtype is dl.float16


def test_diag():
    m = f32(3, 4)
    for k in (-2, -1, 0, 1, 3, 5):
        np.testing.assert_array_equal(dl.diag(laid_out(m, "transposed"), k).numpy(), np.diag(m, k))
        np.testing.assert_array_equal(dl.diag(from_array(m[0]), k).numpy(), np.diag(m[0], k))
    with pytest.raises(RuntimeError, match="diag\\(\\): Supports 1D or 2D tensors. Got 3D"):  # torch 2.13
        dl.diag(dl.ones(2, 2, 2))


def test_baddbmm():
    inp, b1, b2 = f32(3, 1), f32(2, 3, 4), f32(2, 4, 5)
    got = dl.baddbmm(from_array(inp), from_array(b1), laid_out(b2, "transposed"), beta=0.5, alpha=2)
    np.testing.assert_allclose(got.numpy(), 0.5 * inp + 2 * (b1 @ b2), rtol=1e-5)
    cases = [  # torch 2.13
        ((dl.ones(2, 3, 5), dl.ones(2, 3, 4), dl.ones(2, 5, 5)),
         "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5]."),
        ((dl.ones(2, 3, 5, dtype=dl.float64), dl.ones(2, 3, 4), dl.ones(2, 4, 5)),
         "Input dtypes must be the same, got: input double, batch1: float, batch2: float"),
        ((dl.ones(4, 5), dl.ones(2, 3, 4), dl.ones(2, 4, 5)),
         "The expanded size of the tensor (3) must match the existing size (4) at non-singleton dimension 1.  "
         "Target sizes: [2, 3, 5].  Tensor sizes: [4, 5]"),
        ((dl.ones(2, 3, 5), dl.ones(3, 4), dl.ones(2, 4, 5)), "batch1 must be a 3D tensor"),
    ]
    for args, message in cases:
        with pytest.raises(RuntimeError) as info:
            dl.baddbmm(*args)
        assert str(info.value) == message


# -- rearranging ----------------------------------------------------------------------------
def test_roll():
    a = f32(3, 4)
    x = laid_out(a, "transposed")
    np.testing.assert_array_equal(dl.roll(x, 5).numpy(), np.roll(a, 5))
    np.testing.assert_array_equal(x.roll((1, -2), (0, 1)).numpy(), np.roll(a, (1, -2), (0, 1)))
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 2, dims:1"):  # torch 2.13
        dl.roll(x, (1, 2), (0,))
    with pytest.raises(IndexError, match="Dimension out of range"):
        dl.roll(x, 1, 2)


def test_repeat_interleave():
    m = dl.tensor([[1, 2], [3, 4]])
    assert dl.repeat_interleave(dl.tensor([1, 2]), 2).tolist() == [1, 1, 2, 2]
    assert m.repeat_interleave(2, dim=0).tolist() == [[1, 2], [1, 2], [3, 4], [3, 4]]
    assert dl.repeat_interleave(m, dl.tensor([1, 2]), dim=0).tolist() == [[1, 2], [3, 4], [3, 4]]
    assert dl.repeat_interleave(m, dl.tensor([1, 2]), dim=1, output_size=3).tolist() == [[1, 2, 2], [3, 4, 4]]
    assert dl.repeat_interleave(m, dl.tensor([2])).tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert dl.repeat_interleave(dl.tensor([2, 3])).tolist() == [0, 0, 1, 1, 1]
    cases = [  # torch 2.13
        (lambda: dl.repeat_interleave(m, dl.tensor([1, 2, 3]), dim=0), RuntimeError,
         "repeats must have the same size as input along dim, but got repeats.size(0) = 3 and input.size(0) = 2"),
        (lambda: dl.repeat_interleave(m, -1), RuntimeError, "Repeats must be non-negative"),
        (lambda: dl.repeat_interleave(m, dl.tensor([1, -2]), dim=0), RuntimeError, "repeats can not be negative"),
        (lambda: dl.repeat_interleave(m, dl.tensor([1.0, 2.0]), dim=0), NotImplementedError,
         "\"repeat_interleave_cpu\" not implemented for 'Float'"),
    ]
    for call, error, message in cases:
        with pytest.raises(error) as info:
            call()
        assert str(info.value) == message


def test_meshgrid():
    x, y = dl.arange(2), dl.arange(3)
    gx, gy = dl.meshgrid(x, y, indexing="ij")
    ex, ey = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
    assert gx.tolist() == ex.tolist() and gy.tolist() == ey.tolist()
    gx, gy = dl.meshgrid([x, y], indexing="xy")
    ex, ey = np.meshgrid(np.arange(2), np.arange(3), indexing="xy")
    assert gx.tolist() == ex.tolist() and gy.tolist() == ey.tolist()
    assert (gx.stride(), gy.stride()) == ((0, 1), (1, 0))  # expanded views, as torch returns
    with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same dtype"):
        dl.meshgrid(x, dl.arange(3.0), indexing="ij")
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij", but received: foo'):
        dl.meshgrid(x, indexing="foo")


def test_stacks():
    assert dl.hstack([dl.ones(2), dl.ones(3)]).shape == (5,)
    assert dl.hstack([dl.ones(2, 1), dl.ones(2, 3)]).shape == (2, 4)
    assert dl.vstack([dl.ones(2), dl.ones(2)]).shape == (2, 2)
    assert dl.dstack([dl.ones(2), dl.ones(2)]).shape == (1, 2, 2)
    assert dl.column_stack([dl.ones(2), dl.ones(2, 3)]).shape == (2, 4)
    assert dl.hstack([dl.ones(()), dl.ones(2, dtype=dl.int64)]).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="hstack expects a non-empty TensorList"):  # torch 2.13
        dl.hstack([])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        dl.vstack([dl.ones(2), dl.ones(3)])
    assert [t.shape for t in dl.atleast_3d(dl.ones(()), dl.ones(2), dl.ones(2, 3))] == [(1, 1, 1), (1, 2, 1),
                                                                                      (2, 3, 1)]


# -- compiled code --------------------------------------------------------------------------
def _attention_like(q, k, v, bias, scale):
    scores = dl.einsum("bqd,bkd->bqk", q, k)
    scores = dl.baddbmm(bias, q, k.transpose(1, 2), alpha=scale) + scores
    mixed = dl.tensordot(scores.softmax(-1), v, dims=([2], [1]))[:, :, 0]
    grid_x, grid_y = dl.meshgrid(dl.arange(3.0), dl.arange(4.0), indexing="xy")
    extras = dl.kron(dl.diag(q[0, 0]), dl.outer(q[0, 1], q[0, 2])).sum() + (grid_x * grid_y).sum()
    stacked = dl.vstack([mixed.flatten(), dl.hstack([mixed[0], mixed[1]]).flatten()])
    return dl.roll(stacked, 1, 1).repeat_interleave(2, dim=0) + extras


def test_contractions_and_rearranging_compile_into_one_graph(backend):
    args = (dl.randn(2, 3, 4), dl.randn(2, 5, 4), dl.randn(2, 5, 4), dl.randn(3, 5), 0.5)
    report = dl.explain(_attention_like)(*args)
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    assert_same(_attention_like, *args, backend=backend)
    assert dl.stats().frames_compiled == 1


def test_repeat_interleave_with_tensor_repeats_breaks_unless_output_size_is_given(backend):
    def data_dependent(x, r):
        return dl.repeat_interleave(x * 2, r, dim=0) + 1

    def sized(x, r):
        return dl.repeat_interleave(x * 2, r, dim=0, output_size=5) + 1

    args = (dl.randn(3, 2), dl.tensor([1, 3, 1]))
    report = dl.explain(data_dependent)(*args)
    assert report.graph_break_count == 1
    assert "repeat_interleave() needs the value of a traced tensor" in report.break_reasons[0].reason
    assert_same(data_dependent, *args, backend=backend, expect_breaks=1)
    report = dl.explain(sized)(*args)
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert_same(sized, *args, backend=backend)
