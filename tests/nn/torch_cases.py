"""Calls of torch.nn.functional recorded once with PyTorch, replayed against dl.nn.functional.

Shared by the recorder (``tests/nn/fixtures/record_torch.py``, run with a PyTorch venv)
and the tests, which never import torch. A case is ``(name, function, args, kwargs)``;
``T(shape)`` marks a float32 tensor argument (standard normal values from a seeded RNG),
``I(shape, high)`` an int64 one, ``B(shape)`` a bool one, ``L(values)`` an int64 tensor of given values. The recorder stores the inputs it
made and torch's outputs (or its exception type and message) in ``functional.npz``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class T:
    shape: tuple
    low: float = None  # uniform in [low, high) instead of normal when given
    high: float = None


@dataclass(frozen=True)
class I:
    shape: tuple
    high: int


@dataclass(frozen=True)
class B:
    shape: tuple


@dataclass(frozen=True)
class L:
    values: tuple  # an int64 tensor with exactly these values


IMG = T((2, 6, 7, 5))
SEQ = T((2, 4, 9))

FUNCTIONAL_CASES = [
    # activations
    ("leaky_relu", "leaky_relu", [T((3, 7))], {"negative_slope": 0.2}),
    ("elu", "elu", [T((3, 7))], {"alpha": 0.7}),
    ("selu", "selu", [T((3, 7))], {}),
    ("mish", "mish", [T((3, 7))], {}),
    ("hardswish", "hardswish", [T((3, 7), -5, 5)], {}),
    ("hardtanh", "hardtanh", [T((3, 7))], {"min_val": -0.5, "max_val": 0.8}),
    ("softplus", "softplus", [T((3, 7), -30, 30)], {"beta": 2.0, "threshold": 10.0}),
    ("logsigmoid", "logsigmoid", [T((3, 7), -100, 100)], {}),
    ("glu", "glu", [T((3, 8))], {"dim": 1}),
    ("relu6", "relu6", [T((3, 7), -8, 8)], {}),
    ("hardsigmoid", "hardsigmoid", [T((3, 7), -5, 5)], {}),
    # normalization
    ("batch_norm_train", "batch_norm", [IMG, T((6,)), T((6,), 0.5, 2), T((6,)), T((6,))],
     {"training": True, "momentum": 0.3}),
    ("batch_norm_eval", "batch_norm", [SEQ, T((4,)), T((4,), 0.5, 2)], {"training": False}),
    ("group_norm", "group_norm", [IMG, 3, T((6,)), T((6,))], {"eps": 1e-3}),
    ("instance_norm", "instance_norm", [IMG], {}),
    ("rms_norm", "rms_norm", [T((2, 3, 8)), (8,), T((8,))], {}),
    ("rms_norm_eps", "rms_norm", [T((2, 3, 8)), (3, 8)], {"eps": 1e-2}),
    ("normalize", "normalize", [T((4, 5))], {"dim": 0}),
    ("normalize_p1", "normalize", [T((4, 5))], {"p": 1.0}),
    ("cosine_similarity", "cosine_similarity", [T((4, 5)), T((1, 5))], {}),
    # attention
    ("sdpa", "scaled_dot_product_attention", [T((2, 3, 5, 8)), T((2, 3, 6, 8)), T((2, 3, 6, 4))], {}),
    ("sdpa_causal", "scaled_dot_product_attention", [T((2, 3, 5, 8))] * 3, {"is_causal": True}),
    ("sdpa_bool_mask", "scaled_dot_product_attention",
     [T((2, 3, 5, 8)), T((2, 3, 6, 8)), T((2, 3, 6, 8)), B((5, 6))], {}),
    ("sdpa_float_mask_scale", "scaled_dot_product_attention",
     [T((2, 5, 8)), T((2, 6, 8)), T((2, 6, 8)), T((5, 6))], {"scale": 0.3}),
    # images and sequences
    ("adaptive_avg_pool2d", "adaptive_avg_pool2d", [IMG, (3, 2)], {}),
    ("adaptive_avg_pool2d_none", "adaptive_avg_pool2d", [IMG, (None, 4)], {}),
    ("adaptive_max_pool2d", "adaptive_max_pool2d", [IMG, (3, 4)], {"return_indices": True}),
    ("conv1d", "conv1d", [SEQ, T((6, 2, 3)), T((6,))], {"stride": 2, "padding": 1, "groups": 2}),
    ("conv1d_same", "conv1d", [SEQ, T((5, 4, 4))], {"padding": "same", "dilation": 2}),
    ("conv_transpose2d", "conv_transpose2d", [IMG, T((6, 2, 3, 3)), T((4,))],
     {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ("conv_transpose2d_dilated", "conv_transpose2d", [T((1, 3, 4, 4)), T((3, 5, 2, 3))],
     {"stride": (1, 2), "dilation": 2}),
    ("interpolate_nearest", "interpolate", [IMG], {"scale_factor": 2.5}),
    ("interpolate_nearest_size", "interpolate", [IMG], {"size": (11, 3)}),
    ("interpolate_nearest_1d", "interpolate", [SEQ], {"size": 13}),
    ("interpolate_bilinear", "interpolate", [IMG], {"size": (10, 9), "mode": "bilinear"}),
    ("interpolate_bilinear_corners", "interpolate", [IMG],
     {"scale_factor": 1.7, "mode": "bilinear", "align_corners": True}),
    ("interpolate_bilinear_scale", "interpolate", [IMG], {"scale_factor": (2.0, 0.5), "mode": "bilinear"}),
    ("interpolate_linear", "interpolate", [SEQ], {"size": 20, "mode": "linear"}),
    ("pixel_shuffle", "pixel_shuffle", [T((2, 8, 3, 4))], {"upscale_factor": 2}),
    ("pixel_unshuffle", "pixel_unshuffle", [T((2, 2, 6, 4))], {"downscale_factor": 2}),
    ("unfold", "unfold", [IMG, (2, 3)], {"dilation": (1, 2), "padding": 1, "stride": 2}),
    ("fold", "fold", [T((2, 12, 9)), (5, 6), (2, 3)], {"padding": 1, "stride": 2}),
    ("embedding_bag_offsets", "embedding_bag", [I((7,), 10), T((10, 4)), L((0, 2, 2))], {"mode": "sum"}),
    ("embedding_bag_2d_max", "embedding_bag", [I((3, 4), 10), T((10, 4))], {"mode": "max"}),
    ("embedding_bag_weights", "embedding_bag", [I((6,), 10), T((10, 4)), L((0, 4))],
     {"mode": "sum", "per_sample_weights": T((6,))}),
    ("embedding_bag_padding", "embedding_bag", [I((3, 4), 4), T((4, 3))], {"padding_idx": 1}),
    ("multi_head_attention_forward", "multi_head_attention_forward",
     [T((5, 3, 8)), T((6, 3, 8)), T((6, 3, 8)), 8, 2, T((24, 8)), T((24,)), None, None, False, 0.0, T((8, 8)),
      T((8,))], {"key_padding_mask": B((3, 6)), "attn_mask": B((5, 6)), "training": False}),
    ("multi_head_attention_forward_separate", "multi_head_attention_forward",
     [T((4, 8)), T((6, 5)), T((6, 3)), 8, 4, None, None, None, None, False, 0.0, T((8, 8)), None],
     {"use_separate_proj_weight": True, "q_proj_weight": T((8, 8)), "k_proj_weight": T((8, 5)),
      "v_proj_weight": T((8, 3)), "average_attn_weights": False}),
]

#: Bad input: torch's exception type and message are recorded and must be matched.
ERROR_CASES = [
    ("leaky_relu_int", "leaky_relu", [I((3,), 4)], {}),
    ("glu_odd", "glu", [T((3, 5))], {}),
    ("batch_norm_one_value", "batch_norm", [T((1, 3)), T((3,)), T((3,))], {"training": True}),
    ("batch_norm_bad_stats", "batch_norm", [T((4, 3)), T((2,)), T((2,))], {}),
    ("group_norm_groups", "group_norm", [T((2, 6, 4)), 4], {}),
    ("rms_norm_shape", "rms_norm", [T((2, 3)), (4,)], {}),
    ("sdpa_causal_and_mask", "scaled_dot_product_attention", [T((2, 3, 4))] * 3 + [B((3, 3))],
     {"is_causal": True}),
    ("adaptive_avg_pool2d_2d", "adaptive_avg_pool2d", [T((5, 5)), 2], {}),
    ("conv1d_4d", "conv1d", [T((1, 2, 3, 4)), T((1, 2, 3))], {}),
    ("conv_transpose2d_channels", "conv_transpose2d", [IMG, T((5, 2, 3, 3))], {}),
    ("interpolate_no_size", "interpolate", [IMG], {}),
    ("interpolate_both", "interpolate", [IMG], {"size": 3, "scale_factor": 2}),
    ("interpolate_corners_nearest", "interpolate", [IMG], {"size": 3, "align_corners": True}),
    ("interpolate_bilinear_3d", "interpolate", [SEQ], {"size": 3, "mode": "bilinear"}),
    ("pixel_shuffle_channels", "pixel_shuffle", [T((1, 5, 2, 2)), 2], {}),
    ("fold_blocks", "fold", [T((1, 12, 10)), (5, 6), (2, 3)], {}),
    ("embedding_bag_3d", "embedding_bag", [I((2, 2, 2), 3), T((3, 2))], {}),
]


def build_inputs(name: str, args, kwargs, recorded, make_tensor):
    """The case's ``(args, kwargs)`` with recorded arrays (``<name>/in<i>``, in order) in place of specs."""
    counter = iter(range(1000))

    def build(spec):
        if isinstance(spec, tuple):
            return tuple(build(s) for s in spec)
        if isinstance(spec, (T, I, B, L)):
            return make_tensor(recorded[f"{name}/in{next(counter)}"])
        return spec

    return [build(a) for a in args], {k: build(v) for k, v in kwargs.items()}
