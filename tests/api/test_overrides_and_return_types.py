"""dl.return_types (torch.return_types' names for named results) and dl.overrides' queries.

The expected names and fields are torch's (torch.return_types.max has values/indices,
linalg_svd has U/S/Vh, svd has U/S/V ...), written here from torch's documentation.
The override-dispatch order is torch's documented one: subclasses before their bases,
then left to right; NotImplemented from every override is a TypeError.
"""
import pickle

import pytest

import dynamo_lite as dl
from dynamo_lite import overrides, return_types

X = dl.tensor([[1.0, 5.0, 2.0], [3.0, 2.0, 4.0]])

RESULTS = {
    "max": (lambda: dl.max(X, 1), ("values", "indices")),
    "min": (lambda: dl.min(X, 1), ("values", "indices")),
    "sort": (lambda: dl.sort(X), ("values", "indices")),
    "topk": (lambda: dl.topk(X, 2), ("values", "indices")),
    "kthvalue": (lambda: dl.kthvalue(X, 1), ("values", "indices")),
    "median": (lambda: dl.median(X, 1), ("values", "indices")),
    "nanmedian": (lambda: dl.nanmedian(X, 1), ("values", "indices")),
    "cummax": (lambda: dl.cummax(X, 1), ("values", "indices")),
    "cummin": (lambda: dl.cummin(X, 1), ("values", "indices")),
    "aminmax": (lambda: dl.aminmax(X), ("min", "max")),
    "frexp": (lambda: dl.frexp(X), ("mantissa", "exponent")),
    "svd": (lambda: dl.svd(X), ("U", "S", "V")),
    "linalg_svd": (lambda: dl.linalg.svd(X), ("U", "S", "Vh")),
    "linalg_eigh": (lambda: dl.linalg.eigh(dl.eye(2)), ("eigenvalues", "eigenvectors")),
    "linalg_qr": (lambda: dl.linalg.qr(X.T), ("Q", "R")),
    "linalg_slogdet": (lambda: dl.linalg.slogdet(dl.eye(2)), ("sign", "logabsdet")),
}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_ops_return_the_named_types(name):
    make, fields = RESULTS[name]
    result = make()
    cls = getattr(return_types, name)
    assert type(result) is cls and cls.__name__ == name and cls._fields == fields
    assert cls.__module__ == "dynamo_lite.return_types"
    assert name in return_types.__all__


def test_results_pickle_by_reference():
    result = pickle.loads(pickle.dumps(dl.max(X, 1)))
    assert type(result) is return_types.max
    assert result.values.tolist() == [5.0, 4.0] and result.indices.tolist() == [1, 2]


class Overriding:
    def __init__(self, tag):
        self.tag = tag

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return (cls.__name__, func.__name__, types, args)


class Sub(Overriding):
    pass


class Declining:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def my_api(*args):
    if overrides.has_torch_function(args):
        return overrides.handle_torch_function(my_api, args, *args)
    return "plain"


def test_has_torch_function_is_false_for_dl_tensors():
    assert not overrides.has_torch_function((dl.ones(2), dl.nn.Parameter(dl.ones(1))))
    assert not overrides.has_torch_function_unary(dl.ones(2))
    assert overrides.has_torch_function_variadic(dl.ones(2), Overriding(1))
    assert overrides.is_tensor_like(dl.ones(2)) and overrides.is_tensor_like(Overriding(1))
    assert not overrides.is_tensor_like([1.0])
    assert my_api(dl.ones(2)) == "plain"


def test_handle_torch_function_follows_torchs_order():
    base, sub = Overriding(1), Sub(2)
    name, func, types, args = my_api(base, sub)
    assert (name, func, args) == ("Sub", "my_api", (base, sub))  # the subclass first
    assert types == (Sub, Overriding)
    with pytest.raises(TypeError, match="no implementation found for '.*my_api' on types that implement"):
        my_api(Declining())


def test_function_sets_say_dl_functions_do_not_dispatch():
    ignored = overrides.get_ignored_functions()
    assert {dl.add, dl.matmul, dl.nn.functional.relu, dl.linalg.svd} <= ignored
    assert overrides.get_overridable_functions() == {} and overrides.get_testing_overrides() == {}
    assert overrides.is_tensor_method_or_property(dl.Tensor.sum)
    assert not overrides.is_tensor_method_or_property(my_api)
