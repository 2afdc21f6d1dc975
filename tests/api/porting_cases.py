"""Calls recorded once with PyTorch and replayed against dynamo_lite (the torch-porting API).

Shared by the recorder (``tests/api/fixtures/record_porting.py``, run with a PyTorch venv)
and the tests, which never import torch. A case is ``(name, path, args, kwargs, ctor)``:
``path`` names a function under the library's root (``"nn.functional.kl_div"``,
``"median"``); with ``ctor`` (a dict) it names a module class built with those arguments
and then called. Tensor arguments are specs from ``tests/nn/torch_cases`` (``T`` float32,
``I`` int64, ``L`` fixed int64 values); a list argument may hold specs.
"""
from __future__ import annotations

from tests.nn.torch_cases import I, L, T  # noqa: F401  (specs, re-exported for the recorder)

X = T((3, 5))
P = T((3, 5), 0.05, 1.0)  # positive: probabilities, KL targets

CASES = [
    ("prelu_channels", "nn.functional.prelu", [T((2, 4, 3)), T((4,))], {}, None),
    ("prelu_one_slope", "nn.functional.prelu", [T((5,)), T((1,))], {}, None),
    ("prelu_layer", "nn.PReLU", [T((2, 3, 4))], {}, {"num_parameters": 3, "init": 0.1}),
    ("kl_div_batchmean", "nn.functional.kl_div", [X, P], {"reduction": "batchmean"}, None),
    ("kl_div_sum_log_target", "nn.functional.kl_div", [X, X], {"reduction": "sum", "log_target": True}, None),
    ("kl_div_none", "nn.functional.kl_div", [X, P], {"reduction": "none"}, None),
    ("kl_div_layer", "nn.KLDivLoss", [X, P], {}, {"reduction": "batchmean"}),
    ("smooth_l1", "nn.functional.smooth_l1_loss", [T((4, 6), -3, 3), T((4, 6))], {}, None),
    ("smooth_l1_beta", "nn.functional.smooth_l1_loss", [T((4, 6), -3, 3), T((4, 6))],
     {"beta": 0.5, "reduction": "sum"}, None),
    ("smooth_l1_beta0", "nn.functional.smooth_l1_loss", [X, X], {"beta": 0.0, "reduction": "none"}, None),
    ("smooth_l1_layer", "nn.SmoothL1Loss", [X, X], {}, {"beta": 2.0}),
    ("huber", "nn.functional.huber_loss", [T((4, 6), -3, 3), T((4, 6))], {"delta": 0.7}, None),
    ("huber_none", "nn.functional.huber_loss", [X, X], {"reduction": "none"}, None),
    ("huber_layer", "nn.HuberLoss", [X, X], {}, {"delta": 1.5, "reduction": "sum"}),
    ("cosine_layer", "nn.CosineSimilarity", [T((4, 3, 2)), T((4, 3, 2))], {}, {"dim": 2}),
    ("pairwise", "nn.functional.pairwise_distance", [X, X], {}, None),
    ("pairwise_p1_keepdim", "nn.functional.pairwise_distance", [X, T((1, 5))], {"p": 1.0, "keepdim": True}, None),
    ("pairwise_layer", "nn.PairwiseDistance", [X, X], {}, {"p": 3.0, "eps": 1e-3}),
    ("pad_sequence", "nn.utils.rnn.pad_sequence", [[T((3, 2)), T((5, 2)), T((1, 2))]], {}, None),
    ("pad_sequence_batch_first_left", "nn.utils.rnn.pad_sequence", [[T((3,)), T((5,))]],
     {"batch_first": True, "padding_value": -1.5, "padding_side": "left"}, None),
]

Q3 = T((3,), 0.0, 1.0)  # quantile levels
SQUARE = T((3, 4, 4))

OP_CASES = [
    ("median_all", "median", [T((5, 7))], {}, None),
    ("median_dim", "median", [T((4, 6))], {"dim": 1}, None),
    ("median_dim_keepdim", "median", [T((4, 6))], {"dim": 0, "keepdim": True}, None),
    ("nanmedian_dim", "nanmedian", [T((4, 6))], {"dim": -1}, None),
    ("kthvalue", "kthvalue", [T((4, 6))], {"k": 2}, None),
    ("kthvalue_dim0_keepdim", "kthvalue", [T((5, 3))], {"k": 4, "dim": 0, "keepdim": True}, None),
    ("quantile_linear", "quantile", [T((4, 9)), 0.3], {"dim": 1}, None),
    ("quantile_all", "quantile", [T((4, 9)), 0.75], {}, None),
    ("quantile_tensor_q_keepdim", "quantile", [T((4, 9)), Q3], {"dim": 0, "keepdim": True}, None),
    ("quantile_lower", "quantile", [T((4, 9)), 0.4], {"dim": 1, "interpolation": "lower"}, None),
    ("quantile_higher", "quantile", [T((4, 9)), 0.4], {"dim": 1, "interpolation": "higher"}, None),
    ("quantile_midpoint", "quantile", [T((4, 9)), 0.4], {"dim": 1, "interpolation": "midpoint"}, None),
    ("quantile_nearest", "quantile", [T((4, 9)), 0.4], {"dim": 1, "interpolation": "nearest"}, None),
    ("nanquantile", "nanquantile", [T((4, 9)), Q3], {"dim": 1}, None),
    ("diff", "diff", [T((4, 6))], {}, None),
    ("diff_n2_dim0", "diff", [T((5, 3))], {"n": 2, "dim": 0}, None),
    ("diff_prepend_append", "diff", [T((3, 4))], {"prepend": T((3, 1)), "append": T((3, 2))}, None),
    ("rot90", "rot90", [T((2, 3, 4))], {}, None),
    ("rot90_k3_dims", "rot90", [T((2, 3, 4)), 3, [2, 0]], {}, None),
    ("rot90_k_negative", "rot90", [T((3, 4)), -2], {}, None),
    ("cdist", "cdist", [T((5, 3)), T((4, 3))], {}, None),
    ("cdist_p1_batched", "cdist", [T((2, 5, 3)), T((2, 4, 3))], {"p": 1.0}, None),
    ("cdist_inf", "cdist", [T((5, 3)), T((4, 3))], {"p": float("inf")}, None),
    ("vector_norm", "linalg.vector_norm", [T((4, 5))], {"ord": 3, "dim": 1}, None),
    ("matrix_norm_fro", "linalg.matrix_norm", [T((2, 4, 5))], {}, None),
    ("matrix_norm_1", "linalg.matrix_norm", [T((2, 4, 5))], {"ord": 1}, None),
    ("matrix_norm_neg_inf_keepdim", "linalg.matrix_norm", [T((2, 4, 5))], {"ord": float("-inf"), "keepdim": True},
     None),
    ("norm_default", "linalg.norm", [T((4, 5))], {}, None),
    ("norm_matrix_inf", "linalg.norm", [T((4, 5)), float("inf")], {}, None),
    ("norm_vector_dim", "linalg.norm", [T((4, 5)), 1], {"dim": 0}, None),
    ("inv", "linalg.inv", [SQUARE], {}, None),
    ("solve_matrix", "linalg.solve", [SQUARE, T((3, 4, 2))], {}, None),
    ("solve_vector", "linalg.solve", [T((4, 4)), T((4,))], {}, None),
    ("solve_right", "linalg.solve", [T((4, 4)), T((3, 4))], {"left": False}, None),
    ("special_erf", "special.erf", [T((3, 5))], {}, None),
    ("special_erfc", "special.erfc", [T((3, 5), -6, 6)], {}, None),
    ("special_expit", "special.expit", [T((3, 5))], {}, None),
    ("special_logit_eps", "special.logit", [T((3, 5), 0.0, 1.0)], {"eps": 0.2}, None),
    ("special_ndtr", "special.ndtr", [T((3, 5))], {}, None),
    ("special_exp2", "special.exp2", [T((3, 5))], {}, None),
    ("special_xlogy", "special.xlogy", [T((3, 5)), T((3, 5), 0.1, 2.0)], {}, None),
]
CASES += OP_CASES

#: Cases whose gradient torch recorded: of ``(first output * cotangent).sum()`` for every float input.
GRAD_CASES = ["median_all", "median_dim", "kthvalue_dim0_keepdim", "quantile_linear", "quantile_tensor_q_keepdim",
              "diff_prepend_append", "rot90_k3_dims", "cdist", "cdist_p1_batched", "matrix_norm_1", "inv",
              "solve_matrix", "solve_vector", "special_erfc", "norm_default"]


def cotangent(shape):
    """The fixed output gradient of a GRAD_CASES case (float64 values, any library casts them)."""
    import numpy as np
    count = int(np.prod(shape)) if shape else 1
    return np.linspace(-1.0, 2.0, count).reshape(shape)


ERROR_CASES = [
    ("prelu_mismatch", "nn.functional.prelu", [T((2, 4, 3)), T((3,))], {}, None),
    ("prelu_1d_mismatch", "nn.functional.prelu", [T((5,)), T((5,))], {}, None),
    ("kl_div_bad_reduction", "nn.functional.kl_div", [X, X], {"reduction": "bogus"}, None),
    ("smooth_l1_negative_beta", "nn.functional.smooth_l1_loss", [X, X], {"beta": -1.0}, None),
    ("huber_zero_delta", "nn.functional.huber_loss", [X, X], {"delta": 0.0}, None),
    ("pairwise_mismatch", "nn.functional.pairwise_distance", [T((2, 3)), T((2, 4))], {}, None),
    ("pad_sequence_mismatch", "nn.utils.rnn.pad_sequence", [[T((2, 3)), T((3, 4))]], {}, None),
    ("pad_sequence_side", "nn.utils.rnn.pad_sequence", [[T((2, 3))]], {"padding_side": "middle"}, None),
    ("pad_sequence_empty", "nn.utils.rnn.pad_sequence", [[]], {}, None),
    ("kthvalue_k_range", "kthvalue", [T((4, 6)), 7], {"dim": 1}, None),
    ("quantile_q_range", "quantile", [X, 1.5], {}, None),
    ("quantile_q_tensor_range", "quantile", [X, T((2,), 1.5, 2.0)], {}, None),
    ("quantile_int", "quantile", [I((3, 4), 5), 0.5], {}, None),
    ("quantile_interpolation", "quantile", [X, 0.5], {"interpolation": "bad"}, None),
    ("diff_negative_n", "diff", [X], {"n": -1}, None),
    ("diff_prepend_dims", "diff", [X], {"prepend": T((5,))}, None),
    ("rot90_one_dim", "rot90", [X, 1, [0]], {}, None),
    ("rot90_same_dims", "rot90", [X, 1, [1, 1]], {}, None),
    ("cdist_columns", "cdist", [X, T((2, 4))], {}, None),
    ("cdist_negative_p", "cdist", [X, X], {"p": -1.0}, None),
    ("matrix_norm_order", "linalg.matrix_norm", [X], {"ord": 3}, None),
    ("norm_3d_with_ord", "linalg.norm", [T((2, 2, 2)), "fro"], {}, None),
    ("inv_not_square", "linalg.inv", [X], {}, None),
    ("inv_singular", "linalg.inv", [T((3, 3), 0.0, 0.0)], {}, None),
    ("solve_shapes", "linalg.solve", [T((3, 3)), T((4,))], {}, None),
]


def resolve(root, path: str):
    """The object at dotted ``path`` under the library module ``root``."""
    value = root
    for part in path.split("."):
        value = getattr(value, part)
    return value


def call(root, path, args, kwargs, ctor):
    """Run one case against the library ``root`` (a module ``ctor`` is built, then called)."""
    target = resolve(root, path)
    return target(**ctor)(*args, **kwargs) if ctor is not None else target(*args, **kwargs)


def build_inputs(name, args, kwargs, recorded, make_tensor):
    """The case's ``(args, kwargs)`` with the recorded arrays (``<name>/in<i>``, in order) in place of specs."""
    counter = iter(range(1000))

    def build(spec):
        if isinstance(spec, list):
            return [build(s) for s in spec]
        if isinstance(spec, (T, I, L)):
            return make_tensor(recorded[f"{name}/in{next(counter)}"])
        return spec

    return [build(a) for a in args], {k: build(v) for k, v in kwargs.items()}
