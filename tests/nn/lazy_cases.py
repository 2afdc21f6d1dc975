"""Lazy-module cases shared by the recorder (torch) and the tests (dynamo_lite): (name, build(lib), input shape)."""

CASES = [
    ("linear", lambda lib: lib.nn.LazyLinear(3), (2, 5)),
    ("linear_no_bias", lambda lib: lib.nn.LazyLinear(4, bias=False), (3, 2, 6)),
    ("conv1d", lambda lib: lib.nn.LazyConv1d(4, 3, padding=1), (2, 5, 7)),
    ("conv1d_unbatched", lambda lib: lib.nn.LazyConv1d(2, 2), (3, 6)),
    ("conv2d_groups", lambda lib: lib.nn.LazyConv2d(4, 3, stride=2, groups=2), (2, 6, 7, 7)),
    ("batchnorm1d", lambda lib: lib.nn.LazyBatchNorm1d(), (6, 4)),
    ("batchnorm1d_3d_no_affine", lambda lib: lib.nn.LazyBatchNorm1d(affine=False, momentum=0.3), (4, 3, 5)),
    ("batchnorm2d", lambda lib: lib.nn.LazyBatchNorm2d(eps=1e-3), (2, 3, 4, 4)),
]

#: (name, build(lib), input shape): the first call raises.
ERROR_CASES = [
    ("conv2d_wrong_dims", lambda lib: lib.nn.LazyConv2d(4, 3), (2, 5)),
    ("conv1d_groups_do_not_divide", lambda lib: lib.nn.LazyConv1d(4, 3, groups=2), (2, 3, 8)),
]
