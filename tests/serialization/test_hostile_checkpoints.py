"""dl.load against hostile and damaged checkpoints (the attack corpus in ``attack_corpus``).

Nothing in a checkpoint may run code, reach memory outside its storages, allocate more
than the file can hold, or fail with anything but a clear error. Expected messages for
bad tensor geometry are torch's (ATen's checkInBoundsForStorage / checkSetStorage wording:
"setStorage: sizes [..], strides [..], storage offset .., and itemsize .. requiring a
storage size of .. are out of bounds for storage of size ..", "Tensor: invalid storage
offset ..."), written here by hand from that source text, not recorded from torch.
"""
from __future__ import annotations

import io
import os
import pickle
import re
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import zipfile

import numpy as np
import pytest

import dynamo_lite as dl
from tests.serialization import attack_corpus as corpus
from tests.serialization.attack_corpus import ForgedTensor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(data: bytes, **kwargs):
    return dl.load(io.BytesIO(data), **kwargs)


# -- code execution --------------------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(corpus.malicious_pickles("/nonexistent")))
def test_malicious_pickles_run_nothing(case, tmp_path):
    marker = tmp_path / "pwned"
    data = corpus.pickle_checkpoint(corpus.malicious_pickles(str(marker))[case])
    with pytest.raises(pickle.UnpicklingError):
        _load(data)
    assert not marker.exists()


@pytest.mark.parametrize("pid", [b"S'not a tuple'\n", b"(S'storage'\nI1\nS'0'\nS'cpu'\nI2\nt",
                                 b"(S'storage'\nctorch\nFloatStorage\nI0\nS'cpu'\nI-1\nt"])
def test_malformed_persistent_ids_are_refused(pid):
    with pytest.raises(pickle.UnpicklingError):  # BINPERSID on a malformed id
        _load(corpus.pickle_checkpoint(b"\x80\x02" + pid + b"Q."))


# -- tensor geometry against the storage -----------------------------------------------------------
OUT_OF_BOUNDS = {
    "4096 floats in 8 bytes": (ForgedTensor(8, [4096], [1]),
                               "setStorage: sizes [4096], strides [1], storage offset 0, and itemsize 4 requiring a "
                               "storage size of 16384 are out of bounds for storage of size 8"),
    "2**26 floats in 8 bytes": (ForgedTensor(8, [2**26], [1]), "requiring a storage size of 268435456 are out of"),
    "offset 10**9": (ForgedTensor(8, [1], [1], offset=10**9),
                     "setStorage: sizes [1], strides [1], storage offset 1000000000, and itemsize 4 requiring a "
                     "storage size of 4000000004 are out of bounds for storage of size 8"),
    "2**40 elements at stride 1": (ForgedTensor(8, [2**40], [1]), "requiring a storage size of 4398046511104"),
    "a stride reaching past the end": (ForgedTensor(64, [2, 2], [1, 16]), "storage size of 72 are out of bounds"),
    "negative offset": (ForgedTensor(8, [1], [1], offset=-1), "Tensor: invalid storage offset -1"),
    "negative stride before the storage": (ForgedTensor(8, [2], [-1], offset=1),
                                           "Negative strides are not supported at the moment, got strides: [-1]"),
    "negative size": (ForgedTensor(8, [-4], [1]), "negative dimension -4"),
    "int64 overflow": (ForgedTensor(8, [2**62, 2**62], [1, 1]), "overflow int64"),
    "sizes and strides of different lengths": (ForgedTensor(8, [2], [1, 1]), "unequal size length"),
}


@pytest.mark.parametrize("case", sorted(OUT_OF_BOUNDS))
def test_out_of_bounds_tensors_are_refused_before_they_exist(case):
    forged, message = OUT_OF_BOUNDS[case]
    with pytest.raises(RuntimeError, match=re.escape(message)):
        _load(corpus.forged_checkpoint({"w": forged}))


def test_in_bounds_edges_still_load():
    ok = {"last element": ForgedTensor(16, [2], [2], offset=1), "empty far away": ForgedTensor(0, [0, 5], [99, 1]),
          "broadcast": ForgedTensor(4, [3, 4], [0, 0])}
    loaded = _load(corpus.forged_checkpoint(ok))
    assert loaded["last element"].tolist() == [0.0, 0.0] and loaded["empty far away"].shape == (0, 5)
    assert loaded["broadcast"].stride() == (0, 0)


def test_a_storage_of_3_bytes_for_a_float32_is_refused():
    with pytest.raises(RuntimeError, match="holds 3 bytes but the checkpoint declares 1 elements of 4 bytes"):
        _load(corpus.forged_checkpoint({"w": ForgedTensor(3, [1], [1], numel=1)}))


def test_an_int_as_storage_gives_a_clear_error():
    with pytest.raises(pickle.UnpicklingError, match="expects a storage of the checkpoint .* got int"):
        _load(corpus.forged_checkpoint({"w": ForgedTensor(8, [2], [1], storage=7)}))


def test_the_out_of_bounds_tensor_never_reaches_a_kernel():
    """The probe's case end to end: before the check, ``x * w`` read heap bytes (native) or crashed."""
    script = textwrap.dedent(f"""
        import io, sys
        sys.path.insert(0, {ROOT!r})
        import dynamo_lite as dl
        from tests.serialization import attack_corpus as corpus
        data = corpus.forged_checkpoint({{"w": corpus.ForgedTensor(8, [4096], [1])}})
        try:
            w = dl.load(io.BytesIO(data))["w"]
        except RuntimeError as exc:
            print("refused:", exc)
            sys.exit(0)
        f = dl.compile(lambda x, w: x * w, backend="native")
        print("loaded; nonzero:", int((f(dl.ones(4096), w) != 0).sum()))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "refused: setStorage" in done.stdout, (done.returncode, done.stdout, done.stderr)


# -- bounded allocation ------------------------------------------------------------------------------
BOMBS = {
    "BINBYTES8 claiming 1 TiB": b"\x80\x04\x8e" + struct.pack("<Q", 2**40) + b"abc.",
    "BINUNICODE8 claiming 1 TiB": b"\x80\x04\x8d" + struct.pack("<Q", 2**40) + b"abc.",
    "BYTEARRAY8 claiming 1 TiB": b"\x80\x05\x96" + struct.pack("<Q", 2**40) + b"abc.",
    "LONG_BINPUT at index 2**32-1": b"\x80\x02N" + b"r" + struct.pack("<L", 2**32 - 1) + b".",
    "a pickle without STOP": b"\x80\x02}q\x00(X\x01\x00\x00\x00aK\x01",
}


def test_memory_bombs_in_the_pickle_are_refused_without_allocating():
    """In a child process limited to 2 GiB of address space: a bare MemoryError (or the kernel's
    OOM killer) is a failure; each case must be a clear UnpicklingError."""
    script = textwrap.dedent(f"""
        import io, pickle, resource, sys
        sys.path.insert(0, {ROOT!r})
        import dynamo_lite as dl
        from tests.serialization import attack_corpus as corpus
        from tests.serialization.test_hostile_checkpoints import BOMBS
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        for name, data in BOMBS.items():
            try:
                dl.load(io.BytesIO(corpus.pickle_checkpoint(data)))
                print(name, "LOADED")
            except pickle.UnpicklingError as exc:
                print(name, "refused:", exc)
            except BaseException as exc:
                print(name, "FAILED:", type(exc).__name__, exc)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(BOMBS) and all("refused: dl.load: " in line for line in lines), done.stdout


def test_a_record_declaring_more_than_the_file_holds_is_refused():
    data = corpus.forged_checkpoint({"w": ForgedTensor(8, [2], [1])})
    lying = corpus.set_declared_size(data, "data/0", 2**32 - 1)
    with pytest.raises(RuntimeError, match="truncated or corrupt|corrupt"):
        _load(lying)


def test_a_deflated_record_expanding_past_its_declared_size_is_refused():
    records = {"data.pkl": corpus.forged_checkpoint_pickle({"w": ForgedTensor(8, [2], [1])}), "byteorder": b"little",
               "data/0": bytes(8 << 20)}
    data = corpus.set_declared_size(corpus.archive(records, deflate=("data/0",)), "data/0", 8)
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match="record archive/data/0 is truncated or corrupt"):
            _load(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # it never inflated the 8 MiB


def test_a_deflate_bomb_past_what_deflate_can_produce_is_refused():
    records = {"data.pkl": corpus.forged_checkpoint_pickle({"w": ForgedTensor(8, [2], [1])}), "byteorder": b"little",
               "data/0": bytes(8)}
    data = corpus.set_declared_size(corpus.archive(records, deflate=("data/0",)), "data/0", 2 << 30)
    with pytest.raises(RuntimeError, match="more than deflate can produce"):
        _load(data)


def test_storages_are_read_once_without_a_second_copy(tmp_path):
    path = tmp_path / "big.pt"
    dl.save({"w": dl.zeros(4 << 20)}, path)  # 16 MiB of float32
    tracemalloc.start()
    try:
        w = dl.load(path)["w"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert w.shape == (4 << 20,)
    assert peak < 1.25 * (16 << 20), peak  # one copy of the storage (plus reading chunks), not two


def test_mmap_true_maps_the_file_copy_on_write(tmp_path):
    path = tmp_path / "m.pt"
    dl.save({"w": dl.arange(6.0).view(2, 3), "v": dl.arange(4.0)[1:]}, path)
    before = path.read_bytes()
    loaded = dl.load(path, mmap=True)
    assert loaded["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and loaded["v"].tolist() == [1.0, 2.0, 3.0]
    assert isinstance(loaded["w"].untyped_storage().data, np.memmap)
    loaded["w"].add_(1)
    assert path.read_bytes() == before  # copy-on-write: the file is untouched
    with pytest.raises(ValueError, match="file path"):
        dl.load(io.BytesIO(before), mmap=True)


# -- damaged files -------------------------------------------------------------------------------------
def test_truncated_and_empty_checkpoints_say_so(tmp_path):
    path = tmp_path / "c.pt"
    dl.save({"w": dl.ones(1000)}, path)
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 10, 100, 4):
        with pytest.raises(RuntimeError, match="truncated or corrupt"):
            _load(data[:cut])
    with pytest.raises(RuntimeError, match="empty .*truncated or corrupt"):
        _load(b"")
    with pytest.raises(pickle.UnpicklingError, match="not a zip archive"):  # a legacy torch file is still told apart
        _load(pickle.dumps({"a": 1}))


def test_a_corrupted_storage_record_fails_its_crc(tmp_path):
    path = tmp_path / "c.pt"
    dl.save({"w": dl.ones(1000)}, path)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("c/data/0")
    data[info.header_offset + 30 + len(info.filename) + len(info.extra) + 100] ^= 0xFF
    with pytest.raises(RuntimeError, match="record c/data/0 is truncated or corrupt"):
        _load(bytes(data))


def test_other_zip_compression_methods_are_refused():
    data = bytearray(corpus.forged_checkpoint({"w": ForgedTensor(8, [2], [1])}))
    central = bytes(data).find(b"PK\x01\x02")
    while central >= 0:  # claim bzip2 everywhere
        struct.pack_into("<H", data, central + 10, zipfile.ZIP_BZIP2)
        central = bytes(data).find(b"PK\x01\x02", central + 4)
    with pytest.raises(RuntimeError, match="compression method 12"):
        _load(bytes(data))
