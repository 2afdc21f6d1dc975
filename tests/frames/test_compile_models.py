"""A small GPT-style model (embeddings, masked attention, ModuleList, dropout) compiled whole."""
from __future__ import annotations

import math

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from dynamo_lite import nn
from tests.helpers import assert_equal_values


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d), nn.Dropout(0.1))

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        att = F.softmax(att.masked_fill(mask[:t, :t] == 0, float("-inf")), dim=-1)
        x = x + self.out((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.ff(x)


class TinyGPT(nn.Module):
    def __init__(self, vocab=50, d=32, heads=4, layers=2, ctx=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.head = nn.Linear(d, vocab)
        self.register_buffer("mask", dl.tril(dl.ones(ctx, ctx)))

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(dl.arange(t))[None]
        for block in self.blocks:
            x = block(x, self.mask)
        logits = self.head(x)
        return logits, logits.argmax(dim=-1)


def test_tiny_gpt_compiles_to_one_graph_in_eval_mode(backend):
    dl.manual_seed(0)
    model = TinyGPT().eval()
    idx = dl.randint(0, 50, (2, 10))
    expected = model(idx)
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    assert_equal_values(compiled(idx), expected, rtol=1e-4, atol=1e-5)
    assert dl.stats().graph_count == 1


def test_tiny_gpt_in_training_mode_draws_the_same_dropout_masks(backend):
    dl.manual_seed(0)
    model = TinyGPT().train()
    idx = dl.randint(0, 50, (2, 10))
    dl.manual_seed(1)
    expected = model(idx)
    compiled = dl.compile(model, backend=backend)
    dl.manual_seed(1)
    assert_equal_values(compiled(idx), expected, rtol=1e-4, atol=1e-5)
    model.eval()  # `training` is read while tracing: switching modes recompiles
    assert_equal_values(compiled(idx), model(idx), rtol=1e-4, atol=1e-5)
    assert dl.stats().recompiles == 1 and dl.stats().fallbacks == ()


class Base(nn.Module):
    SCALE = 2

    def __init__(self):
        super().__init__()
        self.layer0 = nn.Linear(4, 4)
        self.layer1 = nn.Linear(4, 4)

    def forward(self, x):
        return x * self.SCALE

    @property
    def first(self):
        return self.layer0


class Child(Base):
    def forward(self, x, cfg):
        x = super().forward(x)
        for i in range(2):
            x = getattr(self, f"layer{i}")(x)
        x = self.first(x)
        n_linear = sum(1 for m in self.modules() if isinstance(m, nn.Linear))
        norms = [p.abs().sum() for name, p in self.named_parameters() if name.endswith("weight")]
        y = x.view(*x.shape[:-1], 2, -1).flatten(-2)
        z = dl.stack([x, y], dim=0).mean(0) * cfg["alpha"] + n_linear
        return dl.cat([z, x], -1), dl.stack(norms).sum(), len(list(self.parameters()))


def test_module_idioms_compile_to_one_graph(backend):
    model, x, cfg = Child(), dl.randn(3, 4), {"alpha": 0.5}
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    assert_equal_values(compiled(x, cfg), model(x, cfg))
    assert dl.stats().graph_count == 1
    model.extra = nn.Linear(4, 4)  # the module tree changed: modules()/parameters() differ
    assert_equal_values(compiled(x, cfg), model(x, cfg))
    assert dl.stats().recompiles == 1


def test_compiled_functions_and_modules_called_from_compiled_code_are_inlined(backend):
    @dl.compile(backend=backend)
    def inner(x):
        return x.relu() * 2

    layer = nn.Linear(3, 3)
    compiled_layer = dl.compile(layer, backend=backend)

    def outer(x):
        return inner(x) + compiled_layer(x)

    x = dl.randn(2, 3)
    report = dl.explain(outer, backend=backend)(x)
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert_equal_values(dl.compile(outer, backend=backend, fullgraph=True)(x), outer(x))


def test_an_in_place_parameter_update_step_matches_eager(backend):
    def make():
        dl.manual_seed(0)
        return nn.Linear(4, 3)

    def sgd_step(model, grads, lr):
        for p, g in zip(model.parameters(), grads):
            p.sub_(g * lr)
        return sum(p.sum() for p in model.parameters())

    eager_model, compiled_model = make(), make()
    grads = [dl.ones(3, 4), dl.ones(3)]
    compiled = dl.compile(sgd_step, backend=backend, fullgraph=True)
    for _ in range(2):
        with dl.no_grad():  # an in-place update of parameters that require grad, as optimizers do
            assert_equal_values(compiled(compiled_model, grads, 0.1), sgd_step(eager_model, grads, 0.1))
    assert_equal_values(compiled_model.weight, eager_model.weight)
    assert compiled_model.weight._version == eager_model.weight._version
    assert dl.stats().frames_compiled == 1
