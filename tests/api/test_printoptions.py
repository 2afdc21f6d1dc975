"""dl.set_printoptions: tensor reprs under each option equal PyTorch's.

``fixtures/printoptions.json`` holds the data and torch's reprs, written by
``fixtures/record_printoptions.py`` with PyTorch 2.13 (CPU).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl

RECORDED = json.loads((pathlib.Path(__file__).parent / "fixtures" / "printoptions.json").read_text())


@pytest.fixture(autouse=True)
def default_printoptions():
    yield
    dl.set_printoptions(profile="default")


@pytest.mark.parametrize("options,data,expected", RECORDED["cases"],
                         ids=[f"{data}-{options}" for options, data, _ in RECORDED["cases"]])
def test_repr_matches_torch(options, data, expected):
    dl.set_printoptions(**options)
    assert repr(dl.tensor(np.array(RECORDED["data"][data], dtype=np.float32))) == expected


def test_profile_default_restores_and_get_printoptions_reports():
    dl.set_printoptions(precision=7, threshold=3, edgeitems=1, linewidth=20, sci_mode=True)
    assert dl.get_printoptions() == {"precision": 7, "threshold": 3, "edgeitems": 1, "linewidth": 20,
                                     "sci_mode": True}
    dl.set_printoptions(profile="default")
    assert dl.get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                                     "sci_mode": None}
    assert repr(dl.tensor([1.5, 2.25])) == "tensor([1.5000, 2.2500])"


def test_compiled_print_uses_the_options(capsys):
    dl.set_printoptions(precision=1)

    def show(x):
        print(x * 2)
        return x + 1

    show(dl.tensor([1.25]))
    eager = capsys.readouterr().out
    dl.compile(show, backend="numpy")(dl.tensor([1.25]))
    assert capsys.readouterr().out == eager == "tensor([2.5])\n"
