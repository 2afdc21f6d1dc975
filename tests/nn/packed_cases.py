"""Cases for packed sequences, shared by the recorder (torch) and the tests (dynamo_lite).

Each recurrent case: (name, layer class, constructor kwargs, lengths, enforce_sorted, lengths
given as a tensor, with an initial state). Inputs are padded ``(L, B, H_in)`` (batch first
when the constructor says so); the packed batch goes through the layer.
"""
INPUT_SIZE, HIDDEN_SIZE = 3, 4

RNN_CASES = [
    ("rnn_sorted", "RNN", {}, [4, 3, 1], True, False, False),
    ("rnn_relu_unsorted_h0", "RNN", {"nonlinearity": "relu"}, [2, 4, 1], False, False, True),
    ("lstm_unsorted", "LSTM", {}, [2, 5, 3, 5], False, False, False),
    ("lstm_2layer_bidirectional_h0", "LSTM", {"num_layers": 2, "bidirectional": True}, [3, 1, 4], False, True, True),
    ("lstm_batch_first_sorted", "LSTM", {"batch_first": True}, [3, 3, 2], True, True, False),
    ("gru_bidirectional_unsorted", "GRU", {"bidirectional": True}, [1, 3, 2], False, False, False),
    ("gru_2layer_batch_first_h0", "GRU", {"num_layers": 2, "batch_first": True}, [2, 4, 4, 1], False, False, True),
]

#: (name, function, kwargs): pack_padded_sequence on a (4, 3, 2) input, then pad_packed_sequence.
PACK_CASES = [
    ("pack_sorted", {"lengths": [4, 2, 1]}, {}),
    ("pack_unsorted_ties", {"lengths": [2, 4, 2], "enforce_sorted": False}, {"padding_value": -1.0}),
    ("pack_batch_first_total_length", {"lengths": [3, 1, 2], "enforce_sorted": False, "batch_first": True},
     {"batch_first": True, "total_length": 6}),
]

#: (name, what, args): calls that raise in torch (recorded type and message).
ERROR_CASES = [
    ("pack_not_sorted", "pack_padded_sequence", {"lengths": [2, 4, 1]}),
    ("pack_zero_length", "pack_padded_sequence", {"lengths": [3, 0, 2], "enforce_sorted": False}),
    ("pad_total_length_short", "pad_packed_sequence", {"total_length": 2}),
    ("pack_sequence_not_sorted", "pack_sequence", {}),
]


def layer_state_shape(kwargs: dict, batch: int) -> tuple:
    return ((2 if kwargs.get("bidirectional") else 1) * kwargs.get("num_layers", 1), batch, HIDDEN_SIZE)


def cotangent(np, shape: tuple):
    """A fixed, non-uniform cotangent for gradients."""
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape)
