"""Gradient cases compared with PyTorch: each is source code run with ``lib`` = torch or dl.

``record_torch_fixtures.py`` (run once with PyTorch, see its docstring) evaluates every
case with torch in float64 and stores inputs, outputs and gradients in
fixtures/torch_grads.json; test_against_torch.py evaluates the same code with
dynamo_lite on the stored inputs. Input specs: ``(name, shape, kind)`` with kind
``"x"`` (normal, requires grad), ``"p"`` (uniform in (0.05, 0.95), requires grad),
``"c"`` (a constant normal tensor), ``"q"`` (constant probabilities), ``"i<n>"``
(int64 in [0, n)), ``"w"`` (constant positive weights).
"""

# name -> (input specs, expression returning a scalar loss (or a tuple whose first item is it))
CASES = {
    "cross_entropy_mean": ([("x", (5, 4), "x"), ("t", (5,), "i4")], "F.cross_entropy(x, t)"),
    "cross_entropy_sum_weight": ([("x", (5, 4), "x"), ("t", (5,), "i4"), ("w", (4,), "w")],
                                 "F.cross_entropy(x, t, weight=w, reduction='sum')"),
    "cross_entropy_none_weight": ([("x", (5, 4), "x"), ("t", (5,), "i4"), ("w", (4,), "w")],
                                  "(F.cross_entropy(x, t, weight=w, reduction='none') * lib.arange(5.0, dtype=lib.float64)).sum()"),
    "cross_entropy_ignore_mean_weight": ([("x", (6, 3), "x"), ("w", (3,), "w")],
                                         "F.cross_entropy(x, lib.tensor([0, 2, -100, 1, 2, -100]), weight=w)"),
    "cross_entropy_label_smoothing": ([("x", (5, 4), "x"), ("t", (5,), "i4")],
                                      "F.cross_entropy(x, t, label_smoothing=0.2)"),
    "cross_entropy_label_smoothing_weight_ignore": (
        [("x", (6, 3), "x"), ("w", (3,), "w")],
        "F.cross_entropy(x, lib.tensor([0, 2, 7, 1, 2, 7]), weight=w, ignore_index=7, label_smoothing=0.3)"),
    "cross_entropy_label_smoothing_sum": ([("x", (5, 4), "x"), ("t", (5,), "i4"), ("w", (4,), "w")],
                                          "F.cross_entropy(x, t, weight=w, label_smoothing=0.1, reduction='sum')"),
    "cross_entropy_probabilities": ([("x", (5, 4), "x"), ("q", (5, 4), "q")], "F.cross_entropy(x, q)"),
    "cross_entropy_probabilities_smoothing_weight": (
        [("x", (5, 4), "x"), ("q", (5, 4), "q"), ("w", (4,), "w")],
        "F.cross_entropy(x, q, weight=w, label_smoothing=0.25)"),
    "cross_entropy_spatial": ([("x", (2, 3, 2, 2), "x"), ("t", (2, 2, 2), "i3")], "F.cross_entropy(x, t)"),
    "cross_entropy_unbatched": ([("x", (4,), "x")], "F.cross_entropy(x, lib.tensor(2))"),
    "cross_entropy_module": ([("x", (5, 4), "x"), ("t", (5,), "i4")],
                             "nn.CrossEntropyLoss(label_smoothing=0.05)(x, t)"),
    "nll_loss_weight_ignore": ([("x", (6, 3), "x"), ("w", (3,), "w")],
                               "F.nll_loss(x.log_softmax(1), lib.tensor([0, 2, -100, 1, 2, 0]), weight=w)"),
    "nll_loss_module_sum": ([("x", (4, 3), "x"), ("t", (4,), "i3")], "nn.NLLLoss(reduction='sum')(x, t)"),
    "mse_loss": ([("x", (3, 4), "x"), ("c", (3, 4), "c")], "F.mse_loss(x, c)"),
    "mse_loss_module_sum": ([("x", (3, 4), "x"), ("c", (3, 4), "c")], "nn.MSELoss(reduction='sum')(x, c)"),
    "l1_loss": ([("x", (3, 4), "x"), ("c", (3, 4), "c")], "F.l1_loss(x, c)"),
    "l1_loss_module_none": ([("x", (3, 4), "x"), ("c", (3, 4), "c")], "(nn.L1Loss(reduction='none')(x, c) ** 2).sum()"),
    "binary_cross_entropy": ([("p", (3, 4), "p"), ("q", (3, 4), "q")], "F.binary_cross_entropy(p, q)"),
    "binary_cross_entropy_weight": ([("p", (3, 4), "p"), ("q", (3, 4), "q"), ("w", (4,), "w")],
                                    "nn.BCELoss(weight=w, reduction='sum')(p, q)"),
    "bce_with_logits": ([("x", (3, 4), "x"), ("q", (3, 4), "q")], "F.binary_cross_entropy_with_logits(x, q)"),
    "bce_with_logits_pos_weight": ([("x", (3, 4), "x"), ("q", (3, 4), "q"), ("w", (4,), "w"), ("v", (3, 1), "w")],
                                   "nn.BCEWithLogitsLoss(weight=v, pos_weight=w)(x, q)"),
    "embedding_padding_idx": ([("w", (5, 3), "x")],
                              "(F.embedding(lib.tensor([[0, 2, 1], [1, 4, 2]]), w, padding_idx=2) ** 2).sum()"),
    "max_with_ties": ([("x", (4,), "x")], "(x * 0 + lib.tensor([1.0, 3.0, 3.0, 2.0], dtype=lib.float64)).max() + (x * lib.tensor([1.0, 0.0, 0.0, 1.0], dtype=lib.float64)).amax()"),
    "inplace_through_view": ([("x", (3, 4), "x"), ("y", (3,), "x")],
                             "_view_write(lib, x, y)"),
    "setitem_into_zeros": ([("x", (4,), "x")], "_setitem(lib, x)"),
    "inplace_chain": ([("x", (3,), "x")], "_inplace_chain(lib, x)"),
    "batch_norm_training": ([("x", (4, 3, 2), "x"), ("w", (3,), "x"), ("b", (3,), "x")],
                            "_batch_norm(lib, F, x, w, b)"),
    "conv_transpose2d": ([("x", (1, 2, 3, 3), "x"), ("w", (2, 3, 3, 3), "x"), ("b", (3,), "x")],
                         "(F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1) ** 2).sum()"),
    "conv2d_pool": ([("x", (2, 2, 6, 6), "x"), ("w", (4, 2, 3, 3), "x")],
                    "(F.max_pool2d(F.conv2d(x, w, padding=1), 2).tanh() + F.avg_pool2d(x, 3, 2, 1, ceil_mode=True).sum()).sum()"),
    "interpolate_bilinear_adaptive": ([("x", (1, 2, 3, 4), "x")],
                                      "(F.interpolate(x, size=(5, 7), mode='bilinear') ** 2).sum() + F.adaptive_avg_pool2d(x, (2, 3)).pow(3).sum()"),
    "double_backward": ([("x", (4,), "x")], "_double_backward(lib, x)"),
    "matmul_broadcast_layer_norm": ([("x", (2, 3, 4), "x"), ("w", (4, 5), "x"), ("g", (5,), "x")],
                                    "F.layer_norm(x @ w, (5,), g).sin().sum()"),
}


def _view_write(lib, x, y):
    z = x * 1
    z[:, 1].mul_(y)
    z.t()[2].add_(y.sum())
    return (z * z).sum()


def _setitem(lib, x):
    buf = lib.zeros(3, 4, dtype=lib.float64)
    buf[1] = x
    buf[2, 1:3] = x[:2] * 2
    return (buf.exp()).sum()


def _inplace_chain(lib, x):
    y = x * 2
    y.mul_(x).add_(x).sigmoid_()
    return y.pow(2).sum()


def _batch_norm(lib, F, x, w, b):
    running_mean = lib.zeros(3, dtype=lib.float64)
    running_var = lib.ones(3, dtype=lib.float64)
    out = F.batch_norm(x, running_mean, running_var, w, b, training=True, momentum=0.3)
    return (out * out.detach().exp()).sum(), running_mean, running_var


def _double_backward(lib, x):
    (g,) = lib.autograd.grad((x ** 3).sin().sum(), x, create_graph=True)
    return (g * g).sum()


HELPERS = {"_view_write": _view_write, "_setitem": _setitem, "_inplace_chain": _inplace_chain,
           "_batch_norm": _batch_norm, "_double_backward": _double_backward}


# name -> (module constructor, input specs, expression of the scalar loss from ``m`` and the inputs).
# The recorder stores the torch module's initial state_dict; the test loads it into the
# dynamo_lite module, so both start from the same weights; parameter gradients are compared.
MODULE_CASES = {
    "lstm": ("lib.nn.LSTM(3, 4, num_layers=2, batch_first=True)", [("x", (2, 5, 3), "x")],
             "(m(x)[0] ** 2).sum()"),
    "gru": ("lib.nn.GRU(3, 4, bidirectional=True)", [("x", (5, 2, 3), "x")], "m(x)[0].tanh().sum()"),
    "multihead_attention": ("lib.nn.MultiheadAttention(8, 2, batch_first=True)", [("x", (2, 4, 8), "x")],
                            "(m(x, x, x, need_weights=False)[0] ** 2).sum()"),
    "transformer_encoder_layer": (
        "lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)",
        [("x", (2, 3, 8), "x")], "(m(x) ** 2).sum()"),
    "batch_norm2d_train": ("lib.nn.BatchNorm2d(3)", [("x", (4, 3, 2, 2), "x")],
                           "(m(x) * lib.arange(48.0, dtype=lib.float64).reshape(4, 3, 2, 2)).sum()"),
    "group_norm_conv1d": ("lib.nn.Sequential(lib.nn.Conv1d(2, 4, 3, padding=1), lib.nn.GroupNorm(2, 4))",
                          [("x", (2, 2, 5), "x")], "(m(x) ** 3).sum()"),
    "conv_transpose_upsample": (
        "lib.nn.Sequential(lib.nn.ConvTranspose2d(2, 3, 3, stride=2), lib.nn.Upsample(scale_factor=2, mode='bilinear'))",
        [("x", (1, 2, 3, 3), "x")], "(m(x) ** 2).sum()"),
}
