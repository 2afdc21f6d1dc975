"""Registry-test samples for the ops behind the nn layers (adaptive pooling, transposed conv,
resampling, im2col/col2im, embedding_bag): public calls that dispatch each op."""
from __future__ import annotations

import numpy as np

import dynamo_lite as dl

from .oracle import laid_out

RNG = np.random.default_rng(1)


def f32(*shape, layout="contiguous"):
    return laid_out(RNG.standard_normal(shape).astype(np.float32), layout)


IMG = f32(2, 3, 7, 6, layout="channels_last")
IMG_T = f32(2, 3, 5, 6, layout="transposed")

NN_LAYER_SAMPLES = {
    "nll_class_targets": lambda: (dl.nn.functional.nll_loss(f32(3, 4), dl.tensor([0, -100, 3])),),
    "adaptive_avg_pool2d": lambda: (dl.adaptive_avg_pool2d(IMG, (3, 4)), dl.adaptive_avg_pool2d(IMG_T[0], 1)),
    "adaptive_max_pool2d": lambda: (dl.adaptive_max_pool2d(IMG, 2, True), dl.adaptive_max_pool2d(IMG_T, (5, 4))),
    "conv_transpose2d": lambda: (dl.conv_transpose2d(IMG, f32(3, 4, 3, 3), f32(4), stride=2, padding=1),
                                 dl.conv_transpose2d(IMG_T[0], f32(3, 1, 2, 2), groups=3)),
    "upsample_nearest": lambda: (dl.upsample_nearest(IMG, (9, 3)), dl.upsample_nearest(IMG_T[0], (11,))),
    "upsample_bilinear2d": lambda: (dl.upsample_bilinear2d(IMG, (9, 3), False),
                                    dl.upsample_bilinear2d(IMG_T, (4, 8), True, (0.8, 1.5))),
    "im2col": lambda: (dl.im2col(IMG, 2, padding=1), dl.im2col(IMG_T[0], (2, 3), stride=2)),
    "col2im": lambda: (dl.col2im(f32(2, 12, 24), (5, 6), (2, 3), padding=(0, 1)),),
    "embedding_bag": lambda: (dl.embedding_bag(f32(6, 3), dl.tensor([0, 5, 2, 2]), dl.tensor([0, 1, 1]), "max"),),
}
