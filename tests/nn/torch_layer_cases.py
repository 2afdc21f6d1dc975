"""Layers built with the same constructor arguments in torch and dl, torch's weights loaded
into the dl layer through ``load_state_dict`` (so parameter names and shapes must match).

A case is ``(name, class name, constructor kwargs, forward args, forward kwargs, training)``
with tensor specs as in ``torch_cases`` (tuples of specs become tuples of tensors). The
recorder (``fixtures/record_torch.py``) stores the initial state dict, the inputs, the
outputs and the state dict after the call (running statistics) in ``layers.npz``.
"""
from __future__ import annotations

from .torch_cases import B, I, T, L  # noqa: F401  (specs used below)

IMG = T((2, 6, 7, 5))
SEQ = T((5, 3, 4))  # (L, N, H_in)

LAYER_CASES = [
    ("batch_norm1d", "BatchNorm1d", {"num_features": 4}, [T((5, 4, 3))], {}, True),
    ("batch_norm2d_train", "BatchNorm2d", {"num_features": 6, "momentum": 0.2}, [IMG], {}, True),
    ("batch_norm2d_eval", "BatchNorm2d", {"num_features": 6}, [IMG], {}, False),
    ("batch_norm2d_cumulative", "BatchNorm2d", {"num_features": 6, "momentum": None}, [IMG], {}, True),
    ("group_norm", "GroupNorm", {"num_groups": 3, "num_channels": 6}, [IMG], {}, True),
    ("instance_norm2d", "InstanceNorm2d", {"num_features": 6, "affine": True, "track_running_stats": True},
     [IMG], {}, True),
    ("rms_norm", "RMSNorm", {"normalized_shape": 5, "eps": 1e-6}, [IMG], {}, True),
    ("adaptive_avg_pool2d", "AdaptiveAvgPool2d", {"output_size": (2, 3)}, [IMG], {}, True),
    ("adaptive_max_pool2d", "AdaptiveMaxPool2d", {"output_size": 2, "return_indices": True}, [IMG], {}, True),
    ("conv1d", "Conv1d", {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "stride": 2, "padding": 1},
     [T((2, 4, 9))], {}, True),
    ("conv_transpose2d", "ConvTranspose2d", {"in_channels": 6, "out_channels": 4, "kernel_size": 3, "stride": 2,
                                             "padding": 1, "output_padding": 1}, [IMG], {}, True),
    ("conv_transpose2d_size", "ConvTranspose2d", {"in_channels": 6, "out_channels": 2, "kernel_size": 2,
                                                  "stride": 3}, [IMG], {"output_size": (22, 16)}, True),
    ("upsample_bilinear", "Upsample", {"scale_factor": 2, "mode": "bilinear"}, [IMG], {}, True),
    ("upsample_nearest", "Upsample", {"size": (9, 11)}, [IMG], {}, True),
    ("pixel_shuffle", "PixelShuffle", {"upscale_factor": 2}, [T((2, 8, 3, 3))], {}, True),
    ("zero_pad2d", "ZeroPad2d", {"padding": (1, 2, 0, 3)}, [IMG], {}, True),
    ("leaky_relu", "LeakyReLU", {"negative_slope": 0.3}, [IMG], {}, True),
    ("elu", "ELU", {"alpha": 0.5}, [IMG], {}, True),
    ("mish", "Mish", {}, [IMG], {}, True),
    ("hardswish", "Hardswish", {}, [T((4, 5), -5, 5)], {}, True),
    ("unflatten", "Unflatten", {"dim": 1, "unflattened_size": (2, 3)}, [IMG], {}, True),
    ("embedding_bag", "EmbeddingBag", {"num_embeddings": 10, "embedding_dim": 4, "mode": "max"},
     [I((9,), 10), L((0, 3, 3))], {}, True),
    ("rnn", "RNN", {"input_size": 4, "hidden_size": 6, "num_layers": 2, "nonlinearity": "relu"}, [SEQ], {}, True),
    ("lstm", "LSTM", {"input_size": 4, "hidden_size": 6, "num_layers": 2, "batch_first": True,
                      "bidirectional": True}, [SEQ, (T((4, 5, 6)), T((4, 5, 6)))], {}, True),
    ("lstm_unbatched", "LSTM", {"input_size": 4, "hidden_size": 3}, [T((6, 4))], {}, True),
    ("gru", "GRU", {"input_size": 4, "hidden_size": 6, "num_layers": 2, "bidirectional": True},
     [SEQ, T((4, 3, 6))], {}, True),
    ("rnn_cell", "RNNCell", {"input_size": 4, "hidden_size": 6}, [T((3, 4))], {}, True),
    ("lstm_cell", "LSTMCell", {"input_size": 4, "hidden_size": 6}, [T((3, 4)), (T((3, 6)), T((3, 6)))], {}, True),
    ("gru_cell", "GRUCell", {"input_size": 4, "hidden_size": 6, "bias": False}, [T((4,)), T((6,))], {}, True),
    ("mha", "MultiheadAttention", {"embed_dim": 8, "num_heads": 2},
     [T((5, 3, 8)), T((6, 3, 8)), T((6, 3, 8))], {"key_padding_mask": B((3, 6)), "attn_mask": T((5, 6))}, True),
    ("mha_batch_first", "MultiheadAttention", {"embed_dim": 8, "num_heads": 4, "batch_first": True},
     [T((3, 5, 8))] * 3, {"average_attn_weights": False}, True),
    ("mha_kdim", "MultiheadAttention", {"embed_dim": 8, "num_heads": 2, "kdim": 5, "vdim": 3},
     [T((5, 3, 8)), T((6, 3, 5)), T((6, 3, 3))], {"need_weights": False}, True),
    ("encoder_layer", "TransformerEncoderLayer", {"d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0,
                                                  "batch_first": True},
     [T((3, 5, 8))], {"src_key_padding_mask": B((3, 5))}, True),
    ("encoder_layer_norm_first", "TransformerEncoderLayer",
     {"d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0, "norm_first": True, "activation": "gelu"},
     [T((5, 3, 8))], {"src_mask": T((5, 5))}, True),
    ("decoder_layer", "TransformerDecoderLayer", {"d_model": 8, "nhead": 2, "dim_feedforward": 16,
                                                  "dropout": 0.0, "norm_first": True},
     [T((4, 3, 8)), T((6, 3, 8))], {"tgt_mask": T((4, 4)), "memory_key_padding_mask": B((3, 6))}, True),
    ("transformer", "Transformer", {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 2,
                                    "dim_feedforward": 16, "dropout": 0.0, "batch_first": True},
     [T((3, 6, 8)), T((3, 4, 8))], {"src_key_padding_mask": B((3, 6))}, True),
]

#: Bad input to a layer (or its constructor): ``(name, class name, constructor kwargs, forward
#: args, forward kwargs)``; torch's exception type and message are in ``layer_errors.json``.
LAYER_ERROR_CASES = [
    ("lstm_hidden_layers", "LSTM", {"input_size": 4, "hidden_size": 6, "num_layers": 2},
     [T((5, 3, 4)), (T((1, 3, 6)), T((2, 3, 6)))], {}),
    ("lstm_cell_state_size", "LSTM", {"input_size": 4, "hidden_size": 6, "num_layers": 2},
     [T((5, 3, 4)), (T((2, 3, 6)), T((2, 3, 5)))], {}),
    ("gru_input_size", "GRU", {"input_size": 4, "hidden_size": 6}, [T((5, 3, 5))], {}),
    ("gru_input_rank", "GRU", {"input_size": 4, "hidden_size": 6}, [T((5, 3, 4, 1))], {}),
    ("gru_batched_hidden_rank", "GRU", {"input_size": 4, "hidden_size": 6}, [T((5, 3, 4)), T((3, 6))], {}),
    ("rnn_unbatched_hidden_rank", "RNN", {"input_size": 4, "hidden_size": 6}, [T((5, 4)), T((1, 1, 6))], {}),
    ("lstm_cell_input_size", "LSTMCell", {"input_size": 4, "hidden_size": 6}, [T((3, 5))], {}),
    ("lstm_cell_batch", "LSTMCell", {"input_size": 4, "hidden_size": 6}, [T((3, 4)), (T((2, 6)), T((3, 6)))], {}),
    ("gru_cell_hidden_size", "GRUCell", {"input_size": 4, "hidden_size": 6}, [T((3, 4)), T((3, 5))], {}),
    ("rnn_cell_rank", "RNNCell", {"input_size": 4, "hidden_size": 6}, [T((3, 4, 2))], {}),
    ("batch_norm2d_rank", "BatchNorm2d", {"num_features": 3}, [T((2, 3, 4))], {}),
    ("batch_norm1d_rank", "BatchNorm1d", {"num_features": 3}, [T((2, 3, 4, 5))], {}),
    ("mha_embed_dim", "MultiheadAttention", {"embed_dim": 8, "num_heads": 2}, [T((5, 3, 6))] * 3, {}),
    ("mha_heads", "MultiheadAttention", {"embed_dim": 8, "num_heads": 3}, [], {}),
    ("conv_transpose2d_output_size", "ConvTranspose2d", {"in_channels": 2, "out_channels": 2, "kernel_size": 2,
                                                         "stride": 2}, [T((1, 2, 3, 3))], {"output_size": (9, 9)}),
    ("group_norm_groups", "GroupNorm", {"num_groups": 4, "num_channels": 6}, [], {}),
    ("instance_norm2d_rank", "InstanceNorm2d", {"num_features": 3}, [T((2, 3))], {}),
    ("adaptive_avg_pool2d_rank", "AdaptiveAvgPool2d", {"output_size": 2}, [T((3, 3))], {}),
    ("embedding_bag_mode", "EmbeddingBag", {"num_embeddings": 4, "embedding_dim": 2, "mode": "median"},
     [I((2, 3), 4)], {}),
    ("transformer_activation", "TransformerEncoderLayer", {"d_model": 8, "nhead": 2, "activation": "tanh"}, [], {}),
    ("pixel_shuffle_rank", "PixelShuffle", {"upscale_factor": 2}, [T((4, 4))], {}),
]
