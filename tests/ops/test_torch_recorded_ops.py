"""The porting ops (1: elementwise, gamma, nan-reductions, scans; 2: shapes, indexing; 3: linalg-lite) against PyTorch.

``fixtures/torch_ops.npz`` holds each case's inputs and torch's outputs and gradients,
``fixtures/torch_ops_errors.json`` torch's exception type and message for bad input; both
were written by ``fixtures/record_torch_ops.py`` with PyTorch 2.13 (CPU) from the cases in
``torch_op_cases.py``. Tests never import torch.
"""
from __future__ import annotations

import builtins
import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same

from . import torch_op_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "torch_ops.npz")
ERRORS = json.loads((FIXTURES / "torch_ops_errors.json").read_text())
CASES = {c[0]: c for c in C.CASES}
#: float32 results computed by different (equally valid) float64 algorithms round apart by an ulp or so.
TOLERANCE = {"rtol": 2e-6, "atol": 1e-6}


def _outputs(result):
    if isinstance(result, dl.Tensor):
        return [result]
    return [t for r in result for t in _outputs(r)] if isinstance(result, (tuple, list)) else []


def _inputs(name, make=dl.tensor):
    _, path, args, kwargs = CASES[name]
    return path, *C.build_inputs(name, args, kwargs, RECORDED, make)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    path, args, kwargs = _inputs(name)
    outputs = _outputs(C.call(dl, path, args, kwargs))
    expected = [RECORDED[f"{name}/out{i}"] for i in range(len([k for k in RECORDED.files
                                                               if k.startswith(f"{name}/out")]))]
    assert len(outputs) == len(expected), name
    for out, want in zip(outputs, expected):
        assert out.dtype == dl.tensor(want).dtype and tuple(out.shape) == want.shape, name
        np.testing.assert_allclose(out.numpy(), want, **TOLERANCE, err_msg=name)
        if want.dtype.kind == "f":  # signed zeros (copysign, sgn, frexp) agree too
            zeros = want == 0
            assert np.array_equal(np.signbit(out.numpy()[zeros]), np.signbit(want[zeros])), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_matches_eager(name):
    path, args, kwargs = _inputs(name)
    tensors = [a for a in args if isinstance(a, dl.Tensor)]

    def fn(*ts):
        it = iter(ts)
        rebuilt = [next(it) if isinstance(a, dl.Tensor) else a for a in args]
        return C.call(dl, path, rebuilt, kwargs)

    assert_same(fn, *tensors, backend="numpy", copy_args=path.endswith("_"))


@pytest.mark.parametrize("name", sorted(n for n, *_ in C.ERROR_CASES))
def test_errors_match_torch(name):
    _, path, args, kwargs = next(c for c in C.ERROR_CASES if c[0] == name)
    args, kwargs = C.build_inputs(name, args, kwargs, RECORDED, dl.tensor)
    error_type, message = ERRORS[name]
    with pytest.raises(getattr(builtins, error_type)) as caught:
        C.call(dl, path, args, kwargs)
    assert str(caught.value) == message
    compiled = dl.compile(lambda *a: C.call(dl, path, list(a), kwargs))
    with pytest.raises(type(caught.value)) as caught_compiled:
        compiled(*args)
    assert str(caught_compiled.value) == message


def _for_gradient(array):
    t = dl.tensor(array)
    return t.double().requires_grad_() if t.dtype.is_floating_point else t


@pytest.mark.parametrize("name", C.GRAD_CASES)
def test_gradients_match_torch(name):
    path, args, kwargs = _inputs(name, _for_gradient)
    output = _outputs(C.call(dl, path, args, kwargs))[0]
    (output * dl.tensor(C.cotangent(tuple(output.shape)))).sum().backward()
    inputs = [t for t in _outputs([*args, *kwargs.values()]) if t.requires_grad]
    assert len(inputs) == len([k for k in RECORDED.files if k.startswith(f"{name}/grad")])
    for i, t in enumerate(inputs):
        np.testing.assert_allclose(t.grad.numpy(), RECORDED[f"{name}/grad{i}"], rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} input {i}")


def test_compiled_group_in_one_graph():
    """Several group-1 ops in one function: one graph, no break, values equal to eager."""
    def fn(x, y, n):
        a = dl.logaddexp(x, y) + dl.copysign(x, y) * dl.fmax(x, y)
        b = dl.lgamma(x.abs() + 1) + dl.digamma(y.abs() + 1) + dl.i0(x) + dl.xlogy(x.abs(), y.abs())
        c = dl.nansum(x, 1) + dl.logcumsumexp(y, 1)[:, -1] + dl.cummax(x, 1).values[:, -1]
        return a, b, c, dl.histc(x, bins=5), dl.isin(n, n[:2]), dl.aminmax(x, dim=0), dl.frexp(y)

    x, y = dl.randn(3, 4), dl.randn(3, 4)
    assert_same(fn, x, y, dl.tensor([3, 1, 4, 1]), backend="numpy")


def test_compiled_group2_in_one_graph():
    """Several group-2 ops in one function: one graph, no break, values equal to eager."""
    def fn(x, mask, index):
        a, b = dl.tensor_split(x, 2, dim=1)
        d = dl.diagonal(x, 1) + dl.take(x, index[:3]) + dl.take_along_dim(x, index[:3].reshape(3, 1), 1).sum()
        e = dl.index_add(x, 0, index % 3, dl.ones(4, 4), alpha=2.0) + dl.masked_scatter(x, mask, x * 10)
        f = dl.diag_embed(d, 1) @ dl.block_diag(a, b)[:4, :4] + dl.trapezoid(x, dim=0)
        return a, b, d, e, f, dl.combinations(d), dl.cartesian_prod(d[:2], d[1:]), dl.broadcast_tensors(d[:, None], x)[0]

    x = dl.randn(3, 4)
    assert_same(fn, x, dl.randn(3, 4) > 0, dl.tensor([0, 3, 1, 2]), backend="numpy")


def test_diagonal_is_a_view():
    x = dl.zeros(3, 4)
    x.diagonal(1).fill_(2.0)
    assert x.tolist() == [[0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 2.0]]


def test_asarray_and_frombuffer_share_memory():
    import array
    values = np.arange(4.0)
    shared = dl.asarray(values)
    values[0] = 7.0
    assert shared[0].item() == 7.0
    t = dl.ones(2)
    assert dl.asarray(t) is t and dl.asarray(t, copy=True) is not t
    assert dl.asarray([1, 2], dtype=dl.float64).dtype == dl.float64
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype 'Double'"):
        dl.asarray(t, dtype=dl.float64, copy=False)
    buffer = array.array("f", [1.0, 2.0, 3.0])
    view = dl.frombuffer(buffer, dtype=dl.float32, count=2, offset=4)
    buffer[1] = 5.0
    assert view.tolist() == [5.0, 3.0]


def test_compiled_group3_in_one_graph():
    """Several group-3 ops in one function: one graph, no break, values equal to eager."""
    def fn(a, b, v):
        m = dl.matrix_exp(a * 0.5) + dl.addr(a, v, v, alpha=0.5) + dl.cov(b)[:3, :3]
        w = dl.mv(m, v) + dl.addmv(v, a, v, beta=0) + dl.cross(v, dl.linalg.cross(v, v + 1))
        return m, w, dl.inner(a, b[:, :3]), dl.vdot(v, w), dl.trace(m), dl.corrcoef(b), dl.pdist(a), \
            dl.addbmm(a, a.expand(2, 3, 3), a.expand(2, 3, 3)), dl.chain_matmul(a, m, a)

    assert_same(fn, dl.randn(3, 3), dl.randn(4, 5), dl.randn(3), backend="numpy")
