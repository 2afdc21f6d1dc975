"""dl.testing.assert_close against torch.testing.assert_close's recorded answers.

``fixtures/assert_close.json`` was written by ``fixtures/record_assert_close.py`` with
PyTorch 2.13 (CPU) from ``assert_close_cases.py``: None where torch passed, else its
exception type and message. torch's own names in messages (``torch.Size``,
``torch.float32``, ``torch.Tensor``) read as dynamo_lite's.
"""
from __future__ import annotations

import builtins
import json
import pathlib

import pytest

import dynamo_lite as dl

from . import assert_close_cases as C

ANSWERS = json.loads((pathlib.Path(__file__).parent / "fixtures" / "assert_close.json").read_text())
#: torch's spelling in a message -> dynamo_lite's.
RENAMES = {"torch.Size": "dl.Size", "torch.float": "dynamo_lite.float",
           "<class 'torch.Tensor'>": "<class 'dynamo_lite.tensor.tensor.Tensor'>"}


def _make(values, dtype):
    return dl.tensor(values, dtype=getattr(dl, "bool" if dtype == "bool" else dtype))


def _in_dl_names(message: str) -> str:
    for torch_name, dl_name in RENAMES.items():
        message = message.replace(torch_name, dl_name)
    return message


@pytest.mark.parametrize("name,actual,expected,kwargs", C.CASES, ids=[c[0] for c in C.CASES])
def test_matches_torch(name, actual, expected, kwargs):
    answer = ANSWERS[name]
    call = lambda: dl.testing.assert_close(C.build(actual, _make), C.build(expected, _make), **kwargs)  # noqa: E731
    if answer is None:
        call()
        return
    error_type, message = answer
    with pytest.raises(getattr(builtins, error_type)) as caught:
        call()
    assert str(caught.value) == _in_dl_names(message)


def test_message_callable_rewrites_the_message():
    with pytest.raises(AssertionError, match="^XTenso$"):
        dl.testing.assert_close(dl.tensor([1.0]), dl.tensor([2.0]), msg=lambda m: "X" + m[:5])

