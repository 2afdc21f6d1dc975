"""The ported GPT's generate(): top-k sampling with multinomial, compiled into one graph."""
from __future__ import annotations

import dynamo_lite as dl
from tests.cupy_emulated import cupy_emulated  # noqa: F401  (fixture)

from .test_ported_models import _build, _recorded


def _generate(model, idx):
    return model.generate(idx, 6, temperature=1.0, top_k=5)


def _check_sampling(backend):
    _, model, (idx,) = _build("gpt", _recorded("gpt"))
    compiled = dl.compile(_generate, backend=backend, fullgraph=True)
    for seed in (3, 4):
        dl.manual_seed(seed)
        expected = _generate(model, idx)
        dl.manual_seed(seed)
        assert compiled(model, idx).tolist() == expected.tolist()
    stats = dl.stats()
    assert stats.graph_count == 1 and stats.cache_hits == 1 and not stats.fallbacks
    # every sampled token is among the 5 most likely after its prefix
    sequence = expected
    for step in range(idx.shape[1], sequence.shape[1]):
        logits = model(sequence[:, :step])[:, -1]
        top = dl.topk(logits, 5).indices.numpy()
        assert all(sequence[b, step].item() in top[b] for b in range(sequence.shape[0]))


def test_compiled_sampling_matches_eager(backend):
    _check_sampling(backend)


def test_sampling_on_the_cupy_backend(cupy_emulated):
    _check_sampling(cupy_emulated)
