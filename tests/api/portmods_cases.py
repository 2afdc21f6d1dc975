"""Activations and losses of the second porting round, recorded once with PyTorch and replayed against dynamo_lite.

Shared by the recorder (``tests/api/fixtures/record_portmods.py``, run with a PyTorch
venv) and the tests, which never import torch. A case is ``(name, path, args, kwargs,
ctor)`` as in ``porting_cases``; ``S(shape)`` marks a float32 tensor of random +1/-1
labels. Only deterministic calls are recorded: the random ones (rrelu while training,
gumbel_softmax, the dropouts) are checked by their properties in the tests.
"""
from __future__ import annotations

from dataclasses import dataclass

from tests.nn.torch_cases import I, L, T  # noqa: F401  (specs, re-exported for the recorder)


@dataclass(frozen=True)
class S(T):
    """A float32 tensor of +1/-1 labels."""


def is_label(array) -> bool:
    """Whether a recorded input is labels (class indices, or the +1/-1 of an ``S`` spec), never differentiated."""
    import numpy as np
    return not np.issubdtype(array.dtype, np.floating) or bool(np.isin(array, (-1.0, 1.0)).all())


X = T((3, 5))
POSITIVE = T((3, 5), 0.1, 3.0)
COUNTS = T((3, 5), 0.0, 4.0)
VARIANCE = T((3, 5), 0.1, 2.0)
E = T((4, 6))  # embeddings
LABELS = L(((3, 0, -1, 1), (1, -1, 2, 2), (0, 1, 2, 3)))

ACTIVATION_CASES = [
    ("threshold", "nn.functional.threshold", [X, 0.1, 20.0], {}, None),
    ("threshold_layer", "nn.Threshold", [X], {}, {"threshold": -0.2, "value": -5.0}),
    ("celu", "nn.functional.celu", [X], {"alpha": 0.5}, None),
    ("celu_layer", "nn.CELU", [X], {}, {"alpha": 2.0}),
    ("rrelu_eval", "nn.functional.rrelu", [X], {"lower": 0.1, "upper": 0.4}, None),
    ("softmin", "nn.functional.softmin", [X], {"dim": 1}, None),
    ("softmin_layer", "nn.Softmin", [X], {}, {"dim": 0}),
    ("softshrink", "nn.functional.softshrink", [X], {"lambd": 0.3}, None),
    ("softshrink_layer", "nn.Softshrink", [X], {}, {"lambd": 1.0}),
    ("hardshrink", "nn.functional.hardshrink", [X], {"lambd": 0.3}, None),
    ("hardshrink_layer", "nn.Hardshrink", [X], {}, {}),
    ("softmax2d", "nn.Softmax2d", [T((2, 3, 4, 5))], {}, {}),
    ("softmax2d_unbatched", "nn.Softmax2d", [T((3, 4, 5))], {}, {}),
    ("alpha_dropout_p1", "nn.functional.alpha_dropout", [X], {"p": 1.0, "training": True}, None),
    ("feature_alpha_dropout_eval", "nn.functional.feature_alpha_dropout", [T((2, 3, 4))], {"p": 0.3}, None),
]

LOSS_CASES = [
    ("margin_ranking", "nn.functional.margin_ranking_loss", [T((6,)), T((6,)), S((6,))], {"margin": 0.2}, None),
    ("margin_ranking_layer", "nn.MarginRankingLoss", [T((6,)), T((6,)), S((6,))], {},
     {"margin": 0.1, "reduction": "sum"}),
    ("hinge_embedding", "nn.functional.hinge_embedding_loss", [X, S((3, 5))], {"margin": 0.5}, None),
    ("hinge_embedding_none", "nn.functional.hinge_embedding_loss", [X, S((3, 5))], {"reduction": "none"}, None),
    ("hinge_embedding_layer", "nn.HingeEmbeddingLoss", [X, S((3, 5))], {}, {"margin": 2.0}),
    ("soft_margin", "nn.functional.soft_margin_loss", [X, S((3, 5))], {}, None),
    ("soft_margin_layer", "nn.SoftMarginLoss", [X, S((3, 5))], {}, {"reduction": "sum"}),
    ("cosine_embedding", "nn.functional.cosine_embedding_loss", [E, E, S((4,))], {"margin": 0.2}, None),
    ("cosine_embedding_unbatched", "nn.functional.cosine_embedding_loss", [T((6,)), T((6,)), S(())],
     {"reduction": "none"}, None),
    ("cosine_embedding_layer", "nn.CosineEmbeddingLoss", [E, E, S((4,))], {}, {"reduction": "none"}),
    ("triplet", "nn.functional.triplet_margin_loss", [E, E, E], {}, None),
    ("triplet_swap_p1", "nn.functional.triplet_margin_loss", [E, E, E],
     {"p": 1.0, "swap": True, "margin": 0.5, "reduction": "none"}, None),
    ("triplet_layer", "nn.TripletMarginLoss", [E, E, E], {}, {"margin": 2.0, "eps": 1e-3}),
    ("multi_margin", "nn.functional.multi_margin_loss", [T((4, 5)), I((4,), 5)], {}, None),
    ("multi_margin_p2_weight", "nn.functional.multi_margin_loss", [T((4, 5)), I((4,), 5)],
     {"p": 2, "margin": 0.7, "weight": T((5,), 0.1, 2.0)}, None),
    ("multi_margin_unbatched", "nn.functional.multi_margin_loss", [T((5,)), L((2,))], {"reduction": "none"}, None),
    ("multi_margin_layer", "nn.MultiMarginLoss", [T((4, 5)), I((4,), 5)], {}, {"p": 2, "reduction": "none"}),
    ("multilabel_margin", "nn.functional.multilabel_margin_loss", [T((3, 4)), LABELS], {}, None),
    ("multilabel_margin_none", "nn.functional.multilabel_margin_loss", [T((3, 4)), LABELS],
     {"reduction": "none"}, None),
    ("multilabel_margin_unbatched", "nn.functional.multilabel_margin_loss", [T((4,)), L((2, 1, -1, 0))],
     {"reduction": "none"}, None),
    ("multilabel_margin_layer", "nn.MultiLabelMarginLoss", [T((3, 4)), LABELS], {}, {"reduction": "sum"}),
    ("multilabel_soft_margin", "nn.functional.multilabel_soft_margin_loss", [X, T((3, 5), 0.0, 1.0)],
     {"weight": T((5,), 0.1, 2.0)}, None),
    ("multilabel_soft_margin_layer", "nn.MultiLabelSoftMarginLoss", [X, T((3, 5), 0.0, 1.0)], {},
     {"reduction": "none"}),
    ("poisson_nll", "nn.functional.poisson_nll_loss", [X, COUNTS], {}, None),
    ("poisson_nll_full_rate", "nn.functional.poisson_nll_loss", [POSITIVE, COUNTS],
     {"log_input": False, "full": True, "reduction": "none"}, None),
    ("poisson_nll_full", "nn.functional.poisson_nll_loss", [X, COUNTS], {"full": True}, None),
    ("poisson_nll_layer", "nn.PoissonNLLLoss", [POSITIVE, COUNTS], {}, {"log_input": False, "reduction": "sum"}),
    ("gaussian_nll", "nn.functional.gaussian_nll_loss", [X, X, VARIANCE], {}, None),
    ("gaussian_nll_row_variance", "nn.functional.gaussian_nll_loss", [X, X, T((3,), 0.5, 1.0)],
     {"full": True, "reduction": "sum"}, None),
    ("gaussian_nll_column_variance", "nn.functional.gaussian_nll_loss", [X, X, T((3, 1), 0.5, 1.0)],
     {"reduction": "none"}, None),
    ("gaussian_nll_float_variance", "nn.functional.gaussian_nll_loss", [X, X, 0.5], {}, None),
    ("gaussian_nll_tiny_variance", "nn.functional.gaussian_nll_loss", [X, X, T((3, 5), 0.0, 1e-7)],
     {"eps": 1e-6}, None),
    ("gaussian_nll_layer", "nn.GaussianNLLLoss", [X, X, VARIANCE], {}, {"full": True, "reduction": "none"}),
]

CASES = ACTIVATION_CASES + LOSS_CASES

#: Cases whose gradient torch recorded: of ``(first output * cotangent).sum()`` for every float input.
GRAD_CASES = ["threshold", "celu", "rrelu_eval", "softmin", "softshrink", "hardshrink", "softmax2d",
              "margin_ranking", "hinge_embedding", "soft_margin", "cosine_embedding", "triplet", "triplet_swap_p1",
              "multi_margin", "multi_margin_unbatched", "multilabel_margin", "multilabel_soft_margin", "poisson_nll",
              "poisson_nll_full_rate", "gaussian_nll", "gaussian_nll_row_variance", "gaussian_nll_tiny_variance"]

#: Graph breaks of the cases that read tensor values to validate them (gaussian_nll_loss's negative-variance
#: check): the call breaks as a whole and runs eagerly (a module's ``forward`` frame breaks once more).
BREAKS = {"gaussian_nll": 1, "gaussian_nll_row_variance": 1, "gaussian_nll_column_variance": 1,
          "gaussian_nll_tiny_variance": 1, "gaussian_nll_layer": 2}

ERROR_CASES = [
    ("celu_zero_alpha", "nn.functional.celu", [X], {"alpha": 0.0}, None),
    ("rrelu_bounds", "nn.functional.rrelu", [X], {"lower": 0.5, "upper": 0.1}, None),
    ("softshrink_negative", "nn.functional.softshrink", [X], {"lambd": -1.0}, None),
    ("softmax2d_rank", "nn.Softmax2d", [X], {}, {}),
    ("alpha_dropout_p", "nn.functional.alpha_dropout", [X], {"p": 1.5}, None),
    ("feature_alpha_dropout_rank", "nn.functional.feature_alpha_dropout", [T((5,))], {"p": 0.5, "training": True},
     None),
    ("margin_ranking_dims", "nn.functional.margin_ranking_loss", [T((6,)), T((6,)), S((1, 6))], {}, None),
    ("margin_ranking_reduction", "nn.functional.margin_ranking_loss", [T((6,)), T((6,)), S((6,))],
     {"reduction": "avg"}, None),
    ("cosine_embedding_2d_target", "nn.functional.cosine_embedding_loss", [X, X, S((3, 5))], {}, None),
    ("cosine_embedding_dims", "nn.functional.cosine_embedding_loss", [E, E, S(())], {}, None),
    ("triplet_margin", "nn.functional.triplet_margin_loss", [E, E, E], {"margin": 0.0}, None),
    ("triplet_layer_margin", "nn.TripletMarginLoss", [E, E, E], {}, {"margin": -1.0}),
    ("triplet_dims", "nn.functional.triplet_margin_loss", [E, T((6,)), E], {}, None),
    ("multi_margin_p", "nn.functional.multi_margin_loss", [T((4, 5)), I((4,), 5)], {"p": 3}, None),
    ("multi_margin_weight", "nn.functional.multi_margin_loss", [T((4, 5)), I((4,), 5)], {"weight": T((5, 1))},
     None),
    ("multi_margin_target", "nn.functional.multi_margin_loss", [T((4, 5)), I((3,), 5)], {}, None),
    ("multi_margin_rank", "nn.functional.multi_margin_loss", [T((2, 4, 5)), I((2,), 5)], {}, None),
    ("multilabel_margin_target", "nn.functional.multilabel_margin_loss", [T((3, 4)), I((3, 3), 4)], {}, None),
    ("multilabel_soft_margin_reduction", "nn.functional.multilabel_soft_margin_loss", [X, X],
     {"reduction": "bogus"}, None),
    ("poisson_nll_reduction", "nn.functional.poisson_nll_loss", [X, X], {"reduction": "bogus"}, None),
    ("gaussian_nll_negative", "nn.functional.gaussian_nll_loss", [X, X, T((3, 5))], {}, None),
    ("gaussian_nll_negative_float", "nn.functional.gaussian_nll_loss", [X, X, -1.0], {}, None),
    ("gaussian_nll_shape", "nn.functional.gaussian_nll_loss", [X, X, T((2, 5), 0.1, 1.0)], {}, None),
    ("gaussian_nll_reduction", "nn.functional.gaussian_nll_loss", [X, X, VARIANCE], {"reduction": "bogus"}, None),
]
