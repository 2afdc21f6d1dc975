"""CTC loss cases shared by the recorder (torch) and the tests: (name, T, N, C, targets, input_lengths,
target_lengths, kwargs, lengths as tensors). ``targets`` is a padded list of rows or a flat list
(concatenated); N = 0 means unbatched (T, C) log-probabilities with a 1-D target."""

CASES = [
    ("mean_padded", 6, 3, 5, [[1, 2, 2], [3, 1, 0], [4, 2, 1]], [6, 5, 4], [3, 2, 3], {}, False),
    ("sum_concatenated", 5, 2, 4, [1, 1, 2, 3], [5, 4], [2, 2], {"reduction": "sum"}, True),
    ("none_blank_last", 7, 2, 4, [[0, 1, 2], [2, 2, 0]], [7, 6], [3, 2], {"reduction": "none", "blank": 3}, False),
    ("impossible_inf", 3, 2, 3, [[1, 1], [2, 0]], [3, 2], [2, 1], {"reduction": "none"}, False),
    ("impossible_zero_infinity", 3, 2, 3, [[1, 1], [2, 0]], [2, 3], [2, 1],
     {"reduction": "mean", "zero_infinity": True}, False),
    ("empty_target", 4, 2, 3, [[1, 2], [0, 0]], [4, 3], [2, 0], {"reduction": "none"}, False),
    ("unbatched", 5, 0, 4, [1, 3, 3], [5], [3], {}, False),
]

#: The cases whose gradient (of the loss, summed) is compared with torch's.
GRAD_CASES = ["mean_padded", "sum_concatenated", "none_blank_last", "impossible_zero_infinity", "empty_target",
              "unbatched"]

#: (name, T, N, C, targets, input_lengths, target_lengths, kwargs): torch raises.
ERROR_CASES = [
    ("input_length_too_long", 3, 1, 3, [[1]], [4], [1], {}),
    ("bad_reduction", 3, 1, 3, [[1]], [3], [1], {"reduction": "avg"}),
]
