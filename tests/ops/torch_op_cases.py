"""Calls of torch's tensor ops recorded once with PyTorch, replayed against dynamo_lite (the porting ops).

Shared by the recorder (``tests/ops/fixtures/record_torch_ops.py``, run with a PyTorch venv)
and the tests, which never import torch. A case is ``(name, path, args, kwargs)``: ``path``
names a function under the library root (``"logaddexp"``, ``"special.i0"``), or a Tensor
method when it starts with a dot (``".xlogy_"``: called on the first argument). Tensor
arguments are specs: ``T(shape, low, high)`` float32 (normal, or uniform in [low, high)),
``I(shape, high)`` int64 in [0, high), ``B(shape)`` bool, ``V(values, dtype)`` exact values
(NaN, inf, -0.0 ...) of a dtype named like NumPy's.
"""
from __future__ import annotations

from dataclasses import dataclass

from tests.nn.torch_cases import B, I, T  # noqa: F401  (specs, re-exported for the recorder)


@dataclass(frozen=True)
class V:
    values: tuple
    dtype: str = "float32"


NAN, INF = float("nan"), float("inf")
SPECIAL = V((0.0, -0.0, 1.5, -2.5, NAN, INF, -INF, 3.0))  # NaN, infinities and signed zeros
X = T((3, 4))
Y = T((3, 4))
POSITIVE = T((3, 4), 0.1, 4.0)
INTS = I((3, 4), 7)
BOOLS = B((3, 4))

GROUP1_CASES = [
    ("logaddexp", "logaddexp", [X, T((4,))], {}),
    ("logaddexp_special", "logaddexp", [SPECIAL, V((0.0, 1.0, NAN, -INF, INF, -INF, -INF, 2.0))], {}),
    ("logaddexp_int_float", "logaddexp", [INTS, X], {}),
    ("logaddexp2", "logaddexp2", [X, Y], {}),
    ("logaddexp_method", ".logaddexp", [X, Y], {}),
    ("copysign", "copysign", [X, Y], {}),
    ("copysign_scalar_int", "copysign", [INTS, -1], {}),
    ("copysign_special", "copysign", [SPECIAL, V((-1.0, 1.0, -0.0, 0.0, -1.0, -1.0, 1.0, NAN))], {}),
    ("copysign_bool", "copysign", [BOOLS, X], {}),
    ("copysign_", ".copysign_", [X, -2.0], {}),
    ("heaviside", "heaviside", [V((-1.0, 0.0, 2.0, -0.0, NAN, INF)), V((0.5,))], {}),
    ("heaviside_int", "heaviside", [I((3, 4), 3), V((7,), "int64")], {}),
    ("float_power", "float_power", [POSITIVE, 2.5], {}),
    ("float_power_int", "float_power", [INTS, I((4,), 3)], {}),
    ("fmax", "fmax", [SPECIAL, V((1.0, NAN, NAN, 0.0, 2.0, 0.0, NAN, -1.0))], {}),
    ("fmin", "fmin", [SPECIAL, V((1.0, NAN, NAN, 0.0, 2.0, 0.0, NAN, -1.0))], {}),
    ("fmax_int_bool", "fmax", [INTS, BOOLS], {}),
    ("fmin_broadcast", "fmin", [X, T((4,))], {}),
    ("sgn", "sgn", [SPECIAL], {}),
    ("sgn_int", "sgn", [I((5,), 3)], {}),
    ("signbit", "signbit", [SPECIAL], {}),
    ("signbit_int", "signbit", [INTS], {}),
    ("frexp", "frexp", [SPECIAL], {}),
    ("frexp_normal", "frexp", [T((3, 4), -100.0, 100.0)], {}),
    ("ldexp", "ldexp", [X, I((3, 4), 5)], {}),
    ("ldexp_int", "ldexp", [INTS, I((4,), 3)], {}),
    ("nextafter", "nextafter", [X, Y], {}),
    ("nextafter_special", "nextafter", [SPECIAL, V((1.0, 1.0, 1.5, INF, 0.0, 0.0, 0.0, -INF))], {}),
    ("xlogy", "xlogy", [V((0.0, 0.0, 1.0, 2.0, 0.0, -1.0)), V((0.0, NAN, 0.0, 3.0, 2.0, 0.5))], {}),
    ("xlogy_scalar_other", "xlogy", [X, 3.0], {}),
    ("xlogy_scalar_input", "xlogy", [2.0, POSITIVE], {}),
    ("xlogy_int", "xlogy", [INTS, INTS], {}),
    ("xlogy_", ".xlogy_", [X, POSITIVE], {}),
    ("logit", "logit", [T((3, 4), 0.0, 1.0)], {}),
    ("logit_eps", "logit", [T((3, 4), -0.5, 1.5)], {"eps": 0.1}),
    ("logit_int", "logit", [I((5,), 2)], {}),
    ("sinc", "sinc", [V((0.0, 0.5, 1.0, -1.5, 2.25, INF, NAN))], {}),
    ("sinc_int", "sinc", [I((5,), 4)], {}),
    ("deg2rad", "deg2rad", [T((3, 4), -360.0, 360.0)], {}),
    ("deg2rad_int", "deg2rad", [INTS], {}),
    ("rad2deg", "rad2deg", [X], {}),
    ("rad2deg_", ".rad2deg_", [X], {}),
    ("lgamma", "lgamma", [T((4, 5), -6.0, 30.0)], {}),
    ("lgamma_special", "lgamma", [V((0.0, -1.0, -2.0, 1.0, 2.0, 0.5, -0.5, INF, -INF, NAN, 1e-30, 1e30))], {}),
    ("lgamma_int", "lgamma", [INTS], {}),
    ("digamma", "digamma", [T((4, 5), -6.0, 30.0)], {}),
    ("digamma_special", "digamma", [V((0.0, -0.0, -1.0, 1.0, 0.5, -0.5, INF, NAN, 1e-6, 1e6))], {}),
    ("polygamma_1", "polygamma", [1, T((4, 5), -4.0, 20.0)], {}),
    ("polygamma_2", "polygamma", [2, T((4, 5), 0.05, 20.0)], {}),
    ("polygamma_3_special", "polygamma", [3, V((0.0, -2.0, 1.0, 0.5, 100.0, INF, NAN))], {}),
    ("polygamma_0", "polygamma", [0, T((5,), 0.5, 5.0)], {}),
    ("polygamma_method", ".polygamma", [POSITIVE, 1], {}),
    ("mvlgamma", "mvlgamma", [T((3, 4), 2.0, 9.0), 3], {}),
    ("mvlgamma_low", "mvlgamma", [V((0.5, 1.0, 2.0)), 2], {}),
    ("i0", "i0", [T((4, 5), -30.0, 30.0)], {}),
    ("i0_special", "i0", [V((0.0, INF, -INF, NAN, 80.0))], {}),
    ("i0_int", "i0", [INTS], {}),
    ("isin", "isin", [INTS, I((5,), 7)], {}),
    ("isin_invert", "isin", [INTS, I((5,), 7)], {"invert": True}),
    ("isin_scalar_test", "isin", [INTS, 3], {}),
    ("isin_float_int", "isin", [V((1.0, 2.5, 3.0, NAN)), V((1, 3), "int64")], {}),
    ("nansum", "nansum", [SPECIAL], {}),
    ("nansum_dim", "nansum", [V((1.0, NAN, 2.0, NAN, NAN, 5.0))], {"dim": 0, "keepdim": True}),
    ("nansum_int", "nansum", [INTS], {"dim": 1}),
    ("nansum_method", ".nansum", [X], {"dim": (0, 1)}),
    ("nanmean", "nanmean", [X], {"dim": 1}),
    ("nanmean_nan", "nanmean", [V((NAN, 1.0, NAN, 3.0))], {}),
    ("std_mean", "std_mean", [X], {}),
    ("std_mean_dim", "std_mean", [X], {"dim": 1, "keepdim": True, "correction": 0}),
    ("aminmax", "aminmax", [X], {}),
    ("aminmax_dim", "aminmax", [X], {"dim": 0, "keepdim": True}),
    ("aminmax_special", "aminmax", [SPECIAL], {"dim": 0}),
    ("aminmax_bool", "aminmax", [BOOLS], {}),
    ("cummax", "cummax", [X, 1], {}),
    ("cummax_ties_nan", "cummax", [V((1.0, 3.0, 3.0, NAN, 5.0, NAN, 2.0)), 0], {}),
    ("cummin_ties", "cummin", [V((1.0, 3.0, 1.0, 0.0, 0.0, -INF)), 0], {}),
    ("cummin_int", "cummin", [I((3, 5), 3), -1], {}),
    ("cummax_bool", "cummax", [BOOLS, 0], {}),
    ("cummax_method", ".cummax", [X, 0], {}),
    ("logcumsumexp", "logcumsumexp", [X, 1], {}),
    ("logcumsumexp_special", "logcumsumexp", [V((-INF, -INF, 1.0, 100.0, -100.0, INF)), 0], {}),
    ("histc", "histc", [T((50,))], {"bins": 7}),
    ("histc_range", "histc", [X], {"bins": 4, "min": -1, "max": 1}),
    ("histc_equal", "histc", [V((1.0, 1.0, 1.0))], {"bins": 3}),
    ("histc_method", ".histc", [V((0.0, 0.5, 1.0, 2.0, NAN))], {"bins": 2, "min": 0, "max": 1}),
]

#: Cases whose gradient torch recorded: of ``(first output * cotangent).sum()`` for every float input.
GROUP1_GRAD_CASES = [
    "logaddexp", "logaddexp2", "copysign", "float_power", "fmax", "fmin_broadcast", "frexp_normal", "ldexp",
    "xlogy_scalar_other", "logit", "logit_eps", "deg2rad", "lgamma", "digamma", "polygamma_1", "mvlgamma", "i0",
    "nansum_dim", "nanmean", "std_mean_dim", "aminmax_dim", "cummax", "cummin_ties", "logcumsumexp",
]

GROUP1_ERROR_CASES = [
    ("logaddexp_int", "logaddexp", [INTS, INTS], {}),
    ("logaddexp_scalar", "logaddexp", [X, 1.0], {}),
    ("logaddexp2_bool", "logaddexp2", [BOOLS, BOOLS], {}),
    ("heaviside_dtypes", "heaviside", [X, INTS], {}),
    ("frexp_int", "frexp", [INTS], {}),
    ("nextafter_int", "nextafter", [INTS, INTS], {}),
    ("xlogy_int_inplace", ".xlogy_", [INTS, 2.0], {}),
    ("polygamma_negative", "polygamma", [-1, X], {}),
    ("nanmean_int", "nanmean", [INTS], {}),
    ("std_mean_int", "std_mean", [INTS], {}),
    ("aminmax_empty", "aminmax", [V(())], {}),
    ("cummax_dim", "cummax", [X, 2], {}),
    ("logcumsumexp_int", "logcumsumexp", [INTS, 0], {}),
    ("histc_int", "histc", [INTS], {}),
    ("histc_bins", "histc", [X], {"bins": 0}),
    ("histc_range_order", "histc", [X], {"bins": 4, "min": 3, "max": 1}),
]

M = T((4, 6))
CUBE = T((2, 3, 4))
GROUP2_CASES = [
    ("tensor_split_sections", "tensor_split", [T((7, 3)), 3], {}),
    ("tensor_split_indices", "tensor_split", [M, [1, 4, 9]], {"dim": 1}),
    ("tensor_split_method", ".tensor_split", [M, (2, 2)], {}),
    ("hsplit", "hsplit", [M, 3], {}),
    ("hsplit_1d", "hsplit", [T((6,)), [2]], {}),
    ("vsplit", "vsplit", [M, [1, 3]], {}),
    ("dsplit", "dsplit", [CUBE, 2], {}),
    ("row_stack", "row_stack", [[T((3,)), T((2, 3))]], {}),
    ("broadcast_tensors", "broadcast_tensors", [T((3, 1)), T((4,)), I((1, 1, 4), 5)], {}),
    ("take", "take", [M, V((0, 23, -1, 5, 5), "int64")], {}),
    ("take_2d_index", "take", [CUBE, I((2, 2), 24)], {}),
    ("take_along_dim", "take_along_dim", [M, I((4, 2), 6)], {"dim": 1}),
    ("take_along_dim_broadcast", "take_along_dim", [T((1, 5)), I((3, 2), 5)], {"dim": 1}),
    ("take_along_dim_flat", "take_along_dim", [M, I((5,), 24)], {}),
    ("index_add", "index_add", [M, 0, V((0, 2, 0), "int64"), T((3, 6))], {}),
    ("index_add_alpha_dim1", "index_add", [M, 1, V((5, 1), "int64"), T((4, 2))], {"alpha": 2.5}),
    ("index_add_int", "index_add", [I((3, 4), 5), 1, V((0, 0), "int64"), I((3, 2), 5)], {}),
    ("index_add_", ".index_add_", [M, -1, V((3,), "int64"), T((4, 1))], {}),
    ("index_copy", "index_copy", [M, 0, V((3, 1), "int64"), T((2, 6))], {}),
    ("index_copy_", ".index_copy_", [CUBE, 2, V((0, 3), "int64"), T((2, 3, 2))], {}),
    ("masked_scatter", "masked_scatter", [M, B((4, 6)), T((30,))], {}),
    ("masked_scatter_broadcast", "masked_scatter", [M, B((6,)), T((5, 6))], {}),
    ("masked_scatter_", ".masked_scatter_", [M, B((4, 6)), T((24,))], {}),
    ("diagonal", "diagonal", [M], {}),
    ("diagonal_offset", "diagonal", [M], {"offset": 2}),
    ("diagonal_negative_dims", "diagonal", [CUBE], {"offset": -1, "dim1": 2, "dim2": 0}),
    ("diagonal_empty", "diagonal", [M], {"offset": 9}),
    ("diagonal_method", ".diagonal", [CUBE, 1, 1, 2], {}),
    ("diag_embed", "diag_embed", [T((2, 3))], {}),
    ("diag_embed_offset_dims", "diag_embed", [T((2, 3))], {"offset": -2, "dim1": 0, "dim2": 2}),
    ("diag_embed_special", "diag_embed", [SPECIAL], {"offset": 1}),
    ("diagflat", "diagflat", [T((2, 2))], {}),
    ("diagflat_offset", "diagflat", [I((3,), 9)], {"offset": -1}),
    ("tril_indices", "tril_indices", [4, 3], {}),
    ("tril_indices_offset", "tril_indices", [3, 5, 1], {}),
    ("triu_indices", "triu_indices", [4, 4, -1], {}),
    ("combinations", "combinations", [T((4,))], {}),
    ("combinations_r3", "combinations", [I((5,), 9), 3], {}),
    ("combinations_replacement", "combinations", [T((3,))], {"r": 2, "with_replacement": True}),
    ("cartesian_prod", "cartesian_prod", [T((3,)), T((2,)), T((2,))], {}),
    ("cartesian_prod_one", "cartesian_prod", [T((3,))], {}),
    ("block_diag", "block_diag", [T((2, 3)), T((1,)), V((7.0,)), T((3, 1))], {}),
    ("block_diag_promote", "block_diag", [I((2, 2), 5), T((1, 2))], {}),
    ("trapezoid", "trapezoid", [M], {}),
    ("trapezoid_dx_dim", "trapezoid", [M], {"dx": 0.5, "dim": 0}),
    ("trapezoid_x", "trapezoid", [M, T((6,))], {}),
    ("trapezoid_x_full", "trapezoid", [M, T((4, 6))], {"dim": 0}),
    ("trapz", "trapz", [T((5,))], {}),
]

GROUP2_GRAD_CASES = [
    "tensor_split_indices", "take", "take_along_dim_broadcast", "index_add_alpha_dim1", "index_copy",
    "masked_scatter_broadcast", "diagonal_negative_dims", "diag_embed_offset_dims", "diagflat", "combinations",
    "block_diag", "trapezoid_x", "trapezoid_x_full",
]

GROUP2_ERROR_CASES = [
    ("tensor_split_zero", "tensor_split", [M, 0], {}),
    ("hsplit_uneven", "hsplit", [M, 4], {}),
    ("vsplit_1d", "vsplit", [T((6,)), 2], {}),
    ("index_add_dtype", "index_add", [M, 0, V((0,), "int64"), V((1.0,) * 6, "float64")], {}),
    ("index_copy_2d_index", "index_copy", [M, 0, V(((0,),), "int64"), T((1, 6))], {}),
    ("masked_scatter_dtype", "masked_scatter", [M, B((4, 6)), V((1.0,) * 24, "float64")], {}),
    ("masked_scatter_uint8_mask", "masked_scatter", [M, V((1,) * 6, "uint8"), T((24,))], {}),
    ("diagonal_same_dims", "diagonal", [M, 0, 1, 1], {}),
    ("diagonal_1d", "diagonal", [T((3,))], {}),
    ("take_along_dim_ndim", "take_along_dim", [M, I((2,), 3)], {"dim": 1}),
    ("block_diag_3d", "block_diag", [CUBE], {}),
    ("combinations_2d", "combinations", [M], {}),
    ("broadcast_tensors_mismatch", "broadcast_tensors", [T((2,)), T((3,))], {}),
    ("tril_indices_negative", "tril_indices", [-1, 2], {}),
    ("cartesian_prod_dtypes", "cartesian_prod", [T((3,)), I((2,), 5)], {}),
]

SQ = T((3, 3))
GROUP3_CASES = [
    ("inner", "inner", [T((2, 3)), T((4, 3))], {}),
    ("inner_scalar", "inner", [T(()), T((2, 3))], {}),
    ("inner_1d", "inner", [T((5,)), T((5,))], {}),
    ("vdot", "vdot", [T((5,)), T((5,))], {}),
    ("cross_default_dim", "cross", [T((3, 4)), T((3, 4))], {}),
    ("cross_dim", "cross", [T((4, 3)), T((1, 3))], {"dim": 1}),
    ("linalg_cross", "linalg.cross", [T((2, 4, 3)), T((2, 4, 3))], {}),
    ("linalg_cross_dim", "linalg.cross", [T((3, 5)), T((3, 5))], {"dim": 0}),
    ("cross_method", ".cross", [T((2, 3)), T((2, 3))], {"dim": 1}),
    ("mv", "mv", [T((3, 4)), T((4,))], {}),
    ("mv_method", ".mv", [T((3, 4)), T((4,))], {}),
    ("addmv", "addmv", [T((3,)), T((3, 4)), T((4,))], {}),
    ("addmv_scaled", "addmv", [T((1,)), T((3, 4)), T((4,))], {"beta": 0.5, "alpha": -2.0}),
    ("addmv_beta0_nan", "addmv", [V((NAN, 1.0, INF)), T((3, 4)), T((4,))], {"beta": 0}),
    ("addr", "addr", [T((3, 4)), T((3,)), T((4,))], {}),
    ("addr_scaled", "addr", [T((4,)), T((3,)), T((4,))], {"beta": 2.0, "alpha": 0.5}),
    ("addr_int", "addr", [I((2, 3), 4), I((2,), 4), I((3,), 4)], {}),
    ("addbmm", "addbmm", [T((3, 5)), T((4, 3, 2)), T((4, 2, 5))], {}),
    ("addbmm_scaled", "addbmm", [T((5,)), T((2, 3, 2)), T((2, 2, 5))], {"beta": 0.0, "alpha": 3.0}),
    ("chain_matmul", "chain_matmul", [T((2, 3)), T((3, 4)), T((4, 2))], {}),
    ("trace", "trace", [T((3, 4))], {}),
    ("trace_int", "trace", [I((3, 3), 9)], {}),
    ("trace_method", ".trace", [SQ], {}),
    ("matrix_exp", "matrix_exp", [SQ], {}),
    ("matrix_exp_large", "matrix_exp", [T((2, 4, 4), -3.0, 3.0)], {}),
    ("matrix_exp_linalg", "linalg.matrix_exp", [V(((0.0, 1.0), (-1.0, 0.0)))], {}),
    ("matrix_exp_method", ".matrix_exp", [SQ], {}),
    ("cov", "cov", [T((3, 6))], {}),
    ("cov_1d_correction", "cov", [T((6,))], {"correction": 0}),
    ("cov_weights", "cov", [T((2, 5))], {"fweights": V((1, 2, 1, 3, 1), "int64"), "aweights": T((5,), 0.1, 1.0)}),
    ("cov_int", "cov", [I((2, 4), 5)], {}),
    ("corrcoef", "corrcoef", [T((3, 6))], {}),
    ("pdist", "pdist", [T((5, 3))], {}),
    ("pdist_p1", "pdist", [T((4, 2))], {"p": 1.0}),
    ("pdist_inf", "pdist", [T((4, 2))], {"p": INF}),
    ("cosine_similarity", "cosine_similarity", [T((4, 5)), T((4, 5))], {}),
    ("pairwise_distance", "pairwise_distance", [T((4, 5)), T((4, 5))], {"p": 3.0}),
]

GROUP3_GRAD_CASES = [
    "inner", "vdot", "cross_dim", "linalg_cross", "mv", "addmv_scaled", "addr_scaled", "addbmm", "chain_matmul",
    "trace", "matrix_exp", "matrix_exp_large", "cov", "cov_weights", "corrcoef", "pdist", "pdist_p1",
]

GROUP3_ERROR_CASES = [
    ("inner_mismatch", "inner", [T((2, 3)), T((2, 4))], {}),
    ("vdot_2d", "vdot", [T((2, 3)), T((3,))], {}),
    ("vdot_dtypes", "vdot", [T((3,)), V((1.0, 2.0, 3.0), "float64")], {}),
    ("linalg_cross_length", "linalg.cross", [T((3, 2)), T((3, 2))], {}),
    ("trace_1d", "trace", [T((3,))], {}),
    ("matrix_exp_not_square", "matrix_exp", [T((2, 3))], {}),
    ("cov_3d", "cov", [T((2, 2, 2))], {}),
    ("pdist_3d", "pdist", [T((2, 2, 2))], {}),
    ("pdist_negative_p", "pdist", [T((3, 2))], {"p": -1.0}),
    ("chain_matmul_empty", "chain_matmul", [], {}),
]

CASES = GROUP1_CASES + GROUP2_CASES + GROUP3_CASES
GRAD_CASES = GROUP1_GRAD_CASES + GROUP2_GRAD_CASES + GROUP3_GRAD_CASES
ERROR_CASES = GROUP1_ERROR_CASES + GROUP2_ERROR_CASES + GROUP3_ERROR_CASES


def resolve(root, path: str):
    """The object at dotted ``path`` under the library module ``root``."""
    value = root
    for part in path.split("."):
        value = getattr(value, part)
    return value


def call(root, path, args, kwargs):
    """Run one case against the library ``root`` (a path starting with "." is a method of args[0])."""
    if path.startswith("."):
        return getattr(args[0], path[1:])(*args[1:], **kwargs)
    return resolve(root, path)(*args, **kwargs)


def build_inputs(name, args, kwargs, recorded, make_tensor):
    """The case's ``(args, kwargs)`` with the recorded arrays (``<name>/in<i>``, in order) in place of specs."""
    counter = iter(range(1000))

    def build(spec):
        if isinstance(spec, list):
            return [build(s) for s in spec]
        if isinstance(spec, (T, I, B, V)):
            return make_tensor(recorded[f"{name}/in{next(counter)}"])
        return spec

    return [build(a) for a in args], {k: build(v) for k, v in kwargs.items()}


def cotangent(shape):
    """The fixed output gradient of a GRAD_CASES case (float64 values, any library casts them)."""
    import numpy as np
    count = int(np.prod(shape)) if shape else 1
    return np.linspace(-1.0, 2.0, count).reshape(shape)
