"""A scan runner's stacked-output memory is reused only once nothing holds it (NOTE: [recycled scan rows])."""
from __future__ import annotations

import dynamo_lite as dl
from dynamo_lite.backends.numpy.scan_rows import RecycledRows


def test_a_buffer_is_reused_only_when_no_tensor_view_or_array_holds_it():
    pool, like = RecycledRows(), dl.randn(3, 4)
    first, _ = pool.rows(5, like)
    second, _ = pool.rows(5, like)
    assert first._storage.data is not second._storage.data  # both alive
    memory = id(second._storage.data)
    del second, _
    third, _ = pool.rows(5, like)
    assert id(third._storage.data) == memory and tuple(third.shape) == (5, 3, 4) and third.is_contiguous()
    view = third[1]
    del third, _
    held, _ = pool.rows(5, like)
    assert id(held._storage.data) != memory  # a view still reads it
    array = view.numpy()
    del view
    held_too, _ = pool.rows(5, like)
    assert id(held_too._storage.data) != memory  # a NumPy array over it still reads it
    array[0, 0] = 1.0
    del array
    again, _ = pool.rows(5, like)
    assert id(again._storage.data) == memory


def test_other_sizes_get_other_memory():
    pool = RecycledRows()
    a, _ = pool.rows(4, dl.randn(2, 2))
    memory = id(a._storage.data)
    del a, _
    b, _ = pool.rows(5, dl.randn(2, 2))
    assert id(b._storage.data) != memory and tuple(b.shape) == (5, 2, 2)
