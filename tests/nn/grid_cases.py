"""grid_sample / affine_grid cases shared by the recorder (torch) and the tests.

grid_sample cases: (name, input shape, grid shape, kwargs); grid points are drawn in [-1.3, 1.3]
so that padding matters. affine_grid cases: (name, size, align_corners).
"""

SAMPLE_CASES = [
    (f"{mode}_{padding}_{'aligned' if aligned else 'unaligned'}", (2, 3, 4, 5), (2, 3, 4, 2),
     {"mode": mode, "padding_mode": padding, "align_corners": aligned})
    for mode in ("bilinear", "nearest") for padding in ("zeros", "border", "reflection") for aligned in (False, True)
]

AFFINE_CASES = [
    ("affine_unaligned", (2, 3, 4, 5), False),
    ("affine_aligned", (1, 1, 3, 2), True),
]

ERROR_CASES = [
    ("bad_mode", {"mode": "cubic"}),
    ("bad_padding", {"padding_mode": "wrap"}),
]
