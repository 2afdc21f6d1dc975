"""``x.real = v`` / ``x.imag = v`` write into the views; ``x.to(bool)`` takes Python types as dtypes.

Expected values follow torch's documented behaviour, worked by hand: the setters copy
(broadcasting) into ``x.real``/``x.imag``, a number fills the part, ``imag`` of a real
tensor raises; ``to(bool/int/float/complex)`` mean bool/int64/float64/complex128.
"""
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same


def test_real_and_imag_setters_write_into_the_tensor():
    z = dl.tensor([1 + 2j, 3 + 4j])
    storage = z.data_ptr()
    z.real = dl.tensor([9.0, 8.0])
    assert z.tolist() == [9 + 2j, 8 + 4j] and z.data_ptr() == storage
    z.imag = 0
    assert z.tolist() == [9 + 0j, 8 + 0j]
    z.real = dl.tensor(7.0)  # broadcasts
    assert z.tolist() == [7 + 0j, 7 + 0j]


def test_real_setter_on_a_real_tensor_and_errors():
    r = dl.tensor([1.0, 2.0])
    r.real = dl.tensor([5.0, 6.0])
    assert r.tolist() == [5.0, 6.0]
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        r.imag = dl.tensor([1.0, 1.0])
    with pytest.raises(RuntimeError, match="must match the existing size"):
        dl.tensor([1 + 1j, 2 + 2j]).real = dl.tensor([1.0, 2.0, 3.0])


def test_part_setters_compile_into_the_graph(backend):
    def f(z, y):
        z.real = y * 2
        z.imag = 3
        return z.abs()

    assert_same(f, dl.tensor([1 + 2j, 3 + 4j]), dl.ones(2), copy_args=True, backend=backend)


def test_imag_setter_error_compiled_matches_eager():
    def g(r):
        r.imag = r
        return r

    # The error found while tracing ends the graph there; the eager rerun raises it, as eager does.
    assert_same(g, dl.ones(2), copy_args=True, expect_graphs=False, expect_breaks=1)


@pytest.mark.parametrize("kind,dtype", [(bool, dl.bool), (int, dl.int64), (float, dl.float64),
                                        (complex, dl.complex128)])
def test_to_python_type(kind, dtype):
    x = dl.tensor([0.0, 1.5])
    assert x.to(kind).dtype == dtype
    assert x.to("cpu", kind).dtype == dtype
    assert x.to(bool).tolist() == [False, True]


def test_to_python_type_compiled():
    assert_same(lambda x: x.to(bool).int() + x.to(float), dl.tensor([0.0, 2.0]))
