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
#: check): the call breaks as a whole and runs eagerly (a module's ``forward`` frame reports the same break,
#: counted once).
BREAKS = {"gaussian_nll": 1, "gaussian_nll_row_variance": 1, "gaussian_nll_column_variance": 1,
          "gaussian_nll_tiny_variance": 1, "gaussian_nll_layer": 1}

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

SEQUENCES = T((2, 3, 9))
IMAGES = T((1, 2, 3, 4))
UNPOOL2D_INDICES = L(((((0, 3), (8, 10)), ((5, 6), (13, 15))),))
UNPOOL1D_INDICES = L((((0, 3, 4), (1, 2, 5)),))

LAYER_CASES = [
    ("max_pool1d", "nn.functional.max_pool1d", [SEQUENCES, 3], {"stride": 2, "padding": 1, "return_indices": True},
     None),
    ("max_pool1d_dilated_ceil", "nn.functional.max_pool1d", [SEQUENCES, 2], {"dilation": 2, "ceil_mode": True},
     None),
    ("max_pool1d_unbatched", "nn.functional.max_pool1d", [T((3, 9)), 3], {}, None),
    ("max_pool1d_layer", "nn.MaxPool1d", [SEQUENCES], {}, {"kernel_size": 2}),
    ("avg_pool1d", "nn.functional.avg_pool1d", [SEQUENCES, 3], {"stride": 2, "padding": 1,
                                                                 "count_include_pad": False}, None),
    ("avg_pool1d_ceil", "nn.functional.avg_pool1d", [SEQUENCES, 2], {"ceil_mode": True}, None),
    ("avg_pool1d_layer", "nn.AvgPool1d", [SEQUENCES], {}, {"kernel_size": 3, "stride": 1, "padding": 1}),
    ("adaptive_avg_pool1d", "nn.functional.adaptive_avg_pool1d", [T((2, 3, 10)), 4], {}, None),
    ("adaptive_max_pool1d", "nn.functional.adaptive_max_pool1d", [T((2, 3, 10)), 4], {"return_indices": True},
     None),
    ("adaptive_avg_pool1d_layer", "nn.AdaptiveAvgPool1d", [T((3, 7))], {}, {"output_size": 3}),
    ("adaptive_max_pool1d_layer", "nn.AdaptiveMaxPool1d", [T((2, 3, 7))], {}, {"output_size": 2}),
    ("lp_pool1d", "nn.functional.lp_pool1d", [T((2, 3, 9), 0.1, 2.0), 2.0, 3], {}, None),
    ("lp_pool2d", "nn.functional.lp_pool2d", [T((1, 2, 6, 6), 0.1, 2.0), 1.5, 2], {"stride": 1}, None),
    ("lp_pool2d_inf", "nn.functional.lp_pool2d", [T((1, 2, 6, 6)), float("inf"), 3], {}, None),
    ("lp_pool2d_layer", "nn.LPPool2d", [T((1, 2, 5, 5), 0.1, 2.0)], {}, {"norm_type": 3, "kernel_size": (2, 3),
                                                                         "ceil_mode": True}),
    ("max_unpool2d", "nn.functional.max_unpool2d", [T((1, 2, 2, 2)), UNPOOL2D_INDICES, 2], {}, None),
    ("max_unpool2d_output_size", "nn.functional.max_unpool2d", [T((1, 2, 2, 2)), UNPOOL2D_INDICES, 2],
     {"output_size": (5, 5)}, None),
    ("max_unpool2d_layer", "nn.MaxUnpool2d", [T((1, 2, 2, 2)), UNPOOL2D_INDICES], {}, {"kernel_size": 2}),
    ("max_unpool1d", "nn.functional.max_unpool1d", [T((1, 2, 3)), UNPOOL1D_INDICES, 2], {}, None),
    ("pad_reflect", "nn.functional.pad", [SEQUENCES, (2, 1), "reflect"], {}, None),
    ("pad_reflect_2d_crop", "nn.functional.pad", [IMAGES, (-1, 3, 2, 0), "reflect"], {}, None),
    ("pad_replicate_2d", "nn.functional.pad", [IMAGES, (1, 2, 2, 0), "replicate"], {}, None),
    ("pad_circular_2d", "nn.functional.pad", [IMAGES, (1, 4, 3, 2), "circular"], {}, None),
    ("pad_circular_crop", "nn.functional.pad", [SEQUENCES, (-2, 3), "circular"], {}, None),
    ("pad_reflect_3d", "nn.functional.pad", [T((1, 2, 3, 4, 3)), (1, 1, 2, 0, 0, 2), "reflect"], {}, None),
    ("reflection_pad1d", "nn.ReflectionPad1d", [SEQUENCES], {}, {"padding": 2}),
    ("reflection_pad2d", "nn.ReflectionPad2d", [IMAGES], {}, {"padding": (1, 0, 2, 1)}),
    ("replication_pad1d", "nn.ReplicationPad1d", [SEQUENCES], {}, {"padding": (3, 1)}),
    ("replication_pad2d", "nn.ReplicationPad2d", [IMAGES], {}, {"padding": 2}),
    ("circular_pad1d", "nn.CircularPad1d", [SEQUENCES], {}, {"padding": 3}),
    ("circular_pad2d", "nn.CircularPad2d", [IMAGES], {}, {"padding": (1, 2, 0, 3)}),
    ("constant_pad1d", "nn.ConstantPad1d", [SEQUENCES], {}, {"padding": 2, "value": 3.5}),
    ("constant_pad2d", "nn.ConstantPad2d", [IMAGES], {}, {"padding": (1, 0, 2, 1), "value": -1.0}),
    ("unfold_layer", "nn.Unfold", [T((1, 2, 4, 6))], {}, {"kernel_size": 2, "stride": 2}),
    ("fold_layer", "nn.Fold", [T((1, 8, 12))], {}, {"output_size": (4, 5), "kernel_size": 2}),
    ("channel_shuffle", "nn.functional.channel_shuffle", [T((2, 6, 2, 2)), 3], {}, None),
    ("channel_shuffle_layer", "nn.ChannelShuffle", [T((2, 4, 3))], {}, {"groups": 2}),
    ("local_response_norm", "nn.functional.local_response_norm", [T((2, 5, 3, 3)), 3],
     {"alpha": 0.1, "beta": 0.5, "k": 2.0}, None),
    ("local_response_norm_3d", "nn.functional.local_response_norm", [T((2, 5, 4)), 2], {}, None),
    ("local_response_norm_5d", "nn.functional.local_response_norm", [T((1, 4, 2, 3, 3)), 4], {"alpha": 0.5}, None),
    ("local_response_norm_layer", "nn.LocalResponseNorm", [T((2, 6, 3, 3))], {}, {"size": 5, "alpha": 1.0}),
    ("bilinear", "nn.functional.bilinear", [T((5, 2)), T((5, 3)), T((4, 2, 3)), T((4,))], {}, None),
    ("bilinear_batched", "nn.functional.bilinear", [T((2, 5, 2)), T((2, 5, 3)), T((4, 2, 3))], {}, None),
    ("upsampling_nearest2d", "nn.UpsamplingNearest2d", [T((1, 2, 3, 3))], {}, {"scale_factor": 2}),
    ("upsampling_bilinear2d", "nn.UpsamplingBilinear2d", [T((1, 2, 3, 3))], {}, {"size": (5, 7)}),
    ("conv_transpose1d", "nn.functional.conv_transpose1d", [T((2, 4, 5)), T((4, 3, 3)), T((6,))],
     {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}, None),
    ("conv_transpose1d_dilated", "nn.functional.conv_transpose1d", [T((1, 3, 6)), T((3, 2, 2))],
     {"dilation": 3}, None),
    ("batch_norm3d_layer", "nn.BatchNorm3d", [T((2, 3, 2, 3, 3))], {}, {"num_features": 3}),
]
CASES += LAYER_CASES
GRAD_CASES += ["max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "lp_pool1d", "lp_pool2d", "max_unpool2d",
               "pad_reflect", "pad_reflect_2d_crop", "pad_replicate_2d", "pad_circular_2d", "pad_circular_crop",
               "channel_shuffle", "local_response_norm", "local_response_norm_3d", "bilinear", "bilinear_batched",
               "conv_transpose1d"]

ERROR_CASES += [
    ("max_pool1d_rank", "nn.functional.max_pool1d", [T((3,)), 2], {}, None),
    ("avg_pool1d_rank", "nn.functional.avg_pool1d", [T((3,)), 2], {}, None),
    ("pad_reflect_too_large", "nn.functional.pad", [T((1, 2, 3)), (3, 3), "reflect"], {}, None),
    ("pad_rank", "nn.functional.pad", [T((1, 2, 3)), (1, 1, 1, 1, 1, 1), "reflect"], {}, None),
    ("pad_circular_wraps", "nn.functional.pad", [T((1, 2, 3)), (4, 0), "circular"], {}, None),
    ("pad_mode", "nn.functional.pad", [T((1, 2, 3)), (1, 1), "bogus"], {}, None),
    ("pad_odd", "nn.functional.pad", [T((1, 2, 3)), (1,), "replicate"], {}, None),
    ("channel_shuffle_groups", "nn.functional.channel_shuffle", [T((1, 5, 2, 2)), 2], {}, None),
    ("local_response_norm_rank", "nn.functional.local_response_norm", [T((3, 4)), 2], {}, None),
    ("max_unpool2d_output_size_bad", "nn.functional.max_unpool2d", [T((1, 2, 2, 2)), UNPOOL2D_INDICES, 2],
     {"output_size": (7, 4)}, None),
    ("max_unpool2d_output_size_length", "nn.functional.max_unpool2d", [T((1, 2, 2, 2)), UNPOOL2D_INDICES, 2],
     {"output_size": (4,)}, None),
    ("bilinear_batch_mismatch", "nn.functional.bilinear", [T((5, 2)), T((4, 3)), T((4, 2, 3))], {}, None),
]
