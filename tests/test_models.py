"""Every model-zoo workload runs eagerly and matches its hand-written NumPy reference."""
import numpy as np
import pytest

import dynamo_lite as dl
from benchmarks import models
from benchmarks.models import WORKLOADS
from benchmarks.numpy_reference import REFERENCES, as_arrays


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def _params(model):
    return as_arrays(model, ())[0]


def test_every_workload_has_a_reference():
    assert set(WORKLOADS) == set(REFERENCES)
    assert {"mlp", "lstm_cell", "pointwise_chain", "attention_block", "small_cnn",
            "small_cnn_channels_last", "gpt", "tiny_fn"} <= set(WORKLOADS)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_matches_numpy_reference(name):
    workload = WORKLOADS[name]
    model, inputs = workload.make(), workload.make_inputs()
    assert all(isinstance(x, dl.Tensor) and x.dtype in (dl.float32, dl.int64) for x in inputs)
    outputs = _as_tuple(model(*inputs))
    params, arrays = as_arrays(model, inputs)
    expected = _as_tuple(REFERENCES[name](params, *arrays))
    assert len(outputs) == len(expected)
    for out, exp in zip(outputs, expected):
        if exp is None:  # e.g. the GPT's loss when no targets are given
            assert out is None
            continue
        assert out.dtype == dl.float32 and tuple(out.shape) == exp.shape
        np.testing.assert_allclose(out.detach().numpy(), exp, rtol=workload.rtol, atol=workload.atol)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workloads_are_deterministic(name):
    workload = WORKLOADS[name]
    a, b = workload.make_inputs(), workload.make_inputs()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    m1, m2 = workload.make(), workload.make()
    for (k1, v1), (k2, v2) in zip(_params(m1).items(), _params(m2).items()):
        assert k1 == k2
        np.testing.assert_array_equal(v1, v2)


def test_small_cnn_layouts_agree():
    nchw, cl = WORKLOADS["small_cnn"], WORKLOADS["small_cnn_channels_last"]
    model_cl, (x_cl,) = cl.make(), cl.make_inputs()
    assert x_cl.is_contiguous(memory_format=dl.channels_last) and not x_cl.is_contiguous()
    assert model_cl.conv1.weight.is_contiguous(memory_format=dl.channels_last)
    (x,) = nchw.make_inputs()
    out = nchw.make()(x)
    out_cl = model_cl(x_cl)
    np.testing.assert_allclose(out_cl.detach().numpy(), out.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_sizes_are_as_documented():
    assert models.POINTWISE_SHAPE[0] * models.POINTWISE_SHAPE[1] == 4 * 1024 * 1024
    assert WORKLOADS["mlp"].make()(*WORKLOADS["mlp"].make_inputs()).shape == (models.MLP_BATCH, models.MLP_OUT)
    model = WORKLOADS["attention_block"].make()
    assert sum(p.numel() for p in model.parameters()) == (
        4 * 256  # two LayerNorms
        + 256 * 768 + 768 + 256 * 256 + 256  # qkv, proj
        + 256 * 1024 + 1024 + 1024 * 256 + 256  # MLP
    )
    h, c = WORKLOADS["lstm_cell"].make()(*WORKLOADS["lstm_cell"].make_inputs())
    assert h.shape == c.shape == (models.LSTM_BATCH, models.LSTM_HIDDEN)


def test_gpt_has_the_nanogpt_shape():
    gpt = WORKLOADS["gpt"].make()
    (idx,) = WORKLOADS["gpt"].make_inputs()
    embd, block, vocab = models.GPT_EMBD, models.GPT_BLOCK, models.GPT_VOCAB
    assert gpt.transformer.wte.weight is gpt.lm_head.weight  # tied, counted once
    per_block = 4 * embd + (embd * 3 * embd + 3 * embd) + (embd * embd + embd) + (embd * 4 * embd + 4 * embd) \
        + (4 * embd * embd + embd)
    assert sum(p.numel() for p in gpt.parameters()) == (
        vocab * embd + block * embd + models.GPT_LAYERS * per_block + 2 * embd)
    mask = gpt.transformer.h[0].attn.mask
    assert tuple(mask.shape) == (1, 1, block, block) and "transformer.h.0.attn.mask" in gpt.state_dict()
    np.testing.assert_array_equal(mask.numpy()[0, 0], np.tril(np.ones((block, block), dtype=np.float32)))
    logits, loss = gpt(idx)
    assert tuple(logits.shape) == (models.GPT_BATCH, block, vocab) and loss is None
    # causality: changing the last token changes no earlier position's logits
    changed = idx.clone()
    changed[:, -1] = (idx[:, -1] + 1) % vocab
    np.testing.assert_array_equal(gpt(changed)[0].detach().numpy()[:, :-1], logits.detach().numpy()[:, :-1])
    with pytest.raises(ValueError, match="block size is only 32"):
        gpt(dl.zeros(1, block + 1, dtype=dl.long))


@pytest.mark.skipif(not hasattr(dl.nn.functional, "cross_entropy"), reason="F.cross_entropy not added yet")
def test_gpt_loss_is_cross_entropy_over_every_position():
    gpt = WORKLOADS["gpt"].make()
    (idx,) = WORKLOADS["gpt"].make_inputs()
    targets = (idx + 1) % models.GPT_VOCAB
    logits, loss = gpt(idx, targets)
    flat = logits.detach().numpy().reshape(-1, models.GPT_VOCAB).astype(np.float64)
    log_probs = flat - flat.max(1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(1, keepdims=True))
    expected = -log_probs[np.arange(flat.shape[0]), targets.numpy().reshape(-1)].mean()
    assert loss.shape == () and abs(float(loss) - expected) < 1e-4
