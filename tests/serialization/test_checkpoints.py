"""dl.save / dl.load in PyTorch's checkpoint format.

The ``fixtures/*.pt`` files were written by ``torch.save`` from PyTorch 2.13.0 (CPU wheel)
with ``tests/serialization/record_torch_fixtures.py``, which also wrote
``fixtures/expected.json`` (what each tensor holds, read back in torch). The reverse
direction (torch.load reading a dl.save file, including ``mmap=True``) was checked by
hand with the same PyTorch; here the files dl.save writes are checked for the same
records, layout and alignment as torch's.
"""
from __future__ import annotations

import collections
import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import dynamo_lite as dl

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
EXPECTED = json.load(open(os.path.join(FIXTURES, "expected.json")))["fixtures"]


def _check(value, spec, path="obj"):
    if "tensor" in spec:
        assert isinstance(value, dl.Tensor), path
        assert value.dtype.name == spec["dtype"], path
        assert list(value.shape) == spec["shape"] and list(value.stride()) == spec["stride"], path
        assert value.storage_offset() == spec["offset"], path
        assert isinstance(value, dl.nn.Parameter) == spec["parameter"], path
        if value.dtype.is_complex:
            got = [[c.real, c.imag] for c in np.asarray(value.numpy()).reshape(-1).tolist()]
            assert got == spec["values"], path
        else:
            assert value.tolist() == spec["values"], path
    elif "dict" in spec:
        assert isinstance(value, dict) and list(value) == [k for k, _ in spec["dict"]], path
        for key, item in spec["dict"]:
            _check(value[key], item, f"{path}[{key!r}]")
    elif "repr" not in spec:  # a sequence: {"list" | "tuple" | "Size": items}
        (kind, items), = spec.items()
        assert isinstance(value, (list, tuple)) and len(value) == len(items), path
        assert isinstance(value, dl.Size) == (kind == "Size"), path
        for i, item in enumerate(items):
            _check(value[i], item, f"{path}[{i}]")
    else:
        assert repr(value).replace("dynamo_lite.", "torch.").replace("dl.Size", "torch.Size") == spec["repr"], path


@pytest.mark.parametrize("name", ["state_dict", "mixed"])
def test_load_reads_what_torch_save_wrote(name):
    obj = dl.load(os.path.join(FIXTURES, f"{name}.pt"))
    _check(obj, EXPECTED[name])


def test_loaded_state_dict_keeps_metadata_and_loads_into_a_model():
    sd = dl.load(os.path.join(FIXTURES, "state_dict.pt"), map_location="cpu")
    assert isinstance(sd, collections.OrderedDict) and sd._metadata["1"] == {"version": 2}
    assert sd["1.num_batches_tracked"].dtype is dl.int64 and sd["1.num_batches_tracked"].item() == 1
    model = dl.nn.Sequential(dl.nn.Linear(3, 4), dl.nn.Linear(4, 2))
    model.load_state_dict({k.replace("2.", "1.", 1): v for k, v in sd.items() if k.startswith(("0.", "2."))})
    assert model[1].bias.tolist() == sd["2.bias"].tolist()


def test_bfloat16_loads_and_saves_its_bits():
    loaded = dl.load(os.path.join(FIXTURES, "bfloat16.pt"))["w"]
    assert loaded.dtype is dl.bfloat16 and loaded.tolist() == [1.0, 3.140625]  # torch 2.13 holds the same
    buffer = io.BytesIO()
    dl.save({"w": loaded}, buffer)
    buffer.seek(0)
    assert dl.load(buffer)["w"].tolist() == [1.0, 3.140625]


def test_views_share_their_storage_after_loading():
    mixed = dl.load(os.path.join(FIXTURES, "mixed.pt"))
    base, view = mixed["base"], mixed["view_t"]
    assert view.untyped_storage() is base.untyped_storage()
    base.mul_(2)
    assert view[0, 1].item() == 8.0


def test_round_trip_and_the_records_torch_expects(tmp_path):
    base = dl.arange(12.0).view(3, 4)
    obj = {
        "base": base, "view": base.t()[1:], "param": dl.nn.Parameter(dl.ones(2)), "int": dl.tensor([1, 2]),
        "complex": dl.tensor([1 + 2j]), "scalars": [1, 2.5, "s", None, True, (1, 2)], "size": dl.Size([2]),
        "dtype": dl.float16, "device": dl.device("cpu"), "bytes": b"\x00", "set": {3},
    }
    path = tmp_path / "model.pt"
    dl.save(obj, path)
    loaded = dl.load(path)
    assert loaded["view"].tolist() == obj["view"].tolist() and loaded["view"].stride() == obj["view"].stride()
    assert loaded["view"].untyped_storage() is loaded["base"].untyped_storage()
    assert isinstance(loaded["param"], dl.nn.Parameter) and loaded["param"].requires_grad
    assert loaded["complex"].tolist() == [1 + 2j] and loaded["int"].dtype is dl.int64
    assert loaded["scalars"] == obj["scalars"] and loaded["size"] == dl.Size([2]) and loaded["dtype"] is dl.float16
    assert loaded["device"] == dl.device("cpu") and loaded["bytes"] == b"\x00" and loaded["set"] == {3}
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        assert names[0] == "model/data.pkl" and "model/byteorder" in names and "model/version" in names
        assert archive.read("model/byteorder") == b"little" and archive.read("model/version") == b"3\n"
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if "/data/" in info.filename:  # storage records start on 64-byte boundaries, as torch's do
                data_start = info.header_offset + 30 + len(info.filename) + len(info.extra)
                assert data_start % 64 == 0
        assert b"torch._utils\n_rebuild_tensor_v2" in archive.read("model/data.pkl")


def test_file_objects_and_map_location():
    buffer = io.BytesIO()
    dl.save([dl.ones(2)], buffer)
    buffer.seek(0)
    assert dl.load(buffer, map_location={"cpu": "cpu"})[0].tolist() == [1.0, 1.0]
    buffer.seek(0)
    assert dl.load(buffer, map_location=dl.device("cpu"))[0].device == dl.device("cpu")


def test_anything_but_tensors_and_plain_values_is_refused():
    with pytest.raises(pickle.UnpicklingError, match="unsupported global torch.nn.modules.activation.ReLU"):
        dl.load(os.path.join(FIXTURES, "unsafe.pt"))
    # A hand-made archive whose pickle calls os.system must not run it.
    evil = io.BytesIO()
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("archive/data.pkl", b"cos\nsystem\n(S'echo pwned'\ntR.")
    evil.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="unsupported global os.system"):
        dl.load(evil)
    with pytest.raises(pickle.UnpicklingError, match="not a zip archive"):
        dl.load(io.BytesIO(pickle.dumps({"a": 1})))
    with pytest.raises(ValueError, match="weights_only=False"):
        dl.load(io.BytesIO(), weights_only=False)
