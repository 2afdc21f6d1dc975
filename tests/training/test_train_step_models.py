"""dl.compile(train_step) of the zoo's GPT-style model and small CNN: equal to eager, bounded guards."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from benchmarks.models import GPT, SmallCNN
from tests.training.train_step_harness import make_train_step, run_against_eager

VOCAB, BLOCK = 11, 8


def tiny_gpt(n_layer: int = 1):
    dl.manual_seed(0)
    return GPT(VOCAB, BLOCK, 16, 2, n_layer)


def gpt_loss(model_out, targets):
    logits, _ = model_out
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def gpt_batches():
    dl.manual_seed(3)
    return [(dl.randint(0, VOCAB, (2, BLOCK)), dl.randint(0, VOCAB, (2, BLOCK))) for _ in range(3)]


def tiny_cnn():
    dl.manual_seed(0)
    return SmallCNN(3, 8, 5)


def cnn_batches():
    dl.manual_seed(4)
    return [(dl.randn(4, 3, 8, 8), dl.randint(0, 5, (4,))) for _ in range(3)]


def adamw(params):
    return dl.optim.AdamW(params, lr=3e-3, weight_decay=0.1)


@pytest.mark.parametrize("make_model, batches, loss", [
    (tiny_gpt, gpt_batches, gpt_loss),
    (tiny_cnn, cnn_batches, lambda out, y: F.cross_entropy(out, y)),
], ids=["gpt", "small_cnn"])
def test_zoo_train_step_equals_eager_after_20_calls(make_model, batches, loss):
    before, after = run_against_eager(make_model, adamw, loss, batches(), expect_breaks=1)
    assert after.graph_count - before.graph_count >= 2


def _per_call_checks(guard_code: str) -> int:
    """The terms of the per-call ``check`` of a compiled guard program (not the full checks)."""
    return guard_code.split("def __dl_full")[0].count(" and\n") + 1


def test_guards_of_the_forward_stay_constant_and_the_optimizer_grows_linearly():
    """The forward's guards on the model are covered by module version tags: as many per-call
    checks for 1 block as for 3. The optimizer's groups, parameters and state are covered by
    its edit count (NOTE: [optimizer edit count]): per parameter, only its gradient is
    checked on every call (loaded through the parameter: 4 terms)."""
    counts = {}
    for n_layer in (1, 3):
        model = tiny_gpt(n_layer)
        opt = adamw(model.parameters())
        step = make_train_step(model, opt, gpt_loss)
        x, y = gpt_batches()[0]
        step(x, y)  # the optimizer state exists: the steady-state translation
        out = dl.explain(step)(x, y)
        assert out.graph_count >= 2 and out.graph_break_count == 1 and len(out.frames) == 2
        forward, optimizer = (_per_call_checks(f.report.guard_code) for f in out.frames)
        counts[n_layer] = (forward, optimizer, len(list(model.parameters())))
    (f1, o1, p1), (f3, o3, p3) = counts[1], counts[3]
    assert f1 == f3, counts
    assert (o3 - o1) / (p3 - p1) == 4, counts
