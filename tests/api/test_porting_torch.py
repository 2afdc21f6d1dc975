"""The torch-porting layers and functions against answers recorded from PyTorch, eager and compiled.

``fixtures/porting.npz`` holds each case's inputs and torch's outputs and
``fixtures/porting_errors.json`` torch's exception type and message for bad input; both
were written by ``fixtures/record_porting.py`` with PyTorch 2.13 (CPU) from the cases
in ``porting_cases.py``.
"""
from __future__ import annotations

import builtins
import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same

from . import porting_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "porting.npz")
ERRORS = json.loads((FIXTURES / "porting_errors.json").read_text())
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}
#: torch's exception types that are not builtins -> dynamo_lite's.
ERROR_TYPES = {"_LinAlgError": dl.linalg.LinAlgError}
#: Cases whose call reads tensor values (a quantile tensor's range check, as torch makes): one graph break.
BREAKING_CASES = {"quantile_tensor_q_keepdim", "nanquantile"}


def _case_function(path, ctor):
    """The callable a case runs: the function, or a module built once."""
    target = C.resolve(dl, path)
    return target(**ctor) if ctor is not None else target


def _outputs(result):
    if isinstance(result, dl.Tensor):
        return [result]
    return [t for r in result for t in _outputs(r)] if isinstance(result, (tuple, list)) else []


@pytest.mark.parametrize("name,path,args,kwargs,ctor", C.CASES, ids=[c[0] for c in C.CASES])
def test_matches_torch(name, path, args, kwargs, ctor):
    args, kwargs = C.build_inputs(name, args, kwargs, RECORDED, dl.tensor)
    outputs = _outputs(_case_function(path, ctor)(*args, **kwargs))
    expected = [RECORDED[k] for k in sorted(RECORDED.files) if k.startswith(f"{name}/out")]
    assert len(outputs) == len(expected)
    for out, want in zip(outputs, expected):
        assert out.dtype == dl.tensor(want).dtype and tuple(out.shape) == want.shape, name
        np.testing.assert_allclose(out.detach().numpy(), want, **TOLERANCE, err_msg=name)


@pytest.mark.parametrize("name,path,args,kwargs,ctor", C.CASES, ids=[c[0] for c in C.CASES])
def test_compiled_matches_eager(name, path, args, kwargs, ctor):
    args, kwargs = C.build_inputs(name, args, kwargs, RECORDED, dl.tensor)
    function = _case_function(path, ctor)
    breaks = name in BREAKING_CASES
    assert_same(lambda *a: function(*a, **kwargs), *args, backend="numpy", expect_breaks=int(breaks),
                expect_graphs=not breaks)


@pytest.mark.parametrize("name,path,args,kwargs,ctor", C.ERROR_CASES, ids=[c[0] for c in C.ERROR_CASES])
def test_errors_match_torch(name, path, args, kwargs, ctor):
    args, kwargs = C.build_inputs(name, args, kwargs, RECORDED, dl.tensor)
    error_type, message = ERRORS[name]
    function = _case_function(path, ctor)
    with pytest.raises(ERROR_TYPES.get(error_type) or getattr(builtins, error_type)) as caught:
        function(*args, **kwargs)
    assert str(caught.value) == message
    compiled = dl.compile(lambda *a: function(*a, **kwargs))
    with pytest.raises(type(caught.value)) as caught_compiled:
        compiled(*args)
    assert str(caught_compiled.value) == message


@pytest.mark.parametrize("name", C.GRAD_CASES)
def test_gradients_match_torch(name):
    _, path, args, kwargs, ctor = next(c for c in C.CASES if c[0] == name)
    args, kwargs = C.build_inputs(name, args, kwargs, RECORDED,
                                  lambda a: dl.tensor(a, dtype=dl.float64).requires_grad_())
    output = _outputs(_case_function(path, ctor)(*args, **kwargs))[0]
    (output * dl.tensor(C.cotangent(tuple(output.shape)))).sum().backward()
    inputs = _outputs([*args, *kwargs.values()])
    assert len(inputs) == len([k for k in RECORDED.files if k.startswith(f"{name}/grad")])
    for i, t in enumerate(inputs):
        np.testing.assert_allclose(t.grad.numpy(), RECORDED[f"{name}/grad{i}"], rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} input {i}")


def test_kl_div_mean_warns_like_torch():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        dl.nn.functional.kl_div(dl.zeros(2, 3), dl.ones(2, 3))


def test_prelu_weight_gets_a_gradient():
    layer = dl.nn.PReLU()
    layer(dl.tensor([-2.0, 1.0, -1.0])).sum().backward()
    assert layer.weight.grad.tolist() == [-3.0]
